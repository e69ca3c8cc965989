import assert from "node:assert/strict";
import { SortedList } from "./keyindex.ts";

/** A repeatable source of integers in [0, n): the same seed, the same sequence. */
function seededRandom(seed: number): (n: number) => number {
  return (n) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
}

/** Every value, in key order (positions come from a range). */
function all<V>(list: SortedList<V>): V[] {
  const r = list.range("");
  return list.slice(r.start, r.end);
}

Deno.test("SortedList matches a sorted array through random inserts, deletes and ranges", () => {
  const rand = seededRandom(7);
  const list = new SortedList<number>();
  const model = new Map<string, number>();
  const prefixes = ["", "/a/", "/a/1", "/b/", "/c/9", "/z"];
  for (let step = 0; step < 20_000; step++) {
    const key = `/${"abc"[rand(3)]}/${rand(3000)}`;
    if (rand(4) === 0) {
      list.delete(key);
      model.delete(key);
    } else {
      list.set(key, step);
      model.set(key, step);
    }
    if (step % 2000 !== 1999) continue;
    const keys = [...model.keys()].sort();
    assert.equal(list.size, keys.length);
    assert.deepEqual(all(list), keys.map((k) => model.get(k)));
    for (const prefix of prefixes) {
      const after = rand(2) ? undefined : keys[rand(keys.length)];
      const want = keys.filter((k) => k.startsWith(prefix) && (after === undefined || k > after));
      const r = list.range(prefix, after);
      const got = [];
      for (let i = r.start; i < r.end; i++) got.push(list.keyAt(i));
      assert.deepEqual(got, want, `range ${prefix} after ${after}`);
    }
  }
  const keys = [...model.keys()].sort();
  const fresh = new SortedList<number>();
  fresh.load(keys, keys.map((k) => model.get(k)!));
  assert.deepEqual(all(fresh), all(list));
  fresh.set("/0", -1);
  assert.equal(fresh.keyAt(0), "/0");
});

Deno.test("SortedList places added keys when positions are asked for, few or many at a time", () => {
  const rand = seededRandom(11);
  const list = new SortedList<number>();
  const model = new Map<string, number>();
  // Bursts of 1 to 3,000 new keys between reads: both the one-by-one and the merging path.
  for (let round = 0; round < 40; round++) {
    const burst = round % 4 === 0 ? 3000 : 1 + rand(20);
    for (let n = 0; n < burst; n++) {
      const key = `/${"abc"[rand(3)]}/${rand(1_000_000)}`;
      const op = rand(10);
      if (op === 0) {
        list.delete(key);
        model.delete(key);
      } else if (model.has(key) || op === 1) {
        list.set(key, n); // replaces a waiting or placed value, or inserts
        model.set(key, n);
      } else {
        list.add(key, n);
        model.set(key, n);
      }
      // Change and delete some keys that are still waiting.
      if (op === 2) {
        list.set(key, -n);
        model.set(key, -n);
      }
      if (op === 3) {
        list.delete(key);
        model.delete(key);
      }
    }
    assert.equal(list.size, model.size);
    const keys = [...model.keys()].sort();
    if (round % 2) {
      const prefix = `/${"abc"[rand(3)]}/${rand(10)}`;
      const r = list.range(prefix);
      const got = [];
      for (let i = r.start; i < r.end; i++) got.push(list.keyAt(i));
      assert.deepEqual(got, keys.filter((k) => k.startsWith(prefix)), `range ${prefix}`);
    } else {
      assert.deepEqual(all(list), keys.map((k) => model.get(k)));
    }
  }
});

Deno.test("SortedList counts and ranges by prefix, placing waiting keys only when they may count", () => {
  const rand = seededRandom(23);
  const list = new SortedList<number>();
  const model = new Set<string>();
  const prefixes = ["", "/a", "/a/", "/a/1", "/b/", "/b/2", "/c/", "/c/99", "/d/", "/"];
  for (let round = 0; round < 400; round++) {
    // Bursts of new keys under one or two resources, as creates come, with some deletes.
    const resources = rand(3) ? ["abc"[rand(3)]] : ["a", "c"];
    for (let n = rand(round % 50 === 0 ? 600 : 8); n >= 0; n--) {
      const key = `/${resources[rand(resources.length)]}/${rand(100_000)}`;
      if (rand(8) === 0) {
        list.delete(key);
        model.delete(key);
      } else if (!model.has(key)) {
        list.add(key, n);
        model.add(key);
      }
    }
    // A range under one prefix, with keys under others still waiting, is that prefix's keys.
    const sorted = [...model].sort();
    const pick = sorted[rand(sorted.length)] ?? "/a/1";
    const prefix = pick.slice(0, 3 + rand(2)); // "/b/" or "/b/1", as a key now present has
    const after = rand(3) ? undefined : sorted[rand(sorted.length)];
    const r = list.range(prefix, after);
    const got = [];
    for (let i = r.start; i < r.end; i++) got.push(list.keyAt(i));
    const want = sorted.filter((k) => k.startsWith(prefix) && (after === undefined || k > after));
    assert.deepEqual(got, want, `range ${prefix} after ${after} in round ${round}`);
    for (const prefix of [prefixes[rand(prefixes.length)], `/${"abcd"[rand(4)]}/${rand(10)}`]) {
      const want = [...model].filter((k) => k.startsWith(prefix)).length;
      assert.equal(list.count(prefix), want, `count ${prefix} in round ${round}`);
    }
    assert.equal(list.size, model.size);
  }
  const keys = [...model].sort();
  const r = list.range("");
  const got = [];
  for (let i = r.start; i < r.end; i++) got.push(list.keyAt(i));
  assert.deepEqual(got, keys, "every key in order once counting is done");
});

Deno.test("SortedList counts and ranges a prefix whose keys begin a block", () => {
  // Loaded (blocks of 128) and grown one key at a time (a block splits past 256): in each, some
  // prefix's first key is a block's first key, and the block before ends below the prefix.
  const padded = (i: number) => String(i).padStart(4, "0");
  const loaded = new SortedList<number>();
  const keys = [
    ...Array.from({ length: 128 }, (_, i) => `/a/${padded(i)}`),
    ...Array.from({ length: 128 }, (_, i) => `/b/${padded(i)}`),
  ];
  loaded.load(keys, keys.map((_, i) => i));
  const grown = new SortedList<number>();
  for (const [i, k] of keys.entries()) grown.set(k, i);
  grown.set("/c/0", 0); // a 257th key: the block splits into /a/… and /b/…
  for (const list of [loaded, grown]) {
    assert.equal(list.count("/b/"), 128);
    const r = list.range("/b/");
    assert.equal(r.end - r.start, 128);
    assert.equal(list.keyAt(r.start), "/b/0000");
    assert.equal(list.count("/a/"), 128);
  }
  for (let split = 1; split < 256; split++) {
    // Every place a prefix can begin: /a/ keys, then /b/ keys from `split` on.
    const ks = Array.from({ length: 256 }, (_, i) => `/${i < split ? "a" : "b"}/${padded(i)}`);
    const list = new SortedList<number>();
    list.load(ks, ks.map((_, i) => i));
    assert.equal(list.count("/b/"), 256 - split, `split ${split}`);
    const r = list.range("/b/");
    assert.deepEqual([r.start, r.end], [split, 256], `split ${split}`);
  }
});
