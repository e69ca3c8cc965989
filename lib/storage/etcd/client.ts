/**
 * A small client for etcd's v3 gRPC API (the KV and Watch services). Only what the etcd3
 * backend needs: Range, Txn, DeleteRange, Compact and bidirectional Watch streams.
 *
 * The gRPC work runs on our own HTTP/2 channel (`grpc_connection.ts` over `lib/grpc`), on the
 * caller's thread. It replaced grpc-js on Deno's `node:http2`, which cost about four times the
 * CPU per call (lib/storage/README.md).
 *
 * Keys and values are bytes on the wire; revisions are decoded as JavaScript numbers (exact
 * below 2^53). Requests past {@link MAX_INFLIGHT} wait for a slot, so that a burst of writes
 * does not pile up on etcd (which refuses with "too many requests" when its apply loop lags).
 * @module
 */

import { currentTraceparent } from "../../tracing/mod.ts";
import { directTcpRoute, type TcpRoute } from "../../egress/mod.ts";
import { GrpcConnection, type GrpcStream, wireError } from "./grpc_connection.ts";
import type {
  CallOptions,
  EtcdTls,
  RangeRequest,
  RangeResponse,
  RawKeyValue,
  ResponseHeader,
  TxnRequest,
  TxnResponse,
  WireError,
} from "./wire.ts";

export type {
  CallOptions,
  Compare,
  EtcdTls,
  RangeRequest,
  RangeResponse,
  RawKeyValue,
  RequestOp,
  ResponseHeader,
  ResponseOp,
  TxnRequest,
  TxnResponse,
  WatchEvent,
  WatchResponse,
} from "./wire.ts";

/** How the client reaches `host:port` (the egress dialer's `etcd` selection). */
export type EtcdRoute = (hostPort: string) => TcpRoute;

/** Requests in flight at once; more wait their turn. */
export const MAX_INFLIGHT = 256;

/** A bidirectional Watch stream. */
export type WatchStream = GrpcStream;

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

/**
 * The channels to one etcd endpoint at a time, of several: when a call or the watch stream
 * finds the endpoint unavailable, the next calls go to the next endpoint (round robin). The
 * failed call itself fails (a write is never sent twice); the watcher re-opens its stream.
 */
export class EtcdClient {
  readonly #endpoints: string[];
  readonly #vias: (string | undefined)[];
  readonly #conn: GrpcConnection;
  #current: number;
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
    this.#current = first;
    // The egress dialer's `etcd` selection, for each endpoint: direct, or through its proxy.
    const routes = endpoints.map((endpoint) => {
      const hostPort = hostPortOf(endpoint);
      return route?.(hostPort) ?? directTcpRoute(hostPort);
    });
    this.#vias = routes.map((r) => r.via);
    this.#conn = new GrpcConnection({
      endpoints,
      routes,
      first,
      ...(tls ? { tls } : {}),
      onFailover: (current) => {
        this.#current = current;
      },
    });
  }

  /** The endpoint calls go to now. */
  get endpoint(): string {
    return this.#endpoints[this.#current];
  }

  /** The egress proxy connections go through, when not direct. */
  get via(): string | undefined {
    return this.#vias[this.#current];
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
    if (this.#closed) {
      throw new EtcdError("Watch", { code: 1, details: "", message: "client closed" });
    }
    return this.#conn.watchStream();
  }

  /** Closes the channels; calls in flight fail. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#conn.close();
  }

  async #unary<T>(method: string, req: unknown, opts: CallOptions = {}): Promise<T> {
    if (this.#closed) {
      throw new EtcdError(method, { code: 1, details: "", message: "client closed" });
    }
    if (this.#inflight >= MAX_INFLIGHT) {
      await new Promise<void>((resolve) => this.#queue.push(resolve));
    }
    this.#inflight++;
    const traceparent = currentTraceparent();
    try {
      return await this.#conn.unary(method, req, {
        timeoutMs: opts.timeoutMs ?? 30_000,
        waitForReady: opts.waitForReady ?? false,
        ...(traceparent === undefined ? {} : { traceparent }),
      }) as T;
    } catch (err) {
      throw new EtcdError(method, wireError(err instanceof Error ? err : new Error(String(err))));
    } finally {
      this.#inflight--;
      this.#queue.shift()?.();
    }
  }
}

/** `host:port` of an endpoint URL (etcd's client port 2379 when none is given). */
function hostPortOf(endpoint: string): string {
  const url = new URL(endpoint.includes("://") ? endpoint : `http://${endpoint}`);
  const secure = url.protocol === "https:";
  return `${url.hostname}:${url.port || (secure ? "443" : "2379")}`;
}

/** A failed call: etcd's own message ("etcdserver: …", "mvcc: …") when it sent one. */
export class EtcdError extends Error {
  /** The gRPC status code (14 unavailable, 4 deadline exceeded, 11 out of range, …). */
  readonly grpcCode: number;
  readonly details: string;
  constructor(method: string, err: WireError) {
    const details = err.details || err.message;
    super(`etcd ${method}: ${details}`);
    this.name = "EtcdError";
    this.grpcCode = err.code;
    this.details = details;
  }
}
