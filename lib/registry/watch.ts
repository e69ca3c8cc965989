/**
 * Watches of a registry's objects: the store's change events under a list prefix turned into
 * API watch events (ADDED, MODIFIED, DELETED), filtered by label and field selectors.
 */

import { StatusError } from "../api/mod.ts";
import { type StoreEvent, unreadableReason, type Watch } from "../storage/mod.ts";
import type { KubeObject } from "./definition.ts";
import { type ObjectFilter, selectsObject } from "./filter.ts";
import type { RegistryCore } from "./core.ts";

export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: KubeObject;
}

export interface WatchOptions {
  /** Events of the writes after this revision. */
  afterRevision: number;
  filter?: ObjectFilter;
  signal?: AbortSignal;
}

/** A watch's events, and how far it has delivered everything (see `ResourceRegistry.watch`). */
export interface RegistryWatch {
  /** The next event; done when the watch ends. Throws the store's watch errors. */
  next(): Promise<IteratorResult<WatchEvent>>;
  /** The next event if one is ready now (see `Watch.poll`). */
  poll(): WatchEvent | undefined;
  /** See `Watch.progress`. */
  progress(): number | undefined;
  /** Stops the watch. */
  return(value?: unknown): Promise<IteratorResult<WatchEvent>>;
}

/**
 * Store events turned into API watch events (some store events turn into none). With a
 * conversion that calls out, an event's objects are converted before it is transformed:
 * `next()` waits for that; `poll()` cannot, so it keeps such an event for the next `next()`
 * and answers nothing now (the order of events is kept).
 */
class TransformedWatch implements RegistryWatch {
  readonly #watch: Watch;
  readonly #events: AsyncIterator<StoreEvent>;
  readonly #core: RegistryCore;
  readonly #transform: (ev: StoreEvent) => WatchEvent | undefined;
  readonly #wanted: ((ev: StoreEvent) => boolean) | undefined;
  /** An event `poll()` took that still needs converting. */
  #held?: StoreEvent;

  constructor(
    watch: Watch,
    core: RegistryCore,
    transform: (ev: StoreEvent) => WatchEvent | undefined,
    wanted?: (ev: StoreEvent) => boolean,
  ) {
    this.#watch = watch;
    this.#events = watch[Symbol.asyncIterator]();
    this.#core = core;
    this.#transform = transform;
    this.#wanted = wanted;
  }

  async next(): Promise<IteratorResult<WatchEvent>> {
    for (;;) {
      let sev = this.#held;
      this.#held = undefined;
      if (!sev) {
        const r = await this.#events.next();
        if (r.done) return { value: undefined, done: true };
        sev = r.value;
      }
      if (this.#wanted && !this.#wanted(sev)) continue;
      const loading = this.#core.load([sev.kv, sev.prevKv]);
      if (loading) await loading;
      const ev = this.#transform(sev);
      if (ev) return { value: ev, done: false };
    }
  }

  poll(): WatchEvent | undefined {
    if (this.#held) return undefined;
    for (let ev = this.#watch.poll(); ev; ev = this.#watch.poll()) {
      if (this.#wanted && !this.#wanted(ev)) continue;
      if (!this.#core.loaded(ev.kv) || (ev.prevKv && !this.#core.loaded(ev.prevKv))) {
        this.#held = ev;
        return undefined;
      }
      const out = this.#transform(ev);
      if (out) return out;
    }
    return undefined;
  }

  progress(): number | undefined {
    return this.#watch.progress();
  }

  return(): Promise<IteratorResult<WatchEvent>> {
    this.#watch.stop();
    return Promise.resolve({ value: undefined, done: true });
  }
}

/**
 * Changes after `afterRevision` as watch events. With a filter, an object that starts
 * matching arrives as ADDED and one that stops matching as DELETED. Throws `Compacted` /
 * `FutureRevision` store errors at once; `progress()` tells up to which revision every event
 * has been delivered (what a bookmark may say). Event objects are shared between watchers:
 * read them, never change them.
 */
export function watchObjects(
  core: RegistryCore,
  namespace: string,
  opts: WatchOptions,
): RegistryWatch {
  const byKey = core.keyFilter(opts.filter);
  const w = core.store.watch(core.listPrefix(namespace), {
    afterRevision: opts.afterRevision,
    signal: opts.signal,
  });
  const selects = (o: KubeObject) => !opts.filter || selectsObject(opts.filter, o, core.def);
  const transform = (ev: StoreEvent): WatchEvent | undefined => {
    if (ev.type === "delete") throwIfCorruptDeleted(ev);
    const obj = core.sharedObject(ev.kv);
    if (ev.type === "delete") return selects(obj) ? { type: "DELETED", object: obj } : undefined;
    const now = selects(obj);
    const before = ev.prevKv ? selects(core.sharedObject(ev.prevKv)) : false;
    if (now && before) return { type: "MODIFIED", object: obj };
    if (now) return { type: "ADDED", object: obj };
    if (before) return { type: "DELETED", object: obj };
    return undefined;
  };
  // A name or namespace the filter rules out: nothing to convert or decode (an object keeps
  // both for life, so neither its old nor its new state can match).
  const wanted = byKey && ((ev: StoreEvent) => byKey(ev.kv.key));
  return new TransformedWatch(w, core, transform, wanted);
}

/**
 * The deletion of an object the server cannot read (an unsafe delete, unsafe_delete.ts) has no
 * object to send: as kube's storage watcher, the watch ends with an ERROR event of reason
 * StorageReadError, and clients list again (where the object is gone).
 */
function throwIfCorruptDeleted(ev: StoreEvent): void {
  const reason = unreadableReason(ev.kv.value);
  if (reason === undefined) return;
  throw new StatusError(
    500,
    "StorageReadError",
    "saw a DELETED event, but object data is corrupt - data from the storage is not " +
      `transformable revision=${ev.kv.modRevision}: ${reason}`,
  );
}
