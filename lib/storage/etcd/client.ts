/**
 * A small client for etcd's v3 gRPC API (the KV and Watch services): `@grpc/grpc-js` with the
 * API's own .proto files (`protos/`, trimmed from etcd's repository; Apache-2.0, see
 * `protos/LICENSE`), loaded by `@grpc/proto-loader`. Only what the etcd3 backend needs:
 * Range, Txn, DeleteRange, Compact and one bidirectional Watch stream.
 *
 * Keys and values are bytes on the wire; revisions are decoded as JavaScript numbers (exact
 * below 2^53). Requests past {@link MAX_INFLIGHT} wait for a slot, so that a burst of writes
 * does not pile up on etcd (which refuses with "too many requests" when its apply loop lags).
 * @module
 */

// @ts-types="./grpc_types.d.ts"
import * as grpc from "@grpc/grpc-js";
// @ts-types="./proto_loader_types.d.ts"
import * as protoLoader from "@grpc/proto-loader";
import { Buffer } from "node:buffer";
import { currentTraceparent } from "../../tracing/mod.ts";

/** Requests in flight at once; more wait their turn. */
export const MAX_INFLIGHT = 256;

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

/** The bidirectional Watch stream, as grpc-js gives it. */
export interface WatchStream {
  write(req: unknown): boolean;
  on(event: "data", fn: (res: WatchResponse) => void): this;
  on(event: "error", fn: (err: Error) => void): this;
  on(event: "end" | "close", fn: () => void): this;
  cancel(): void;
}

/** TLS material for `https://` endpoints (PEM file contents). */
export interface EtcdTls {
  ca?: Uint8Array;
  cert?: Uint8Array;
  key?: Uint8Array;
}

/** etcd could not be reached, or refused. `endpoints` names where the client tried. */
export class EtcdUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "EtcdUnavailableError";
  }
}

/** The byte after which nothing starts with `prefix` (etcd's prefix range end). */
export function prefixEnd(prefix: Uint8Array): Uint8Array {
  const end = prefix.slice();
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.slice(0, i + 1);
    }
  }
  return new Uint8Array([0]); // every key
}

// deno-lint-ignore no-explicit-any
type GrpcClient = any;

let services:
  | { KV: grpc.ServiceClientConstructor; Watch: grpc.ServiceClientConstructor }
  | undefined;

function loadServices() {
  if (services) return services;
  const dir = new URL("./protos/", import.meta.url);
  const def = protoLoader.loadSync("rpc.proto", {
    includeDirs: [decodeURIComponent(dir.pathname)],
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: false,
  });
  // deno-lint-ignore no-explicit-any
  const pkg = grpc.loadPackageDefinition(def) as any;
  services = { KV: pkg.etcdserverpb.KV, Watch: pkg.etcdserverpb.Watch };
  return services;
}

/** One connection (channel) to one etcd endpoint. */
export class EtcdClient {
  readonly endpoint: string;
  #kv: GrpcClient;
  #watch: GrpcClient;
  #inflight = 0;
  #queue: (() => void)[] = [];
  #closed = false;

  private constructor(endpoint: string, tls: EtcdTls | undefined) {
    const { KV, Watch } = loadServices();
    const url = new URL(endpoint.includes("://") ? endpoint : `http://${endpoint}`);
    const secure = url.protocol === "https:";
    const creds = secure
      ? grpc.credentials.createSsl(
        tls?.ca ? toBuffer(tls.ca) : null,
        tls?.key ? toBuffer(tls.key) : null,
        tls?.cert ? toBuffer(tls.cert) : null,
      )
      : grpc.credentials.createInsecure();
    const target = `${url.hostname}:${url.port || (secure ? "443" : "2379")}`;
    const options = { "grpc.max_receive_message_length": 512 * 1024 * 1024 };
    this.endpoint = endpoint;
    this.#kv = new KV(target, creds, options);
    this.#watch = new Watch(target, creds, options);
  }

