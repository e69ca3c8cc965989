/**
 * The one behaviour suite every {@link Store} implementation runs. Call
 * {@link storeContract} from a backend's `_test.ts` with a factory that opens a fresh store,
 * through `openStore` by the backend's registered name.
 *
 * @example
 * ```ts
 * storeContract("memory", async (opts) => {
 *   const store = await openStore({ backend: "memory", ...opts });
 *   return { store, cleanup: () => store.close() };
 * });
 * ```
 * @module
 */

import assert from "node:assert/strict";
import type { Clock } from "../../api/mod.ts";
import { isStoreError, type KeyValue, type Store, type StoreEvent } from "../store.ts";

/** Options the suite passes to the factory; backends must honour them. */
export interface ContractStoreOptions {
  historyRetentionMs?: number;
  compactionIntervalMs?: number;
  watchBufferSize?: number;
  clock?: Clock;
}

/** Opens a fresh, empty store; `cleanup` closes it (if still open) and removes its files. */
export type StoreFactory = (
  opts: ContractStoreOptions,
) => Promise<{ store: Store; cleanup: () => Promise<void> }>;

/** A clock the test moves by hand. */
export class FakeClock implements Clock {
  constructor(public time = 1_700_000_000_000) {}
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    this.time += ms;
  }
}

/** Rejects unless `p` fails with a StoreError of `code`. */
export async function assertStoreError(p: Promise<unknown>, code: string): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (isStoreError(err) && err.code === code) return;
    throw new assert.AssertionError({ message: `expected StoreError ${code}, got ${err}` });
  }
  throw new assert.AssertionError({ message: `expected StoreError ${code}, got success` });
}

function throwsStoreError(fn: () => unknown, code: string): void {
  assert.throws(fn, (err: unknown) => isStoreError(err) && err.code === code);
}

