/**
 * EtcdStore: the {@link Store} on etcd v3 (`--storage=etcd3`).
 *
 * - **Keys**: the store key `k` is the etcd key `keyPrefix + k` (see `keyPrefixFor`).
 *   Values are the server's JSON text, as UTF-8, so `etcdctl get --prefix /registry` shows them.
 * - **Revisions** are etcd's, less one ({@link REVISION_OFFSET}): etcd's empty revision 1 is
 *   the store's 0. modRevision and createRevision of every key are etcd's, less one.
 * - **Writes** are etcd transactions: create = Txn(CreateRevision(key) = 0, Put), update and
 *   delete = Txn(ModRevision(key) = expected, Put/Delete), with a Range of the key in the
 *   failure branch to tell `Conflict` from `NotFound`. A write resolves once the mirror has
 *   applied its revision, so a read after it sees it.
 * - **Reads** come from the {@link Mirror}. A read at the latest revision first asks etcd for
 *   its current revision (a count-only Range of the prefix) and waits until the mirror has
 *   caught up with it (kube's ConsistentListFromCache); reads at an older revision come from
 *   the mirror's history.
 * - **Watches** are served from the mirror: N watchers cost one etcd watch.
 * @module
 */

import type { ValueTransformer } from "../transformer.ts";
import { RevisionProbe } from "./revision_probe.ts";
import type { StoreLogger } from "../logger.ts";
import {
  type KeyValue,
  type ListOptions,
  type ListResult,
  type ReadOptions,
  type Store,
  StoreError,
  type Watch,
  type WatchOptions,
} from "../store.ts";
import { checkKey, checkValue } from "./checks.ts";
import {
  type Compare,
  EtcdClient,
  EtcdError,
  type EtcdRoute,
  type EtcdTls,
  EtcdUnavailableError,
  prefixEnd,
  type RawKeyValue,
  type RequestOp,
} from "./client.ts";
import { Mirror, REVISION_OFFSET } from "./mirror.ts";
import { EtcdWatcher } from "./watcher.ts";
import type { Clock } from "../../api/mod.ts";

