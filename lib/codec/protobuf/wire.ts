/**
 * Protobuf wire primitives: varints, tags and length-delimited fields. Every read is bounds
 * checked and throws {@link ProtobufError} on truncated or malformed input.
 */

import { MAX_NESTING_DEPTH } from "../../api/mod.ts";
import { ProtobufError } from "./errors.ts";

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_BYTES = 2;
export const WIRE_FIXED32 = 5;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Appends protobuf wire data to a growing buffer. */
export class Writer {
  #buf: Uint8Array;
  #len = 0;

  /** `capacity`: the initial buffer size (it doubles as needed). */
  constructor(capacity = 64) {
    this.#buf = new Uint8Array(Math.max(16, capacity));
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#len;
  }

  #ensure(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.#buf.subarray(0, this.#len));
    this.#buf = next;
  }

  /** Writes an unsigned varint (0 ≤ value < 2^64, as a number or bigint). */
  uvarint(value: number | bigint): void {
    if (typeof value === "number" && value >= 0 && value <= Number.MAX_SAFE_INTEGER) {
      this.#ensure(8);
      const buf = this.#buf;
      let len = this.#len;
      if (value < 0x80) {
        buf[len++] = value;
      } else if (value < 0x80000000) {
        while (value > 0x7f) {
          buf[len++] = (value & 0x7f) | 0x80;
          value >>>= 7;
        }
        buf[len++] = value;
      } else {
        while (value > 0x7f) {
          buf[len++] = (value % 128) | 0x80;
          value = Math.floor(value / 128);
        }
        buf[len++] = value;
      }
      this.#len = len;
      return;
    }
    let v = BigInt.asUintN(64, BigInt(value));
    this.#ensure(10);
    while (v > 0x7fn) {
      this.#buf[this.#len++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.#buf[this.#len++] = Number(v);
  }

  /** Writes a signed int32/int64 varint (negative values take 10 bytes, as protobuf requires). */
  svarint(value: number | bigint): void {
    if (typeof value === "number" && value >= 0) this.uvarint(value);
    else this.uvarint(BigInt.asUintN(64, BigInt(value)));
  }

  tag(field: number, wireType: number): void {
    this.uvarint(field * 8 + wireType);
  }

  /** Writes a double: 8 bytes, little-endian (wire type 1). */
  double(value: number): void {
    this.#ensure(8);
    new DataView(this.#buf.buffer, this.#buf.byteOffset + this.#len, 8).setFloat64(0, value, true);
    this.#len += 8;
  }

  bytes(data: Uint8Array): void {
    this.uvarint(data.length);
    this.#ensure(data.length);
    this.#buf.set(data, this.#len);
    this.#len += data.length;
  }

  raw(data: Uint8Array): void {
    this.#ensure(data.length);
    this.#buf.set(data, this.#len);
    this.#len += data.length;
  }

  /** Writes a length-delimited UTF-8 string. */
  string(value: string): void {
    const n = value.length;
    if (n < 0x80) {
      // short strings: length byte + ASCII copied by hand (cheaper than encodeInto + subarray);
      // back to the general path at the first non-ASCII character
      this.#ensure(n + 1);
      const buf = this.#buf;
      const mark = this.#len;
      let pos = mark + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c >= 0x80) break;
        buf[pos++] = c;
      }
      if (i === n) {
        buf[mark] = n;
        this.#len = pos;
        return;
      }
    }
    const mark = this.beginLength();
    this.#ensure(n * 3);
    this.#len += encoder.encodeInto(value, this.#buf.subarray(this.#len)).written;
    this.endLength(mark);
  }

  /**
   * Starts a length-delimited field whose length is not known yet: reserves one byte for the
   * length; {@link endLength} writes it (moving the content when the length needs more bytes).
   */
  beginLength(): number {
    this.#ensure(1);
    return this.#len++;
  }

  endLength(mark: number): void {
    const len = this.#len - mark - 1;
    if (len < 0x80) {
      this.#buf[mark] = len;
      return;
    }
    let size = 1;
    for (let v = len; v > 0x7f; v = Math.floor(v / 128)) size++;
    this.#ensure(size - 1);
    this.#buf.copyWithin(mark + size, mark + 1, this.#len);
    this.#len += size - 1;
    let v = len;
    let i = mark;
    while (v > 0x7f) {
      this.#buf[i++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.#buf[i] = v;
  }

  /** A copy of the bytes written. */
  finish(): Uint8Array {
    return this.#buf.slice(0, this.#len);
  }
}

/** Reads protobuf wire data from a byte range; `where` names the message for error messages. */
export class Reader {
  pos: number;
  /** How many readers this one is nested in: messages nest, and decoding them recurses. */
  level = 0;
  #where: string;
  #parent: Reader | undefined;

  constructor(
    readonly buf: Uint8Array,
    where: string,
    start = 0,
    readonly end = buf.length,
    parent?: Reader,
  ) {
    this.pos = start;
    this.#where = where;
    this.#parent = parent;
  }

  /**
   * A reader of [start, end) of the same bytes, named `${parent.where}.${name}` (the name is
   * only put together when an error message needs it).
   */
  static nested(parent: Reader, name: string, start: number, end: number): Reader {
    if (parent.level >= MAX_NESTING_DEPTH) {
      parent.fail(`exceeded max depth of ${MAX_NESTING_DEPTH}`);
    }
    const r = new Reader(parent.buf, name, start, end, parent);
    r.level = parent.level + 1;
    return r;
  }

