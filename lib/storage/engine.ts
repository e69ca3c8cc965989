/**
 * The revisioned store logic shared by every embedded backend: revision assignment, the
 * compare-and-swap rules, the live index, the retained history, watch fan-out, compaction.
 * A backend only says how a write becomes durable ({@link Engine.persist}) and what to do
 * once it is applied ({@link Engine.afterApply}).
 *
 * Write path, in order:
 *
 * 1. `create`/`update`/`delete` check the key against its *latest* state, which includes
 *    writes still waiting to become durable, and assign the next revision (synchronously, so
 *    revisions follow call order and increase by exactly one).
 * 2. `persist` makes the write durable (the file backend appends a journal record; group
 *    commit shares one fdatasync between concurrent writes).
 * 3. Durable writes are applied strictly in revision order: live index, history, watchers,
 *    then `afterApply` (the file backend schedules the object file), then the caller's
 *    promise resolves. Reads and watches therefore only ever see durable writes, and a
 *    caller that awaited a write reads it back.
 *
 * If persisting fails, that write and every later one reject, and the store refuses writes
 * from then on (code `Closed`): revisions after a hole cannot be trusted. Reads go on.
 * @module
 */

import { type Clock, systemClock } from "../api/mod.ts";
import { KeyIndex } from "./keyindex.ts";
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
} from "./store.ts";
import { History } from "./watch/history.ts";
import { WatchHub } from "./watch/hub.ts";

/** Longest key accepted, in UTF-16 code units. */
/** Revisions dropped per step of a time-based compaction (see `compactExpired`). */
const COMPACTION_STEP = 10_000;

export const MAX_KEY_LENGTH = 4096;

/** Options every embedded backend accepts. */
export interface EngineOptions {
  /** How long history is kept for reads at older revisions and watches. @default 300_000 */
  historyRetentionMs?: number;
  /** How often history older than the retention window is compacted.
   * @default min(30_000, max(1_000, historyRetentionMs / 10)) */
  compactionIntervalMs?: number;
  /** Undelivered events a live watcher may hold before it ends with "Overflow".
   * @default 10_000 */
  watchBufferSize?: number;
  /** Source of write times (for history retention). @default Date.now */
  clock?: Clock;
}

/** The state a backend starts from. */
export interface EngineState {
  /** The live key-values (any order). */
  kvs: Iterable<KeyValue>;
  /** The current revision. */
  revision: number;
  /** The oldest revision the history holds (`revision + 1` when it holds none). */
  floor: number;
  /** The retained events from `floor` to `revision`, in order, with their write times. */
  history: Iterable<{ event: StoreEvent; time: number }>;
}

/** An empty store at revision 0. */
export const EMPTY_STATE: EngineState = { kvs: [], revision: 0, floor: 1, history: [] };

interface Inflight {
  event: StoreEvent;
  time: number;
  result: KeyValue;
  state: "pending" | "durable" | "failed";
  error?: unknown;
  resolve: (kv: KeyValue) => void;
  reject: (err: unknown) => void;
}

/**
 * Implements {@link Store} on top of an abstract durability step. Subclasses: MemoryStore,
 * FileStore.
 */
export abstract class Engine implements Store {
  /** Reads come from the index in memory, before the call returns. */
  readonly readsAtOnce = true;
  readonly #clock: Clock;
  readonly #retentionMs: number;
  #index = new KeyIndex();
  #history: History;
  #hub: WatchHub;
  /** Newest applied (durable) revision. */
  #revision: number;
  /** Newest assigned revision (≥ #revision while writes are in flight). */
  #assigned: number;
  /** Latest not-yet-applied state per key, for the write checks. */
  #pending = new Map<string, { revision: number; kv: KeyValue | undefined }>();
  #inflight: Inflight[] = [];
  #inflightHead = 0;
  #drained: (() => void) | undefined;
  #lastTime = 0;
  #compacting = false;
  #failure: Error | undefined;
  #state: "open" | "closing" | "closed" = "open";
  #closing: Promise<void> | undefined;
  #timer: ReturnType<typeof setInterval>;

