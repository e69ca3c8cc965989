// deno-lint-ignore-file no-explicit-any
/**
 * The resourceVersion rules of spec 01, one test per cell of the get, list and watch tables,
 * plus the Invalid cells and the "Too large resource version" wait.
 */

import { assert, assertEquals, assertMatch } from "./assert.ts";
import type { StartOptions } from "../mod.ts";
import { type TestServer, testServer, WITHOUT_NAMESPACE_DEFAULTS } from "./harness.ts";
import { openWatch } from "./watch_client.ts";

const CM = "/api/v1/namespaces/default/configmaps";

/** A server without the per-namespace defaults: these tests count every ConfigMap of the
 * namespace, and the controllers' kube-root-ca.crt would be one more in every list. */
const start = (opts: StartOptions = {}) =>
  testServer({ controllers: WITHOUT_NAMESPACE_DEFAULTS, ...opts });

async function put(ts: TestServer, name: string, value: string): Promise<string> {
  const existing = await ts.json("GET", `${CM}/${name}`);
  const body = { metadata: { name }, data: { v: value } };
  const res = existing.status === 200
    ? await ts.json("PUT", `${CM}/${name}`, { body })
    : await ts.json("POST", CM, { body });
  assert(res.status === 200 || res.status === 201, JSON.stringify(res.body));
  return res.body.metadata.resourceVersion;
}

/** name=value of every item, in order. */
function state(list: any): string[] {
  return list.items.map((o: any) => `${o.metadata.name}=${o.data.v}`);
}

/** a=1, b=1 at rv1; then a=2 and c=1 (rv2 is the newest). */
async function history(ts: TestServer) {
  await put(ts, "a", "1");
  const rv1 = await put(ts, "b", "1");
  await put(ts, "a", "2");
  const rv2 = await put(ts, "c", "1");
  return { rv1, rv2, old: ["a=1", "b=1"], now: ["a=2", "b=1", "c=1"] };
}

function assertInvalid(res: { status: number; body: any }, detail: RegExp): void {
  assertEquals(res.status, 422, JSON.stringify(res.body));
  assertEquals(res.body.reason, "Invalid");
  assertMatch(res.body.message, /^ListOptions\.meta\.platform\.io "" is invalid: /);
  assertMatch(res.body.message, detail);
  assert(
    res.body.details.causes.some((c: any) =>
      /^resourceVersionMatch|sendInitialEvents/.test(c.field)
    ),
    JSON.stringify(res.body.details),
  );
}

async function assertTooLarge(ts: TestServer, path: string): Promise<void> {
  const res = await ts.request("GET", path);
  const body = await res.json();
  assertEquals(res.status, 504, JSON.stringify(body));
  assertEquals(body.reason, "Timeout");
  assertMatch(body.message, /^Too large resource version: \d+, current: \d+$/);
  assertEquals(res.headers.get("Retry-After"), "1");
  assertEquals(body.details.retryAfterSeconds, 1);
}

// ---- get ----

Deno.test("get: unset is Most Recent, 0 is Any, N is Not older than", async () => {
  await using ts = await start();
  const { rv1, rv2 } = await history(ts);
  for (
    const q of ["", "?resourceVersion=0", `?resourceVersion=${rv1}`, `?resourceVersion=${rv2}`]
  ) {
    const res = await ts.json("GET", `${CM}/a${q}`);
    assertEquals([res.status, res.body.data.v], [200, "2"], q);
  }
});

Deno.test("get: a resourceVersion ahead of the server waits, then 504 Too large", async () => {
  await using ts = await start();
  const { rv2 } = await history(ts);
  await assertTooLarge(ts, `${CM}/a?resourceVersion=${Number(rv2) + 100}`);
});

Deno.test("get: a resourceVersion reached while waiting is served", async () => {
  await using ts = await start();
  const { rv2 } = await history(ts);
  const later = ts.json("GET", `${CM}/a?resourceVersion=${Number(rv2) + 1}`);
  await new Promise((r) => setTimeout(r, 300));
  await put(ts, "a", "3");
  const res = await later;
  assertEquals([res.status, res.body.data.v], [200, "3"]);
});

