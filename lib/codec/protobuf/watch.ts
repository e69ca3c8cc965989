/**
 * Protobuf watch streams: each event a frame of a 4-byte big-endian length and a `WatchEvent`
 * message (no magic, no envelope: kube's stream serializer is the raw one) whose object is a
 * complete body. Writing frames, and reading them back (for clients and tests).
 */

import { decodeMessage } from "./decoder.ts";
import { encodeObject } from "./encoder.ts";
import { ProtobufError } from "./errors.ts";
import { message, WATCH_EVENT } from "./messages.ts";
import { isObject, type JsonObject } from "./types.ts";
import { Reader, WIRE_BYTES, Writer } from "./wire.ts";

/**
 * Encodes one watch event as a frame of a protobuf watch stream: a 4-byte big-endian length,
 * then a `WatchEvent` message (no magic, no envelope: kube's stream serializer is the raw one)
 * whose object is the full protobuf body of `object`.
 */
export function encodeWatchEvent(type: string, object: object): Uint8Array {
  const w = new Writer();
  w.tag(1, WIRE_BYTES);
  w.string(type);
  const ext = new Writer();
  ext.tag(1, WIRE_BYTES);
  ext.bytes(encodeObject(object));
  w.tag(2, WIRE_BYTES);
  w.bytes(ext.finish());
  return frame(w.finish());
}

/** Prefixes a message with its 4-byte big-endian length (kube's LengthDelimitedFramer). */
export function frame(body: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, body.length);
  out.set(body, 4);
  return out;
}

/** A decoded watch event. */
export interface WatchEvent {
  type: string;
  object: JsonObject;
}

/** Decodes the body of one watch frame (without its length prefix). */
export function decodeWatchEvent(body: Uint8Array): WatchEvent {
  const event = decodeMessage(new Reader(body, "WatchEvent"), message(WATCH_EVENT), 0);
  if (!isObject(event.object)) {
    throw new ProtobufError("Cannot decode protobuf WatchEvent: the event has no object");
  }
  return { type: (event.type as string | undefined) ?? "", object: event.object };
}

/**
 * Splits complete frames off the start of a watch stream buffer; `rest` is the incomplete tail
 * to prepend to the next chunk. Throws when a frame announces more than `maxFrameBytes`.
 */
export function splitWatchFrames(
  buf: Uint8Array,
  maxFrameBytes = 16 * 1024 * 1024,
): { frames: Uint8Array[]; rest: Uint8Array } {
  const frames: Uint8Array[] = [];
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let pos = 0;
  while (buf.length - pos >= 4) {
    const len = view.getUint32(pos);
    if (len > maxFrameBytes) {
      throw new ProtobufError(
        `Cannot decode protobuf watch stream: frame of ${len} bytes at byte ${pos} exceeds ${maxFrameBytes}`,
      );
    }
    if (buf.length - pos - 4 < len) break;
    frames.push(buf.slice(pos + 4, pos + 4 + len));
    pos += 4 + len;
  }
  return { frames, rest: buf.slice(pos) };
}
