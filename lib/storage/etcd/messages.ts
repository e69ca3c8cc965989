/**
 * etcd's messages in protobuf (field numbers from `protos/rpc.proto` and `protos/kv.proto`):
 * the requests the client sends, written from the objects of `wire.ts`, and the responses it
 * reads, decoded to those objects as protobuf.js did with the options the client used
 * (`keepCase`, int64 as numbers, enums as their names, defaults filled in, absent messages
 * `null`). Bytes fields are views into the message (no copy per key and value).
 * @module
 */

import type { Compare, RequestOp, WatchEvent, WatchResponse } from "./wire.ts";

const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;
const FIXED32 = 5;

/** A growable buffer that writes protobuf fields. */
class Writer {
  #buf = new Uint8Array(256);
  #len = 0;

  #room(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    const bigger = new Uint8Array(Math.max(this.#buf.length * 2, this.#len + n));
    bigger.set(this.#buf.subarray(0, this.#len));
    this.#buf = bigger;
  }

  varint(v: number): void {
    this.#room(10);
    if (v < 0) {
      // int64 two's complement: ten bytes.
      let big = BigInt.asUintN(64, BigInt(v));
      for (let i = 0; i < 9; i++) {
        this.#buf[this.#len++] = Number(big & 0x7fn) | 0x80;
        big >>= 7n;
      }
      this.#buf[this.#len++] = Number(big);
      return;
    }
    while (v >= 0x80) {
      this.#buf[this.#len++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.#buf[this.#len++] = v;
  }

  tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  bytes(field: number, b: Uint8Array): void {
    this.tag(field, BYTES);
    this.varint(b.length);
    this.#room(b.length);
    this.#buf.set(b, this.#len);
    this.#len += b.length;
  }

  /** A number field, left out when 0 (proto3), unless `always` (a oneof member). */
  int(field: number, v: number | undefined, always = false): void {
    if (v === undefined || (v === 0 && !always)) return;
    this.tag(field, VARINT);
    this.varint(v);
  }

  bool(field: number, v: boolean | undefined): void {
    if (v) this.int(field, 1);
  }

  /** A bytes field, left out when empty (proto3), unless `always`. */
  optBytes(field: number, b: Uint8Array | undefined, always = false): void {
    if (b === undefined || (b.length === 0 && !always)) return;
    this.bytes(field, b);
  }

  /** A nested message, written in place: its length is put in front once known. */
  message(field: number, write: (w: Writer) => void): void {
    this.tag(field, BYTES);
    const at = this.#len;
    this.#room(1);
    this.#len++; // one byte reserved for the length
    write(this);
    const n = this.#len - at - 1;
    if (n < 0x80) {
      this.#buf[at] = n;
      return;
    }
    let size = 1;
    for (let v = n; v >= 0x80; v = Math.floor(v / 0x80)) size++;
    this.#room(size - 1);
    this.#buf.copyWithin(at + size, at + 1, this.#len);
    const end = this.#len + size - 1;
    this.#len = at;
    this.varint(n);
    this.#len = end;
  }

  reset(): void {
    this.#len = 0;
  }

  /** What was written (a view, until the writer is used again). */
  finish(): Uint8Array {
    return this.#buf.subarray(0, this.#len);
  }
}

/** Reads fields of one message. */
class Reader {
  readonly buf: Uint8Array;
  pos: number;
  readonly end: number;

  constructor(buf: Uint8Array, pos = 0, end = buf.length) {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
  }

  varint(): number {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new Error("etcd message: truncated varint");
      const b = this.buf[this.pos++];
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 0x80;
    }
    throw new Error("etcd message: varint too long");
  }

  bytes(): Uint8Array {
    const n = this.varint();
    if (this.pos + n > this.end) throw new Error("etcd message: truncated field");
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }

  /** A nested message's reader (and this one moves past it). */
  sub(): Reader {
    const n = this.varint();
    if (this.pos + n > this.end) throw new Error("etcd message: truncated message");
    const r = new Reader(this.buf, this.pos, this.pos + n);
    this.pos += n;
    return r;
  }

  skip(wire: number): void {
    if (wire === VARINT) this.varint();
    else if (wire === FIXED64) this.pos += 8;
    else if (wire === BYTES) this.pos += this.varint();
    else if (wire === FIXED32) this.pos += 4;
    else throw new Error(`etcd message: wire type ${wire}`);
  }

  /** Calls `field` for each field until the end. */
  each(field: (n: number, wire: number) => void): void {
    while (this.pos < this.end) {
      const key = this.varint();
      field(Math.floor(key / 8), key & 7);
    }
  }
}

const EMPTY: Uint8Array = new Uint8Array(0);
const shared = new Writer();

// ---- requests

