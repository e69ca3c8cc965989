/**
 * The client side of the store seam: a {@link Store} in a worker thread, backed by a
 * {@link StoreOwner} in another. Writes go to the owner and resolve with its result once the
 * owner's store made them durable AND this client's cache has applied them (a read after a
 * write sees it). Gets, lists, counts and watches are served from the cache, a
 * {@link Mirror} (index, history, watch hub) fed by the owner's event stream.
 *
 * Read rules (as the etcd backend's): a read at the latest revision asks the owner for its
 * current revision and waits until the cache has applied it (a write acknowledged anywhere
 * before the read began is seen); `cached` reads (resourceVersion=0) and reads at a given
 * revision the cache holds answer at once; watches come from the cache's history (`Compacted`
 * below its floor, `FutureRevision` past its revision, `Overflow` for slow consumers).
 * @module
 */

import type { Clock } from "../../api/mod.ts";
import { Mirror } from "../etcd/mirror.ts";
import type { StoreLogger } from "../logger.ts";
import { readRevisionCell, type RevisionCell } from "./shared_revision.ts";
import {
  type KeyValue,
  type ListOptions,
  type ListResult,
  type ReadOptions,
  type Store,
  StoreError,
  type StoreEvent,
  type Watch,
  type WatchOptions,
} from "../store.ts";
import {
  type Ask,
  fromWire,
  type Notice,
  Outbox,
  type Port,
  received,
  type Request,
  type WireKeyValue,
} from "./protocol.ts";

/** Options of {@link WorkerStoreClient.connect}. */
export interface WorkerStoreClientOptions {
  /** How long the cache keeps history for old reads and watches. @default 300_000 */
  historyRetentionMs?: number;
  /** How often history older than the retention window is dropped.
   * @default min(30_000, max(1_000, historyRetentionMs / 10)) */
  compactionIntervalMs?: number;
  watchBufferSize?: number;
  clock?: Clock;
  logger?: StoreLogger;
  /** How long a read or write waits for the cache to reach a revision. @default 10_000 */
  catchUpTimeoutMs?: number;
  /** The owner's revision in shared memory (shared_revision.ts), when every write to its
   * store publishes there: consistent reads read it instead of asking the owner. */
  revisionCell?: RevisionCell;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (err: unknown) => void;
}

/** Keys the owner reported stale (by identity of the client's KeyValue). */
const staleKeys = new WeakSet<KeyValue>();

function fromWireKv(kv: WireKeyValue): KeyValue {
  if (!kv.stale) return Object.freeze(kv);
  delete kv.stale;
  const out = Object.freeze(kv);
  staleKeys.add(out);
  return out;
}

function fromWireEvent(ev: StoreEvent): StoreEvent {
  ev.kv = fromWireKv(ev.kv);
  if (ev.prevKv) ev.prevKv = fromWireKv(ev.prevKv);
  return ev;
}

function closed(key: string): StoreError {
  return new StoreError("Closed", key, "Store is closed");
}

/** A {@link Store} served by a {@link StoreOwner} over a port. */
export class WorkerStoreClient implements Store {
  readonly #port: Port;
  readonly #out: Outbox;
  readonly #mirror: Mirror;
  readonly #catchUpMs: number;
  readonly #logger: StoreLogger;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #probe: Promise<number> | undefined;
  #nextProbe: Promise<number> | undefined;
  #writes = 0;
  #writesDone: (() => void) | undefined;
  #state: "open" | "closing" | "closed" = "open";
  #ownerClosed = false;
  #closing: Promise<void> | undefined;
  #timer: ReturnType<typeof setInterval>;
  readonly #initial: number;
  readonly #cell: RevisionCell | undefined;

