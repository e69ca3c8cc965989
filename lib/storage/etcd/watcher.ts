/**
 * The one etcd watch that keeps a {@link Mirror} current: a Watch stream over the prefix from
 * the mirror's revision + 1, with previous values, re-established from where the mirror is
 * when the stream breaks (etcd restarted, connection lost). If etcd compacted past the mirror
 * meanwhile, the events in between are gone: the watcher reads every key again and the mirror
 * starts over from there, ending the watches it served with Compacted (410 for clients).
 *
 * No progress requests: etcd 3.4 answers one with its current revision at once, not in order
 * with the events still being sent, so it cannot prove the mirror complete. Callers that wait
 * for a revision the prefix may never reach (writes elsewhere in etcd) pass a `verify` check.
 * @module
 */

import type { StoreLogger } from "../logger.ts";
import type { KeyValue, StoreEvent } from "../store.ts";
import { type EtcdClient, prefixEnd, type RawKeyValue, type WatchResponse } from "./client.ts";
import { type Mirror, REVISION_OFFSET } from "./mirror.ts";

const enc = new TextEncoder();

export interface EtcdWatcherOptions {
  /** The etcd key prefix of the store. */
  prefix: string;
  logger: StoreLogger;
  /** An etcd key-value as the store's (prefix stripped, revisions shifted). */
  decode: (kv: RawKeyValue) => KeyValue;
}

/** A write waiting for the mirror to apply its revision. */
interface DeadlineWait {
  /** performance.now() ms after which the write fails. */
  deadline: number;
  target: number;
  timeoutMs: number;
  reject: (err: Error) => void;
}

/** Feeds the mirror from one etcd watch. */
export class EtcdWatcher {
  readonly #client: EtcdClient;
  readonly #mirror: Mirror;
  readonly #opts: EtcdWatcherOptions;
  #stream: ReturnType<EtcdClient["watchStream"]> | undefined;
  #generation = 0;
  #stopped = false;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #backoffMs = 100;
  #established = false;
  #firstEstablished = Promise.withResolvers<void>();
  /** Writes waiting for their revision ({@link #waitFor}), and the one timer of their deadlines. */
  readonly #deadlines = new Set<DeadlineWait>();
  #deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  /** When the deadline timer fires (Infinity: not armed). */
  #armedFor = Infinity;

  constructor(client: EtcdClient, mirror: Mirror, opts: EtcdWatcherOptions) {
    this.#client = client;
    this.#mirror = mirror;
    this.#opts = opts;
  }