Deno.test("get and list: a resourceVersion that is not a number is 400", async () => {
  await using ts = await start();
  for (const path of [`${CM}/a?resourceVersion=abc`, `${CM}?resourceVersion=-1`]) {
    const res = await ts.json("GET", path);
    assertEquals(res.status, 400, path);
    assertMatch(res.body.message, /invalid resource version/);
  }
});

// ---- list: resourceVersionMatch unset ----

Deno.test("list, no limit: unset is Most Recent, 0 is Any, N is Not older than", async () => {
  await using ts = await start();
  const { rv1, rv2, now } = await history(ts);
  for (const q of ["", "?resourceVersion=0", `?resourceVersion=${rv1}`]) {
    const res = await ts.json("GET", `${CM}${q}`);
    assertEquals(res.status, 200, q);
    assertEquals(state(res.body), now, q);
    assertEquals(res.body.metadata.resourceVersion, rv2, q);
  }
});

Deno.test("list, no limit: N ahead of the server is 504 Too large resource version", async () => {
  await using ts = await start();
  const { rv2 } = await history(ts);
  await assertTooLarge(ts, `${CM}?resourceVersion=${Number(rv2) + 100}`);
});

Deno.test("list, limit: unset is Most Recent, 0 is Any, N is Exact", async () => {
  await using ts = await start();
  const { rv1, rv2, old, now } = await history(ts);
  for (const q of ["?limit=10", "?limit=10&resourceVersion=0"]) {
    const res = await ts.json("GET", `${CM}${q}`);
    assertEquals([state(res.body), res.body.metadata.resourceVersion], [now, rv2], q);
  }
  const exact = await ts.json("GET", `${CM}?limit=10&resourceVersion=${rv1}`);
  assertEquals(exact.status, 200);
  assertEquals([state(exact.body), exact.body.metadata.resourceVersion], [old, rv1]);
  // Exact and paged: the second page is still as of rv1.
  const p1 = await ts.json("GET", `${CM}?limit=1&resourceVersion=${rv1}`);
  assertEquals([state(p1.body), p1.body.metadata.remainingItemCount], [["a=1"], 1]);
  const p2 = await ts.json("GET", `${CM}?limit=1&continue=${p1.body.metadata.continue}`);
  assertEquals([state(p2.body), p2.body.metadata.resourceVersion], [["b=1"], rv1]);
  assertEquals(p2.body.metadata.continue, undefined);
});

Deno.test("list, limit, continue: the token's snapshot; with 0 the same; with N 400", async () => {
  await using ts = await start();
  const { rv2, now } = await history(ts);
  const p1 = await ts.json("GET", `${CM}?limit=1`);
  const token = p1.body.metadata.continue;
  await put(ts, "b", "2"); // invisible to the paged list
  await put(ts, "d", "1");
  for (const rv of ["", "&resourceVersion=0"]) {
    const rest = await ts.json("GET", `${CM}?limit=5&continue=${token}${rv}`);
    assertEquals(rest.status, 200, rv);
    assertEquals([...state(p1.body), ...state(rest.body)], now, rv);
    assertEquals(rest.body.metadata.resourceVersion, rv2, rv);
  }
  const bad = await ts.json("GET", `${CM}?limit=1&continue=${token}&resourceVersion=${rv2}`);
  assertEquals(bad.status, 400);
  assertEquals(bad.body.reason, "BadRequest");
  assertEquals(bad.body.message, "specifying resource version is not allowed when using continue");
});

// ---- list: resourceVersionMatch=Exact ----

Deno.test("list, Exact: unset and 0 are Invalid (422), N is Exact with or without limit", async () => {
  await using ts = await start();
  const { rv1, old } = await history(ts);
  for (const limit of ["", "&limit=5"]) {
    assertInvalid(
      await ts.json("GET", `${CM}?resourceVersionMatch=Exact${limit}`),
      /resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided/,
    );
    assertInvalid(
      await ts.json("GET", `${CM}?resourceVersionMatch=Exact&resourceVersion=0${limit}`),
      /resourceVersionMatch "exact" is forbidden for resourceVersion "0"/,
    );
    const res = await ts.json(
      "GET",
      `${CM}?resourceVersionMatch=Exact&resourceVersion=${rv1}${limit}`,
    );
    assertEquals([res.status, state(res.body), res.body.metadata.resourceVersion], [200, old, rv1]);
  }
});

// ---- list: resourceVersionMatch=NotOlderThan ----

