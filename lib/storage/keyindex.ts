/**
 * Sorted keys for O(1) `get` and O(log n + k) prefix ranges.
 *
 * {@link SortedList} keeps keys (and a value per key) in blocks of at most 256, so an
 * insert or delete moves at most a block's worth of elements (one large array would move
 * everything after the insertion point: hundreds of microseconds per create once an array
 * outgrows V8's fast path, around 100,000 keys). Positions are global indices; each block's
 * starting position is recomputed lazily after a change. Keys are ordered by JavaScript
 * string comparison (UTF-16 code units), which matches byte order for ASCII keys.
 *
 * Keys the caller knows to be new ({@link SortedList.add}) wait unsorted until something
 * asks for positions among them: a create then costs a map insert instead of a search and a
 * splice (~2.5 µs with 100,000 keys), and the next list under their prefix places them at
 * once. Positions are those of the placed keys: a range under another prefix leaves the
 * waiting keys waiting (admission lists its policies on every write, between creates of
 * other resources), and positions stay valid until the next change.
 * @module
 */

import type { KeyValue } from "./store.ts";

/** A half-open range `[start, end)` of positions. */
export interface Range {
  start: number;
  end: number;
}

const BLOCK_MAX = 256;

interface Block<V> {
  keys: string[];
  vals: V[];
}

/** Distinct string keys in ascending order, each with a value, addressable by position. */
export class SortedList<V> {
  #blocks: Block<V>[] = [{ keys: [], vals: [] }];
  /** #starts[b]: position of the first key of block b; valid unless #dirty. */
  #starts: number[] = [0];
  #dirty = false;
  /** Keys in the blocks. */
  #size = 0;
  /** Keys added but not yet placed in the blocks (see {@link add}), and bounds of them. */
  #waiting = new Map<string, V>();
  #waitingMin = "";
  #waitingMax = "";