  protected constructor(init: EngineState, opts: EngineOptions = {}) {
    this.#clock = opts.clock ?? systemClock;
    this.#retentionMs = opts.historyRetentionMs ?? 5 * 60_000;
    this.#index.load(init.kvs);
    this.#revision = this.#assigned = init.revision;
    this.#history = new History(init.floor);
    for (const { event, time } of init.history) {
      this.#history.append(event, time);
      this.#lastTime = Math.max(this.#lastTime, time);
    }
    if (this.#history.lastRevision !== init.revision) {
      throw new Error(
        `Inconsistent initial state: history ends at ${this.#history.lastRevision}, ` +
          `revision is ${init.revision}`,
      );
    }
    this.#hub = new WatchHub(this.#history, { bufferSize: opts.watchBufferSize });
    const interval = opts.compactionIntervalMs ??
      Math.min(30_000, Math.max(1_000, this.#retentionMs / 10));
    this.#timer = setInterval(() => void this.compactExpired().catch(() => {}), interval);
    Deno.unrefTimer(this.#timer);
  }

  /**
   * Makes `event` durable. Called synchronously, in revision order, once per write; the
   * write is applied when the promise resolves and fails if it rejects.
   */
  protected abstract persist(event: StoreEvent, time: number): Promise<void>;

  /** Runs after events are applied (in order), before their writers are resolved. */
  protected afterApply(_events: readonly StoreEvent[]): void {}

  /** Whether `kv`'s stored form is outdated (see {@link Store.isStale}); never, in memory. */
  isStale(_kv: KeyValue): boolean {
    return false;
  }

  /** Releases the backend; called once by `close` after every write has settled. */
  protected closeBackend(): Promise<void> {
    return Promise.resolve();
  }

  // ---- revisions ----

  /** The revision of the newest durable write (0 for an empty store). */
  currentRevision(): number {
    return this.#revision;
  }

  /** The oldest revision reads can use; watches may start after `oldestRevision() - 1`.
   * 0 for an empty store. */
  oldestRevision(): number {
    return this.#revision === 0 ? 0 : this.#history.floor;
  }

  // ---- reads (never change the revision) ----

  /** The value of `key` at the latest revision, or at `opts.revision` if given. */
  get(key: string, opts: ReadOptions = {}): Promise<KeyValue | undefined> {
    try {
      this.#checkReadable(key);
      const rev = this.#readRevision(key, opts.revision);
      const live = this.#index.get(key);
      return Promise.resolve(
        rev === this.#revision ? live : this.#history.stateAt(key, { revision: rev, live }),
      );
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * The keys under `prefix` in ascending order, at the latest revision or `opts.revision`;
   * `after` and `limit` page through them, `remaining` counts what is left.
   */
  list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    try {
      this.#checkReadable(prefix);
      const rev = this.#readRevision(prefix, opts.revision);
      const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
      if (rev !== this.#revision) {
        return Promise.resolve(
          listAt(this.#index, this.#history, prefix, rev, {
            after: opts.after,
            limit,
            countRemaining: opts.countRemaining ?? true,
          }),
        );
      }
      const r = this.#index.range(prefix, opts.after);
      const end = Math.min(r.end, r.start + limit);
      return Promise.resolve({
        items: this.#index.slice(r.start, end),
        revision: rev,
        remaining: r.end - end,
      });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Number of keys under `prefix` at the latest revision. */
  count(prefix: string): number {
    return this.#index.count(prefix);
  }

  // ---- writes (each adds exactly one revision) ----

  /** Creates `key` at the next revision (createRevision = modRevision = that revision).
   * `KeyExists` if the key exists. */
  create(key: string, value: string): Promise<KeyValue> {
    try {
      this.#checkWrite(key, value);
      if (this.#latest(key)) throw new StoreError("KeyExists", key, `Key "${key}" already exists`);
      const rev = ++this.#assigned;
      const kv = Object.freeze({ key, value, createRevision: rev, modRevision: rev });
      return this.#submit({ type: "put", revision: rev, kv }, kv);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Replaces `key` at the next revision if its modRevision is `expectedRevision`;
   * `NotFound` if missing, `Conflict` if it changed. createRevision is kept. */
  update(key: string, value: string, expectedRevision: number): Promise<KeyValue> {
    try {
      this.#checkWrite(key, value);
      const prev = this.#latest(key);
      if (!prev) throw new StoreError("NotFound", key, `Key "${key}" not found`);
      if (prev.modRevision !== expectedRevision) throw conflict(key, prev, expectedRevision);
      const rev = ++this.#assigned;
      const kv = Object.freeze({
        key,
        value,
        createRevision: prev.createRevision,
        modRevision: rev,
      });
      return this.#submit({ type: "put", revision: rev, kv, prevKv: prev }, kv);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Deletes `key` at the next revision (only if its modRevision is `expectedRevision`, when
   * given). Resolves to the deleted value with modRevision = the deletion revision. */
  delete(key: string, expectedRevision?: number): Promise<KeyValue> {
    try {
      this.#checkWritable(key);
      const prev = this.#latest(key);
      if (!prev) throw new StoreError("NotFound", key, `Key "${key}" not found`);
      if (expectedRevision !== undefined && prev.modRevision !== expectedRevision) {
        throw conflict(key, prev, expectedRevision);
      }
      const rev = ++this.#assigned;
      const kv = Object.freeze({ ...prev, modRevision: rev });
      return this.#submit({ type: "delete", revision: rev, kv, prevKv: prev }, kv);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** A method, so that type narrowing does not assume the state cannot change across awaits. */
  #isOpen(): boolean {
    return this.#state !== "closed";
  }

  #latest(key: string): KeyValue | undefined {
    const p = this.#pending.get(key);
    return p ? p.kv : this.#index.get(key);
  }

  #submit(event: StoreEvent, result: KeyValue): Promise<KeyValue> {
    const key = event.kv.key;
    this.#pending.set(key, {
      revision: event.revision,
      kv: event.type === "put" ? event.kv : undefined,
    });
    const time = Math.max(this.#lastTime, this.#clock.now());
    this.#lastTime = time;
    let durable: Promise<void>;
    try {
      durable = this.persist(event, time);
    } catch (err) {
      durable = Promise.reject(err);
    }
    return new Promise<KeyValue>((resolve, reject) => {
      const entry: Inflight = { event, time, result, state: "pending", resolve, reject };
      this.#inflight.push(entry);
      durable.then(
        () => {
          entry.state = "durable";
          this.#drain();
        },
        (err) => {
          entry.state = "failed";
          entry.error = err;
          this.#drain();
        },
      );
    });
  }

  /** Applies settled writes from the head of the queue, in revision order. */
  #drain(): void {
    const applied: Inflight[] = [];
    const q = this.#inflight;
    while (this.#inflightHead < q.length && q[this.#inflightHead].state !== "pending") {
      const entry = q[this.#inflightHead++];
      if (entry.state === "failed" && !this.#failure) {
        const cause = entry.error as Error;
        this.#failure = new Error(
          `Write of revision ${entry.event.revision} failed to persist: ${cause?.message ?? cause}`,
          { cause },
        );
        this.#pending.clear();
      }
      if (this.#failure) {
        entry.reject(entry.state === "failed" ? entry.error : this.#failure);
        continue;
      }
      this.#apply(entry.event, entry.time);
      applied.push(entry);
    }
    if (this.#inflightHead === q.length) {
      this.#inflight = [];
      this.#inflightHead = 0;
      this.#drained?.();
    } else if (this.#inflightHead > 1024 && this.#inflightHead * 2 > q.length) {
      // Under steady load the queue is never empty: drop the applied head now and then, or it
      // would keep every write ever made (and its value) alive.
      this.#inflight = q.slice(this.#inflightHead);
      this.#inflightHead = 0;
    }
    if (applied.length === 0) return;
    const events = applied.map((e) => e.event);
    this.#hub.publish(events);
    this.afterApply(events);
    for (const e of applied) e.resolve(e.result);
  }

  #apply(event: StoreEvent, time: number): void {
    const key = event.kv.key;
    if (event.type === "put") this.#index.put(event.kv);
    else this.#index.delete(key);
    this.#history.append(event, time);
    this.#revision = event.revision;
    if (this.#pending.get(key)?.revision === event.revision) this.#pending.delete(key);
  }

  // ---- watch ----

  /**
   * Streams events under `prefix` with revision > `opts.afterRevision`, in revision order,
   * each with `prevKv` (absent for a create). Throws `FutureRevision` if `afterRevision` is
   * newer than the current revision and `Compacted` if events after it are no longer held.
   * The stream ends when the signal aborts, `stop()` is called or the store closes; it
   * throws `Overflow` if the consumer falls more than `watchBufferSize` events behind, and
   * `Compacted` if compaction overtakes a consumer still reading old history.
   */
  watch(prefix: string, opts: WatchOptions): Watch {
    this.#checkReadable(prefix);
    const after = opts.afterRevision;
    if (!Number.isSafeInteger(after) || after < 0) {
      throw new StoreError("Invalid", prefix, `Invalid watch revision ${after}`);
    }
    if (after > this.#revision) {
      throw new StoreError(
        "FutureRevision",
        prefix,
        `Revision ${after} is newer than the current revision ${this.#revision}`,
      );
    }
    if (after < this.#history.floor - 1) {
      throw new StoreError(
        "Compacted",
        prefix,
        `Cannot watch after revision ${after}: history before revision ${this.#history.floor} was compacted`,
      );
    }
    return this.#hub.open(prefix, { afterRevision: after, signal: opts.signal });
  }

  // ---- compaction ----

  /** Forgets history at revisions < `revision`: reads at those revisions and watches
   * starting before `revision - 1` fail with `Compacted`. A no-op if already compacted that
   * far; `FutureRevision` if `revision` is newer than the current revision. */
  compact(revision: number): Promise<void> {
    if (this.#state === "closed") return Promise.reject(closed(""));
    if (!Number.isSafeInteger(revision)) {
      return Promise.reject(new StoreError("Invalid", "", `Invalid revision ${revision}`));
    }
    if (revision > this.#revision) {
      return Promise.reject(
        new StoreError(
          "FutureRevision",
          "",
          `Cannot compact to revision ${revision}: the current revision is ${this.#revision}`,
        ),
      );
    }
    this.#history.compact(revision);
    return Promise.resolve();
  }

  /**
   * Compacts history older than the retention window, keeping at least the newest event.
   * Runs on a timer; tests with a fake clock call it directly. Resolves to the new oldest
   * revision.
   */
  async compactExpired(): Promise<number> {
    if (this.#revision > 0 && this.#state !== "closed" && !this.#compacting) {
      this.#compacting = true;
      try {
        const cutoff = this.#clock.now() - this.#retentionMs;
        const target = Math.min(
          this.#history.firstAtOrAfter(cutoff) ?? this.#revision,
          this.#revision,
        );
        // In steps, yielding between them: a large backlog never stalls writers and readers.
        while (this.#history.floor < target && this.#isOpen()) {
          this.#history.compact(Math.min(target, this.#history.floor + COMPACTION_STEP));
          if (this.#history.floor < target) await new Promise((r) => setTimeout(r, 0));
        }
      } finally {
        this.#compacting = false;
      }
    }
    return this.oldestRevision();
  }

  // ---- lifecycle ----

  /** Waits for in-flight writes, ends every watch, stops timers and releases the backend.
   * Later calls resolve once the first has finished; other methods then throw `Closed`. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#state = "closing";
    if (this.#inflight.length > this.#inflightHead) {
      await new Promise<void>((resolve) => this.#drained = resolve);
    }
    clearInterval(this.#timer);
    this.#hub.closeAll();
    try {
      await this.closeBackend();
    } finally {
      this.#state = "closed";
    }
  }

  /** Number of open watches. */
  get watchCount(): number {
    return this.#hub.size;
  }

  // ---- checks ----

  #checkReadable(key: string): void {
    if (this.#state === "closed") throw closed(key);
  }

  #checkWritable(key: string): void {
    if (this.#state !== "open") throw closed(key);
    if (this.#failure) {
      throw new StoreError("Closed", key, `Store refuses writes: ${this.#failure.message}`);
    }
    if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH) {
      throw new StoreError("Invalid", String(key), `Key must be 1 to ${MAX_KEY_LENGTH} characters`);
    }
    if (key.includes("\0") || !key.isWellFormed()) {
      throw new StoreError("Invalid", key, `Key "${key}" contains NUL or a lone surrogate`);
    }
  }

  #checkWrite(key: string, value: string): void {
    this.#checkWritable(key);
    if (typeof value !== "string" || !value.isWellFormed()) {
      throw new StoreError("Invalid", key, `Value of "${key}" must be a well-formed string`);
    }
  }

  #readRevision(key: string, revision: number | undefined): number {
    if (!revision) return this.#revision;
    if (!Number.isSafeInteger(revision) || revision < 0) {
      throw new StoreError("Invalid", key, `Invalid revision ${revision}`);
    }
    if (revision > this.#revision) {
      throw new StoreError(
        "FutureRevision",
        key,
        `Revision ${revision} is newer than the current revision ${this.#revision}`,
      );
    }
    if (revision < this.#history.floor && revision !== this.#revision) {
      throw new StoreError(
        "Compacted",
        key,
        `Revision ${revision} was compacted; the oldest readable revision is ${this.#history.floor}`,
      );
    }
    return revision;
  }
}

/**
 * The keys under `prefix` as of `rev`: merges the live keys with the keys that changed since
 * `rev` (shared by the embedded engine and the etcd backend's mirror).
 */
export function listAt(
  index: KeyIndex,
  h: History,
  prefix: string,
  rev: number,
  opts: { after: string | undefined; limit: number; countRemaining: boolean },
): ListResult {
  const live = index.range(prefix, opts.after);
  const hist = h.changedRange(prefix, opts.after);
  let i = live.start;
  let j = hist.start;
  /** The next key's state as of `rev` (skipping keys that did not exist then). */
  const next = (): KeyValue | undefined => {
    while (i < live.end || j < hist.end) {
      const liveKey = i < live.end ? index.keyAt(i) : undefined;
      const histKey = j < hist.end ? h.changedKeyAt(j) : undefined;
      if (histKey === undefined || (liveKey !== undefined && liveKey < histKey)) {
        return index.valueAt(i++); // unchanged since before rev
      }
      if (liveKey === histKey) i++;
      j++;
      const kv = h.stateAt(histKey, { revision: rev, live: index.get(histKey) });
      if (kv) return kv;
    }
    return undefined;
  };
  const items: KeyValue[] = [];
  while (items.length < opts.limit) {
    const kv = next();
    if (!kv) break;
    items.push(kv);
  }
  if (!opts.countRemaining) {
    // Paging callers that know the total ask only whether anything is left: one more step
    // instead of a pass over every changed key after the page (which made paging O(n²)).
    return { items, revision: rev, remaining: next() ? 1 : 0 };
  }
  // Live keys not yet visited, corrected by the changed keys not yet visited.
  let remaining = live.end - i;
  for (; j < hist.end; j++) {
    const key = h.changedKeyAt(j);
    const then = h.stateAt(key, { revision: rev, live: index.get(key) }) ? 1 : 0;
    remaining += then - (index.has(key) ? 1 : 0);
  }
  return { items, revision: rev, remaining };
}

function conflict(key: string, current: KeyValue, expected: number): StoreError {
  return new StoreError(
    "Conflict",
    key,
    `Key "${key}" is at revision ${current.modRevision}, not ${expected}`,
  );
}

function closed(key: string): StoreError {
  return new StoreError("Closed", key, "Store is closed");
}