Deno.test("list, NotOlderThan: unset is Invalid, 0 is Any, N is Not older than", async () => {
  await using ts = await start();
  const { rv1, rv2, now } = await history(ts);
  for (const limit of ["", "&limit=5"]) {
    assertInvalid(
      await ts.json("GET", `${CM}?resourceVersionMatch=NotOlderThan${limit}`),
      /forbidden unless resourceVersion is provided/,
    );
    for (const rv of ["0", rv1]) {
      const res = await ts.json(
        "GET",
        `${CM}?resourceVersionMatch=NotOlderThan&resourceVersion=${rv}${limit}`,
      );
      assertEquals(res.status, 200);
      assertEquals([state(res.body), res.body.metadata.resourceVersion], [now, rv2], rv + limit);
    }
  }
});

Deno.test("list: the other Invalid combinations, with kube's messages", async () => {
  await using ts = await start();
  const { rv1 } = await history(ts);
  const p1 = await ts.json("GET", `${CM}?limit=1`);
  assertInvalid(
    await ts.json(
      "GET",
      `${CM}?limit=1&continue=${p1.body.metadata.continue}&resourceVersionMatch=NotOlderThan`,
    ),
    /resourceVersionMatch is forbidden when continue is provided/,
  );
  assertInvalid(
    await ts.json("GET", `${CM}?resourceVersion=${rv1}&resourceVersionMatch=Newest`),
    /Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""/,
  );
  assertInvalid(
    await ts.json("GET", `${CM}?sendInitialEvents=true`),
    /sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list/,
  );
});

Deno.test("list, Exact: a revision no longer retained is 410 Expired", async () => {
  await using ts = await start({ historyRetentionMs: 200 });
  const { rv1 } = await history(ts);
  await new Promise((r) => setTimeout(r, 1500)); // compaction runs every second
  await put(ts, "z", "1");
  const res = await ts.json("GET", `${CM}?limit=5&resourceVersion=${rv1}`);
  assertEquals([res.status, res.body.reason], [410, "Expired"], JSON.stringify(res.body));
  assertEquals(res.body.message, "The resourceVersion for the provided list is too old.");
});

// ---- watch ----

Deno.test("watch: unset and 0 start with the state, N starts right after it", async () => {
  await using ts = await start();
  const { rv1, rv2 } = await history(ts);
  for (const q of ["", "&resourceVersion=0"]) {
    await using w = await openWatch(ts, `${CM}?watch=1${q}`);
    const initial = [await w.next(), await w.next(), await w.next()];
    assertEquals(initial.map((e) => `${e.type} ${e.object.metadata.name}`), [
      "ADDED a",
      "ADDED b",
      "ADDED c",
    ]);
    assertEquals(await w.collect(300), []);
  }
  await using w = await openWatch(ts, `${CM}?watch=1&resourceVersion=${rv1}`);
  const changes = [await w.next(), await w.next()];
  assertEquals(changes.map((e) => `${e.type} ${e.object.metadata.name}=${e.object.data.v}`), [
    "MODIFIED a=2",
    "ADDED c=1",
  ]);
  assertEquals(changes[1].object.metadata.resourceVersion, rv2);
  const rv3 = await put(ts, "b", "2");
  const live = await w.next();
  assertEquals([live.type, live.object.metadata.resourceVersion], ["MODIFIED", rv3]);
});

Deno.test("watch: a revision no longer retained is an ERROR event with 410 Expired", async () => {
  await using ts = await start({ historyRetentionMs: 200 });
  const { rv1 } = await history(ts);
  await new Promise((r) => setTimeout(r, 1500));
  await put(ts, "z", "1");
  await using w = await openWatch(ts, `${CM}?watch=1&resourceVersion=${rv1}`);
  assertEquals(w.status, 200);
  const ev = await w.next();
  assertEquals(ev.type, "ERROR");
  assertEquals([ev.object.kind, ev.object.code, ev.object.reason], ["Status", 410, "Expired"]);
  assertMatch(ev.object.message, new RegExp(`^too old resource version: ${rv1} \\(\\d+\\)$`));
  assert(await w.ended(), "the stream ends after the error");
});

Deno.test("watch: N ahead of the server is 504 Too large resource version", async () => {
  await using ts = await start();
  const { rv2 } = await history(ts);
  await assertTooLarge(ts, `${CM}?watch=1&resourceVersion=${Number(rv2) + 100}`);
});

