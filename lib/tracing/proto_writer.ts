/**
 * A protobuf writer for the few wire types OTLP's trace messages use (varint, fixed32,
 * fixed64, length-delimited), writing into one growing buffer that is reused from batch to
 * batch. A nested message's length is written once its body is: {@link ProtoWriter.begin}
 * leaves room for it and {@link ProtoWriter.end} fills it in (moving the body when the
 * length took another number of bytes than was left).
 *
 * @module
 */

const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const FIXED32 = 5;

/** Hex digit → value (-1: not a hex digit). */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX_VALUE["0123456789abcdef".charCodeAt(i)] = i;
  HEX_VALUE["0123456789ABCDEF".charCodeAt(i)] = i;
}

const utf8 = new TextEncoder();

/** `s.charCodeAt(i)` as `charCodeAt.call(s, i)`: the strings of a server's spans come in many
 * representations (concatenated, sliced, from the runtime), which made the property lookup of
 * `s.charCodeAt` megamorphic, a lookup per character (perf: `LoadIC_Megamorphic` under
 * `string`); a call through the function itself looks nothing up. */
const charCodeAt = String.prototype.charCodeAt;

/** The bytes of `n` (non-negative, below 2^53) as a varint. */
export function varintSize(n: number): number {
  let size = 1;
  while (n > 0x7f) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/** The UTF-8 size of `s`; a lone surrogate counts three bytes (U+FFFD, as the encoder
 * writes it). */
export function utf8Size(s: string): number {
  const n = s.length;
  let size = n;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) {
      size += 1;
      continue;
    }
    size += 2;
    // A surrogate pair: four bytes for its two units.
    const next = i + 1 < n ? s.charCodeAt(i + 1) : 0;
    if (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++;
  }
  return size;
}

export class ProtoWriter {
  buf: Uint8Array<ArrayBuffer>;
  pos = 0;
  #view: DataView;

  constructor(initialBytes = 64 * 1024) {
    this.buf = new Uint8Array(initialBytes);
    this.#view = new DataView(this.buf.buffer);
  }

