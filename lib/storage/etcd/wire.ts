/**
 * What the etcd client and what serves it (`client_handler.ts`, on the caller's thread or the
 * client's worker thread) exchange: etcd's requests and responses as grpc-js gives them (keys and
 * values as bytes, revisions as numbers), and the client's messages.
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

/** A gRPC route to one endpoint (the egress dialer's, made on the caller's thread). */
export interface WireRoute {
  target: string;
  options: Record<string, string | number>;
}

/** Caller → worker. `conn` names one connection (an `EtcdClient`), `id` one call, `sid` one
 * watch stream. */
export type ToClientWorker =
  | {
    op: "open";
    conn: number;
    endpoints: string[];
    routes: WireRoute[];
    first: number;
    tls?: EtcdTls;
  }
  | {
    op: "call";
    conn: number;
    id: number;
    method: string;
    req: unknown;
    timeoutMs: number;
    waitForReady: boolean;
    traceparent?: string;
  }
  | { op: "watch"; conn: number; sid: number }
  | { op: "watchWrite"; sid: number; req: unknown }
  | { op: "watchCancel"; sid: number }
  | { op: "close"; conn: number };

/** A failed gRPC call or stream, as the worker sends it. */
export interface WireError {
  code: number;
  details: string;
  message: string;
}

/** Worker → caller. */
export type FromClientWorker =
  | { op: "result"; id: number; res: unknown }
  | { op: "error"; id: number; err: WireError }
  | { op: "endpoint"; conn: number; current: number }
  | { op: "watchData"; sid: number; res: WatchResponse }
  | { op: "watchError"; sid: number; err: WireError }
  | { op: "watchEnd"; sid: number };