/** Options of {@link EtcdStore.open}. */
export interface EtcdStoreOptions {
  /** Client URLs, e.g. `http://127.0.0.1:2379`; the first that answers is used. */
  endpoints: string[];
  /** Prepended to every store key to make the etcd key. @default "" */
  keyPrefix?: string;
  /** For `https://` endpoints: CA, client certificate and key (PEM). */
  tls?: EtcdTls;
  /** How long the mirror keeps history for old reads and watches. @default 300_000 */
  historyRetentionMs?: number;
  /** How often the mirror drops history older than the retention window.
   * @default min(30_000, max(1_000, historyRetentionMs / 10)) */
  compactionIntervalMs?: number;
  /** How often etcd itself is compacted, to the revision of the previous round (kube's
   * `--etcd-compaction-interval`); 0 disables. @default 300_000 */
  etcdCompactionIntervalMs?: number;
  watchBufferSize?: number;
  clock?: Clock;
  logger?: StoreLogger;
  /** How long open waits for etcd to answer. @default 5_000 */
  dialTimeoutMs?: number;
  /** How each endpoint is reached (the egress dialer's `etcd` selection). @default direct */
  route?: EtcdRoute;
  /** How long a read waits for the mirror to catch up with etcd. @default 10_000 */
  catchUpTimeoutMs?: number;
  /** Turns values into what etcd keeps and back (encryption at rest); the mirror holds plain
   * values. @default values as they are */
  transformer?: ValueTransformer;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** At most this many revisions of etcd's history are replayed into the mirror at open. */
const REPLAY_REVISIONS = 100_000;

/** gRPC's status for a read below etcd's compaction point. */
const OUT_OF_RANGE = 11;

/**
 * The oldest revision in [lo, hi] at which etcd can still read (below it, it compacted), by
 * bisection over single-key reads; `hi` must be readable (etcd's current revision).
 */
async function oldestReadable(
  client: EtcdClient,
  key: Uint8Array,
  lo: number,
  hi: number,
): Promise<number> {
  const readable = (revision: number) =>
    client.range({ key, revision, keys_only: true }).then(
      () => true,
      (err) => {
        if (err instanceof EtcdError && err.grpcCode === OUT_OF_RANGE) return false;
        throw err;
      },
    );
  if (await readable(lo)) return lo;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (await readable(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** A {@link Store} on etcd. */
export class EtcdStore implements Store {
  readonly #client: EtcdClient;
  readonly #prefix: string;
  readonly #mirror: Mirror;
  readonly #watcher: EtcdWatcher;
  readonly #catchUpMs: number;
  readonly #revisions: RevisionProbe;
  readonly #logger: StoreLogger;
  readonly #transformer: ValueTransformer | undefined;
  readonly #read: ValueReader;
  #lastWrite = 0;
  #keyChains = new Map<string, Promise<void>>();
  #writes = 0;
  #writesDone: (() => void) | undefined;
  #state: "open" | "closing" | "closed" = "open";
  #closing: Promise<void> | undefined;
  #timers: ReturnType<typeof setInterval>[] = [];

  private constructor(client: EtcdClient, mirror: Mirror, opts: EtcdStoreOptions) {
    this.#client = client;
    this.#prefix = opts.keyPrefix ?? "";
    this.#mirror = mirror;
    this.#catchUpMs = opts.catchUpTimeoutMs ?? 10_000;
    this.#revisions = new RevisionProbe(client, enc.encode(`${this.#prefix}/`));
    this.#logger = opts.logger ?? console;
    this.#transformer = opts.transformer;
    this.#read = readValues(opts.transformer);
    this.#watcher = new EtcdWatcher(client, mirror, {
      prefix: this.#prefix,
      logger: this.#logger,
      decode: (kv) => this.#decode(kv),
    });
    const retention = opts.historyRetentionMs ?? 5 * 60_000;
    const interval = opts.compactionIntervalMs ??
      Math.min(30_000, Math.max(1_000, retention / 10));
    this.#every(interval, () => this.#mirror.compactExpired(() => this.#state !== "closed"));
    const etcdInterval = opts.etcdCompactionIntervalMs ?? 300_000;
    if (etcdInterval > 0) {
      let previous = 0;
      this.#every(etcdInterval, async () => {
        if (previous > 0) await this.#compactEtcd(previous);
        previous = this.#mirror.revision;
      });
    }
  }

