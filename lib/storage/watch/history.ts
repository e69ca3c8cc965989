/**
 * The retained history: every event from the compaction floor to the current revision, plus
 * a per-key index for reads at an older revision.
 *
 * Revisions are contiguous, so the event of revision r sits at position `r - floor` (O(1)).
 * Each event carries `prevKv`, so the state of a key at revision r is:
 *
 * - no event for the key in the history: its live state (unchanged since before the floor);
 * - otherwise the state after its last event ≤ r (the put's value, or absent after a delete);
 * - or, when all its events are > r, the `prevKv` of the first one (absent for a create).
 *
 * Worked example: key `a` created at 3, updated at 7, deleted at 9; floor 5. The chain of
 * `a` is [7, 9] (event 3 is compacted). At r=6: both events are > 6, so the state is the
 * prevKv of event 7, which is the value written at 3. At r=8: the last event ≤ 8 is 7, a put,
 * so its value. At r=9 or later: the delete, so absent.
 * @module
 */

import type { KeyValue, StoreEvent } from "../store.ts";
import { type Range, SortedList } from "../keyindex.ts";

/** Events in revision order with their write times, from `floor` to `lastRevision`. */
export class History {
  #events: StoreEvent[] = [];
  #times: number[] = [];
  #head = 0;
  #floor: number;
  /** Revisions of each key's events in the history, ascending. */
  #chains = new Map<string, number[]>();
  /** The keys of #chains, sorted. */
  #changed = new SortedList<null>();

  /** An empty history whose first event will have revision `floor`. */
  constructor(floor: number) {
    this.#floor = floor;
  }

  /** The oldest revision held (the next revision to append, while empty). */
  get floor(): number {
    return this.#floor;
  }

  /** The number of events held. */
  get length(): number {
    return this.#events.length - this.#head;
  }

  /** Revision of the newest event (`floor - 1` while empty). */
  get lastRevision(): number {
    return this.#floor + this.length - 1;
  }

  /** The key at position `pos` of the sorted keys that have events in the history. */
  changedKeyAt(pos: number): string {
    return this.#changed.keyAt(pos);
  }

  /** Adds the next event; its revision must be `lastRevision + 1`. */
  append(event: StoreEvent, time: number): void {
    if (event.revision !== this.lastRevision + 1) {
      throw new Error(
        `History append out of order: revision ${event.revision} after ${this.lastRevision}`,
      );
    }
    this.#events.push(event);
    this.#times.push(time);
    const key = event.kv.key;
    const chain = this.#chains.get(key);
    if (chain) {
      chain.push(event.revision);
    } else {
      this.#chains.set(key, [event.revision]);
      this.#changed.add(key, null);
    }
  }

  /** The event of `revision`, if held. */
  at(revision: number): StoreEvent | undefined {
    if (revision < this.#floor || revision > this.lastRevision) return undefined;
    return this.#events[this.#head + revision - this.#floor];
  }

  /** The first held revision written at or after `time`, if any. */
  firstAtOrAfter(time: number): number | undefined {
    let lo = this.#head;
    let hi = this.#events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#times[mid] < time) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.#events.length ? this.#floor + lo - this.#head : undefined;
  }

  /**
   * Drops every event with revision < `floor`; afterwards `this.floor === floor`. `floor`
   * may be at most `lastRevision + 1`.
   */
  compact(floor: number): void {
    if (floor <= this.#floor) return;
    if (floor > this.lastRevision + 1) {
      throw new Error(`Cannot compact to ${floor}: history ends at ${this.lastRevision}`);
    }
    const drop = floor - this.#floor;
    const dropped = new Map<string, number>();
    for (let i = this.#head; i < this.#head + drop; i++) {
      const key = this.#events[i].kv.key;
      dropped.set(key, (dropped.get(key) ?? 0) + 1);
    }
    for (const [key, n] of dropped) {
      const chain = this.#chains.get(key)!;
      if (n >= chain.length) {
        this.#chains.delete(key);
        this.#changed.delete(key);
      } else {
        chain.splice(0, n);
      }
    }
    this.#head += drop;
    this.#floor = floor;
    if (this.#head > 1024 && this.#head * 2 > this.#events.length) {
      this.#events = this.#events.slice(this.#head);
      this.#times = this.#times.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Empties the history; the next event appended will have revision `floor`. */
  reset(floor: number): void {
    this.#events = [];
    this.#times = [];
    this.#head = 0;
    this.#floor = floor;
    this.#chains.clear();
    this.#changed = new SortedList<null>();
  }

  /** Whether `key` has events in the history. */
  changed(key: string): boolean {
    return this.#chains.has(key);
  }

  /** Positions (see {@link changedKeyAt}) of the changed keys under `prefix` that are >
   * `after`. */
  changedRange(prefix: string, after?: string): Range {
    return this.#changed.range(prefix, after);
  }

  /**
   * The value of `key` as of `opts.revision` (floor ≤ revision ≤ lastRevision), given its
   * live value `opts.live`. See the module comment for the rule.
   */
  stateAt(
    key: string,
    opts: { revision: number; live: KeyValue | undefined },
  ): KeyValue | undefined {
    const { revision, live } = opts;
    const chain = this.#chains.get(key);
    if (!chain) return live;
    let lo = 0;
    let hi = chain.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (chain[mid] <= revision) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) {
      const ev = this.at(chain[lo - 1])!;
      return ev.type === "put" ? ev.kv : undefined;
    }
    return this.at(chain[0])!.prevKv;
  }
}
