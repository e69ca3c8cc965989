/**
 * The Store: a revisioned key-value store shaped like etcd v3. It knows nothing of kinds or
 * HTTP: keys are strings (`/registry/<group>/<resource>/<namespace>/<name>`), values are the
 * serialized objects (JSON text).
 *
 * Revisions: one global counter. Every successful write (create, update, delete) increments it
 * by exactly one and the written key's `modRevision` is that new revision. Reads never change
 * it. A write resolves only once it is durable (for the file backend: its journal record is
 * fdatasync'd).
 *
 * Errors are {@link StoreError}s with a code; the registry translates them into API errors.
 */

/** A stored key at one revision. */
export interface KeyValue {
  key: string;
  value: string;
  /** Revision of the write that created the key (unchanged by updates). */
  createRevision: number;
  /** Revision of the last write to the key. */
  modRevision: number;
}

export type WatchEventType = "put" | "delete";

/** One change, in revision order. */
export interface StoreEvent {
  type: WatchEventType;
  /** The revision of this change. */
  revision: number;
  /** For `put`: the new value. For `delete`: the value as it was before deletion, with
   * `modRevision` set to the deletion revision. */
  kv: KeyValue;
  /** The value before this change; absent for a create. */
  prevKv?: KeyValue;
}

export interface ReadOptions {
  /** Read as of this revision (must be within the retained history). 0/undefined = latest. */
  revision?: number;
  /** Without `revision`: what this process holds now, with no round trip to confirm it is the
   * newest (kube's `resourceVersion=0`). Only a backend that keeps a copy of a shared store
   * (etcd) reads differently. @default false */
  cached?: boolean;
}

export interface ListOptions extends ReadOptions {
  /** Return keys strictly greater than this key (for paging). */
  after?: string;
  /** Return at most this many items (0/undefined = all). */
  limit?: number;
  /** Count `remaining` exactly (the default). With false, `remaining` only tells whether
   * anything is left (1) or not (0): reads at an older revision then cost O(page), not
   * O(keys changed since). */
  countRemaining?: boolean;
}

export interface ListResult {
  items: KeyValue[];
  /** The revision the list was read at. */
  revision: number;
  /** Number of keys under the prefix after the last returned one (0 when complete). */
  remaining: number;
}

export interface WatchOptions {
  /** Deliver every event with revision > this. Must be ≥ the oldest retained revision - 1. */
  afterRevision: number;
  signal?: AbortSignal;
}

/** A watch: an async stream of events; ends when the signal aborts or the store closes.
 * Iteration throws a StoreError `Overflow` if the consumer falls too far behind (after every
 * event buffered so far has been delivered), or `Compacted` if compaction overtakes a watch
 * that is still reading old history. Single consumer. */
export interface Watch extends AsyncIterable<StoreEvent> {
  /** Stop the watch and release its buffer. */
  stop(): void;
  /**
   * A revision R such that every event of this watch with revision ≤ R has been delivered,
   * while nothing is buffered; undefined while delivered events wait in the buffer or after the
   * watch ended. What a bookmark may carry (etcd's progress notification).
   */
  progress(): number | undefined;
  /** The next event if one is ready now, without waiting (undefined otherwise): lets a
   * consumer that woke up for one event take everything else already buffered in one go. */
  poll(): StoreEvent | undefined;
}

export interface Store {
  /** The revision of the newest durable write (0 for an empty store). */
  currentRevision(): number;
  /** The oldest revision that reads and watches can still be served at. */
  oldestRevision(): number;

  get(key: string, opts?: ReadOptions): Promise<KeyValue | undefined>;
  /** True when `get` and `list` do all their work before they return (an index in memory):
   * their promise is settled already, and no request went to a backend. */
  readonly readsAtOnce?: boolean;
  /** All keys that start with `prefix`, in ascending key order. */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;
  /** Count of keys under `prefix` at the latest revision. */
  count(prefix: string): number;

  /** Creates `key`; fails with `KeyExists` if it exists. */
  create(key: string, value: string): Promise<KeyValue>;
  /** Replaces `key` if its modRevision equals `expectedRevision`; `Conflict` otherwise,
   * `NotFound` if the key is missing. */
  update(key: string, value: string, expectedRevision: number): Promise<KeyValue>;
  /** Deletes `key` (only if its modRevision equals `expectedRevision`, when given). Returns
   * the deleted value with `modRevision` = the deletion revision. */
  delete(key: string, expectedRevision?: number): Promise<KeyValue>;

  /** Stream changes under `prefix` after a revision. `Compacted` if that revision is gone,
   * `FutureRevision` if it is newer than the current one. */
  watch(prefix: string, opts: WatchOptions): Watch;

  /**
   * Whether `kv` (as read from this store) is stored in a form a write would not produce now:
   * under another encryption provider or key than new writes use. Writing the same value
   * again then still rewrites it (kube's storage does the same when its transformer reports
   * the stored value stale); the registry's no-op update check asks this.
   */
  isStale?(kv: KeyValue): boolean;

  /** Forget history at revisions < `revision`. */
  compact(revision: number): Promise<void>;

  /** Flush, stop watches, release files. */
  close(): Promise<void>;
  /** For a backend that depends on another process (etcd): whether it is reachable and this
   * store follows it. Readiness fails while it is false. Absent: always. */
  reachable?(): boolean;
}

export type StoreErrorCode =
  | "KeyExists"
  | "NotFound"
  | "Conflict"
  | "Compacted"
  | "FutureRevision"
  | "Closed"
  | "Invalid"
  /** A watch ended because its consumer fell too far behind (its buffer bound was hit).
   * Every event up to the error was delivered; re-watching from the last delivered revision
   * resumes without loss while that revision is still retained. */
  | "Overflow";

export class StoreError extends Error {
  readonly code: StoreErrorCode;
  readonly key: string;
  constructor(code: StoreErrorCode, key: string, message?: string) {
    super(message ?? `${code}: ${key}`);
    this.name = "StoreError";
    this.code = code;
    this.key = key;
  }
}

export function isStoreError(err: unknown, code?: StoreErrorCode): err is StoreError {
  return err instanceof StoreError && (code === undefined || err.code === code);
}
