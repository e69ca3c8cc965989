// deno-lint-ignore-file no-explicit-any
/**
 * The watch and resourceVersion rules that matter across threads, with `--workers` = 1, 2
 * and 4, every request on a connection of its own (so the kernel spreads them over the
 * threads; each test then checks that more than one thread served, or, with 1, that the check
 * sees a single thread): a write acknowledged on one connection is in a consistent read and
 * a watch from its resourceVersion on any other; a watch from N starts right after N, from 0
 * with the state; an Exact list and its continue token are the same snapshot on every thread;
 * concurrent writers' events reach every watcher once, in revision order, also one resumed
 * on another connection mid-way; history no thread retains is 410 on every thread.
 */

import { assert, assertEquals, assertMatch } from "./assert.ts";
import { testServer, WITHOUT_NAMESPACE_DEFAULTS } from "./harness.ts";
import { assertThreadsServed, onNewConnection, perConnection } from "./threads.ts";
import { openWatch } from "./watch_client.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const COUNTS = [1, 2, 4];
/** Each check is repeated on this many new connections (threads picked by the kernel). */
const REPEATS = 3;

type Endpoint = Parameters<typeof onNewConnection>[0];

/** Creates or replaces configmap `name` with data v=`value` on a new connection; its
 * resourceVersion. */
async function put(server: Endpoint, name: string, value: string): Promise<string> {
  const got = await onNewConnection(server, "GET", `${CM}/${name}`);
  const body = { metadata: { name }, data: { v: value } };
  const res = got.status === 200
    ? await onNewConnection(server, "PUT", `${CM}/${name}`, body)
    : await onNewConnection(server, "POST", CM, body);
  assert(res.status === 200 || res.status === 201, JSON.stringify(res.body));
  return (res.body as any).metadata.resourceVersion;
}

function names(list: any): string[] {
  return list.items.map((o: any) => `${o.metadata.name}=${o.data.v}`);
}