  /** Opens the watch from the mirror's revision + 1. */
  start(): void {
    if (this.#stopped) return;
    const generation = ++this.#generation;
    const stream = this.#client.watchStream();
    this.#stream = stream;
    const current = () => generation === this.#generation && !this.#stopped;
    stream.on("data", (res) => {
      if (current()) this.#onResponse(res);
    });
    stream.on("error", (err) => {
      if (current()) this.#reconnect(err.message);
    });
    stream.on("end", () => {
      if (current()) this.#reconnect("the watch stream ended");
    });
    const prefix = enc.encode(this.#opts.prefix);
    stream.write({
      create_request: {
        key: prefix.length === 0 ? new Uint8Array([0]) : prefix,
        range_end: prefixEnd(prefix),
        start_revision: this.#mirror.revision + REVISION_OFFSET + 1,
      },
    });
  }

  /** Resolves once the watch was first established (etcd confirmed it). */
  get established(): Promise<void> {
    return this.#firstEstablished.promise;
  }

  /** Whether the watch is established: the mirror follows etcd. */
  get following(): boolean {
    return this.#established;
  }

  /** Cancels the watch. */
  stop(): void {
    this.#stopped = true;
    this.#established = false;
    clearTimeout(this.#retry);
    clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = undefined;
    this.#armedFor = Infinity;
    this.#stream?.cancel();
    this.#stream = undefined;
  }

  /**
   * Resolves once the mirror has applied `target`, or once `verify` (asked now and then while
   * waiting) says the prefix has not changed beyond what the mirror holds.
   *
   * @throws {Error} after `timeoutMs`.
   */
  async catchUp(
    target: number,
    timeoutMs: number,
    verify?: (revision: number) => Promise<boolean>,
  ): Promise<void> {
    if (this.#mirror.revision >= target) return;
    if (!verify) return this.#waitFor(target, timeoutMs);
    const ac = new AbortController();
    const reached = this.#mirror.waitFor(target, ac.signal).then(() => true);
    const deadline = Date.now() + timeoutMs;
    let delay = 20;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      for (;;) {
        const tick = new Promise<false>((r) => timer = setTimeout(() => r(false), delay));
        if (await Promise.race([reached, tick])) return;
        clearTimeout(timer);
        const at = this.#mirror.revision;
        if (at >= target) return;
        if (verify && await verify(at)) return;
        if (Date.now() > deadline) {
          throw this.#notCaughtUp(target, timeoutMs);
        }
        delay = Math.min(delay * 2, 200);
      }
    } finally {
      clearTimeout(timer);
      ac.abort();
    }
  }

  /**
   * {@link catchUp} without a check: what every write waits for (its own revision), so it
   * stays cheap: one waiter, and one timer for all writes (a timer of its own cost a write
   * 1.5 µs). A waiter left behind by a timeout resolves when the revision arrives (or is
   * rejected when the store closes).
   */
  #waitFor(target: number, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const w: DeadlineWait = {
        deadline: performance.now() + timeoutMs,
        target,
        timeoutMs,
        reject,
      };
      this.#deadlines.add(w);
      // Writes of one store share a timeout, so a new deadline is rarely the earliest.
      if (w.deadline < this.#armedFor) {
        clearTimeout(this.#deadlineTimer);
        this.#armDeadlines(timeoutMs);
      }
      this.#mirror.waitFor(target).then(() => {
        this.#deadlines.delete(w);
        resolve();
      }, (err) => {
        this.#deadlines.delete(w);
        reject(err);
      });
    });
  }

  /** Fails the writes whose time is up, then waits for the next deadline (none: no timer). */
  #armDeadlines(ms: number): void {
    this.#armedFor = performance.now() + ms;
    this.#deadlineTimer = setTimeout(() => {
      this.#deadlineTimer = undefined;
      this.#armedFor = Infinity;
      const now = performance.now();
      let next = Infinity;
      for (const w of this.#deadlines) {
        if (w.deadline > now) {
          next = Math.min(next, w.deadline);
          continue;
        }
        this.#deadlines.delete(w);
        w.reject(this.#notCaughtUp(w.target, w.timeoutMs));
      }
      if (next < Infinity && !this.#stopped) this.#armDeadlines(next - now);
    }, Math.max(1, ms));
  }

  #notCaughtUp(target: number, timeoutMs: number): Error {
    return new Error(
      `etcd: the watch of "${this.#opts.prefix}" did not catch up with revision ${target} ` +
        `within ${timeoutMs} ms (at ${this.#mirror.revision})`,
    );
  }

  #onResponse(res: WatchResponse): void {
    if (res.canceled) {
      if (res.compact_revision > 0) {
        this.#opts.logger.warn(
          `etcd: the watch of "${this.#opts.prefix}" cannot resume after revision ` +
            `${this.#mirror.revision}: etcd compacted to ${
              res.compact_revision - REVISION_OFFSET
            } meanwhile; reading the keys again (watches of this server end with 410 Expired)`,
        );
        this.#resync();
        return;
      }
      this.#reconnect(res.cancel_reason || "the watch was canceled");
      return;
    }
    if (res.created) {
      this.#established = true;
      this.#firstEstablished.resolve();
    }
    if (res.events.length === 0) return;
    this.#backoffMs = 100;
    // Each event's previous value is the mirror's, as of the revision before it: the mirror
    // holds every key under the prefix and follows every revision in order, so etcd is not
    // asked for prev_kv (a read of the old revision per event, on etcd's side).
    const batch = new Map<string, KeyValue | undefined>();
    const prevOf = (key: string) => batch.has(key) ? batch.get(key) : this.#mirror.index.get(key);
    const events: StoreEvent[] = res.events.map((e) => {
      const revision = e.kv.mod_revision - REVISION_OFFSET;
      if (e.type === "DELETE") {
        const key = this.#opts.decode(e.kv).key;
        const prevKv = prevOf(key);
        batch.set(key, undefined);
        const prev = prevKv ?? { key, value: "", createRevision: revision, modRevision: revision };
        return { type: "delete", revision, kv: { ...prev, modRevision: revision }, prevKv };
      }
      const kv = this.#opts.decode(e.kv);
      const prevKv = prevOf(kv.key);
      batch.set(kv.key, kv);
      return { type: "put", revision, kv, prevKv };
    });
    this.#mirror.apply(events);
  }

  /** Reads every key under the prefix again, replaces the mirror's contents, and watches
   * from there; retried with backoff while etcd does not answer. */
  #resync(): void {
    this.#established = false;
    this.#stream?.cancel();
    this.#stream = undefined;
    const generation = ++this.#generation;
    const prefix = enc.encode(this.#opts.prefix);
    this.#client.range({
      key: prefix.length === 0 ? new Uint8Array([0]) : prefix,
      range_end: prefixEnd(prefix),
    }).then((res) => {
      if (generation !== this.#generation || this.#stopped) return;
      this.#mirror.resync(res.kvs.map(this.#opts.decode), res.header.revision - REVISION_OFFSET);
      this.start();
    }, (err) => {
      if (generation !== this.#generation || this.#stopped) return;
      this.#opts.logger.warn(`etcd: reading "${this.#opts.prefix}" again failed (${err.message})`);
      this.#retry = setTimeout(() => this.#resync(), this.#backoffMs);
      this.#backoffMs = Math.min(this.#backoffMs * 2, 5_000);
    });
  }

  #reconnect(reason: string): void {
    this.#established = false;
    this.#stream?.cancel();
    this.#stream = undefined;
    this.#generation++;
    if (this.#stopped) return;
    this.#opts.logger.warn(
      `etcd: the watch of "${this.#opts.prefix}" broke (${reason}); ` +
        `resuming from revision ${this.#mirror.revision} in ${this.#backoffMs} ms`,
    );
    this.#retry = setTimeout(() => this.start(), this.#backoffMs);
    this.#backoffMs = Math.min(this.#backoffMs * 2, 5_000);
  }
}
