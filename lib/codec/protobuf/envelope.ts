/**
 * The frame of every protobuf body: the magic `k8s\0` followed by a `runtime.Unknown` envelope
 * `{typeMeta{apiVersion = 1, kind = 2} = 1, raw = 2, contentEncoding = 3, contentType = 4}`
 * whose `raw` is the object's message. Writing it around a message, and reading it back.
 */

import { ProtobufError } from "./errors.ts";
import type { GroupVersionKind } from "./types.ts";
import { Reader, WIRE_BYTES, Writer } from "./wire.ts";

/** The protobuf media type of single objects and lists. */
export const PROTOBUF_MEDIA_TYPE = "application/vnd.platform.protobuf";
/** The media type of protobuf watch streams (length-prefixed WatchEvent frames). */
export const PROTOBUF_WATCH_MEDIA_TYPE = "application/vnd.platform.protobuf;stream=watch";
/** The 4 bytes every protobuf body starts with: `k8s\0`. */
export const MAGIC: Uint8Array = new Uint8Array([0x6b, 0x38, 0x73, 0x00]);

/** RawExtensions nest whole objects; real objects nest at most twice (a WatchEvent's object). */
export const MAX_OBJECT_DEPTH = 4;

/**
 * An object's body (magic + envelope) from its message bytes (see `encodeMessage`): byte
 * for byte what `encodeObject` gives for the object, when `type` is its apiVersion and
 * kind. Lets a server answer gets from the message bytes it caches per stored value.
 */
export function encodeEnvelope(type: GroupVersionKind, message: Uint8Array): Uint8Array {
  const w = new Writer(message.length + 64);
  const raw = beginEnvelope(w, type.apiVersion, type.kind);
  w.raw(message);
  return endEnvelope(w, raw);
}

/** Writes the magic and the envelope's typeMeta and opens its `raw` field (the object's
 * message goes there); returns the mark {@link endEnvelope} closes. */
export function beginEnvelope(w: Writer, apiVersion: string, kind: string): number {
  writeEnvelopeHead(w, apiVersion, kind);
  return w.beginLength();
}

/** Closes `raw` and writes contentEncoding and contentType, value fields written empty. */
export function endEnvelope(w: Writer, raw: number): Uint8Array {
  w.endLength(raw);
  writeEnvelopeTail(w);
  return w.finish();
}

/** Writes the magic, the envelope's typeMeta and the tag of `raw`; its length is the caller's. */
export function writeEnvelopeHead(w: Writer, apiVersion: string, kind: string): void {
  w.raw(MAGIC);
  w.tag(1, WIRE_BYTES);
  const typeMeta = w.beginLength();
  w.tag(1, WIRE_BYTES);
  w.string(apiVersion);
  w.tag(2, WIRE_BYTES);
  w.string(kind);
  w.endLength(typeMeta);
  w.tag(2, WIRE_BYTES);
}

/** Writes the fields after `raw`: contentEncoding and contentType, written empty. */
export function writeEnvelopeTail(w: Writer): void {
  w.tag(3, WIRE_BYTES);
  w.string("");
  w.tag(4, WIRE_BYTES);
  w.string("");
}

/** What an envelope holds: its typeMeta (kube spelling, empty when left out) and where `raw` is. */
export interface Envelope {
  apiVersion: string;
  kind: string;
  /** the byte range of `raw` in the body ([0, 0] when left out) */
  start: number;
  end: number;
}

/**
 * Reads the magic and envelope of a body. Throws {@link ProtobufError} on what is not a body,
 * malformed fields, and a contentEncoding or contentType other than plain protobuf.
 */
export function readEnvelope(bytes: Uint8Array): Envelope {
  if (!(bytes instanceof Uint8Array)) {
    throw new ProtobufError("Cannot decode protobuf: the body is not bytes");
  }
  if (bytes.length < MAGIC.length || MAGIC.some((b, i) => bytes[i] !== b)) {
    throw new ProtobufError('Cannot decode protobuf: the body does not start with "k8s\\0"');
  }
  const r = new Reader(bytes, "envelope (runtime.Unknown)", MAGIC.length);
  let apiVersion = "";
  let kind = "";
  let raw: [number, number] | undefined;
  let contentEncoding = "";
  let contentType = "";
  while (!r.done) {
    const [field, wireType] = r.tag();
    if (field <= 4 && wireType !== WIRE_BYTES) r.fail(`field ${field} has wire type ${wireType}`);
    if (field === 1) {
      const [start, end] = r.lengthDelimited();
      const tm = new Reader(bytes, "envelope typeMeta", start, end);
      while (!tm.done) {
        const [f, wt] = tm.tag();
        if ((f === 1 || f === 2) && wt !== WIRE_BYTES) tm.fail(`field ${f} has wire type ${wt}`);
        if (f === 1) apiVersion = tm.string();
        else if (f === 2) kind = tm.string();
        else tm.skip(wt);
      }
    } else if (field === 2) raw = r.lengthDelimited();
    else if (field === 3) contentEncoding = r.string();
    else if (field === 4) contentType = r.string();
    else r.skip(wireType);
  }
  if (contentEncoding !== "") {
    throw new ProtobufError(
      `Cannot decode protobuf: unsupported contentEncoding "${contentEncoding}"`,
    );
  }
  if (
    contentType !== "" && !/^application\/vnd\.(platform|kubernetes)\.protobuf/.test(contentType)
  ) {
    throw new ProtobufError(`Cannot decode protobuf: unsupported contentType "${contentType}"`);
  }
  const [start, end] = raw ?? [0, 0];
  return { apiVersion, kind, start, end };
}