interface RangeFields {
  key: Uint8Array;
  range_end?: Uint8Array;
  limit?: number;
  revision?: number;
  serializable?: boolean;
  keys_only?: boolean;
  count_only?: boolean;
  min_mod_revision?: number;
}

function writeRange(w: Writer, r: RangeFields): void {
  w.optBytes(1, r.key);
  w.optBytes(2, r.range_end);
  w.int(3, r.limit);
  w.int(4, r.revision);
  w.bool(7, r.serializable);
  w.bool(8, r.keys_only);
  w.bool(9, r.count_only);
  w.int(10, r.min_mod_revision);
}

function writeDeleteRange(
  w: Writer,
  r: { key: Uint8Array; range_end?: Uint8Array; prev_kv?: boolean },
): void {
  w.optBytes(1, r.key);
  w.optBytes(2, r.range_end);
  w.bool(3, r.prev_kv);
}

const COMPARE_RESULT = { EQUAL: 0, GREATER: 1, LESS: 2, NOT_EQUAL: 3 } as const;
const COMPARE_TARGET = { VERSION: 0, CREATE: 1, MOD: 2, VALUE: 3 } as const;

function writeCompare(w: Writer, c: Compare & { value?: Uint8Array }): void {
  w.int(1, COMPARE_RESULT[c.result]);
  w.int(2, COMPARE_TARGET[c.target]);
  w.optBytes(3, c.key);
  // The target's operand is a oneof member: sent even when 0.
  w.int(4, c.version, true);
  w.int(5, c.create_revision, true);
  w.int(6, c.mod_revision, true);
  w.optBytes(7, c.value, true);
}

function writeRequestOp(w: Writer, op: RequestOp): void {
  if (op.request_range) w.message(1, (m) => writeRange(m, op.request_range!));
  if (op.request_put) {
    const put = op.request_put;
    w.message(2, (m) => {
      m.optBytes(1, put.key);
      m.optBytes(2, put.value);
      m.bool(4, put.prev_kv);
    });
  }
  if (op.request_delete_range) {
    w.message(3, (m) => writeDeleteRange(m, op.request_delete_range!));
  }
}

interface WatchRequest {
  create_request?: {
    key: Uint8Array;
    range_end?: Uint8Array;
    start_revision?: number;
    progress_notify?: boolean;
    prev_kv?: boolean;
    watch_id?: number;
  };
  cancel_request?: { watch_id: number };
  progress_request?: Record<string, never>;
}

// ---- responses

function header(r: Reader) {
  const h = { cluster_id: 0, member_id: 0, revision: 0, raft_term: 0 };
  r.each((n, wire) => {
    if (n === 1) h.cluster_id = r.varint();
    else if (n === 2) h.member_id = r.varint();
    else if (n === 3) h.revision = r.varint();
    else if (n === 4) h.raft_term = r.varint();
    else r.skip(wire);
  });
  return h;
}

function keyValue(r: Reader) {
  const kv = {
    key: EMPTY,
    create_revision: 0,
    mod_revision: 0,
    version: 0,
    value: EMPTY,
    lease: 0,
  };
  r.each((n, wire) => {
    if (n === 1) kv.key = r.bytes();
    else if (n === 2) kv.create_revision = r.varint();
    else if (n === 3) kv.mod_revision = r.varint();
    else if (n === 4) kv.version = r.varint();
    else if (n === 5) kv.value = r.bytes();
    else if (n === 6) kv.lease = r.varint();
    else r.skip(wire);
  });
  return kv;
}

function rangeResponse(r: Reader) {
  const res = {
    header: null as ReturnType<typeof header> | null,
    kvs: [] as unknown[],
    more: false,
    count: 0,
  };
  r.each((n, wire) => {
    if (n === 1) res.header = header(r.sub());
    else if (n === 2) res.kvs.push(keyValue(r.sub()));
    else if (n === 3) res.more = r.varint() !== 0;
    else if (n === 4) res.count = r.varint();
    else r.skip(wire);
  });
  return res;
}

function putResponse(r: Reader) {
  const res = { header: null as unknown, prev_kv: null as unknown };
  r.each((n, wire) => {
    if (n === 1) res.header = header(r.sub());
    else if (n === 2) res.prev_kv = keyValue(r.sub());
    else r.skip(wire);
  });
  return res;
}

function deleteRangeResponse(r: Reader) {
  const res = { header: null as unknown, deleted: 0, prev_kvs: [] as unknown[] };
  r.each((n, wire) => {
    if (n === 1) res.header = header(r.sub());
    else if (n === 2) res.deleted = r.varint();
    else if (n === 3) res.prev_kvs.push(keyValue(r.sub()));
    else r.skip(wire);
  });
  return res;
}

