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
import type { GrpcRoute } from "../../egress/mod.ts";

/** How the client reaches `host:port` (the egress dialer's `etcd` selection). */
export type EtcdRoute = (hostPort: string) => GrpcRoute;

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

/** gRPC's status for a server that cannot be reached (down, refused, no leader). */
const UNAVAILABLE = 14;

/**
 * The channels to one etcd endpoint at a time, of several: when a call or the watch stream
 * finds the endpoint unavailable, the next calls go to the next endpoint (round robin). The
 * failed call itself fails (a write is never sent twice); the watcher re-opens its stream.
 */
export class EtcdClient {
  readonly #endpoints: string[];
  readonly #tls: EtcdTls | undefined;
  readonly #route: EtcdRoute | undefined;
  #via: string | undefined;
  #current = 0;
  #kv: GrpcClient;
  #watch: GrpcClient;
  #inflight = 0;
  #queue: (() => void)[] = [];
  #closed = false;

  private constructor(
    endpoints: string[],
    first: number,
    tls: EtcdTls | undefined,
    route: EtcdRoute | undefined,
  ) {
    this.#endpoints = endpoints;
    this.#tls = tls;
    this.#route = route;
    this.#current = first;
    [this.#kv, this.#watch] = this.#channels(endpoints[first]);
  }

  /** The endpoint calls go to now. */
  get endpoint(): string {
    return this.#endpoints[this.#current];
  }

  /** The egress proxy connections go through, when not direct. */
  get via(): string | undefined {
    return this.#via;
  }

  #channels(endpoint: string): [GrpcClient, GrpcClient] {
    const { KV, Watch } = loadServices();
    const url = new URL(endpoint.includes("://") ? endpoint : `http://${endpoint}`);
    const secure = url.protocol === "https:";
    const tls = this.#tls;
    const creds = secure
      ? grpc.credentials.createSsl(
        tls?.ca ? toBuffer(tls.ca) : null,
        tls?.key ? toBuffer(tls.key) : null,
        tls?.cert ? toBuffer(tls.cert) : null,
      )
      : grpc.credentials.createInsecure();
    const hostPort = `${url.hostname}:${url.port || (secure ? "443" : "2379")}`;
    // The egress dialer's `etcd` selection: direct, or through its proxy.
    const { target, options: routeOptions, via } = this.#route?.(hostPort) ??
      { target: hostPort, options: {} };
    this.#via = via;
    const options = {
      "grpc.max_receive_message_length": 512 * 1024 * 1024,
      // Back within two seconds of etcd's return (grpc's default backoff grows to two minutes).
      "grpc.initial_reconnect_backoff_ms": 100,
      "grpc.max_reconnect_backoff_ms": 2_000,
      ...routeOptions,
    };
    return [new KV(target, creds, options), new Watch(target, creds, options)];
  }

  /** After `endpoint` was found unavailable: the next calls go to the next endpoint. */
  #failover(endpoint: string): void {
    if (this.#closed || this.#endpoints.length < 2 || this.endpoint !== endpoint) return;
    const [kv, watch] = [this.#kv, this.#watch];
    this.#current = (this.#current + 1) % this.#endpoints.length;
    [this.#kv, this.#watch] = this.#channels(this.endpoint);
    kv.close();
    watch.close();
  }

  /**
   * Connects to the first of `endpoints` that answers a Range within `timeoutMs`; later calls
   * move on to the others when it becomes unavailable.
   *
   * @throws {EtcdUnavailableError} naming every endpoint and why each failed.
   */
  static async connect(
    endpoints: string[],
    opts: { tls?: EtcdTls; timeoutMs?: number; route?: EtcdRoute } = {},
  ): Promise<EtcdClient> {
    if (endpoints.length === 0) throw new EtcdUnavailableError("No etcd endpoints given");
    const reasons: string[] = [];
    for (let i = 0; i < endpoints.length; i++) {
      let client: EtcdClient | undefined;
      try {
        client = new EtcdClient(endpoints, i, opts.tls, opts.route);
        await client.range(
          { key: new Uint8Array([0]), count_only: true, limit: 1 },
          { timeoutMs: opts.timeoutMs ?? 5_000, waitForReady: true },
        );
        return client;
      } catch (err) {
        client?.close();
        const through = client?.via ? ` (through the egress proxy ${client.via})` : "";
        reasons.push(`${endpoints[i]}${through}: ${err instanceof Error ? err.message : err}`);
      }
    }
    throw new EtcdUnavailableError(
      `Cannot reach etcd at ${endpoints.join(", ")} (${reasons.join("; ")})`,
    );
  }

  range(req: RangeRequest, opts?: CallOptions): Promise<RangeResponse> {
    return this.#unary("Range", req, opts);
  }

  txn(req: TxnRequest, opts?: CallOptions): Promise<TxnResponse> {
    return this.#unary("Txn", req, opts);
  }

  deleteRange(
    req: { key: Uint8Array; range_end?: Uint8Array; prev_kv?: boolean },
    opts?: CallOptions,
  ): Promise<{ header: ResponseHeader; deleted: number; prev_kvs: RawKeyValue[] }> {
    return this.#unary("DeleteRange", req, opts);
  }

  compact(revision: number, opts?: CallOptions): Promise<{ header: ResponseHeader }> {
    return this.#unary("Compact", { revision, physical: false }, opts);
  }

  /** Opens a Watch stream; the caller writes create/progress requests and cancels it. */
  watchStream(): WatchStream {
    const endpoint = this.endpoint;
    const stream = this.#watch.Watch() as WatchStream;
    stream.on("error", (err) => {
      if ((err as grpc.ServiceError).code === UNAVAILABLE) this.#failover(endpoint);
    });
    return stream;
  }

  /** Closes the channels; calls in flight fail. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#kv.close();
    this.#watch.close();
  }

  async #unary<T>(method: string, req: unknown, opts: CallOptions = {}) {
    if (this.#inflight >= MAX_INFLIGHT) {
      await new Promise<void>((resolve) => this.#queue.push(resolve));
    }
    this.#inflight++;
    try {
      return await new Promise<T>((resolve, reject) => {
        const deadline = new Date(Date.now() + (opts.timeoutMs ?? 30_000));
        const endpoint = this.endpoint;
        const client = this.#kv;
        const options = { deadline, waitForReady: opts.waitForReady ?? false };
        const done = (err: grpc.ServiceError | null, res: T) => {
          if (err?.code === UNAVAILABLE) this.#failover(endpoint);
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
