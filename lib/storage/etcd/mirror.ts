/**
 * The etcd backend's in-memory mirror of everything under its prefix: the live index, the
 * retained history and the watch hub of the embedded engine (`keyindex.ts`, `watch/`), filled
 * by one Range at open and kept current by one etcd watch. Reads and watches are served from
 * here; `Store`'s synchronous `currentRevision()`, `oldestRevision()` and `count()` read it.
 *
 * Revisions here are the store's (etcd's minus {@link REVISION_OFFSET}). The history needs
 * one event per revision; the revisions between two events of the watch (writes elsewhere in
 * etcd: the watch delivers every event under the prefix in order) get fillers: deletes of
 * {@link FILLER_KEY}, a key no store key can be (it starts with NUL), that no prefix of the
 * store's keys matches and that reads never find.
 * @module
 */

import { type Clock, systemClock } from "../../api/mod.ts";
import { listAt } from "../engine.ts";
import { KeyIndex } from "../keyindex.ts";
import type { StoreLogger } from "../logger.ts";
import {
  type KeyValue,
  type ListOptions,
  type ListResult,
  StoreError,
  type StoreEvent,
  type Watch,
  type WatchOptions,
} from "../store.ts";
import { History } from "../watch/history.ts";
import { WatchHub } from "../watch/hub.ts";

/**
 * etcd's revision of an empty cluster is 1 (its first write is 2); the store's is 0 (its first
 * write is 1). Store revision = etcd revision − 1, for every replica alike, so resourceVersions
 * agree across servers on one etcd.
 */
export const REVISION_OFFSET = 1;

/** The key of filler events (revisions without an event under the prefix). */
export const FILLER_KEY = "\u0000etcd-gap";

/** Revisions dropped per step of a time-based compaction. */
const COMPACTION_STEP = 10_000;

export interface MirrorOptions {
  historyRetentionMs?: number;
  watchBufferSize?: number;
  clock?: Clock;
  logger: StoreLogger;
}

interface Waiter {
  revision: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** The live keys, history and watchers of one etcd prefix, at the store's revisions. */
export class Mirror {
  readonly index = new KeyIndex();
  readonly history: History;
  readonly hub: WatchHub;
  readonly #clock: Clock;
  readonly #retentionMs: number;
  readonly #logger: StoreLogger;
  #revision: number;
  #lastTime = 0;
  #waiters: Waiter[] = [];
  #compacting = false;
  #warnedMulti = false;

  /** A mirror of `kvs` at `revision` (store revisions), with an empty history. */
  constructor(kvs: Iterable<KeyValue>, revision: number, opts: MirrorOptions) {
    this.#clock = opts.clock ?? systemClock;
    this.#retentionMs = opts.historyRetentionMs ?? 5 * 60_000;
    this.#logger = opts.logger;
    this.index.load(kvs);
    this.#revision = revision;
    this.history = new History(revision + 1);
    this.hub = new WatchHub(this.history, { bufferSize: opts.watchBufferSize });
  }

  /** The newest revision applied. */
  get revision(): number {
    return this.#revision;
  }

  /** The oldest revision reads can use (0 while nothing was ever written). */
  get oldestRevision(): number {
    return this.#revision === 0 ? 0 : Math.min(this.history.floor, this.#revision);
  }

  /** The value of `key` at `rev` (≤ the current revision, ≥ the floor). */
  get(key: string, rev: number): KeyValue | undefined {
    const live = this.index.get(key);
    return rev === this.#revision ? live : this.history.stateAt(key, { revision: rev, live });
  }

  /** The keys under `prefix` at `rev`, paged. */
  list(
    prefix: string,
    rev: number,
    opts: { after?: string; limit: number; countRemaining: boolean },
  ): ListResult {
    if (rev !== this.#revision) {
      return listAt(this.index, this.history, prefix, rev, { ...opts, after: opts.after });
    }
    const r = this.index.range(prefix, opts.after);
    const end = Math.min(r.end, r.start + opts.limit);
    return { items: this.index.slice(r.start, end), revision: rev, remaining: r.end - end };
  }

  /** `count()` of a store served from this mirror. */
  count(prefix: string): number {
    return this.index.count(prefix);
  }

  /** `list()` of a store served from this mirror, at a revision {@link readRevision} gave. */
  listWith(prefix: string, rev: number, opts: ListOptions): ListResult {
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    return this.list(prefix, rev, {
      after: opts.after,
      limit,
      countRemaining: opts.countRemaining ?? true,
    });
  }

  /**
   * The revision a read of `key` at `revision` is served at, once the mirror has caught up as
   * the read asks: the newest when none is asked for, else the one asked for, checked as the
   * Store contract says (Invalid, FutureRevision, Compacted).
   */
  readRevision(key: string, revision: number | undefined): number {
    const current = this.#revision;
    if (!revision) return current;
    if (!Number.isSafeInteger(revision) || revision < 0) {
      throw new StoreError("Invalid", key, `Invalid revision ${revision}`);
    }
    if (revision > current) {
      throw new StoreError(
        "FutureRevision",
        key,
        `Revision ${revision} is newer than the current revision ${current}`,
      );
    }
    const floor = this.history.floor;
    if (revision < floor && revision !== current) {
      throw new StoreError(
        "Compacted",
        key,
        `Revision ${revision} was compacted; the oldest readable revision is ${floor}`,
      );
    }
    return revision;
  }

