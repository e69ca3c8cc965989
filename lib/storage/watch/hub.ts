/**
 * Watch fan-out. Writers never wait for watchers: publishing only appends to in-memory
 * buffers.
 *
 * A watcher starts in *catch-up*: it reads the shared {@link History} from its start revision
 * on demand, a chunk at a time, as its consumer pulls. When it reaches the newest event it
 * turns *live* (all in one synchronous step, so nothing is missed or repeated) and from then on
 * receives matching events pushed into its own buffer. A live watcher whose buffer grows past
 * `bufferSize` undelivered events is ended: it keeps what it has buffered, delivers it, and
 * then throws a `StoreError` with code `"Overflow"`. A catch-up watcher whose position is
 * compacted away throws `"Compacted"`.
 *
 * Lock order: none. Everything here runs on the event loop; `publish` is called by the store
 * right after it appends the same events to the history.
 * @module
 */

import { StoreError, type StoreEvent, type Watch } from "../store.ts";
import type { History } from "./history.ts";

/** Default bound of undelivered events per live watcher. */
export const DEFAULT_WATCH_BUFFER = 10_000;
/** Most matching events a catch-up step buffers at once. */
const CATCH_UP_CHUNK = 512;

/** Options of {@link WatchHub}. */
export interface WatchHubOptions {
  /** Undelivered events a live watcher may hold before it is ended with "Overflow".
   * @default 10_000 */
  bufferSize?: number;
}

/** Starts watchers over a history and pushes new events to the live ones. */
export class WatchHub {
  readonly history: History;
  readonly bufferSize: number;
  /** Live watchers grouped by prefix, so each event is matched once per distinct prefix. */
  #live = new Map<string, Set<Watcher>>();
  #all = new Set<Watcher>();

  constructor(history: History, opts: WatchHubOptions = {}) {
    this.history = history;
    this.bufferSize = opts.bufferSize ?? DEFAULT_WATCH_BUFFER;
  }

  /** Number of watchers not yet ended. */
  get size(): number {
    return this.#all.size;
  }

  /**
   * A watcher of keys under `prefix` that yields every event with revision >
   * `afterRevision`. The caller has checked that the history still holds them.
   */
  open(prefix: string, opts: { afterRevision: number; signal?: AbortSignal }): Watch {
    const w = new Watcher(this, prefix, opts.afterRevision + 1);
    this.#all.add(w);
    if (opts.signal) w.bindSignal(opts.signal);
    return w;
  }