  private constructor(port: Port, init: Notice & { t: "init" }, opts: WorkerStoreClientOptions) {
    this.#port = port;
    this.#out = new Outbox(port);
    this.#initial = init.current;
    this.#cell = opts.revisionCell;
    this.#catchUpMs = opts.catchUpTimeoutMs ?? 10_000;
    this.#logger = opts.logger ?? console;
    this.#mirror = new Mirror(init.kvs.map(fromWireKv), init.revision, {
      historyRetentionMs: opts.historyRetentionMs,
      watchBufferSize: opts.watchBufferSize,
      clock: opts.clock,
      logger: this.#logger,
    });
    const retention = opts.historyRetentionMs ?? 5 * 60_000;
    const interval = opts.compactionIntervalMs ??
      Math.min(30_000, Math.max(1_000, retention / 10));
    this.#timer = setInterval(() => {
      this.#mirror.compactExpired(() => this.#state !== "closed")
        .catch((err) => this.#logger.warn(`worker store: ${err?.message ?? err}`));
    }, interval);
    Deno.unrefTimer(this.#timer);
    port.onmessage = (ev) => {
      for (const n of received<Notice>(ev.data)) this.#onNotice(n);
    };
  }

  /** Resolves once the owner has sent its first state over `port` and the cache has
   * caught up with the owner's revision of then. */
  static async connect(
    port: Port,
    opts: WorkerStoreClientOptions = {},
  ): Promise<WorkerStoreClient> {
    const client = await new Promise<WorkerStoreClient>((resolve, reject) => {
      port.onmessage = (ev) => {
        const [n, ...rest] = received<Notice>(ev.data);
        if (n.t === "init") {
          const client = new WorkerStoreClient(port, n, opts);
          for (const more of rest) client.#onNotice(more);
          resolve(client);
        } else if (n.t === "closed") reject(closed(""));
      };
    });
    await client.#catchUp(client.#initial);
    return client;
  }

  // ---- revisions ----

  currentRevision(): number {
    return this.#mirror.revision;
  }

  oldestRevision(): number {
    return this.#mirror.oldestRevision;
  }

  count(prefix: string): number {
    return this.#mirror.count(prefix);
  }

  /** Whether the owner still serves this client. */
  reachable(): boolean {
    return this.#state === "open" && !this.#ownerClosed;
  }

  // ---- reads ----

  async get(key: string, opts: ReadOptions = {}): Promise<KeyValue | undefined> {
    const rev = await this.#readRevision(key, opts.revision, opts.cached);
    return this.#mirror.get(key, rev);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const rev = await this.#readRevision(prefix, opts.revision, opts.cached);
    return this.#mirror.listWith(prefix, rev, opts);
  }

  /** The revision to read at: the latest (after catching up with the owner, unless `cached`)
   * or a checked one. */
  async #readRevision(key: string, revision: number | undefined, cached = false) {
    this.#checkOpen(key);
    if (revision ? revision > this.#mirror.revision : !cached) {
      await this.#catchUp(await this.#ownerRevision());
      this.#checkOpen(key);
    }
    return this.#mirror.readRevision(key, revision);
  }

  /** The owner's current revision as of some moment after this call. Concurrent readers
   * share probes: one in flight, the readers arriving meanwhile share the next. */
  #ownerRevision(): Promise<number> {
    if (this.#cell) return Promise.resolve(readRevisionCell(this.#cell));
    if (this.#nextProbe) return this.#nextProbe;
    if (!this.#probe) return this.#startProbe();
    this.#nextProbe = this.#probe.catch(() => {}).then(() => {
      this.#nextProbe = undefined;
      return this.#startProbe();
    });
    return this.#nextProbe;
  }

  #startProbe(): Promise<number> {
    const p = (this.#ask({ t: "revision" }) as Promise<number>).finally(() => {
      if (this.#probe === p) this.#probe = undefined;
    });
    this.#probe = p;
    return p;
  }

  /** Waits until the cache has applied `revision`. */
  async #catchUp(revision: number): Promise<void> {
    if (this.#mirror.revision >= revision) return;
    const ac = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(
          new Error(
            `worker store: the cache did not reach revision ${revision} within ` +
              `${this.#catchUpMs} ms (at ${this.#mirror.revision})`,
          ),
        );
      }, this.#catchUpMs);
    });
    try {
      await Promise.race([this.#mirror.waitFor(revision, ac.signal), timeout]);
    } finally {
      clearTimeout(timer);
      ac.abort();
    }
  }

  // ---- writes ----

  create(key: string, value: string): Promise<KeyValue> {
    return this.#write(key, { t: "create", key, value });
  }

  update(key: string, value: string, expectedRevision: number): Promise<KeyValue> {
    return this.#write(key, { t: "update", key, value, expected: expectedRevision });
  }

  delete(key: string, expectedRevision?: number): Promise<KeyValue> {
    return this.#write(key, { t: "delete", key, expected: expectedRevision });
  }

  /** Sends a write, counts it in flight (close waits), then waits for the cache. */
  async #write(key: string, req: Ask): Promise<KeyValue> {
    if (this.#state !== "open") throw closed(key);
    this.#writes++;
    try {
      const kv = fromWireKv(await this.#ask(req) as WireKeyValue);
      await this.#catchUp(kv.modRevision);
      return kv;
    } finally {
      if (--this.#writes === 0) this.#writesDone?.();
    }
  }

  // ---- watch ----

  watch(prefix: string, opts: WatchOptions): Watch {
    this.#checkOpen(prefix);
    return this.#mirror.watch(prefix, opts);
  }

  isStale(kv: KeyValue): boolean {
    return staleKeys.has(kv);
  }

  // ---- compaction ----

  /** Compacts the owner's store (every client's cache follows) and this cache. */
  async compact(revision: number): Promise<void> {
    if (this.#state === "closed") throw closed("");
    await this.#ask({ t: "compact", revision });
    this.#mirror.compact(revision);
  }

  // ---- lifecycle ----

  /** Waits for this client's writes, ends its watches and leaves the owner (whose store
   * stays open). */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#state = "closing";
    if (this.#writes > 0) await new Promise<void>((r) => this.#writesDone = r);
    this.#shutDown();
    if (!this.#ownerClosed) this.#out.send({ t: "bye" } satisfies Request);
    this.#out.flush();
    this.#port.onmessage = null;
    this.#port.close?.();
  }

  #shutDown(): void {
    clearInterval(this.#timer);
    this.#state = "closed";
    this.#mirror.hub.closeAll();
    this.#mirror.failWaiters(closed(""));
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(closed(""));
  }

  /** Number of open watches (all fed by one stream from the owner). */
  get watchCount(): number {
    return this.#mirror.hub.size;
  }

  #checkOpen(key: string): void {
    if (this.#state === "closed" || this.#ownerClosed) throw closed(key);
  }

  #ask(req: Ask): Promise<unknown> {
    if (this.#ownerClosed) return Promise.reject(closed(""));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#out.send({ ...req, id });
    });
  }

  #onNotice(n: Notice): void {
    switch (n.t) {
      case "events":
        this.#mirror.apply(n.events.map(fromWireEvent));
        break;
      case "reply": {
        const p = this.#pending.get(n.id);
        if (!p) break;
        this.#pending.delete(n.id);
        if (n.error) p.reject(fromWire(n.error));
        else p.resolve(n.result);
        break;
      }
      case "compacted":
        this.#mirror.compact(n.revision);
        break;
      case "resync":
        this.#mirror.resync(n.kvs.map(fromWireKv), n.revision);
        break;
      case "closed":
        this.#ownerClosed = true;
        this.#shutDown();
        break;
    }
  }
}