  /** Replaces the contents with `keys` (sorted, distinct) and their `vals`. */
  load(keys: string[], vals: V[]): void {
    this.#waiting.clear();
    const half = BLOCK_MAX / 2;
    this.#blocks = [];
    for (let i = 0; i < keys.length; i += half) {
      this.#blocks.push({ keys: keys.slice(i, i + half), vals: vals.slice(i, i + half) });
    }
    if (this.#blocks.length === 0) this.#blocks.push({ keys: [], vals: [] });
    this.#size = keys.length;
    this.#dirty = true;
  }

  get size(): number {
    return this.#size + this.#waiting.size;
  }

  /** Inserts `key`, which the caller knows is not in the list; it is placed when positions
   * are next needed. */
  add(key: string, val: V): void {
    if (this.#waiting.size === 0) this.#waitingMin = this.#waitingMax = key;
    else if (key < this.#waitingMin) this.#waitingMin = key;
    else if (key > this.#waitingMax) this.#waitingMax = key;
    this.#waiting.set(key, val);
  }

  /**
   * How many keys start with `prefix`. As {@link range}, it leaves the waiting keys waiting
   * when none of them can start with it (creates of one resource interleaved with counts of
   * another, as admission counts its configurations on every write, then cost no placement).
   */
  count(prefix: string): number {
    if (this.#waiting.size > 0 && this.#mayWait(prefix)) this.#settle();
    const [b, i] = this.#firstAtOrAfter(prefix);
    return this.#runFrom(prefix, b, i);
  }

  /**
   * Block and index of the first placed key ≥ `key`. The block {@link #blockFor} names holds
   * keys ≤ `key` first; when they all are smaller, the first key ≥ `key` is the next block's
   * first (a prefix whose keys begin a block: counted 0 before, 2026-11-29).
   */
  #firstAtOrAfter(key: string): [number, number] {
    const b = this.#blockFor(key);
    const keys = this.#blocks[b].keys;
    const i = lowerBound(keys, key);
    return i === keys.length && b + 1 < this.#blocks.length ? [b + 1, 0] : [b, i];
  }

  /** How many placed keys from index `i` of block `b` on start with `prefix`, where that is the
   * first key ≥ `prefix` ({@link #firstAtOrAfter}; keys with a prefix are contiguous). */
  #runFrom(prefix: string, b: number, i: number): number {
    const blocks = this.#blocks;
    let n = 0;
    for (; b < blocks.length; b++, i = 0) {
      const keys = blocks[b].keys;
      // Sorted: when a block's last key has the prefix, so has every key from i on.
      if (keys.length && hasPrefix(keys[keys.length - 1], prefix)) {
        n += keys.length - i;
        continue;
      }
      for (; i < keys.length && hasPrefix(keys[i], prefix); i++) n++;
      break;
    }
    return n;
  }

  /** Whether a waiting key may start with `prefix` (whether it lies within their bounds). */
  #mayWait(prefix: string): boolean {
    return this.#waitingMax >= prefix && this.#waitingMin.slice(0, prefix.length) <= prefix;
  }

  /** Inserts `key` or replaces its value. */
  set(key: string, val: V): void {
    if (this.#waiting.has(key)) {
      this.#waiting.set(key, val);
      return;
    }
    this.#place(key, val);
  }

  #place(key: string, val: V): void {
    const b = this.#blockFor(key);
    const block = this.#blocks[b];
    const i = lowerBound(block.keys, key);
    if (block.keys[i] === key) {
      block.vals[i] = val;
      return;
    }
    block.keys.splice(i, 0, key);
    block.vals.splice(i, 0, val);
    this.#size++;
    this.#dirty = true;
    if (block.keys.length > BLOCK_MAX) {
      const half = block.keys.length >> 1;
      const right = { keys: block.keys.splice(half), vals: block.vals.splice(half) };
      this.#blocks.splice(b + 1, 0, right);
    }
  }

  /** Removes `key` if present. */
  delete(key: string): void {
    if (this.#waiting.delete(key)) return;
    const b = this.#blockFor(key);
    const block = this.#blocks[b];
    const i = lowerBound(block.keys, key);
    if (block.keys[i] !== key) return;
    block.keys.splice(i, 1);
    block.vals.splice(i, 1);
    this.#size--;
    this.#dirty = true;
    if (block.keys.length === 0 && this.#blocks.length > 1) this.#blocks.splice(b, 1);
  }

  /** The key at `pos`, a position from {@link range} since which nothing changed. */
  keyAt(pos: number): string {
    const b = this.#blockAt(pos);
    return this.#blocks[b].keys[pos - this.#starts[b]];
  }

  /** The value at `pos`, a position from {@link range} since which nothing changed. */
  valueAt(pos: number): V {
    const b = this.#blockAt(pos);
    return this.#blocks[b].vals[pos - this.#starts[b]];
  }

  /** The values at positions `[start, end)`, in key order. */
  slice(start: number, end: number): V[] {
    const out: V[] = [];
    if (start >= end) return out;
    let b = this.#blockAt(start);
    let i = start - this.#starts[b];
    let left = end - start;
    while (left > 0) {
      const vals = this.#blocks[b].vals;
      const take = Math.min(vals.length - i, left);
      for (let k = i; k < i + take; k++) out.push(vals[k]);
      left -= take;
      b++;
      i = 0;
    }
    return out;
  }

  /** First position of a placed key that is ≥ `key` (or > `key` when `strict`). */
  #bound(key: string, strict: boolean): number {
    const b = this.#blockFor(key);
    const keys = this.#blocks[b].keys;
    const i = strict ? upperBound(keys, key) : lowerBound(keys, key);
    this.#refresh();
    return this.#starts[b] + i;
  }

  /**
   * Positions of the keys that start with `prefix` and are > `after`. Keys with a prefix are
   * contiguous in sorted order: everything before them is smaller than the prefix and
   * everything after them neither starts with it nor is smaller.
   */
  range(prefix: string, after?: string): Range {
    if (this.#waiting.size > 0 && this.#mayWait(prefix)) this.#settle();
    const [b, i] = this.#firstAtOrAfter(prefix);
    this.#refresh();
    const first = this.#starts[b] + i;
    const end = first + this.#runFrom(prefix, b, i);
    const start = after !== undefined && after >= prefix
      ? Math.max(first, this.#bound(after, true))
      : first;
    return { start: Math.min(start, end), end };
  }

  /** The block that holds `key` or would receive it. */
  #blockFor(key: string): number {
    const blocks = this.#blocks;
    let lo = 0;
    let hi = blocks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (blocks[mid].keys[0] <= key) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The block that holds position `pos`. */
  #blockAt(pos: number): number {
    this.#refresh();
    const starts = this.#starts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid] <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Places the waiting keys: one by one when they are few, else by merging all the keys
   * into new blocks (a merge costs about what 30 single placements do per 1,000 keys). */
  #settle(): void {
    const waiting = this.#waiting;
    if (waiting.size === 0) return;
    // The default order is that of `compare` (UTF-16 code units), and faster to sort by.
    const keys = [...waiting.keys()].sort();
    if (waiting.size * 32 < this.#size) {
      for (const k of keys) this.#place(k, waiting.get(k)!);
      waiting.clear();
      return;
    }
    const allKeys: string[] = [];
    const allVals: V[] = [];
    let i = 0;
    for (const block of this.#blocks) {
      for (let j = 0; j < block.keys.length; j++) {
        const k = block.keys[j];
        while (i < keys.length && keys[i] < k) {
          allKeys.push(keys[i]);
          allVals.push(waiting.get(keys[i++])!);
        }
        allKeys.push(k);
        allVals.push(block.vals[j]);
      }
    }
    for (; i < keys.length; i++) {
      allKeys.push(keys[i]);
      allVals.push(waiting.get(keys[i])!);
    }
    this.load(allKeys, allVals);
  }

  #refresh(): void {
    if (!this.#dirty) return;
    const starts = new Array<number>(this.#blocks.length);
    let at = 0;
    for (let b = 0; b < this.#blocks.length; b++) {
      starts[b] = at;
      at += this.#blocks[b].keys.length;
    }
    this.#starts = starts;
    this.#dirty = false;
  }
}

/** The live (latest-revision) key space: a map for `get`, a sorted list for ranges. */
export class KeyIndex {
  #sorted = new SortedList<KeyValue>();
  #map = new Map<string, KeyValue>();

  /** Replaces the contents with `kvs` (any order), sorting once. */
  load(kvs: Iterable<KeyValue>): void {
    this.#map = new Map();
    for (const kv of kvs) this.#map.set(kv.key, kv);
    const keys = [...this.#map.keys()].sort(compare);
    this.#sorted.load(keys, keys.map((k) => this.#map.get(k)!));
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: string): KeyValue | undefined {
    return this.#map.get(key);
  }

  has(key: string): boolean {
    return this.#map.has(key);
  }

  /** Inserts or replaces `kv` under `kv.key`. */
  put(kv: KeyValue): void {
    if (this.#map.has(kv.key)) this.#sorted.set(kv.key, kv);
    else this.#sorted.add(kv.key, kv);
    this.#map.set(kv.key, kv);
  }

  /** Removes `key` if present. */
  delete(key: string): void {
    if (this.#map.delete(key)) this.#sorted.delete(key);
  }

  /** Positions of the keys under `prefix` that are strictly greater than `after`. */
  range(prefix: string, after?: string): Range {
    return this.#sorted.range(prefix, after);
  }

  /** How many keys start with `prefix` (see {@link SortedList.count}). */
  count(prefix: string): number {
    return this.#sorted.count(prefix);
  }

  /** The values at positions `[start, end)`, in key order. */
  slice(start: number, end: number): KeyValue[] {
    return this.#sorted.slice(start, end);
  }

  keyAt(pos: number): string {
    return this.#sorted.keyAt(pos);
  }

  valueAt(pos: number): KeyValue {
    return this.#sorted.valueAt(pos);
  }
}

/** `key.startsWith(prefix)`, which took 109 ns for a 70-character prefix here, against 33 for
 * comparing a slice (2026-11-29). */
function hasPrefix(key: string, prefix: string): boolean {
  return key.slice(0, prefix.length) === prefix;
}

/** The ordering of keys everywhere in the store. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** First index of sorted `keys` whose key is ≥ `key`. */
export function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index of sorted `keys` whose key is > `key`. */
export function upperBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
