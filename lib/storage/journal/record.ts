/**
 * The journal record: one durable write.
 *
 * ```
 * header (9 bytes)                      payload (length bytes)
 * +------+-----------+-----------+      +------+----------+----------+-----------+------+
 * | 0xB1 | length u32| crc32c u32|  ->  | type | revision | createRev| prevModRev| time |
 * +------+-----------+-----------+      |  u8  |   u64    |   u64    |    u64    | f64  |
 *                                       +------+----------+----------+-----------+------+
 *                                       | keyLen u32 | key | valLen u32 | value |
 *                                       | prevLen u32 | prevValue |
 *                                       +-------------------------------------------------+
 * ```
 *
 * All integers are little-endian. The magic byte 0xB1 doubles as the format version (v1).
 * The CRC-32C covers the magic byte, the length and the payload, so a damaged length is
 * caught as surely as a damaged payload. Strings are UTF-8.
 *
 * A put record carries the new value and, for an update, the previous value and its
 * modRevision; a delete record carries the deleted value as its previous value. Carrying the
 * previous value lets replay rebuild `prevKv` for every event in the retained history even
 * when the key's earlier write is older than every retained segment.
 * @module
 */

import { crc32c } from "./crc32c.ts";

/** Magic + version byte at the start of every record. */
export const RECORD_MAGIC = 0xb1;
/** Bytes before the payload: magic (1) + length (4) + crc (4). */
export const HEADER_BYTES = 9;
/** Largest payload replay accepts (256 MiB); anything larger is treated as damage. */
export const MAX_PAYLOAD_BYTES = 256 * 1024 * 1024;

const FIXED_PAYLOAD_BYTES = 1 + 8 + 8 + 8 + 8 + 4 + 4 + 4;
const TYPE_PUT = 1;
const TYPE_DELETE = 2;

/** One write as the journal stores it. */
export interface JournalRecord {
  type: "put" | "delete";
  revision: number;
  key: string;
  /** The new value of a put; `""` for a delete. */
  value: string;
  createRevision: number;
  /** modRevision of the value this write replaced or deleted; 0 for a create. */
  prevModRevision: number;
  /** The value this write replaced or deleted; `""` for a create. */
  prevValue: string;
  /** Wall-clock time of the write in ms since the epoch (drives time-based compaction). */
  time: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

function putU64(view: DataView, at: number, n: number): void {
  view.setUint32(at, n >>> 0, true);
  view.setUint32(at + 4, Math.floor(n / 0x1_0000_0000), true);
}

function getU64(view: DataView, at: number): number {
  return view.getUint32(at, true) + view.getUint32(at + 4, true) * 0x1_0000_0000;
}

/** At least the encoded size of `rec`, in bytes (a UTF-16 unit is at most 3 UTF-8 bytes). */
export function recordBound(rec: JournalRecord): number {
  return HEADER_BYTES + FIXED_PAYLOAD_BYTES +
    3 * (rec.key.length + rec.value.length + rec.prevValue.length);
}

/** Encodes `rec` as header + payload, ready to append. */
export function encodeRecord(rec: JournalRecord): Uint8Array {
  const buf = new Uint8Array(recordBound(rec));
  return buf.subarray(0, encodeRecordInto(rec, buf, 0));
}

/** Encodes `rec` into `buf` at `offset`, where {@link recordBound} bytes must be free; returns
 * the offset after it. */
export function encodeRecordInto(rec: JournalRecord, buf: Uint8Array, offset: number): number {
  const view = new DataView(buf.buffer, buf.byteOffset + offset);
  let at = HEADER_BYTES;
  buf[offset + at] = rec.type === "put" ? TYPE_PUT : TYPE_DELETE;
  at += 1;
  putU64(view, at, rec.revision);
  putU64(view, at + 8, rec.createRevision);
  putU64(view, at + 16, rec.prevModRevision);
  view.setFloat64(at + 24, rec.time, true);
  at += 32;
  at = putString(buf, view, offset, at, rec.key);
  at = putString(buf, view, offset, at, rec.value);
  at = putString(buf, view, offset, at, rec.prevValue);
  const length = at - HEADER_BYTES;
  buf[offset] = RECORD_MAGIC;
  view.setUint32(1, length, true);
  const header = crc32c(buf.subarray(offset, offset + 5));
  view.setUint32(5, crc32c(buf.subarray(offset + HEADER_BYTES, offset + at), header), true);
  return offset + at;
}

/** Writes `s` as a u32 byte length and its UTF-8 bytes at `at` (relative to `offset`). */
function putString(buf: Uint8Array, view: DataView, offset: number, at: number, s: string): number {
  let written = 0;
  if (s.length) written = encoder.encodeInto(s, buf.subarray(offset + at + 4)).written;
  view.setUint32(at, written, true);
  return at + 4 + written;
}

/** The outcome of reading one record from a buffer. */
export type DecodeResult =
  | { ok: true; record: JournalRecord; size: number }
  | { ok: false; reason: string };

/**
 * Reads the record starting at `offset` of `buf`. Never throws: damage (short header, bad
 * magic, impossible length, checksum mismatch, malformed payload) comes back as a reason.
 */
export function decodeRecord(buf: Uint8Array, offset: number): DecodeResult {
  const left = buf.length - offset;
  if (left < HEADER_BYTES) return { ok: false, reason: `short header (${left} bytes)` };
  if (buf[offset] !== RECORD_MAGIC) {
    return { ok: false, reason: `bad magic byte 0x${buf[offset].toString(16)}` };
  }
  const view = new DataView(buf.buffer, buf.byteOffset + offset, left);
  const length = view.getUint32(1, true);
  if (length < FIXED_PAYLOAD_BYTES || length > MAX_PAYLOAD_BYTES) {
    return { ok: false, reason: `impossible payload length ${length}` };
  }
  if (HEADER_BYTES + length > left) {
    return {
      ok: false,
      reason: `record of ${HEADER_BYTES + length} bytes runs past the end (${left} left)`,
    };
  }
  const start = offset + HEADER_BYTES;
  const payload = buf.subarray(start, start + length);
  const crc = crc32c(payload, crc32c(buf.subarray(offset, offset + 5)));
  if (crc !== view.getUint32(5, true)) return { ok: false, reason: "checksum mismatch" };
  try {
    return { ok: true, record: decodePayload(payload), size: HEADER_BYTES + length };
  } catch (err) {
    return { ok: false, reason: `malformed payload: ${(err as Error).message}` };
  }
}

function decodePayload(p: Uint8Array): JournalRecord {
  const view = new DataView(p.buffer, p.byteOffset, p.length);
  const t = p[0];
  if (t !== TYPE_PUT && t !== TYPE_DELETE) throw new Error(`unknown record type ${t}`);
  let at = 33;
  const strings: string[] = [];
  for (let i = 0; i < 3; i++) {
    if (at + 4 > p.length) throw new Error("string length runs past the payload");
    const len = view.getUint32(at, true);
    if (at + 4 + len > p.length) throw new Error("string runs past the payload");
    strings.push(decoder.decode(p.subarray(at + 4, at + 4 + len)));
    at += 4 + len;
  }
  if (at !== p.length) throw new Error(`${p.length - at} trailing bytes`);
  return {
    type: t === TYPE_PUT ? "put" : "delete",
    revision: getU64(view, 1),
    createRevision: getU64(view, 9),
    prevModRevision: getU64(view, 17),
    time: view.getFloat64(25, true),
    key: strings[0],
    value: strings[1],
    prevValue: strings[2],
  };
}