/** Pulls exactly `n` events from a watch, failing after `opts.timeoutMs` (default 2 s). */
export async function take(
  iter: AsyncIterator<StoreEvent>,
  n: number,
  opts: { timeoutMs?: number } = {},
): Promise<StoreEvent[]> {
  const ms = opts.timeoutMs ?? 2000;
  const out: StoreEvent[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${out.length}/${n} events`)), ms);
  });
  try {
    while (out.length < n) {
      const r = await Promise.race([iter.next(), timeout]);
      if (r.done) throw new Error(`watch ended after ${out.length}/${n} events`);
      out.push(r.value);
    }
    return out;
  } finally {
    clearTimeout(timer);
  }
}

function summary(ev: StoreEvent): string {
  return `${ev.type} ${ev.kv.key}@${ev.revision}=${ev.kv.value}` +
    (ev.prevKv ? ` prev@${ev.prevKv.modRevision}=${ev.prevKv.value}` : "");
}

const keys = (kvs: KeyValue[]) => kvs.map((kv) => kv.key);

/** Registers the Store contract tests as `Deno.test` cases named `<name> store: …`. */
export function storeContract(name: string, factory: StoreFactory): void {
  const clock = new FakeClock();
  const test = (
    title: string,
    fn: (store: Store) => Promise<void>,
    opts: ContractStoreOptions = {},
  ) =>
    Deno.test(`${name} store: ${title}`, async () => {
      const { store, cleanup } = await factory(opts);
      try {
        await fn(store);
      } finally {
        await cleanup();
      }
    });

  test("starts empty at revision 0", async (s) => {
    assert.equal(s.currentRevision(), 0);
    assert.equal(await s.get("/a"), undefined);
    assert.deepEqual(await s.list("/"), { items: [], revision: 0, remaining: 0 });
    assert.equal(s.count("/"), 0);
  });

  test("every write adds exactly one revision; reads add none", async (s) => {
    const a = await s.create("/k/a", "1");
    assert.deepEqual({ ...a }, { key: "/k/a", value: "1", createRevision: 1, modRevision: 1 });
    const b = await s.create("/k/b", "2");
    assert.equal(b.modRevision, 2);
    const a2 = await s.update("/k/a", "1b", 1);
    assert.deepEqual({ ...a2 }, { key: "/k/a", value: "1b", createRevision: 1, modRevision: 3 });
    await s.get("/k/a");
    await s.list("/k/");
    s.count("/k/");
    assert.equal(s.currentRevision(), 3);
    const gone = await s.delete("/k/b");
    assert.deepEqual({ ...gone }, { key: "/k/b", value: "2", createRevision: 2, modRevision: 4 });
    assert.equal(s.currentRevision(), 4);
    assert.deepEqual({ ...(await s.get("/k/a"))! }, { ...a2 });
    assert.equal(await s.get("/k/b"), undefined);
  });

  test("create fails with KeyExists", async (s) => {
    await s.create("/k/a", "1");
    await assertStoreError(s.create("/k/a", "2"), "KeyExists");
    assert.equal(s.currentRevision(), 1);
    assert.equal((await s.get("/k/a"))?.value, "1");
  });

  test("update checks the revision: Conflict, NotFound", async (s) => {
    await s.create("/k/a", "1");
    await assertStoreError(s.update("/k/a", "x", 7), "Conflict");
    await assertStoreError(s.update("/k/missing", "x", 1), "NotFound");
    await s.update("/k/a", "2", 1);
    await assertStoreError(s.update("/k/a", "3", 1), "Conflict");
    await s.delete("/k/a");
    await assertStoreError(s.update("/k/a", "4", 2), "NotFound");
    assert.equal(s.currentRevision(), 3);
  });

  test("delete with and without an expected revision", async (s) => {
    await s.create("/k/a", "1");
    await s.create("/k/b", "1");
    await assertStoreError(s.delete("/k/a", 2), "Conflict");
    const a = await s.delete("/k/a", 1);
    assert.equal(a.modRevision, 3);
    assert.equal(a.value, "1");
    const b = await s.delete("/k/b");
    assert.equal(b.modRevision, 4);
    await assertStoreError(s.delete("/k/b"), "NotFound");
    const again = await s.create("/k/a", "new");
    assert.equal(again.createRevision, 5);
  });

  test("rejects invalid keys and values", async (s) => {
    await assertStoreError(s.create("", "v"), "Invalid");
    await assertStoreError(s.create("/a\0b", "v"), "Invalid");
    await assertStoreError(s.create("/a\ud800", "v"), "Invalid");
    await assertStoreError(s.create("/a", "\udc00"), "Invalid");
    assert.equal(s.currentRevision(), 0);
  });

  test("list returns the prefix in key order with paging", async (s) => {
    const names = ["b", "a", "c/x", "c", "a-", "a0", "d", "\u00e9", "A"];
    for (const n of names) await s.create(`/p/${n}`, n);
    await s.create("/p", "outside");
    await s.create("/q/a", "outside");
    await s.create("/o/z", "outside");
    const all = await s.list("/p/");
    const sorted = names.map((n) => `/p/${n}`).sort();
    assert.deepEqual(keys(all.items), sorted);
    assert.equal(all.remaining, 0);
    assert.equal(all.revision, s.currentRevision());
    assert.equal(s.count("/p/"), names.length);
    assert.equal(s.count("/p/c"), 2);

    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await s.list("/p/", { after, limit: 4 });
      seen.push(...keys(page.items));
      assert.equal(page.remaining, sorted.length - seen.length);
      if (page.remaining === 0) break;
      after = page.items.at(-1)!.key;
    }
    assert.deepEqual(seen, sorted);
    const tail = await s.list("/p/", { after: "/p/c", limit: 2 });
    assert.deepEqual(keys(tail.items), ["/p/c/x", "/p/d"]);
    assert.equal(tail.remaining, 1);
    assert.deepEqual(keys((await s.list("/p/", { after: "/" })).items), sorted);
    assert.deepEqual((await s.list("/p/", { after: "/p/\uffff" })).items, []);
    assert.deepEqual(keys((await s.list("/p/c")).items), ["/p/c", "/p/c/x"]);
  });

  test("get and list at an older revision", async (s) => {
    await s.create("/r/a", "a1"); // 1
    await s.create("/r/b", "b1"); // 2
    await s.create("/r/c", "c1"); // 3
    await s.update("/r/a", "a2", 1); // 4
    await s.delete("/r/b"); // 5
    await s.create("/r/d", "d1"); // 6
    await s.create("/r/b", "b2"); // 7
    await s.create("/x/a", "x"); // 8
    const at = async (rev: number) =>
      (await s.list("/r/", { revision: rev })).items.map((kv) => `${kv.key}=${kv.value}`);
    assert.deepEqual(await at(1), ["/r/a=a1"]);
    assert.deepEqual(await at(3), ["/r/a=a1", "/r/b=b1", "/r/c=c1"]);
    assert.deepEqual(await at(4), ["/r/a=a2", "/r/b=b1", "/r/c=c1"]);
    assert.deepEqual(await at(5), ["/r/a=a2", "/r/c=c1"]);
    assert.deepEqual(await at(6), ["/r/a=a2", "/r/c=c1", "/r/d=d1"]);
    assert.deepEqual(await at(8), ["/r/a=a2", "/r/b=b2", "/r/c=c1", "/r/d=d1"]);
    assert.equal((await s.list("/r/", { revision: 5 })).revision, 5);
    assert.equal((await s.get("/r/a", { revision: 3 }))?.value, "a1");
    assert.equal((await s.get("/r/a", { revision: 3 }))?.modRevision, 1);
    assert.equal(await s.get("/r/b", { revision: 6 }), undefined);
    assert.equal((await s.get("/r/b", { revision: 7 }))?.createRevision, 7);
    assert.equal(await s.get("/r/d", { revision: 5 }), undefined);
    // Paging at an old revision.
    const p1 = await s.list("/r/", { revision: 4, limit: 2 });
    assert.deepEqual(keys(p1.items), ["/r/a", "/r/b"]);
    assert.equal(p1.remaining, 1);
    const p2 = await s.list("/r/", { revision: 4, limit: 2, after: "/r/b" });
    assert.deepEqual(keys(p2.items), ["/r/c"]);
    assert.equal(p2.remaining, 0);
    const p3 = await s.list("/r/", { revision: 6, limit: 1 });
    assert.equal(p3.remaining, 2);
    await assertStoreError(s.get("/r/a", { revision: 9 }), "FutureRevision");
    await assertStoreError(s.list("/r/", { revision: 9 }), "FutureRevision");
    await s.compact(4);
    assert.equal(s.oldestRevision(), 4);
    await assertStoreError(s.list("/r/", { revision: 3 }), "Compacted");
    await assertStoreError(s.get("/r/a", { revision: 2 }), "Compacted");
    assert.deepEqual(await at(4), ["/r/a=a2", "/r/b=b1", "/r/c=c1"]);
    assert.deepEqual(await at(5), ["/r/a=a2", "/r/c=c1"]);
  });

  test("reads at every retained revision match a model of the history", async (s) => {
    // A seeded pseudo-random mix of creates, updates and deletes over a few prefixes.
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const snapshots: Map<string, KeyValue>[] = [new Map()];
    const live = new Map<string, KeyValue>();
    for (let i = 0; i < 400; i++) {
      const key = `/m/${"abc"[rand(3)]}/${rand(40)}`;
      const cur = live.get(key);
      let kv: KeyValue;
      if (!cur) kv = await s.create(key, `v${i}`);
      else if (rand(3) === 0) {
        await s.delete(key, cur.modRevision);
        live.delete(key);
        snapshots.push(new Map(live));
        continue;
      } else kv = await s.update(key, `v${i}`, cur.modRevision);
      live.set(key, kv);
      snapshots.push(new Map(live));
    }
    await s.compact(100);
    for (const rev of [100, 101, 150, 222, 300, 399, 400]) {
      for (const prefix of ["/m/", "/m/a/", "/m/b/1", "/m/c/3"]) {
        const want = [...snapshots[rev].values()].filter((kv) => kv.key.startsWith(prefix))
          .sort((a, b) => (a.key < b.key ? -1 : 1));
        const all = await s.list(prefix, { revision: rev });
        assert.deepEqual(all.items.map((kv) => ({ ...kv })), want, `list ${prefix} at ${rev}`);
        // Page through it with assorted page sizes.
        const limit = 1 + rand(7);
        const got: KeyValue[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await s.list(prefix, { revision: rev, after, limit });
          got.push(...page.items);
          assert.equal(page.remaining, want.length - got.length, `remaining ${prefix} at ${rev}`);
          if (page.items.length < limit || page.remaining === 0) break;
          after = page.items.at(-1)!.key;
        }
        assert.deepEqual(got.map((kv) => kv.key), want.map((kv) => kv.key));
        const probe = want[0]?.key ?? `${prefix}0`;
        const one = await s.get(probe, { revision: rev });
        assert.deepEqual(one ? { ...one } : undefined, snapshots[rev].get(probe));
      }
    }
  });

  test("watch from a revision delivers history then live events with prevKv", async (s) => {
    await s.create("/w/a", "a1"); // 1
    await s.create("/other", "o"); // 2
    await s.update("/w/a", "a2", 1); // 3
    const w = s.watch("/w/", { afterRevision: 1 });
    const it = w[Symbol.asyncIterator]();
    await s.create("/w/b", "b1"); // 4
    await s.delete("/w/a"); // 5
    await s.create("/wx", "no"); // 6
    const evs = await take(it, 3);
    assert.deepEqual(evs.map(summary), [
      "put /w/a@3=a2 prev@1=a1",
      "put /w/b@4=b1",
      "delete /w/a@5=a2 prev@3=a2",
    ]);
    assert.equal(evs[2].kv.createRevision, 1);
    assert.equal(evs[1].prevKv, undefined);
    await s.update("/w/b", "b2", 4); // 7
    assert.deepEqual((await take(it, 1)).map(summary), ["put /w/b@7=b2 prev@4=b1"]);
    w.stop();
    assert.equal((await it.next()).done, true);
  });

  test("watch from the current revision sees only new events", async (s) => {
    await s.create("/w/a", "1");
    const w = s.watch("/w/", { afterRevision: s.currentRevision() });
    const it = w[Symbol.asyncIterator]();
    await s.create("/w/b", "2");
    assert.deepEqual((await take(it, 1)).map(summary), ["put /w/b@2=2"]);
    w.stop();
  });

  test("watch progress: the revision up to which everything was delivered", async (s) => {
    await s.create("/w/a", "1"); // 1
    await s.create("/other/x", "1"); // 2
    const w = s.watch("/w/", { afterRevision: 0 });
    const it = w[Symbol.asyncIterator]();
    assert.equal(w.progress(), 0, "nothing scanned yet");
    assert.deepEqual((await take(it, 1)).map(summary), ["put /w/a@1=1"]);
    // Writes elsewhere advance the progress of an idle watch.
    await s.create("/other/y", "1"); // 3
    const next = it.next();
    await new Promise((r) => setTimeout(r, 0));
    assert.equal(w.progress(), 3);
    await s.create("/w/b", "2"); // 4
    assert.equal((await next).value.revision, 4);
    assert.equal(w.progress(), 4);
    // While an event waits in the buffer there is no progress to report.
    await s.create("/w/c", "3"); // 5
    assert.equal(w.progress(), undefined);
    await take(it, 1);
    assert.equal(w.progress(), 5);
    w.stop();
    assert.equal(w.progress(), undefined);
  });

  test("watch poll: takes what is ready without waiting", async (s) => {
    await s.create("/p/a", "1");
    await s.create("/p/b", "2");
    const w = s.watch("/p/", { afterRevision: 0 });
    // Catching up: poll reads the history itself.
    assert.equal(w.poll()?.revision, 1);
    assert.equal(w.poll()?.revision, 2);
    assert.equal(w.poll(), undefined);
    await Promise.all([s.create("/p/c", "3"), s.create("/p/d", "4")]);
    const it = w[Symbol.asyncIterator]();
    assert.equal((await it.next()).value.revision, 3);
    assert.equal(w.poll()?.revision, 4);
    assert.equal(w.poll(), undefined);
    w.stop();
  });

  test("watch from revision 0 replays everything", async (s) => {
    await s.create("/w/a", "1");
    await s.create("/w/b", "2");
    const w = s.watch("/w/", { afterRevision: 0 });
    const evs = await take(w[Symbol.asyncIterator](), 2);
    assert.deepEqual(evs.map((e) => e.revision), [1, 2]);
    w.stop();
  });

  test("watch: Compacted, FutureRevision", async (s) => {
    for (let i = 0; i < 5; i++) await s.create(`/c/${i}`, "v");
    throwsStoreError(() => s.watch("/c/", { afterRevision: 6 }), "FutureRevision");
    await s.compact(3);
    assert.equal(s.oldestRevision(), 3);
    throwsStoreError(() => s.watch("/c/", { afterRevision: 1 }), "Compacted");
    const w = s.watch("/c/", { afterRevision: 2 });
    const evs = await take(w[Symbol.asyncIterator](), 3);
    assert.deepEqual(evs.map((e) => e.revision), [3, 4, 5]);
    w.stop();
    await assertStoreError(s.compact(99), "FutureRevision");
    await s.compact(2); // already compacted further: no-op
    assert.equal(s.oldestRevision(), 3);
    await s.compact(5);
    assert.equal(s.oldestRevision(), 5);
    const last = s.watch("/c/", { afterRevision: 4 });
    assert.equal((await take(last[Symbol.asyncIterator](), 1))[0].revision, 5);
    last.stop();
  });

  test("a watcher reading old history is overtaken by compaction", async (s) => {
    for (let i = 0; i < 1500; i += 100) {
      await Promise.all(
        Array.from(
          { length: 100 },
          (_, j) => s.create(`/c/${String(i + j).padStart(4, "0")}`, "v"),
        ),
      );
    }
    const w = s.watch("/c/", { afterRevision: 0 });
    const it = w[Symbol.asyncIterator]();
    await take(it, 10);
    await s.compact(1400);
    await assert.rejects(
      async () => {
        for (;;) if ((await it.next()).done) break;
      },
      (err: unknown) => isStoreError(err, "Compacted"),
    );
  });

  test("watch ends on abort signal, stop() and close", async (s) => {
    const ac = new AbortController();
    const w1 = s.watch("/", { afterRevision: 0, signal: ac.signal });
    const it1 = w1[Symbol.asyncIterator]();
    const pending = it1.next();
    ac.abort();
    assert.equal((await pending).done, true);
    const pre = new AbortController();
    pre.abort();
    const w2 = s.watch("/", { afterRevision: 0, signal: pre.signal });
    assert.equal((await w2[Symbol.asyncIterator]().next()).done, true);
    const w3 = s.watch("/", { afterRevision: 0 });
    const it3 = w3[Symbol.asyncIterator]();
    const p3 = it3.next();
    await s.create("/z", "1");
    assert.equal((await p3).value?.kv.key, "/z");
    const p3b = it3.next();
    await s.close();
    assert.equal((await p3b).done, true);
  });

  test("a watcher past its buffer bound gets Overflow after its buffered events", async (s) => {
    const w = s.watch("/s/", { afterRevision: 0 });
    const it = w[Symbol.asyncIterator]();
    const first = it.next(); // goes live
    await s.create("/s/0", "v");
    assert.equal((await first).value?.revision, 1);
    const writes = [];
    for (let i = 1; i <= 20; i++) writes.push(s.create(`/s/${i}`, "v"));
    await Promise.all(writes); // writers finish although nobody reads
    const got: number[] = [];
    await assert.rejects(
      async () => {
        for (;;) {
          const r = await it.next();
          if (r.done) break;
          got.push(r.value.revision);
        }
      },
      (err: unknown) => isStoreError(err, "Overflow"),
    );
    assert.deepEqual(got, Array.from({ length: 9 }, (_, i) => i + 2));
    assert.equal((await it.next()).done, true);
  }, { watchBufferSize: 8 });

  test("a prefix whose keys begin a block of the index is counted and listed whole", async (s) => {
    // 128 keys before the prefix (the index's blocks hold 128 keys once sorted at once), then 5
    // under it. Counting it as 0 once made admission skip every policy binding.
    for (let i = 0; i < 128; i++) await s.create(`/a/${String(i).padStart(3, "0")}`, "a");
    for (let i = 0; i < 5; i++) await s.create(`/b/${i}`, "b");
    assert.equal((await s.list("/")).items.length, 133); // places every key
    assert.equal(s.count("/b/"), 5);
    assert.deepEqual(keys((await s.list("/b/")).items), ["/b/0", "/b/1", "/b/2", "/b/3", "/b/4"]);
    assert.equal(s.count("/a/"), 128);
    assert.equal((await s.list("/b/", { after: "/b/2" })).items.length, 2);
  });

  test("concurrent creates get distinct consecutive revisions", async (s) => {
    const n = 200;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => s.create(`/cc/${i}`, String(i))),
    );
    const revs = results.map((r) => r.modRevision).sort((a, b) => a - b);
    assert.deepEqual(revs, Array.from({ length: n }, (_, i) => i + 1));
    assert.equal(s.currentRevision(), n);
    assert.equal(s.count("/cc/"), n);
    const got = await s.get("/cc/7");
    assert.equal(got?.value, "7");
  });

  test("concurrent writes to one key: exactly one wins per revision", async (s) => {
    const kv = await s.create("/k", "0");
    const updates = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => s.update("/k", String(i), kv.modRevision)),
    );
    assert.equal(updates.filter((r) => r.status === "fulfilled").length, 1);
    assert.ok(
      updates.every((r) => r.status === "fulfilled" || isStoreError(r.reason, "Conflict")),
    );
    const creates = await Promise.allSettled([s.create("/n", "1"), s.create("/n", "2")]);
    assert.equal(creates[0].status, "fulfilled");
    assert.equal(creates[1].status, "rejected");
    const deletes = await Promise.allSettled([s.delete("/n"), s.delete("/n")]);
    assert.deepEqual(deletes.map((d) => d.status), ["fulfilled", "rejected"]);
    assert.equal(s.currentRevision(), 4);
  });

  test("history older than the retention window is compacted automatically", async (s) => {
    await s.create("/t/a", "1");
    await s.create("/t/b", "2");
    clock.advance(5_000);
    await s.create("/t/c", "3");
    clock.advance(10_000);
    await s.create("/t/d", "4"); // revision 4, written at +15s
    const deadline = Date.now() + 3000;
    while (s.oldestRevision() < 3 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    // Retention 12s: events at +0 are gone, +5s and later are kept.
    assert.equal(s.oldestRevision(), 3);
    throwsStoreError(() => s.watch("/t/", { afterRevision: 1 }), "Compacted");
    clock.advance(60_000);
    const deadline2 = Date.now() + 3000;
    while (s.oldestRevision() < 4 && Date.now() < deadline2) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(s.oldestRevision(), 4, "the newest event is always kept");
    const w = s.watch("/t/", { afterRevision: 3 });
    assert.equal((await take(w[Symbol.asyncIterator](), 1))[0].revision, 4);
    w.stop();
  }, { historyRetentionMs: 12_000, compactionIntervalMs: 5, clock });

  test("a large expired backlog is compacted in steps that let writes through", async (s) => {
    const writes = [];
    for (let i = 0; i < 25_000; i++) writes.push(s.create(`/big/${i}`, "v"));
    await Promise.all(writes);
    clock.advance(60_000);
    // Watch the floor from the event loop while compaction runs, and write meanwhile.
    const floors = new Set<number>();
    const during = s.create("/big/during", "v");
    const deadline = Date.now() + 10_000;
    while (s.oldestRevision() < 25_001 && Date.now() < deadline) {
      floors.add(s.oldestRevision());
      await new Promise((r) => setTimeout(r, 0));
    }
    await during;
    assert.equal(s.oldestRevision(), 25_001, "everything but the newest event is dropped");
    const between = [...floors].filter((f) => f > 1 && f < 25_001);
    assert.ok(between.length > 0, `the floor moved in steps: ${[...floors]}`);
    assert.equal(s.count("/big/"), 25_001);
  }, { historyRetentionMs: 10_000, compactionIntervalMs: 1, clock });

  test("listing 10,000 keys is fast", async (s) => {
    const writes = [];
    for (let i = 0; i < 10_000; i++) {
      const ns = `ns${i % 10}`;
      writes.push(s.create(`/registry/core/pods/${ns}/pod-${i}`, `{"i":${i}}`));
    }
    await Promise.all(writes);
    await s.list("/registry/core/pods/"); // warm-up
    const t0 = performance.now();
    const res = await s.list("/registry/core/pods/");
    const ms = performance.now() - t0;
    assert.equal(res.items.length, 10_000);
    assert.equal(s.count("/registry/core/pods/ns3/"), 1000);
    assert.ok(ms < 50, `list of 10k took ${ms.toFixed(1)} ms`);
  });

  test("close: in-flight writes finish, later calls fail with Closed", async (s) => {
    const inflight = [s.create("/x/1", "1"), s.create("/x/2", "2")];
    const closing = s.close();
    await assertStoreError(s.create("/x/3", "3"), "Closed");
    const done = await Promise.all(inflight);
    // Both finish, with revisions 1 and 2: concurrent writes to different keys get distinct
    // revisions, not necessarily in call order (etcd commits each call on its own).
    assert.deepEqual(done.map((d) => d.modRevision).sort(), [1, 2]);
    await closing;
    await s.close(); // idempotent
    await assertStoreError(s.get("/x/1"), "Closed");
    await assertStoreError(s.update("/x/1", "v", 1), "Closed");
    throwsStoreError(() => s.watch("/", { afterRevision: 0 }), "Closed");
  });
}
