// deno-lint-ignore-file no-explicit-any
/**
 * Chunked lists (spec 01, Chunked lists): one snapshot across pages, remainingItemCount,
 * validated tokens, expiry with kube's 410, and continuing after a restart.
 */

import { assert, assertEquals } from "./assert.ts";
import type { StartOptions } from "../mod.ts";
import { type TestServer, testServer, WITHOUT_NAMESPACE_DEFAULTS } from "./harness.ts";

const NS = "/api/v1/namespaces/default";
const CM = `${NS}/configmaps`;

/** A server without the per-namespace defaults: these tests count every ConfigMap of the
 * namespace, and the controllers' kube-root-ca.crt would be one more in every list. */
const start = (opts: StartOptions = {}) =>
  testServer({ controllers: WITHOUT_NAMESPACE_DEFAULTS, ...opts });

async function fill(ts: TestServer, n: number): Promise<void> {
  await Promise.all(Array.from({ length: n }, (_, i) =>
    ts.json("POST", CM, {
      body: {
        metadata: { name: `cm-${String(i).padStart(3, "0")}`, labels: { odd: String(i % 2) } },
      },
    })));
}

/** Every page of a list with `query`, following continue tokens (from `token`, if given). */
async function pages(ts: TestServer, query: string, token = ""): Promise<any[]> {
  const out: any[] = [];
  do {
    const res = await ts.json("GET", `${CM}?${query}${token ? `&continue=${token}` : ""}`);
    assertEquals(res.status, 200, JSON.stringify(res.body));
    out.push(res.body);
    token = res.body.metadata.continue ?? "";
  } while (token);
  return out;
}

Deno.test("chunked list: one snapshot, remainingItemCount counting down, none on the last page", async () => {
  await using ts = await start();
  await fill(ts, 25);
  const first = await ts.json("GET", `${CM}?limit=10`);
  assertEquals(first.body.metadata.remainingItemCount, 15);
  // Writes between pages are invisible to the paged list.
  await ts.json("DELETE", `${CM}/cm-000`);
  await ts.json("POST", CM, { body: { metadata: { name: "cm-zzz" } } });
  const rest = [];
  let token = first.body.metadata.continue;
  while (token) {
    const res = await ts.json("GET", `${CM}?limit=10&continue=${token}`);
    rest.push(res.body);
    token = res.body.metadata.continue;
  }
  assertEquals(rest.map((p) => p.metadata.remainingItemCount), [5, undefined]);
  assert(rest.every((p) => p.metadata.resourceVersion === first.body.metadata.resourceVersion));
  const names = [first.body, ...rest].flatMap((p) => p.items.map((o: any) => o.metadata.name));
  assertEquals(names, Array.from({ length: 25 }, (_, i) => `cm-${String(i).padStart(3, "0")}`));
});

Deno.test("chunked list: with a selector, full pages and no remainingItemCount", async () => {
  await using ts = await start();
  await fill(ts, 25);
  const all = await pages(ts, "limit=4&labelSelector=odd%3D1");
  // Pages are full until the matches run out (a last page may come back empty).
  const sizes = all.map((p) => p.items.length);
  assert(sizes.slice(0, 3).every((n) => n === 4) && sizes.slice(3).every((n) => n < 4), `${sizes}`);
  assert(all.every((p) => p.metadata.remainingItemCount === undefined));
  const names = all.flatMap((p) => p.items.map((o: any) => o.metadata.name));
  assertEquals(names.length, 12);
  assert(names.every((n) => Number(n.slice(3)) % 2 === 1));
});

Deno.test("chunked list: a tampered or foreign token is 400", async () => {
  await using ts = await start();
  await fill(ts, 5);
  const token: string = (await ts.json("GET", `${CM}?limit=2`)).body.metadata.continue;
  const decoded = JSON.parse(atob(token.replace(/-/g, "+").replace(/_/g, "/")));
  const edited = JSON.parse(decoded.b);
  edited.start = "cm-000";
  const forged = btoa(JSON.stringify({ b: JSON.stringify(edited), m: decoded.m }))
    .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  for (const bad of [forged, token.slice(0, -3), "garbage"]) {
    const res = await ts.json("GET", `${CM}?limit=2&continue=${bad}`);
    assertEquals([res.status, res.body.reason], [400, "BadRequest"], bad);
  }
  // A token is bound to its collection.
  const other = await ts.json(
    "GET",
    `/api/v1/namespaces/kube-system/configmaps?limit=2&continue=${token}`,
  );
  assertEquals(other.status === 400 || other.status === 404, true, JSON.stringify(other.body));
});

Deno.test("chunked list: an expired token is 410 Expired with a token that continues at the newest state", async () => {
  await using ts = await start({ historyRetentionMs: 200 });
  await fill(ts, 6);
  const first = await ts.json("GET", `${CM}?limit=2`);
  await ts.json("DELETE", `${CM}/cm-003`);
  await new Promise((r) => setTimeout(r, 1500)); // compaction runs every second
  await ts.json("POST", CM, { body: { metadata: { name: "cm-new" } } });
  const res = await ts.json("GET", `${CM}?limit=2&continue=${first.body.metadata.continue}`);
  assertEquals([res.status, res.body.reason, res.body.code], [410, "Expired", 410]);
  assertEquals(
    res.body.message,
    "The provided continue parameter is too old to display a consistent list result. You can " +
      "start a new list without the continue parameter, or use the continue token in this " +
      "response to retrieve the remainder of the results. Continuing with the provided token " +
      "results in an inconsistent list - objects that were created, modified, or deleted " +
      "between the time the first chunk was returned and now may show up in the list.",
  );
  const again = res.body.metadata.continue;
  assert(typeof again === "string" && again.length > 0, "a fresh continue token");
  const rest = await ts.json("GET", `${CM}?limit=10&continue=${again}`);
  assertEquals(rest.status, 200);
  assertEquals(rest.body.items.map((o: any) => o.metadata.name), [
    "cm-002",
    "cm-004",
    "cm-005",
    "cm-new",
  ]);
});

Deno.test("chunked list: a token still works after a restart", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "platform-chunks-" });
  try {
    let token = "";
    let rv = "";
    {
      await using ts = await start({ dataDir, storage: "file" });
      await fill(ts, 9);
      const first = await ts.json("GET", `${CM}?limit=4`);
      token = first.body.metadata.continue;
      rv = first.body.metadata.resourceVersion;
      await ts.json("DELETE", `${CM}/cm-008`);
    }
    await using ts = await start({ dataDir, storage: "file" });
    const rest = await pages(ts, "limit=4", token);
    assertEquals(rest.map((p) => p.metadata.resourceVersion), [rv, rv]);
    assertEquals(rest.map((p) => p.metadata.remainingItemCount), [1, undefined]);
    const names = rest.flatMap((p) => p.items.map((o: any) => o.metadata.name));
    assertEquals(names, ["cm-004", "cm-005", "cm-006", "cm-007", "cm-008"]);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
