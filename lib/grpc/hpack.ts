/**
 * HPACK (RFC 7541), as a gRPC client needs it: an encoder that writes every field as a literal
 * without indexing (plain strings; no dynamic table of ours for the server to keep), and a full
 * decoder (static and dynamic tables, Huffman-coded strings) for what the server sends.
 * @module
 */

import { huffmanDecode, HuffmanError } from "./huffman.ts";

/** A header block could not be decoded: a connection error (COMPRESSION_ERROR). */
export class HpackError extends Error {
  override name = "HpackError";
}

/** RFC 7541 Appendix A: the static table, entries 1–61. */
const STATIC: ReadonlyArray<readonly [string, string]> = [
  [":authority", ""],
  [":method", "GET"],
  [":method", "POST"],
  [":path", "/"],
  [":path", "/index.html"],
  [":scheme", "http"],
  [":scheme", "https"],
  [":status", "200"],
  [":status", "204"],
  [":status", "206"],
  [":status", "304"],
  [":status", "400"],
  [":status", "404"],
  [":status", "500"],
  ["accept-charset", ""],
  ["accept-encoding", "gzip, deflate"],
  ["accept-language", ""],
  ["accept-ranges", ""],
  ["accept", ""],
  ["access-control-allow-origin", ""],
  ["age", ""],
  ["allow", ""],
  ["authorization", ""],
  ["cache-control", ""],
  ["content-disposition", ""],
  ["content-encoding", ""],
  ["content-language", ""],
  ["content-length", ""],
  ["content-location", ""],
  ["content-range", ""],
  ["content-type", ""],
  ["cookie", ""],
  ["date", ""],
  ["etag", ""],
  ["expect", ""],
  ["expires", ""],
  ["from", ""],
  ["host", ""],
  ["if-match", ""],
  ["if-modified-since", ""],
  ["if-none-match", ""],
  ["if-range", ""],
  ["if-unmodified-since", ""],
  ["last-modified", ""],
  ["link", ""],
  ["location", ""],
  ["max-forwards", ""],
  ["proxy-authenticate", ""],
  ["proxy-authorization", ""],
  ["range", ""],
  ["referer", ""],
  ["refresh", ""],
  ["retry-after", ""],
  ["server", ""],
  ["set-cookie", ""],
  ["strict-transport-security", ""],
  ["transfer-encoding", ""],
  ["user-agent", ""],
  ["vary", ""],
  ["via", ""],
  ["www-authenticate", ""],
];

/** Each entry's overhead in the table's size (RFC 7541 §4.1). */
const ENTRY_OVERHEAD = 32;

const latin1 = new TextDecoder("latin1");

/** Decodes header blocks of one connection (its dynamic table lives as long as it does). */
export class HpackDecoder {
  /** Newest first. */
  #dynamic: [string, string][] = [];
  #size = 0;
  #maxSize: number;
  /** The bound we announced (SETTINGS_HEADER_TABLE_SIZE); updates may not exceed it. */
  readonly #limit: number;

  constructor(limit = 4096) {
    this.#limit = limit;
    this.#maxSize = limit;
  }

