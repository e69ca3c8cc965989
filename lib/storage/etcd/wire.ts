/**
 * etcd's requests and responses as the client gives them (decoded by protobuf.js: keys and
 * values as bytes, revisions as numbers), its call options and its errors.
 * @module
 */

export interface RawKeyValue {
  key: Uint8Array;
  create_revision: number;
  mod_revision: number;
  version: number;
  value: Uint8Array;
}

export interface ResponseHeader {
  revision: number;
}

export interface RangeRequest {
  key: Uint8Array;
  range_end?: Uint8Array;
  limit?: number;
  revision?: number;
  count_only?: boolean;
  keys_only?: boolean;
  serializable?: boolean;
  min_mod_revision?: number;
}

export interface RangeResponse {
  header: ResponseHeader;
  kvs: RawKeyValue[];
  more: boolean;
  count: number;
}

export interface Compare {
  key: Uint8Array;
  target: "VERSION" | "CREATE" | "MOD" | "VALUE";
  result: "EQUAL" | "GREATER" | "LESS" | "NOT_EQUAL";
  create_revision?: number;
  mod_revision?: number;
  version?: number;
}

export interface RequestOp {
  request_range?: RangeRequest;
  request_put?: { key: Uint8Array; value: Uint8Array; prev_kv?: boolean };
  request_delete_range?: { key: Uint8Array; range_end?: Uint8Array; prev_kv?: boolean };
}

export interface ResponseOp {
  response_range?: RangeResponse | null;
  response_put?: { header: ResponseHeader; prev_kv: RawKeyValue | null } | null;
  response_delete_range?:
    | { header: ResponseHeader; deleted: number; prev_kvs: RawKeyValue[] }
    | null;
}

export interface TxnRequest {
  compare: Compare[];
  success: RequestOp[];
  failure: RequestOp[];
}

export interface TxnResponse {
  header: ResponseHeader;
  succeeded: boolean;
  responses: ResponseOp[];
}

export interface WatchEvent {
  type: "PUT" | "DELETE";
  kv: RawKeyValue;
  prev_kv: RawKeyValue | null;
}

export interface WatchResponse {
  header: ResponseHeader;
  watch_id: number;
  created: boolean;
  canceled: boolean;
  compact_revision: number;
  cancel_reason: string;
  events: WatchEvent[];
}

/** TLS material for `https://` endpoints (PEM file contents). */
export interface EtcdTls {
  ca?: Uint8Array;
  cert?: Uint8Array;
  key?: Uint8Array;
}

/** Per-call options. */
export interface CallOptions {
  /** @default 30_000 */
  timeoutMs?: number;
  /** Wait for the channel to connect instead of failing at once. @default false */
  waitForReady?: boolean;
}

/** A failed gRPC call or stream, as plain data. */
export interface WireError {
  code: number;
  details: string;
  message: string;
}