function txnResponse(r: Reader): unknown {
  const res = { header: null as unknown, succeeded: false, responses: [] as unknown[] };
  r.each((n, wire) => {
    if (n === 1) res.header = header(r.sub());
    else if (n === 2) res.succeeded = r.varint() !== 0;
    else if (n === 3) res.responses.push(responseOp(r.sub()));
    else r.skip(wire);
  });
  return res;
}

/** A ResponseOp: only its one member is set (a oneof). */
function responseOp(r: Reader): Record<string, unknown> {
  const op: Record<string, unknown> = {};
  r.each((n, wire) => {
    if (n === 1) op.response_range = rangeResponse(r.sub());
    else if (n === 2) op.response_put = putResponse(r.sub());
    else if (n === 3) op.response_delete_range = deleteRangeResponse(r.sub());
    else if (n === 4) op.response_txn = txnResponse(r.sub());
    else r.skip(wire);
  });
  return op;
}

function compactionResponse(r: Reader) {
  const res = { header: null as unknown };
  r.each((n, wire) => {
    if (n === 1) res.header = header(r.sub());
    else r.skip(wire);
  });
  return res;
}

const EVENT_TYPES = ["PUT", "DELETE"] as const;

function watchResponse(r: Reader): WatchResponse {
  const res = {
    header: null as unknown,
    watch_id: 0,
    created: false,
    canceled: false,
    compact_revision: 0,
    cancel_reason: "",
    fragment: false,
    events: [] as WatchEvent[],
  };
  r.each((n, wire) => {
    if (n === 1) res.header = header(r.sub());
    else if (n === 2) res.watch_id = r.varint();
    else if (n === 3) res.created = r.varint() !== 0;
    else if (n === 4) res.canceled = r.varint() !== 0;
    else if (n === 5) res.compact_revision = r.varint();
    else if (n === 6) res.cancel_reason = utf8.decode(r.bytes());
    else if (n === 7) res.fragment = r.varint() !== 0;
    else if (n === 11) res.events.push(event(r.sub()));
    else r.skip(wire);
  });
  return res as WatchResponse;
}

function event(r: Reader): WatchEvent {
  const e = { type: "PUT" as WatchEvent["type"], kv: null as unknown, prev_kv: null as unknown };
  r.each((n, wire) => {
    if (n === 1) e.type = EVENT_TYPES[r.varint()] ?? "PUT";
    else if (n === 2) e.kv = keyValue(r.sub());
    else if (n === 3) e.prev_kv = keyValue(r.sub());
    else r.skip(wire);
  });
  return e as WatchEvent;
}

const utf8 = new TextDecoder();

/** How one method's messages are written and read. */
export interface MethodCodec {
  /** The request's bytes, valid until the next `encode` (use or copy them at once). */
  encode(req: unknown): Uint8Array;
  decode(bytes: Uint8Array): unknown;
}

function codec(
  write: (w: Writer, req: never) => void,
  read: (r: Reader) => unknown,
): MethodCodec {
  return {
    encode: (req) => {
      // One writer for every request: the result is a view of it, valid until the next encode
      // (the channel copies a message into its frame as it is given).
      shared.reset();
      write(shared, req as never);
      return shared.finish();
    },
    decode: (bytes) => read(new Reader(bytes)),
  };
}

/** The codecs of the methods the client calls, by gRPC path. */
export const METHODS: ReadonlyMap<string, MethodCodec> = new Map([
  ["/etcdserverpb.KV/Range", codec(writeRange, rangeResponse)],
  ["/etcdserverpb.KV/DeleteRange", codec(writeDeleteRange, deleteRangeResponse)],
  [
    "/etcdserverpb.KV/Txn",
    codec((w, t: { compare: Compare[]; success: RequestOp[]; failure: RequestOp[] }) => {
      for (const c of t.compare ?? []) w.message(1, (m) => writeCompare(m, c));
      for (const op of t.success ?? []) w.message(2, (m) => writeRequestOp(m, op));
      for (const op of t.failure ?? []) w.message(3, (m) => writeRequestOp(m, op));
    }, txnResponse),
  ],
  [
    "/etcdserverpb.KV/Compact",
    codec((w, c: { revision: number; physical?: boolean }) => {
      w.int(1, c.revision);
      w.bool(2, c.physical);
    }, compactionResponse),
  ],
  [
    "/etcdserverpb.Watch/Watch",
    codec((w, req: WatchRequest) => {
      const create = req.create_request;
      if (create) {
        w.message(1, (m) => {
          m.optBytes(1, create.key);
          m.optBytes(2, create.range_end);
          m.int(3, create.start_revision);
          m.bool(4, create.progress_notify);
          m.bool(6, create.prev_kv);
          m.int(7, create.watch_id);
        });
      }
      const cancel = req.cancel_request;
      if (cancel) w.message(2, (m) => m.int(1, cancel.watch_id));
      if (req.progress_request) w.message(3, () => {});
    }, watchResponse),
  ],
]);