  /** Delivers `events` (in revision order, already in the history) to live watchers. */
  publish(events: readonly StoreEvent[]): void {
    if (this.#live.size === 0) return;
    for (const ev of events) {
      for (const [prefix, watchers] of this.#live) {
        if (!ev.kv.key.startsWith(prefix)) continue;
        for (const w of watchers) w.push(ev);
      }
    }
  }

  /** Ends every watcher (the store is closing); buffered events are still delivered. */
  closeAll(): void {
    for (const w of [...this.#all]) w.finish();
  }

  /** Ends every watcher with the error `errorFor` makes for its prefix, after what it has
   * buffered (the history they follow was replaced). */
  failAll(errorFor: (prefix: string) => StoreError): void {
    for (const w of [...this.#all]) w.abort(errorFor(w.prefix));
  }

  /** @internal */
  goLive(w: Watcher): void {
    let set = this.#live.get(w.prefix);
    if (!set) this.#live.set(w.prefix, set = new Set());
    set.add(w);
  }

  /** @internal */
  forget(w: Watcher): void {
    this.#all.delete(w);
    const set = this.#live.get(w.prefix);
    if (set?.delete(w) && set.size === 0) this.#live.delete(w.prefix);
  }
}

type Mode = "catch-up" | "live" | "ended";

/** One watch stream. Single consumer. */
class Watcher implements Watch, AsyncIterableIterator<StoreEvent> {
  readonly prefix: string;
  #hub: WatchHub;
  #mode: Mode = "catch-up";
  /** Next revision to read from the history while catching up. */
  #cursor: number;
  #buf: (StoreEvent | undefined)[] = [];
  #head = 0;
  #error: StoreError | undefined;
  #wake: (() => void) | undefined;
  #unbind: (() => void) | undefined;

  constructor(hub: WatchHub, prefix: string, cursor: number) {
    this.#hub = hub;
    this.prefix = prefix;
    this.#cursor = cursor;
  }

  bindSignal(signal: AbortSignal): void {
    if (signal.aborted) {
      this.stop();
      return;
    }
    const onAbort = () => this.stop();
    signal.addEventListener("abort", onAbort, { once: true });
    this.#unbind = () => signal.removeEventListener("abort", onAbort);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<StoreEvent> {
    return this;
  }

  poll(): StoreEvent | undefined {
    if (this.#head === this.#buf.length && this.#mode === "catch-up" && !this.#error) {
      this.#catchUp();
    }
    return this.#head < this.#buf.length ? this.#shift() : undefined;
  }

  #shift(): StoreEvent {
    const ev = this.#buf[this.#head]!;
    this.#buf[this.#head++] = undefined;
    if (this.#head === this.#buf.length) {
      this.#buf = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#buf.length) {
      // A consumer that is always a little behind never empties the buffer: drop the
      // delivered head now and then so the array does not grow without end.
      this.#buf = this.#buf.slice(this.#head);
      this.#head = 0;
    }
    return ev;
  }

  async next(): Promise<IteratorResult<StoreEvent>> {
    for (;;) {
      if (this.#head < this.#buf.length) return { value: this.#shift(), done: false };
      if (this.#error) {
        const err = this.#error;
        this.#error = undefined;
        throw err;
      }
      if (this.#mode === "ended") return { value: undefined, done: true };
      if (this.#mode === "catch-up") {
        this.#catchUp();
        continue;
      }
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
  }

  return(): Promise<IteratorResult<StoreEvent>> {
    this.stop();
    return Promise.resolve({ value: undefined, done: true });
  }

  progress(): number | undefined {
    if (this.#mode === "ended" || this.#error || this.#head < this.#buf.length) return undefined;
    // Live: every event up to the newest has been pushed (publish is synchronous with apply).
    // Catching up: everything before the cursor has been scanned.
    return this.#mode === "live" ? this.#hub.history.lastRevision : this.#cursor - 1;
  }

  /** Stops the watch and drops anything buffered. */
  stop(): void {
    this.#buf = [];
    this.#head = 0;
    this.#error = undefined;
    this.#end();
  }

  /** Ends the stream after what is already buffered. */
  finish(): void {
    this.#end();
  }

  /** Ends the stream with `err` after what is already buffered. */
  abort(err: StoreError): void {
    if (this.#mode !== "ended") this.#fail(err);
  }

  /** Called by the hub for each matching event while live. */
  push(ev: StoreEvent): void {
    if (this.#mode !== "live") return;
    this.#buf.push(ev);
    if (this.#buf.length - this.#head > this.#hub.bufferSize) {
      this.#fail(
        new StoreError(
          "Overflow",
          this.prefix,
          `Watch on "${this.prefix}" ended: more than ${this.#hub.bufferSize} events were not ` +
            `consumed in time; watch again from the last revision received`,
        ),
      );
      return;
    }
    this.#poke();
  }

  /** Reads the next chunk of matching events from the history; turns live at its end. */
  #catchUp(): void {
    const h = this.#hub.history;
    if (this.#cursor < h.floor) {
      this.#fail(
        new StoreError(
          "Compacted",
          this.prefix,
          `Watch on "${this.prefix}" cannot continue from revision ${this.#cursor}: history ` +
            `before revision ${h.floor} was compacted`,
        ),
      );
      return;
    }
    const last = h.lastRevision;
    let found = 0;
    while (this.#cursor <= last && found < CATCH_UP_CHUNK) {
      const ev = h.at(this.#cursor++)!;
      if (ev.kv.key.startsWith(this.prefix)) {
        this.#buf.push(ev);
        found++;
      }
    }
    if (this.#cursor > last) {
      this.#mode = "live";
      this.#hub.goLive(this);
    }
  }

  #fail(err: StoreError): void {
    this.#error = err;
    this.#end();
  }

  #end(): void {
    if (this.#mode === "ended") {
      this.#poke();
      return;
    }
    this.#mode = "ended";
    this.#hub.forget(this);
    this.#unbind?.();
    this.#unbind = undefined;
    this.#poke();
  }

  #poke(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