  /** The fields of one complete header block, in order; names are lower case on the wire. */
  decode(block: Uint8Array): [string, string][] {
    const fields: [string, string][] = [];
    const r = { pos: 0 };
    try {
      while (r.pos < block.length) {
        const b = block[r.pos];
        if (b & 0x80) { // indexed field
          fields.push(this.#entry(readInt(block, r, 7)));
        } else if (b & 0x40) { // literal with incremental indexing
          const field = this.#literal(block, r, 6);
          this.#add(field);
          fields.push(field);
        } else if (b & 0x20) { // dynamic table size update
          const size = readInt(block, r, 5);
          if (size > this.#limit) throw new HpackError(`table size ${size} over ${this.#limit}`);
          this.#maxSize = size;
          this.#evict(0);
        } else { // literal without indexing (0000) or never indexed (0001)
          fields.push(this.#literal(block, r, 4));
        }
      }
    } catch (err) {
      if (err instanceof HuffmanError) throw new HpackError(err.message);
      throw err;
    }
    return fields;
  }

  #literal(block: Uint8Array, r: { pos: number }, prefix: number): [string, string] {
    const index = readInt(block, r, prefix);
    const name = index === 0 ? readString(block, r) : this.#entry(index)[0];
    return [name, readString(block, r)];
  }

  #entry(index: number): [string, string] {
    if (index >= 1 && index <= STATIC.length) {
      const [name, value] = STATIC[index - 1];
      return [name, value];
    }
    const entry = this.#dynamic[index - STATIC.length - 1];
    if (!entry) throw new HpackError(`no header table entry ${index}`);
    return entry;
  }

  #add(field: [string, string]): void {
    const size = field[0].length + field[1].length + ENTRY_OVERHEAD;
    this.#evict(size);
    if (size > this.#maxSize) return; // RFC 7541 §4.4: the table is left empty
    this.#dynamic.unshift(field);
    this.#size += size;
  }

  /** Drops the oldest entries until `incoming` more bytes fit. */
  #evict(incoming: number): void {
    while (this.#dynamic.length && this.#size + incoming > this.#maxSize) {
      const [name, value] = this.#dynamic.pop()!;
      this.#size -= name.length + value.length + ENTRY_OVERHEAD;
    }
  }
}

/** RFC 7541 §5.1: an integer with an N-bit prefix. */
function readInt(block: Uint8Array, r: { pos: number }, prefix: number): number {
  const max = (1 << prefix) - 1;
  let value = block[r.pos++] & max;
  if (value < max) return value;
  let shift = 0;
  for (;;) {
    if (r.pos >= block.length) throw new HpackError("truncated integer");
    const b = block[r.pos++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (!(b & 0x80)) return value;
    if (shift > 28) throw new HpackError("integer too large");
  }
}

/** RFC 7541 §5.2: a string literal, plain or Huffman-coded. */
function readString(block: Uint8Array, r: { pos: number }): string {
  if (r.pos >= block.length) throw new HpackError("truncated string");
  const huffman = (block[r.pos] & 0x80) !== 0;
  const length = readInt(block, r, 7);
  const start = r.pos;
  const end = start + length;
  if (end > block.length) throw new HpackError("truncated string");
  r.pos = end;
  return huffman ? huffmanDecode(block, start, end) : latin1.decode(block.subarray(start, end));
}

/**
 * Encodes fields as literals without indexing, with the name indexed where the static table
 * has it. Names must be lower case; values are sent as their UTF-8 bytes.
 */
export function encodeHeaders(fields: ReadonlyArray<readonly [string, string]>): Uint8Array {
  const out: number[] = [];
  for (const [name, value] of fields) {
    const index = STATIC_NAMES.get(name);
    if (index === undefined) {
      out.push(0);
      writeString(out, name);
    } else writeInt(out, index, 4, 0);
    writeString(out, value);
  }
  return Uint8Array.from(out);
}

const STATIC_NAMES = new Map<string, number>();
STATIC.forEach(([name], i) => {
  if (!STATIC_NAMES.has(name)) STATIC_NAMES.set(name, i + 1);
});

const utf8 = new TextEncoder();

function writeString(out: number[], s: string): void {
  const bytes = utf8.encode(s);
  writeInt(out, bytes.length, 7, 0);
  for (const b of bytes) out.push(b);
}

function writeInt(out: number[], value: number, prefix: number, flags: number): void {
  const max = (1 << prefix) - 1;
  if (value < max) {
    out.push(flags | value);
    return;
  }
  out.push(flags | max);
  value -= max;
  while (value >= 0x80) {
    out.push((value & 0x7f) | 0x80);
    value = Math.floor(value / 128);
  }
  out.push(value);
}