  /**
   * Connects to the first of `endpoints` that answers a Range within `timeoutMs`.
   *
   * @throws {EtcdUnavailableError} naming every endpoint and why each failed.
   */
  static async connect(
    endpoints: string[],
    opts: { tls?: EtcdTls; timeoutMs?: number } = {},
  ): Promise<EtcdClient> {
    if (endpoints.length === 0) throw new EtcdUnavailableError("No etcd endpoints given");
    const reasons: string[] = [];
    for (const endpoint of endpoints) {
      let client: EtcdClient | undefined;
      try {
        client = new EtcdClient(endpoint, opts.tls);
        await client.range(
          { key: new Uint8Array([0]), count_only: true, limit: 1 },
          { timeoutMs: opts.timeoutMs ?? 5_000, waitForReady: true },
        );
        return client;
      } catch (err) {
        client?.close();
        reasons.push(`${endpoint}: ${err instanceof Error ? err.message : err}`);
      }
    }
    throw new EtcdUnavailableError(
      `Cannot reach etcd at ${endpoints.join(", ")} (${reasons.join("; ")})`,
    );
  }

  range(req: RangeRequest, opts?: CallOptions): Promise<RangeResponse> {
    return this.#unary(this.#kv, "Range", req, opts);
  }

  txn(req: TxnRequest, opts?: CallOptions): Promise<TxnResponse> {
    return this.#unary(this.#kv, "Txn", req, opts);
  }

  deleteRange(
    req: { key: Uint8Array; range_end?: Uint8Array; prev_kv?: boolean },
    opts?: CallOptions,
  ): Promise<{ header: ResponseHeader; deleted: number; prev_kvs: RawKeyValue[] }> {
    return this.#unary(this.#kv, "DeleteRange", req, opts);
  }

  compact(revision: number, opts?: CallOptions): Promise<{ header: ResponseHeader }> {
    return this.#unary(this.#kv, "Compact", { revision, physical: false }, opts);
  }

  /** Opens a Watch stream; the caller writes create/progress requests and cancels it. */
  watchStream(): WatchStream {
    return this.#watch.Watch() as WatchStream;
  }

  /** Closes the channels; calls in flight fail. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#kv.close();
    this.#watch.close();
  }

  async #unary<T>(client: GrpcClient, method: string, req: unknown, opts: CallOptions = {}) {
    if (this.#inflight >= MAX_INFLIGHT) {
      await new Promise<void>((resolve) => this.#queue.push(resolve));
    }
    this.#inflight++;
    try {
      return await new Promise<T>((resolve, reject) => {
        const deadline = new Date(Date.now() + (opts.timeoutMs ?? 30_000));
        const options = { deadline, waitForReady: opts.waitForReady ?? false };
        const done = (err: grpc.ServiceError | null, res: T) => {
          if (err) reject(etcdError(method, err));
          else resolve(res);
        };
        // A traced request's storage span goes to etcd as gRPC metadata.
        const traceparent = currentTraceparent();
        if (traceparent === undefined) client[method](req, options, done);
        else client[method](req, traceMetadata(traceparent), options, done);
      });
    } finally {
      this.#inflight--;
      this.#queue.shift()?.();
    }
  }
}

function traceMetadata(traceparent: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set("traceparent", traceparent);
  return metadata;
}

/** Per-call options. */
export interface CallOptions {
  /** @default 30_000 */
  timeoutMs?: number;
  /** Wait for the channel to connect instead of failing at once. @default false */
  waitForReady?: boolean;
}

/** A failed call: etcd's own message ("etcdserver: …", "mvcc: …") when it sent one. */
export class EtcdError extends Error {
  /** The gRPC status code (14 unavailable, 4 deadline exceeded, 11 out of range, …). */
  readonly grpcCode: number;
  readonly details: string;
  constructor(method: string, err: grpc.ServiceError) {
    const details = err.details || err.message;
    super(`etcd ${method}: ${details}`, { cause: err });
    this.name = "EtcdError";
    this.grpcCode = err.code;
    this.details = details;
  }
}

function etcdError(method: string, err: grpc.ServiceError): Error {
  return new EtcdError(method, err);
}

/** grpc-js wants Node Buffers for TLS material. */
function toBuffer(b: Uint8Array): Uint8Array {
  return Buffer.from(b);
}