  /**
   * Connects, reads everything under the prefix as it was at the oldest revision etcd still
   * holds (at most {@link REPLAY_REVISIONS} back), and starts the one watch that keeps the
   * mirror current from there: the history etcd has is replayed into the mirror, so a watch
   * resumed here from a resourceVersion another replica gave works on a server that just
   * started. Resolves once the mirror has caught up with etcd.
   *
   * @throws {EtcdUnavailableError} naming the endpoints when none answers.
   */
  static async open(opts: EtcdStoreOptions): Promise<EtcdStore> {
    const client = await EtcdClient.connect(opts.endpoints, {
      tls: opts.tls,
      timeoutMs: opts.dialTimeoutMs,
      route: opts.route,
    });
    try {
      const prefix = enc.encode(opts.keyPrefix ?? "");
      const all = prefix.length === 0 ? new Uint8Array([0]) : prefix;
      const now = (await client.range({ key: all, keys_only: true })).header.revision;
      const from = await oldestReadable(client, all, Math.max(1, now - REPLAY_REVISIONS), now);
      const res = await client.range({ key: all, range_end: prefixEnd(prefix), revision: from });
      const strip = (opts.keyPrefix ?? "").length;
      const read = readValues(opts.transformer);
      const kvs = res.kvs.map((kv) => decodeKv(kv, strip, read));
      const mirror = new Mirror(kvs, from - REVISION_OFFSET, {
        historyRetentionMs: opts.historyRetentionMs,
        watchBufferSize: opts.watchBufferSize,
        clock: opts.clock,
        logger: opts.logger ?? console,
      });
      const store = new EtcdStore(client, mirror, opts);
      store.#watcher.start();
      // Ready once etcd has confirmed the watch (readiness follows it from then on).
      let timer: ReturnType<typeof setTimeout> | undefined;
      const confirmed = await Promise.race([
        store.#watcher.established.then(() => true),
        new Promise<false>((r) => timer = setTimeout(() => r(false), opts.dialTimeoutMs ?? 5_000)),
      ]);
      clearTimeout(timer);
      if (!confirmed) {
        await store.close();
        throw new EtcdUnavailableError(
          `etcd at ${client.endpoint} did not confirm the watch of the store's keys in time`,
        );
      }
      await store.#watcher.catchUp(
        now - REVISION_OFFSET,
        store.#catchUpMs * 3,
        (at) => store.#unchangedSince(at),
      ).catch(async (err) => {
        await store.close();
        throw err;
      });
      return store;
    } catch (err) {
      client.close();
      throw err;
    }
  }

  // ---- revisions ----

  currentRevision(): number {
    return this.#mirror.revision;
  }

  /** The watch that feeds the copy is established (so etcd answers) and lost nothing. */
  reachable(): boolean {
    return this.#state === "open" && this.#watcher.following;
  }

  oldestRevision(): number {
    return this.#mirror.oldestRevision;
  }

  count(prefix: string): number {
    return this.#mirror.count(prefix);
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

  /** The revision to read at: the latest (after catching up with etcd, unless `cached`) or a
   * checked one. */
  async #readRevision(
    key: string,
    revision: number | undefined,
    cached = false,
  ): Promise<number> {
    this.#checkReadable(key);
    if (revision ? revision > this.#mirror.revision : !cached) {
      await this.#catchUp(key);
      this.#checkReadable(key);
    }
    return this.#mirror.readRevision(key, revision);
  }

  /** Waits until the mirror holds everything etcd had when this was called. */
  async #catchUp(key: string): Promise<void> {
    const revision = await this.#revisions.current();
    const target = Math.max(revision - REVISION_OFFSET, this.#lastWrite);
    const verify = (at: number) => this.#unchangedSince(at);
    await this.#watcher.catchUp(target, this.#catchUpMs, verify).catch((err) => {
      if (this.#state === "closed") throw closed(key);
      throw err;
    });
  }

  /**
   * Whether etcd's keys under the prefix are still what the mirror holds at `at`: none
   * modified after it, and as many. Then a read at `at` is as fresh as one at etcd's current
   * revision (the revisions in between changed other prefixes, or nothing that is left).
   */
  async #unchangedSince(at: number): Promise<boolean> {
    const prefix = enc.encode(this.#prefix);
    const res = await this.#client.range({
      key: prefix.length === 0 ? new Uint8Array([0]) : prefix,
      range_end: prefixEnd(prefix),
      keys_only: true,
      min_mod_revision: at + REVISION_OFFSET + 1,
    });
    return this.#mirror.revision === at && res.kvs.length === 0 &&
      res.count === this.#mirror.index.size;
  }

  // ---- writes ----

  create(key: string, value: string): Promise<KeyValue> {
    return this.#write(key, async () => {
      checkValue(key, value);
      const k = this.#etcdKey(key);
      const res = await this.#client.txn({
        compare: [{ key: k, target: "CREATE", result: "EQUAL", create_revision: 0 }],
        success: [{ request_put: { key: k, value: this.#stored(key, value) } }],
        failure: [],
      });
      if (!res.succeeded) throw new StoreError("KeyExists", key, `Key "${key}" already exists`);
      const rev = res.header.revision - REVISION_OFFSET;
      return { rev, kv: Object.freeze({ key, value, createRevision: rev, modRevision: rev }) };
    });
  }

  update(key: string, value: string, expectedRevision: number): Promise<KeyValue> {
    return this.#write(key, async () => {
      checkValue(key, value);
      const k = this.#etcdKey(key);
      const res = await this.#conditional(key, expectedRevision, {
        request_put: { key: k, value: this.#stored(key, value), prev_kv: true },
      });
      const rev = res.header.revision - REVISION_OFFSET;
      const prev = res.responses[0]?.response_put?.prev_kv;
      const createRevision = prev ? prev.create_revision - REVISION_OFFSET : rev;
      return { rev, kv: Object.freeze({ key, value, createRevision, modRevision: rev }) };
    });
  }

  delete(key: string, expectedRevision?: number): Promise<KeyValue> {
    return this.#write(key, async () => {
      const k = this.#etcdKey(key);
      const op: RequestOp = { request_delete_range: { key: k, prev_kv: true } };
      const res = await this.#conditional(key, expectedRevision, op);
      const rev = res.header.revision - REVISION_OFFSET;
      const prev = res.responses[0]?.response_delete_range?.prev_kvs[0];
      if (!prev) throw new StoreError("NotFound", key, `Key "${key}" not found`);
      return { rev, kv: Object.freeze({ ...this.#decode(prev), modRevision: rev }) };
    });
  }

  /** A Txn of `op` if the key's modRevision is `expected` (or the key exists, without one);
   * `NotFound` or `Conflict` from the key as the failure branch read it. */
  async #conditional(key: string, expected: number | undefined, op: RequestOp) {
    const k = this.#etcdKey(key);
    const compare: Compare = expected === undefined
      ? { key: k, target: "VERSION", result: "GREATER", version: 0 }
      : { key: k, target: "MOD", result: "EQUAL", mod_revision: expected + REVISION_OFFSET };
    const res = await this.#client.txn({
      compare: [compare],
      success: [op],
      failure: [{ request_range: { key: k } }],
    });
    if (res.succeeded) return res;
    const current = res.responses[0]?.response_range?.kvs[0];
    if (!current) throw new StoreError("NotFound", key, `Key "${key}" not found`);
    throw new StoreError(
      "Conflict",
      key,
      `Key "${key}" is at revision ${current.mod_revision - REVISION_OFFSET}, not ${expected}`,
    );
  }

  /** Runs a write: checks, counts it in flight (close waits), then waits for the mirror. */
  async #write(
    key: string,
    run: () => Promise<{ rev: number; kv: KeyValue }>,
  ): Promise<KeyValue> {
    if (this.#state !== "open") throw closed(key);
    checkKey(key);
    this.#writes++;
    // Writes to one key go to etcd one after another, so they take effect in call order.
    const before = this.#keyChains.get(key);
    let release!: () => void;
    const mine = new Promise<void>((r) => release = r);
    this.#keyChains.set(key, mine);
    try {
      let result: { rev: number; kv: KeyValue };
      try {
        if (before) await before;
        result = await run();
      } finally {
        release();
        if (this.#keyChains.get(key) === mine) this.#keyChains.delete(key);
      }
      const { rev, kv } = result;
      this.#lastWrite = Math.max(this.#lastWrite, rev);
      await this.#watcher.catchUp(rev, this.#catchUpMs);
      return kv;
    } finally {
      if (--this.#writes === 0) this.#writesDone?.();
    }
  }

  // ---- watch ----

  watch(prefix: string, opts: WatchOptions): Watch {
    this.#checkReadable(prefix);
    return this.#mirror.watch(prefix, opts);
  }

  // ---- compaction ----

  /** Compacts etcd (to the same revision) and the mirror's history. */
  async compact(revision: number): Promise<void> {
    if (this.#state === "closed") throw closed("");
    if (!Number.isSafeInteger(revision)) {
      throw new StoreError("Invalid", "", `Invalid revision ${revision}`);
    }
    if (revision > this.#mirror.revision) {
      throw new StoreError(
        "FutureRevision",
        "",
        `Cannot compact to revision ${revision}: the current revision is ${this.#mirror.revision}`,
      );
    }
    await this.#compactEtcd(revision);
    this.#mirror.compact(revision);
  }

  async #compactEtcd(revision: number): Promise<void> {
    if (revision < 1) return;
    try {
      await this.#client.compact(revision + REVISION_OFFSET);
    } catch (err) {
      // Already compacted that far (by this store, another replica or an operator).
      if (err instanceof EtcdError && /compacted/.test(err.details)) return;
      throw err;
    }
  }

  // ---- lifecycle ----

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#state = "closing";
    if (this.#writes > 0) await new Promise<void>((r) => this.#writesDone = r);
    for (const t of this.#timers) clearInterval(t);
    this.#mirror.hub.closeAll();
    this.#watcher.stop();
    this.#mirror.failWaiters(closed(""));
    this.#client.close();
    this.#state = "closed";
  }

  /** Number of open watches (all served by one etcd watch). */
  get watchCount(): number {
    return this.#mirror.hub.size;
  }

  #every(ms: number, fn: () => Promise<unknown>): void {
    const timer = setInterval(() => {
      fn().catch((err) => this.#logger.warn(`etcd store: ${err?.message ?? err}`));
    }, ms);
    Deno.unrefTimer(timer);
    this.#timers.push(timer);
  }

  #checkReadable(key: string): void {
    if (this.#state === "closed") throw closed(key);
  }

  #etcdKey(key: string): Uint8Array {
    return enc.encode(this.#prefix + key);
  }

  #decode(kv: RawKeyValue): KeyValue {
    return decodeKv(kv, this.#prefix.length, this.#read);
  }

  /** What etcd keeps for `value` under `key`. */
  #stored(key: string, value: string): Uint8Array {
    const t = this.#transformer;
    return enc.encode(t ? t.toStorage(key, value) : value);
  }

  /** Whether the value was read in another form than a write would make now (another key or
   * provider): an update then rewrites it even when nothing changed. */
  isStale(kv: KeyValue): boolean {
    return staleRead.has(kv);
  }
}

/** The store's key root: the server names every key `/registry/…`. */
const STORE_ROOT = "/registry";

/**
 * The etcd key prefix (prepended to every store key) for `--etcd-prefix`, which names where the
 * server's `/registry` tree lives: `/registry` (the default) keeps the store's keys as they are,
 * `/a/registry` puts them under `/a`, and any other prefix `P` gives `P/registry/…`.
 */
export function etcdKeyPrefix(etcdPrefix: string): string {
  const p = etcdPrefix === "/" ? "" : etcdPrefix.replace(/\/+$/, "");
  return p.endsWith(STORE_ROOT) ? p.slice(0, -STORE_ROOT.length) : p;
}

/** Reads a stored value: through the transformer (noting stale forms) or as it is. */
type ValueReader = (key: string, stored: string) => { value: string; stale: boolean };

function readValues(transformer: ValueTransformer | undefined): ValueReader {
  return transformer
    ? (key, stored) => transformer.fromStorage(key, stored)
    : (_key, stored) => ({ value: stored, stale: false });
}

/** Stale values read by {@link decodeKv} (by identity of the KeyValue). */
const staleRead = new WeakSet<KeyValue>();

function decodeKv(kv: RawKeyValue, strip: number, read: ValueReader): KeyValue {
  const key = dec.decode(kv.key).slice(strip);
  const { value, stale } = read(key, dec.decode(kv.value));
  const out = Object.freeze({
    key,
    value,
    createRevision: kv.create_revision - REVISION_OFFSET,
    modRevision: kv.mod_revision - REVISION_OFFSET,
  });
  if (stale) staleRead.add(out);
  return out;
}

function closed(key: string): StoreError {
  return new StoreError("Closed", key, "Store is closed");
}