  /** What is being read, for error messages. */
  get where(): string {
    return this.#parent ? `${this.#parent.where}.${this.#where}` : this.#where;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  fail(what: string): never {
    throw new ProtobufError(`Cannot decode protobuf ${this.where}: ${what} at byte ${this.pos}`);
  }

  /** Reads a varint of up to 10 bytes as a bigint (unsigned 64-bit). */
  uvarint64(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) this.fail("truncated varint");
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return BigInt.asUintN(64, result);
    }
    this.fail("varint longer than 10 bytes");
  }

  /** Reads a varint that must fit a non-negative safe integer (tags, lengths). */
  uvarint(): number {
    // fast path: up to 4 bytes (< 2^28) in plain number arithmetic
    let result = 0;
    for (let i = 0; i < 4 && this.pos + i < this.end; i++) {
      const b = this.buf[this.pos + i];
      result |= (b & 0x7f) << (7 * i);
      if (b < 0x80) {
        this.pos += i + 1;
        return result;
      }
    }
    const start = this.pos;
    const v = this.uvarint64();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) {
      this.pos = start;
      this.fail("varint too large");
    }
    return Number(v);
  }

  /** Reads an int64 varint as a number (two's complement; outside ±2^53 is an error). */
  int64(): number {
    // fast path: a non-negative value of up to 7 bytes (< 2^49) in plain number arithmetic
    const buf = this.buf;
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 7 && this.pos + i < this.end; i++) {
      const b = buf[this.pos + i];
      result += (b & 0x7f) * scale;
      if (b < 0x80) {
        this.pos += i + 1;
        return result;
      }
      scale *= 128;
    }
    const start = this.pos;
    const v = BigInt.asIntN(64, this.uvarint64());
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
      this.pos = start;
      this.fail(`integer ${v} outside the safe range`);
    }
    return Number(v);
  }

  int32(): number {
    // fast path: one to four bytes (0 ≤ value < 2^28)
    const buf = this.buf;
    let result = 0;
    for (let i = 0; i < 4 && this.pos + i < this.end; i++) {
      const b = buf[this.pos + i];
      result |= (b & 0x7f) << (7 * i);
      if (b < 0x80) {
        this.pos += i + 1;
        return result;
      }
    }
    return Number(BigInt.asIntN(32, this.uvarint64()));
  }

  /** Reads a double: 8 bytes, little-endian. */
  double(): number {
    if (this.end - this.pos < 8) this.fail("truncated double");
    const view = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8);
    this.pos += 8;
    return view.getFloat64(0, true);
  }

  bool(): boolean {
    if (this.pos < this.end && this.buf[this.pos] < 0x80) return this.buf[this.pos++] !== 0;
    return this.uvarint64() !== 0n;
  }

  /**
   * Reads a length prefix and returns the end of the range it covers; the range starts at
   * {@link pos} (the caller moves `pos` to the end when done). No array, unlike
   * {@link lengthDelimited}.
   */
  delimitedEnd(): number {
    const len = this.uvarint();
    if (len > this.end - this.pos) this.fail(`length ${len} exceeds the remaining input`);
    return this.pos + len;
  }

  /** Reads a tag as one number: field number × 8 + wire type (field 0 is an error). */
  tagValue(): number {
    const tag = this.uvarint();
    if (tag < 8) this.fail("field number 0");
    return tag;
  }

  /** Reads a length prefix and returns the [start, end) range it covers. */
  lengthDelimited(): [number, number] {
    const len = this.uvarint();
    if (len > this.end - this.pos) this.fail(`length ${len} exceeds the remaining input`);
    const start = this.pos;
    this.pos += len;
    return [start, this.pos];
  }

  bytes(): Uint8Array {
    const [start, end] = this.lengthDelimited();
    return this.buf.slice(start, end);
  }

  /** Like {@link bytes}, without a copy: a view of the input, for reading right away. */
  bytesView(): Uint8Array {
    const [start, end] = this.lengthDelimited();
    return this.buf.subarray(start, end);
  }

  string(): string {
    const [start, end] = this.lengthDelimited();
    if (end - start <= 64) {
      // short ASCII strings: cheaper than a TextDecoder call
      const buf = this.buf;
      let i = start;
      while (i < end && buf[i] < 0x80) i++;
      if (i === end) {
        return String.fromCharCode.apply(null, buf.subarray(start, end) as unknown as number[]);
      }
    }
    try {
      return decoder.decode(this.buf.subarray(start, end));
    } catch {
      this.pos = start;
      this.fail("invalid UTF-8 in string");
    }
  }

  /** Reads a tag; returns [field number, wire type]. */
  tag(): [number, number] {
    const tag = this.uvarint();
    const field = Math.floor(tag / 8);
    if (field === 0) this.fail("field number 0");
    return [field, tag & 7];
  }

  /** Skips a field of an unknown number (groups are not used by Kubernetes and are rejected). */
  skip(wireType: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.uvarint64();
        return;
      case WIRE_FIXED64:
        this.advance(8);
        return;
      case WIRE_BYTES:
        this.lengthDelimited();
        return;
      case WIRE_FIXED32:
        this.advance(4);
        return;
      default:
        this.fail(`unsupported wire type ${wireType}`);
    }
  }

  advance(n: number): void {
    if (n > this.end - this.pos) this.fail("truncated field");
    this.pos += n;
  }
}