  /** Room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const bigger = new Uint8Array(size);
    bigger.set(this.buf.subarray(0, this.pos));
    this.buf = bigger;
    this.#view = new DataView(bigger.buffer);
  }

  /** A non-negative integer up to 2^53 as a varint (the caller has made room: 10 bytes). */
  #varint(n: number): void {
    const buf = this.buf;
    let p = this.pos;
    while (n > 0x7f) {
      // Past 2^31 the bit operators would truncate: divide instead.
      buf[p++] = (n % 128) | 0x80;
      n = Math.floor(n / 128);
    }
    buf[p++] = n;
    this.pos = p;
  }

  /** A tag (field numbers below 16 take one byte). */
  #tag(field: number, wire: number): void {
    if (field < 16) this.buf[this.pos++] = (field << 3) | wire;
    else this.#varint((field << 3) | wire);
  }

  /** A varint field (uint32, enum, bool, a non-negative int64). */
  uint(field: number, n: number): void {
    this.ensure(16);
    this.#tag(field, VARINT);
    this.#varint(n);
  }

  /** An int64 field: negative values as 64-bit two's complement (ten bytes). */
  int64(field: number, n: number): void {
    if (n >= 0) return this.uint(field, n);
    this.ensure(16);
    this.#tag(field, VARINT);
    let v = BigInt.asUintN(64, BigInt(n));
    while (v > 0x7fn) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
  }

  fixed32(field: number, n: number): void {
    this.ensure(16);
    this.#tag(field, FIXED32);
    this.#view.setUint32(this.pos, n, true);
    this.pos += 4;
  }

  double(field: number, x: number): void {
    this.ensure(16);
    this.#tag(field, FIXED64);
    this.#view.setFloat64(this.pos, x, true);
    this.pos += 8;
  }

  /**
   * A fixed64 field of nanoseconds since the epoch from milliseconds (fractional): exact to
   * the nanosecond, though the nanoseconds pass 2^53 (the high and low words are computed
   * apart).
   */
  unixNanos(field: number, ms: number): void {
    this.ensure(16);
    this.#tag(field, FIXED64);
    const whole = Math.floor(ms);
    const fraction = Math.round((ms - whole) * 1e6);
    const high = Math.floor(whole / 0x1_0000_0000);
    // (high·2^32 + low)·10^6 + fraction, each product below 2^53.
    const low = (whole - high * 0x1_0000_0000) * 1e6 + fraction;
    const carry = Math.floor(low / 0x1_0000_0000);
    this.#view.setUint32(this.pos, low - carry * 0x1_0000_0000, true);
    this.#view.setUint32(this.pos + 4, high * 1e6 + carry, true);
    this.pos += 8;
  }

  /** A string field, UTF-8. ASCII (names, keys, paths: nearly everything here) is copied
   * as it is read, in one pass; anything else is measured, then encoded. */
  string(field: number, s: string): void {
    const n = s.length;
    this.ensure(16 + n);
    this.#tag(field, LEN);
    const lengthAt = this.pos;
    const lengthSize = varintSize(n);
    const buf = this.buf;
    let p = lengthAt + lengthSize;
    for (let i = 0; i < n; i++) {
      const c = charCodeAt.call(s, i);
      if (c > 0x7f) {
        this.pos = lengthAt;
        return this.#utf8(s);
      }
      buf[p++] = c;
    }
    this.pos = lengthAt;
    this.#varint(n);
    this.pos = p;
  }

  /** The length and bytes of a string that is not ASCII. */
  #utf8(s: string): void {
    const size = utf8Size(s);
    this.ensure(16 + size);
    this.#varint(size);
    this.pos += utf8.encodeInto(s, this.buf.subarray(this.pos)).written;
  }

  /** A bytes field from lower- or upper-case hex (trace and span ids). */
  hexBytes(field: number, hex: string): void {
    const n = hex.length >> 1;
    this.ensure(16 + n);
    this.#tag(field, LEN);
    this.#varint(n);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < 2 * n; i += 2) {
      buf[p++] = (HEX_VALUE[hex.charCodeAt(i) & 0x7f] << 4) |
        HEX_VALUE[hex.charCodeAt(i + 1) & 0x7f];
    }
    this.pos = p;
  }

  /** A bytes field of 32-bit words, each big-endian (trace and span ids, ids.ts). */
  words2(field: number, a: number, b: number): void {
    this.ensure(16);
    this.buf[this.pos++] = (field << 3) | LEN;
    this.buf[this.pos++] = 8;
    this.#view.setUint32(this.pos, a);
    this.#view.setUint32(this.pos + 4, b);
    this.pos += 8;
  }

  /** As {@link words2}, of four words. */
  words4(field: number, a: number, b: number, c: number, d: number): void {
    this.ensure(24);
    this.buf[this.pos++] = (field << 3) | LEN;
    this.buf[this.pos++] = 16;
    this.#view.setUint32(this.pos, a);
    this.#view.setUint32(this.pos + 4, b);
    this.#view.setUint32(this.pos + 8, c);
    this.#view.setUint32(this.pos + 12, d);
    this.pos += 16;
  }

  /** Raw bytes of already encoded fields. */
  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** The tag and length of a length-delimited field whose `length` bytes follow. */
  header(field: number, length: number): void {
    this.ensure(16);
    this.#tag(field, LEN);
    this.#varint(length);
  }

  /**
   * Starts an embedded message field, leaving `reserve` bytes for its length (1: below 128
   * bytes, 2: below 16 KiB); returns what {@link end} takes. A length that takes another
   * number of bytes moves the body.
   */
  begin(field: number, reserve: 1 | 2): number {
    this.ensure(16);
    this.#tag(field, LEN);
    const start = this.pos;
    this.pos += reserve;
    return start * 4 + reserve;
  }

  /** Ends the embedded message {@link begin} started: writes its length. */
  end(started: number): void {
    const reserved = started & 3;
    const start = (started - reserved) / 4;
    const length = this.pos - start - reserved;
    const size = varintSize(length);
    if (size !== reserved) {
      this.ensure(size);
      this.buf.copyWithin(start + size, start + reserved, this.pos);
      this.pos += size - reserved;
    }
    const end = this.pos;
    this.pos = start;
    this.#varint(length);
    this.pos = end;
  }

  /** The bytes written so far (a view, valid until the next write). */
  bytes(): Uint8Array<ArrayBuffer> {
    return this.buf.subarray(0, this.pos);
  }

  reset(): void {
    this.pos = 0;
  }
}