  /** `watch()` of a store served from this mirror, checked as the Store contract says. */
  watch(prefix: string, opts: WatchOptions): Watch {
    const after = opts.afterRevision;
    const current = this.#revision;
    if (!Number.isSafeInteger(after) || after < 0) {
      throw new StoreError("Invalid", prefix, `Invalid watch revision ${after}`);
    }
    if (after > current) {
      throw new StoreError(
        "FutureRevision",
        prefix,
        `Revision ${after} is newer than the current revision ${current}`,
      );
    }
    const floor = this.history.floor;
    if (after < floor - 1) {
      throw new StoreError(
        "Compacted",
        prefix,
        `Cannot watch after revision ${after}: history before revision ${floor} was compacted`,
      );
    }
    return this.hub.open(prefix, { afterRevision: after, signal: opts.signal });
  }

  /**
   * Applies events in revision order (one watch response's worth), publishes them to the
   * watchers and wakes the writers and readers waiting for their revisions. Events at or
   * below the current revision are ignored (a re-established watch may repeat them).
   */
  apply(events: readonly StoreEvent[]): void {
    const applied: StoreEvent[] = [];
    for (const ev of events) {
      if (ev.revision <= this.#revision) {
        if (ev.revision === this.#revision && applied.at(-1)?.revision === ev.revision) {
          // A transaction of several writes under the prefix (not one this store makes):
          // the index takes it; the history holds one event per revision.
          if (!this.#warnedMulti) {
            this.#warnedMulti = true;
            this.#logger.warn(
              `etcd revision ${ev.revision} changed several keys under the prefix; watches ` +
                `and old reads see only the first (written by another etcd client?)`,
            );
          }
          this.#applyToIndex(ev);
        }
        continue;
      }
      this.#fill(ev.revision - 1, applied);
      this.#applyToIndex(ev);
      this.history.append(ev, this.#now());
      this.#revision = ev.revision;
      applied.push(ev);
    }
    this.#settle(applied);
  }

  /** Resolves once the mirror has applied `revision`. */
  waitFor(revision: number, signal?: AbortSignal): Promise<void> {
    if (revision <= this.#revision) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const w: Waiter = { revision, resolve, reject };
      this.#waiters.push(w);
      signal?.addEventListener("abort", () => {
        const i = this.#waiters.indexOf(w);
        if (i >= 0) this.#waiters.splice(i, 1);
        resolve();
      }, { once: true });
    });
  }

  /** Whether anyone waits for a revision not yet applied. */
  get waiting(): boolean {
    return this.#waiters.length > 0;
  }

  /** Rejects every waiter (the store is closing, or the watch failed for good). */
  failWaiters(err: unknown): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w.reject(err);
  }

  /**
   * After events were lost (etcd compacted past the watch while it was down): the keys as they
   * are at `revision`, with an empty history from there. Every watch ends with `Compacted`
   * after what it has buffered (its client lists again: kube's 410 Expired).
   */
  resync(kvs: Iterable<KeyValue>, revision: number): void {
    const at = Math.max(revision, this.#revision);
    this.hub.failAll((prefix) =>
      new StoreError(
        "Compacted",
        prefix,
        `Watch on "${prefix}" ended: events before revision ${at} were compacted in etcd ` +
          `before this server received them; list again`,
      )
    );
    this.index.load(kvs);
    this.#revision = at;
    this.history.reset(at + 1);
    this.#settle([]);
  }

  /** Drops history below `revision` (no-op if already compacted that far). */
  compact(revision: number): void {
    this.history.compact(Math.min(revision, this.#revision));
  }

  /** Compacts history older than the retention window, keeping the newest event. */
  async compactExpired(isOpen: () => boolean): Promise<number> {
    if (this.#revision > 0 && !this.#compacting) {
      this.#compacting = true;
      try {
        const cutoff = this.#clock.now() - this.#retentionMs;
        const target = Math.min(
          this.history.firstAtOrAfter(cutoff) ?? this.#revision,
          this.#revision,
        );
        while (this.history.floor < target && isOpen()) {
          this.history.compact(Math.min(target, this.history.floor + COMPACTION_STEP));
          if (this.history.floor < target) await new Promise((r) => setTimeout(r, 0));
        }
      } finally {
        this.#compacting = false;
      }
    }
    return this.oldestRevision;
  }

  #applyToIndex(ev: StoreEvent): void {
    if (ev.type === "put") this.index.put(ev.kv);
    else this.index.delete(ev.kv.key);
  }

  /** Filler events up to `revision`. */
  #fill(revision: number, applied: StoreEvent[]): void {
    while (this.#revision < revision) {
      const rev = this.#revision + 1;
      const ev: StoreEvent = {
        type: "delete",
        revision: rev,
        kv: { key: FILLER_KEY, value: "", createRevision: rev, modRevision: rev },
      };
      this.history.append(ev, this.#now());
      this.#revision = rev;
      applied.push(ev);
    }
  }

  #settle(applied: StoreEvent[]): void {
    if (applied.length > 0) this.hub.publish(applied);
    if (this.#waiters.length === 0) return;
    const still: Waiter[] = [];
    const ready: Waiter[] = [];
    for (const w of this.#waiters) (w.revision <= this.#revision ? ready : still).push(w);
    this.#waiters = still;
    for (const w of ready) w.resolve();
  }

  #now(): number {
    this.#lastTime = Math.max(this.#lastTime, this.#clock.now());
    return this.#lastTime;
  }
}
