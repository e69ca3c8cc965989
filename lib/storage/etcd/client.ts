/**
 * A small client for etcd's v3 gRPC API (the KV and Watch services). Only what the etcd3
 * backend needs: Range, Txn, DeleteRange, Compact and bidirectional Watch streams.
 *
 * The gRPC work (grpc-js, HTTP/2, protobuf: `grpc_connection.ts`, served by `client_handler.ts`)
 * runs on this thread, or, for a threaded client, on one worker thread shared by every threaded
 * client of the process (`client_worker.ts`): a client posts its requests there and gets the
 * answers back, both ways in one message per turn of the event loop. On etcd that work was
 * about a third of the server thread's time per create.
 *
 * Keys and values are bytes on the wire; revisions are decoded as JavaScript numbers (exact
 * below 2^53). Requests past {@link MAX_INFLIGHT} wait for a slot, so that a burst of writes
 * does not pile up on etcd (which refuses with "too many requests" when its apply loop lags).
 * @module
 */

import { Worker } from "node:worker_threads";
import { currentTraceparent } from "../../tracing/mod.ts";
import { clientHandler } from "./client_handler.ts";
import type { GrpcRoute } from "../../egress/mod.ts";
import type {
  CallOptions,
  EtcdTls,
  FromClientWorker,
  RangeRequest,
  RangeResponse,
  RawKeyValue,
  ResponseHeader,
  ToClientWorker,
  TxnRequest,
  TxnResponse,
  WatchResponse,
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
export type EtcdRoute = (hostPort: string) => GrpcRoute;

/** Requests in flight at once; more wait their turn. */
export const MAX_INFLIGHT = 256;

/**
 * Whether clients run grpc-js on the worker thread unless told: no. Threaded, the server's thread
 * spends 44 % less CPU per create on etcd, but the process ~15 % more in all, and each message
 * waits for the other thread to be scheduled; on the two shared cores measured (server, etcd and
 * load on both) creates and straight puts were slower threaded, and servers started slower under
 * load (lib/storage/README.md). A machine with cores to spare may gain; that is not measured yet.
 */
export const THREADED_BY_DEFAULT = false;

/** gRPC's status for a server that cannot be reached (down, refused, no leader). */
const UNAVAILABLE = 14;

/** A bidirectional Watch stream. */
export interface WatchStream {
  write(req: unknown): boolean;
  on(event: "data", fn: (res: WatchResponse) => void): this;
  on(event: "error", fn: (err: Error) => void): this;
  on(event: "end" | "close", fn: () => void): this;
  cancel(): void;
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

interface PendingCall {
  method: string;
  resolve: (res: unknown) => void;
  reject: (err: Error) => void;
  conn: number;
}

/**
 * What the clients have outstanding (calls by id, watch streams by id, clients by connection
 * id), and where their messages are served: on the worker thread (threaded: started by the first
 * such client and kept for the process, since loading grpc-js there takes most of a second; it
 * keeps the process alive only while a client is open), or on this thread.
 */
class ClientLink {
  readonly #worker: InstanceType<typeof Worker> | undefined;
  readonly #inline: ((m: ToClientWorker) => void) | undefined;
  readonly #calls = new Map<number, PendingCall>();
  readonly #streams = new Map<number, StreamProxy>();
  readonly #clients = new Map<number, EtcdClient>();
  #outbox: ToClientWorker[] = [];
  #next = 1;

  constructor(threaded: boolean) {
    if (!threaded) {
      this.#inline = clientHandler((m) => this.#receive(m));
      return;
    }
    this.#worker = new Worker(new URL("./client_worker.ts", import.meta.url));
    this.#worker.on("message", (batch: FromClientWorker[]) => {
      for (const m of batch) this.#receive(m);
    });
    this.#worker.on("error", (err: Error) => {
      this.#failAll(`the etcd client's worker failed: ${err.message}`);
    });
    // Only open clients keep the process alive (see addClient and removeClient).
    this.#worker.unref();
  }

  id(): number {
    return this.#next++;
  }

  post(m: ToClientWorker): void {
    if (this.#inline) return this.#inline(m);
    if (this.#outbox.length === 0) queueMicrotask(() => this.#flush());
    this.#outbox.push(m);
  }

  #flush(): void {
    const batch = this.#outbox;
    this.#outbox = [];
    if (batch.length) this.#worker?.postMessage(batch);
  }

  addClient(conn: number, client: EtcdClient): void {
    if (this.#clients.size === 0) this.#worker?.ref();
    this.#clients.set(conn, client);
  }

  /** Forgets a closed client and fails what it still has outstanding. */
  removeClient(conn: number): void {
    this.#clients.delete(conn);
    if (this.#clients.size === 0) this.#worker?.unref();
    for (const [id, call] of this.#calls) {
      if (call.conn !== conn) continue;
      this.#calls.delete(id);
      call.reject(new EtcdError(call.method, { code: 1, details: "", message: "client closed" }));
    }
    for (const [sid, s] of this.#streams) if (s.conn === conn) this.#streams.delete(sid);
  }

  call(conn: number, method: string, req: unknown, opts: CallOptions): Promise<unknown> {
    const id = this.id();
    const traceparent = currentTraceparent();
    return new Promise((resolve, reject) => {
      this.#calls.set(id, { method, resolve, reject, conn });
      this.post({
        op: "call",
        conn,
        id,
        method,
        req,
        timeoutMs: opts.timeoutMs ?? 30_000,
        waitForReady: opts.waitForReady ?? false,
        ...(traceparent === undefined ? {} : { traceparent }),
      });
    });
  }

  watch(conn: number): StreamProxy {
    const sid = this.id();
    const stream = new StreamProxy(this, conn, sid);
    this.#streams.set(sid, stream);
    this.post({ op: "watch", conn, sid });
    return stream;
  }

  dropStream(sid: number): void {
    this.#streams.delete(sid);
  }

  #receive(m: FromClientWorker): void {
    switch (m.op) {
      case "result": {
        const call = this.#calls.get(m.id);
        this.#calls.delete(m.id);
        call?.resolve(m.res);
        return;
      }
      case "error": {
        const call = this.#calls.get(m.id);
        this.#calls.delete(m.id);
        call?.reject(new EtcdError(call.method, m.err));
        return;
      }
      case "endpoint":
        this.#clients.get(m.conn)?.moved(m.current);
        return;
      case "watchData":
        this.#streams.get(m.sid)?.emit("data", m.res);
        return;
      case "watchError": {
        const s = this.#streams.get(m.sid);
        this.#streams.delete(m.sid);
        s?.emit("error", streamError(m.err));
        return;
      }
      case "watchEnd": {
        const s = this.#streams.get(m.sid);
        this.#streams.delete(m.sid);
        s?.emit("end");
        return;
      }
    }
  }

  #failAll(message: string): void {
    const err = { code: UNAVAILABLE, details: message, message };
    for (const call of this.#calls.values()) call.reject(new EtcdError(call.method, err));
    this.#calls.clear();
    for (const s of this.#streams.values()) s.emit("error", streamError(err));
    this.#streams.clear();
    if (links.threaded === this) links.threaded = undefined;
  }
}

const links: { threaded?: ClientLink; inline?: ClientLink } = {};

/** A watch stream on the worker, as the caller's thread sees it. */
class StreamProxy implements WatchStream {
  readonly #link: ClientLink;
  readonly conn: number;
  readonly #sid: number;
  // deno-lint-ignore no-explicit-any
  readonly #handlers = new Map<string, ((arg: any) => void)[]>();

  constructor(link: ClientLink, conn: number, sid: number) {
    this.#link = link;
    this.conn = conn;
    this.#sid = sid;
  }

  write(req: unknown): boolean {
    this.#link.post({ op: "watchWrite", sid: this.#sid, req });
    return true;
  }

  // deno-lint-ignore no-explicit-any
  on(event: string, fn: (arg: any) => void): this {
    this.#handlers.set(event, [...(this.#handlers.get(event) ?? []), fn]);
    return this;
  }

  emit(event: string, arg?: unknown): void {
    for (const fn of this.#handlers.get(event) ?? []) fn(arg);
  }

  cancel(): void {
    this.#link.dropStream(this.#sid);
    this.#link.post({ op: "watchCancel", sid: this.#sid });
  }
}

/** A watch stream's failure, as grpc-js words it (`code` as grpc-js has it). */
function streamError(err: WireError): Error {
  return Object.assign(new Error(err.message), { code: err.code, details: err.details });
}

/**
 * The channels to one etcd endpoint at a time, of several: when a call or the watch stream
 * finds the endpoint unavailable, the next calls go to the next endpoint (round robin). The
 * failed call itself fails (a write is never sent twice); the watcher re-opens its stream.
 */
export class EtcdClient {
  readonly #endpoints: string[];
  readonly #vias: (string | undefined)[];
  readonly #link: ClientLink;
  readonly #conn: number;
  #current: number;
  #inflight = 0;
  #queue: (() => void)[] = [];
  #closed = false;

  private constructor(
    endpoints: string[],
    first: number,
    tls: EtcdTls | undefined,
    route: EtcdRoute | undefined,
    threaded: boolean,
  ) {
    this.#endpoints = endpoints;
    this.#current = first;
    // The egress dialer's `etcd` selection, for each endpoint: direct, or through its proxy.
    const routes = endpoints.map((endpoint) => {
      const hostPort = hostPortOf(endpoint);
      return route?.(hostPort) ?? { target: hostPort, options: {} };
    });
    this.#vias = routes.map((r) => r.via);
    this.#link = threaded
      ? links.threaded ??= new ClientLink(true)
      : links.inline ??= new ClientLink(false);
    this.#conn = this.#link.id();
    this.#link.addClient(this.#conn, this);
    this.#link.post({
      op: "open",
      conn: this.#conn,
      endpoints,
      routes: routes.map(({ target, options }) => ({ target, options })),
      first,
      ...(tls ? { tls } : {}),
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

  /** The worker moved later calls to endpoint `current` (the previous one was unavailable). */
  moved(current: number): void {
    this.#current = current;
  }

  /**
   * Connects to the first of `endpoints` that answers a Range within `timeoutMs`; later calls
   * move on to the others when it becomes unavailable. `threaded`: whether grpc-js runs on the
   * worker thread (default {@link THREADED_BY_DEFAULT}).
   *
   * @throws {EtcdUnavailableError} naming every endpoint and why each failed.
   */
  static async connect(
    endpoints: string[],
    opts: { tls?: EtcdTls; timeoutMs?: number; route?: EtcdRoute; threaded?: boolean } = {},
  ): Promise<EtcdClient> {
    if (endpoints.length === 0) throw new EtcdUnavailableError("No etcd endpoints given");
    const reasons: string[] = [];
    for (let i = 0; i < endpoints.length; i++) {
      let client: EtcdClient | undefined;
      try {
        const threaded = opts.threaded ?? THREADED_BY_DEFAULT;
        client = new EtcdClient(endpoints, i, opts.tls, opts.route, threaded);
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
    return this.#link.watch(this.#conn);
  }

  /** Closes the channels; calls in flight fail. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#link.post({ op: "close", conn: this.#conn });
    this.#link.removeClient(this.#conn);
  }

  async #unary<T>(method: string, req: unknown, opts: CallOptions = {}): Promise<T> {
    if (this.#closed) {
      throw new EtcdError(method, { code: 1, details: "", message: "client closed" });
    }
    if (this.#inflight >= MAX_INFLIGHT) {
      await new Promise<void>((resolve) => this.#queue.push(resolve));
    }
    this.#inflight++;
    try {
      return await this.#link.call(this.#conn, method, req, opts) as T;
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
