/**
 * List bodies from cached item bytes: a list's metadata is encoded, each item's message bytes
 * (from `encodeMessage`) are copied in as they are. Whole, or in chunks made as the client
 * reads them.
 */

import { encoderFor, writeMessage } from "./encoder.ts";
import { writeEnvelopeHead, writeEnvelopeTail } from "./envelope.ts";
import { noProtobufEncoding } from "./errors.ts";
import { message, messageForKind, toPlatformApiVersion } from "./messages.ts";
import type { GroupVersionKind, JsonObject } from "./types.ts";
import { WIRE_BYTES, Writer } from "./wire.ts";

/**
 * A list body (magic + envelope) from the list's metadata and the message bytes of its items
 * (see `encodeMessage`); byte for byte what `encodeObject` gives for the list.
 */
export function encodeListBody(
  list: GroupVersionKind,
  metadata: JsonObject,
  items: readonly Uint8Array[],
): Uint8Array {
  return listBodyChunks(list, metadata, items, Infinity).next().value as Uint8Array;
}

/**
 * The bytes of {@link encodeListBody} in chunks of about `chunkBytes`, made as they are asked
 * for: a large list can be sent as the client reads it. The envelope's length comes first, so
 * the items' sizes are summed before anything is made.
 */
export function* listBodyChunks(
  list: GroupVersionKind,
  metadata: JsonObject,
  items: readonly Uint8Array[],
  chunkBytes: number,
): Generator<Uint8Array> {
  const name = messageForKind(toPlatformApiVersion(list.apiVersion), list.kind);
  if (!name) throw noProtobufEncoding("encode", list);
  const fields = message(name).fields;
  const metaField = fields.find((f) => f.name === "metadata")!;
  const itemsField = fields.find((f) => f.name === "items")!;
  const meta = new Writer(128);
  meta.tag(metaField.number, WIRE_BYTES);
  const metaMark = meta.beginLength();
  writeMessage(meta, encoderFor(metaField.type), metadata, 0);
  meta.endLength(metaMark);
  const metaBytes = meta.finish();
  const itemTagSize = varintSize(itemsField.number * 8 + WIRE_BYTES);
  let listSize = metaBytes.length;
  for (const item of items) listSize += itemTagSize + varintSize(item.length) + item.length;

  let w = new Writer(Math.min(listSize + 64, chunkBytes + 64 * 1024, 1 << 28));
  writeEnvelopeHead(w, list.apiVersion, list.kind);
  w.uvarint(listSize);
  w.raw(metaBytes);
  for (const item of items) {
    w.tag(itemsField.number, WIRE_BYTES);
    w.bytes(item);
    if (w.length >= chunkBytes) {
      yield w.finish();
      w = new Writer(chunkBytes + 64 * 1024);
    }
  }
  writeEnvelopeTail(w);
  yield w.finish();
}

/** The bytes of `n` as a varint. */
function varintSize(n: number): number {
  let size = 1;
  for (; n > 0x7f; n = Math.floor(n / 128)) size++;
  return size;
}