Deno.test("watch: timeoutSeconds ends the stream cleanly", async () => {
  await using ts = await start();
  await history(ts);
  await using w = await openWatch(ts, `${CM}?watch=1&resourceVersion=0&timeoutSeconds=1`);
  assertEquals((await w.collect(500, 3)).length, 3);
  assert(await w.ended(3000), "ended after timeoutSeconds");
});

// ---- bookmarks ----

Deno.test("bookmarks: never without allowWatchBookmarks", async () => {
  await using ts = await start();
  const { rv2 } = await history(ts);
  await using w = await openWatch(ts, `${CM}?watch=1&resourceVersion=${rv2}`);
  // Writes elsewhere move the store on while this watch stays idle.
  await ts.json("POST", "/api/v1/namespaces", { body: { metadata: { name: "elsewhere" } } });
  assertEquals(await w.collect(2500), []);
});

Deno.test("bookmarks: an idle watch gets one carrying only the newest resourceVersion", async () => {
  await using ts = await start();
  const { rv2 } = await history(ts);
  await using w = await openWatch(
    ts,
    `${CM}?watch=1&resourceVersion=${rv2}&allowWatchBookmarks=true`,
  );
  const ns = await ts.json("POST", "/api/v1/namespaces", {
    body: { metadata: { name: "elsewhere" } },
  });
  const ev = await w.next(4000);
  assertEquals(ev.type, "BOOKMARK");
  assertEquals(ev.object.kind, "ConfigMap");
  assertEquals(Object.keys(ev.object.metadata), ["resourceVersion"]);
  assert(
    Number(ev.object.metadata.resourceVersion) >= Number(ns.body.metadata.resourceVersion),
    `bookmark ${ev.object.metadata.resourceVersion} covers the write elsewhere`,
  );
  // Changes still arrive, and a bookmark never runs ahead of an undelivered change.
  const rv3 = await put(ts, "a", "9");
  const change = await w.next();
  assertEquals([change.type, change.object.metadata.resourceVersion], ["MODIFIED", rv3]);
});

// ---- streaming lists ----

Deno.test("streaming list: forbidden unless the WatchList gate is on", async () => {
  await using ts = await start({ featureGates: new Map([["WatchList", false]]) });
  const res = await ts.json(
    "GET",
    `${CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
  );
  assertInvalid(
    res,
    /sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled/,
  );
});

Deno.test("streaming list: ADDED events, then the initial-events-end bookmark, then changes", async () => {
  await using ts = await start({ featureGates: new Map([["WatchList", true]]) });
  const { rv1, rv2 } = await history(ts);
  for (const rv of ["", `&resourceVersion=${rv1}`]) {
    await using w = await openWatch(
      ts,
      `${CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true${rv}`,
    );
    const events = [await w.next(), await w.next(), await w.next(), await w.next()];
    assertEquals(events.map((e) => `${e.type} ${e.object.metadata.name ?? ""}`), [
      "ADDED a",
      "ADDED b",
      "ADDED c",
      "BOOKMARK ",
    ]);
    assertEquals(events[3].object.metadata, {
      resourceVersion: rv2,
      annotations: { "platform.io/initial-events-end": "true" },
    });
  }
  await using w = await openWatch(
    ts,
    `${CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
  );
  await w.collect(300, 4);
  const rv3 = await put(ts, "d", "1");
  const ev = await w.next();
  assertEquals([ev.type, ev.object.metadata.resourceVersion], ["ADDED", rv3]);
});

Deno.test("streaming list: kube's rejected combinations", async () => {
  await using ts = await start({ featureGates: new Map([["WatchList", true]]) });
  assertInvalid(
    await ts.json("GET", `${CM}?watch=1&sendInitialEvents=true`),
    /sendInitialEvents requires setting resourceVersionMatch to NotOlderThan/,
  );
  assertInvalid(
    await ts.json("GET", `${CM}?watch=1&resourceVersionMatch=NotOlderThan&resourceVersion=0`),
    /resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided/,
  );
  assertInvalid(
    await ts.json("GET", `${CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=Exact`),
    /Unsupported value: "Exact": supported values: "NotOlderThan"/,
  );
});