for (const workers of COUNTS) {
  Deno.test(`--workers=${workers}: resourceVersion rules hold on every thread`, async () => {
    await using ts = await testServer({ workers, controllers: WITHOUT_NAMESPACE_DEFAULTS });
    const { server } = ts;
    await using fresh = perConnection(server);
    // a=1, b=1 at rv1; then a=2, c=1 (rv2): each write on a connection of its own.
    await put(server, "a", "1");
    const rv1 = await put(server, "b", "1");
    await put(server, "a", "2");
    const rv2 = await put(server, "c", "1");
    for (let i = 0; i < REPEATS; i++) {
      // Most Recent: the newest writes, whichever thread wrote and whichever reads.
      const list = await onNewConnection(server, "GET", CM);
      assertEquals(names(list.body), ["a=2", "b=1", "c=1"]);
      assert(Number((list.body as any).metadata.resourceVersion) >= Number(rv2));
      const got = await onNewConnection(server, "GET", `${CM}/c`);
      assertEquals((got.body as any).metadata.resourceVersion, rv2);
      // Exact with a limit, and its continue token on another connection: rv1's snapshot.
      const page1 = await onNewConnection(server, "GET", `${CM}?limit=1&resourceVersion=${rv1}`);
      assertEquals(page1.status, 200, JSON.stringify(page1.body));
      assertEquals(names(page1.body), ["a=1"]);
      const token = encodeURIComponent((page1.body as any).metadata.continue);
      const page2 = await onNewConnection(server, "GET", `${CM}?limit=1&continue=${token}`);
      assertEquals(page2.status, 200, JSON.stringify(page2.body));
      assertEquals(names(page2.body), ["b=1"]);
      assertEquals((page2.body as any).metadata.resourceVersion, rv1);
      // A watch from N starts right after N.
      {
        await using w = await openWatch(fresh, `${CM}?watch=1&resourceVersion=${rv1}`);
        const changes = [await w.next(), await w.next()];
        assertEquals(changes.map((e) => `${e.type} ${e.object.metadata.name}=${e.object.data.v}`), [
          "MODIFIED a=2",
          "ADDED c=1",
        ]);
        assertEquals(changes[1].object.metadata.resourceVersion, rv2);
      }
      // From 0: the state, then nothing until a write.
      {
        await using w = await openWatch(fresh, `${CM}?watch=1&resourceVersion=0`);
        const initial = [await w.next(), await w.next(), await w.next()];
        assertEquals(initial.map((e) => `${e.type} ${e.object.metadata.name}`), [
          "ADDED a",
          "ADDED b",
          "ADDED c",
        ]);
        assertEquals(await w.collect(200), []);
      }
    }
    // A live watch on one connection sees a write acknowledged on another.
    {
      await using w = await openWatch(fresh, `${CM}?watch=1&resourceVersion=${rv2}`);
      const rv3 = await put(server, "b", "2");
      const live = await w.next();
      assertEquals([live.type, live.object.metadata.resourceVersion], ["MODIFIED", rv3]);
    }
    // A revision no thread has reached: 504 after the wait, with kube's message.
    const ahead = await onNewConnection(
      server,
      "GET",
      `${CM}?watch=1&resourceVersion=${Number(rv2) + 100}`,
    );
    assertEquals(ahead.status, 504, JSON.stringify(ahead.body));
    assertMatch((ahead.body as any).message, /^Too large resource version: \d+, current: \d+$/);
    await assertThreadsServed(server, workers);
  });

  Deno.test(
    `--workers=${workers}: concurrent writers' events reach every watcher once, in order`,
    async () => {
      await using ts = await testServer({ workers, controllers: WITHOUT_NAMESPACE_DEFAULTS });
      const { server } = ts;
      await using fresh = perConnection(server);
      const start = await onNewConnection(server, "GET", CM);
      const from = (start.body as any).metadata.resourceVersion as string;
      const WATCHERS = 4;
      const watches = await Promise.all(
        Array.from(
          { length: WATCHERS },
          () => openWatch(fresh, `${CM}?watch=1&resourceVersion=${from}`),
        ),
      );
      // 4 writers, each write on a new connection: creates, then updates of its own objects.
      const acked: { rv: number; what: string }[] = [];
      await Promise.all(Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; i < 12; i++) {
          const name = `w${w}-${i % 6}`;
          const rv = await put(server, name, String(i));
          acked.push({ rv: Number(rv), what: `${i < 6 ? "ADDED" : "MODIFIED"} ${name}` });
        }
      }));
      acked.sort((a, b) => a.rv - b.rv);
      const want = acked.map((a) => `${a.what}@${a.rv}`);
      const seen = (events: any[]) =>
        events.map((e) =>
          `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`
        );
      for (const w of watches) {
        const events = [];
        for (let i = 0; i < want.length; i++) events.push(await w.next(10_000));
        assertEquals(seen(events), want);
        assertEquals(await w.collect(200), [], "nothing more");
        await w.close();
      }
      // Resumed on a new connection from the middle: exactly the rest.
      const mid = acked[acked.length >> 1].rv;
      await using resumed = await openWatch(fresh, `${CM}?watch=1&resourceVersion=${mid}`);
      const rest = want.filter((_, i) => acked[i].rv > mid);
      const events = [];
      for (let i = 0; i < rest.length; i++) events.push(await resumed.next(10_000));
      assertEquals(seen(events), rest);
      assertEquals(await resumed.collect(200), [], "nothing more");
      await assertThreadsServed(server, workers);
    },
  );
}

// N = 4 alone: N = 2 takes the same path, N = 1 is in resource_version_test.ts.
for (const workers of [4]) {
  Deno.test(`--workers=${workers}: history no longer retained is 410 on every thread`, async () => {
    await using ts = await testServer({
      workers,
      historyRetentionMs: 200,
      controllers: WITHOUT_NAMESPACE_DEFAULTS,
    });
    const { server } = ts;
    await using fresh = perConnection(server);
    const rv1 = await put(server, "a", "1");
    await put(server, "b", "1");
    // Each thread compacts its history on its own timer (every second here): wait until
    // 8 watches in a row, each on a new connection, get the ERROR; later ones must too.
    let inARow = 0;
    for (let tries = 0; inARow < 8; tries++) {
      assert(tries < 400, "a watch from a compacted revision was never refused on every thread");
      await put(server, "z", String(tries)); // history moves on
      await using w = await openWatch(fresh, `${CM}?watch=1&resourceVersion=${rv1}`);
      assertEquals(w.status, 200);
      const ev = await w.next();
      if (ev.type !== "ERROR") {
        inARow = 0;
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      inARow++;
      assertEquals([ev.object.kind, ev.object.code, ev.object.reason], ["Status", 410, "Expired"]);
      assertMatch(ev.object.message, new RegExp(`^too old resource version: ${rv1} \\(\\d+\\)$`));
      assert(await w.ended(), "the stream ends after the error");
    }
    await assertThreadsServed(server, workers);
  });
}
