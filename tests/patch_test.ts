// deno-lint-ignore-file no-explicit-any
/**
 * PATCH over HTTP on built-in resources: the four content types, conditions, options,
 * errors, and the managed fields every write leaves.
 */

import { assert, assertEquals, assertMatch } from "./assert.ts";
import { testServer } from "./harness.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const JSON_PATCH = { "Content-Type": "application/json-patch+json" };
const MERGE = { "Content-Type": "application/merge-patch+json" };
const SMP = { "Content-Type": "application/strategic-merge-patch+json" };
const APPLY = { "Content-Type": "application/apply-patch+yaml" };

async function seed(ts: any, name = "a") {
  const res = await ts.json("POST", `${CM}?fieldManager=seeder`, {
    body: { metadata: { name, labels: { app: "web" } }, data: { k1: "v1", k2: "v2" } },
  });
  assertEquals(res.status, 201);
  return res.body;
}

Deno.test("patch: JSON Patch, merge patch and strategic merge patch change a ConfigMap", async () => {
  await using ts = await testServer();
  const created = await seed(ts);

  const json = await ts.json("PATCH", `${CM}/a`, {
    headers: JSON_PATCH,
    body: [{ op: "replace", path: "/data/k1", value: "j" }, {
      op: "add",
      path: "/data/k3",
      value: "3",
    }],
  });
  assertEquals(json.status, 200);
  assertEquals(json.body.data, { k1: "j", k2: "v2", k3: "3" });
  assert(Number(json.body.metadata.resourceVersion) > Number(created.metadata.resourceVersion));

  const merge = await ts.json("PATCH", `${CM}/a`, {
    headers: MERGE,
    body: { data: { k2: null, k4: "4" }, metadata: { labels: { tier: "x" } } },
  });
  assertEquals(merge.status, 200);
  assertEquals(merge.body.data, { k1: "j", k3: "3", k4: "4" });
  assertEquals(merge.body.metadata.labels, { app: "web", tier: "x" });

  const smp = await ts.json("PATCH", `${CM}/a`, {
    headers: SMP,
    body: { metadata: { finalizers: ["example.com/a"] }, data: { k1: null } },
  });
  assertEquals(smp.status, 200);
  assertEquals(smp.body.data, { k3: "3", k4: "4" });
  assertEquals(smp.body.metadata.finalizers, ["example.com/a"]);
  // finalizers merge as a set under strategic merge patch.
  const smp2 = await ts.json("PATCH", `${CM}/a`, {
    headers: SMP,
    body: { metadata: { finalizers: ["example.com/b"] } },
  });
  // A value the live list lacks cannot be placed by live order: it goes first (SMP B10).
  assertEquals(smp2.body.metadata.finalizers, ["example.com/b", "example.com/a"]);
  // ...and are replaced under merge patch.
  const merge2 = await ts.json("PATCH", `${CM}/a`, {
    headers: MERGE,
    body: { metadata: { finalizers: null } },
  });
  assertEquals(merge2.body.metadata.finalizers, undefined);

  // What was answered is what is stored.
  assertEquals((await ts.json("GET", `${CM}/a`)).body, merge2.body);
});

Deno.test("patch: a failing JSON Patch test operation is 422 and changes nothing", async () => {
  await using ts = await testServer();
  const created = await seed(ts);
  const res = await ts.json("PATCH", `${CM}/a`, {
    headers: JSON_PATCH,
    body: [{ op: "test", path: "/data/k1", value: "other" }, {
      op: "replace",
      path: "/data/k1",
      value: "x",
    }],
  });
  assertEquals(res.status, 422);
  assertEquals(res.body.kind, "Status");
  const now = (await ts.json("GET", `${CM}/a`)).body;
  assertEquals(now.metadata.resourceVersion, created.metadata.resourceVersion);
  assertEquals(now.data.k1, "v1");
  // A body that is not a patch document is 400.
  const bad = await ts.json("PATCH", `${CM}/a`, { headers: JSON_PATCH, body: { op: "add" } });
  assertEquals(bad.status, 400);
  const broken = await ts.json("PATCH", `${CM}/a`, { headers: MERGE, body: "{not json" });
  assertEquals(broken.status, 400);
});

Deno.test("patch: resourceVersion in a patch makes it conditional", async () => {
  await using ts = await testServer();
  const created = await seed(ts);
  const rv = created.metadata.resourceVersion;
  const ok = await ts.json("PATCH", `${CM}/a`, {
    headers: MERGE,
    body: { metadata: { resourceVersion: rv }, data: { k1: "once" } },
  });
  assertEquals(ok.status, 200);
  const stale = await ts.json("PATCH", `${CM}/a`, {
    headers: MERGE,
    body: { metadata: { resourceVersion: rv }, data: { k1: "twice" } },
  });
  assertEquals(stale.status, 409);
  assertEquals(stale.body.reason, "Conflict");
  assertEquals((await ts.json("GET", `${CM}/a`)).body.data.k1, "once");
});

Deno.test("patch: a missing object is 404, except for apply, which creates it (201)", async () => {
  await using ts = await testServer();
  for (const headers of [JSON_PATCH, MERGE, SMP]) {
    const res = await ts.json("PATCH", `${CM}/missing`, {
      headers,
      body: headers === JSON_PATCH ? [] : {},
    });
    assertEquals(res.status, 404, headers["Content-Type"]);
  }
  const applied = await ts.json("PATCH", `${CM}/missing?fieldManager=me`, {
    headers: APPLY,
    body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: missing\ndata:\n  a: '1'\n",
  });
  assertEquals(applied.status, 201);
  assertEquals(applied.body.data, { a: "1" });
  assertEquals(applied.body.metadata.managedFields.map((e: any) => [e.manager, e.operation]), [[
    "me",
    "Apply",
  ]]);
  const again = await ts.json("PATCH", `${CM}/missing?fieldManager=me`, {
    headers: APPLY,
    body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: missing\ndata:\n  a: '1'\n",
  });
  assertEquals(again.status, 200);
  assertEquals(
    again.body.metadata.resourceVersion,
    applied.body.metadata.resourceVersion,
    "a no-op apply writes nothing",
  );
});

Deno.test("patch: options and content types are checked as kube checks them", async () => {
  await using ts = await testServer();
  await seed(ts);
  const cfg = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
  const noManager = await ts.json("PATCH", `${CM}/a`, { headers: APPLY, body: cfg });
  assertEquals(noManager.status, 422);
  assertMatch(noManager.body.message, /fieldManager: Required value: is required for apply patch/);
  const force = await ts.json("PATCH", `${CM}/a?force=true`, { headers: MERGE, body: {} });
  assertEquals(force.status, 422);
  assertMatch(force.body.message, /force: Forbidden: may not be specified for non-apply patch/);
  const long = await ts.json("PATCH", `${CM}/a?fieldManager=${"m".repeat(129)}`, {
    headers: APPLY,
    body: cfg,
  });
  assertEquals(long.status, 422);
  const unknown = await ts.json("PATCH", `${CM}/a`, {
    headers: { "Content-Type": "application/json" },
    body: {},
  });
  assertEquals(unknown.status, 415);
  assertMatch(unknown.body.message, /application\/strategic-merge-patch\+json/);
  const version = await ts.json("PATCH", `${CM}/a?fieldManager=me`, {
    headers: APPLY,
    body: "apiVersion: v2\nkind: ConfigMap\nmetadata:\n  name: a\n",
  });
  assertEquals(version.status, 400);
  assertMatch(version.body.message, /Incorrect version specified in apply patch/);
  const managed = await ts.json("PATCH", `${CM}/a?fieldManager=me`, {
    headers: APPLY,
    body: cfg + "  managedFields: [{manager: x}]\n",
  });
  assertEquals(managed.status, 400);
  assertMatch(managed.body.message, /metadata.managedFields must be nil/);
});

Deno.test("patch: dryRun=All patches nothing", async () => {
  await using ts = await testServer();
  const created = await seed(ts);
  const res = await ts.json("PATCH", `${CM}/a?dryRun=All`, {
    headers: MERGE,
    body: { data: { k1: "dry" } },
  });
  assertEquals([res.status, res.body.data.k1], [200, "dry"]);
  const now = (await ts.json("GET", `${CM}/a`)).body;
  assertEquals(now, created);
});

Deno.test("patch: immutable fields are 422 naming the field", async () => {
  await using ts = await testServer();
  await ts.json("POST", CM, {
    body: { metadata: { name: "frozen" }, immutable: true, data: { a: "1" } },
  });
  const res = await ts.json("PATCH", `${CM}/frozen`, {
    headers: MERGE,
    body: { data: { a: "2" } },
  });
  assertEquals(res.status, 422);
  assertMatch(res.body.message, /data/);
  const uid = await ts.json("PATCH", `${CM}/frozen`, {
    headers: MERGE,
    body: { metadata: { uid: "other" } },
  });
  assertEquals(uid.status, 422, JSON.stringify(uid.body));
});

Deno.test("managedFields: every write records its manager; the User-Agent names it when fieldManager is absent", async () => {
  await using ts = await testServer();
  const created = await ts.json("POST", CM, {
    headers: { "User-Agent": "kubectl/v1.33.0 (linux/amd64) kubernetes/abc" },
    body: { metadata: { name: "m" }, data: { a: "1" } },
  });
  const entries = created.body.metadata.managedFields;
  assertEquals(entries.length, 1);
  assertEquals(
    [entries[0].manager, entries[0].operation, entries[0].apiVersion, entries[0].fieldsType],
    ["kubectl", "Update", "v1", "FieldsV1"],
  );
  assertEquals(entries[0].fieldsV1, { "f:data": { ".": {}, "f:a": {} } });
  const patched = await ts.json("PATCH", `${CM}/m?fieldManager=editor`, {
    headers: MERGE,
    body: { data: { b: "2" } },
  });
  const byManager = Object.fromEntries(
    patched.body.metadata.managedFields.map((e: any) => [e.manager, e.fieldsV1]),
  );
  assertEquals(byManager.editor, { "f:data": { "f:b": {} } });
  assertEquals(byManager.kubectl, { "f:data": { ".": {}, "f:a": {} } });
  // [{}] resets them; the writer then owns what it changed.
  const reset = await ts.json("PATCH", `${CM}/m?fieldManager=resetter`, {
    headers: MERGE,
    body: { metadata: { managedFields: [{}] }, data: { c: "3" } },
  });
  assertEquals(
    reset.body.metadata.managedFields.map((e: any) => [e.manager, e.fieldsV1]),
    [["resetter", { "f:data": { "f:c": {} } }]],
  );
  // An empty list resets nothing.
  const empty = await ts.json("PATCH", `${CM}/m?fieldManager=other`, {
    headers: MERGE,
    body: { metadata: { managedFields: [] } },
  });
  assertEquals(empty.body.metadata.managedFields, reset.body.metadata.managedFields);
});

Deno.test("patch: dryRun=All on every patch type writes nothing; a bad value is 422", async () => {
  await using ts = await testServer();
  const created = await seed(ts);
  const bodies: [Record<string, string>, unknown][] = [
    [JSON_PATCH, [{ op: "replace", path: "/data/k1", value: "dry" }]],
    [MERGE, { data: { k1: "dry" } }],
    [SMP, { data: { k1: "dry" } }],
    [APPLY, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: { k1: "dry" } }],
  ];
  for (const [headers, body] of bodies) {
    const force = headers === APPLY ? "&force=true" : "";
    const res = await ts.json("PATCH", `${CM}/a?dryRun=All&fieldManager=dry${force}`, {
      headers,
      body,
    });
    assertEquals([res.status, res.body.data?.k1], [200, "dry"], JSON.stringify(res.body));
  }
  const now = (await ts.json("GET", `${CM}/a`)).body;
  assertEquals(now, created);
  // The next write gets the next revision: the dry runs used none.
  const next = await ts.json("PATCH", `${CM}/a`, { headers: MERGE, body: { data: { k1: "x" } } });
  assertEquals(
    Number(next.body.metadata.resourceVersion),
    Number(created.metadata.resourceVersion) + 1,
  );
  const bad = await ts.json("PATCH", `${CM}/a?dryRun=Some`, { headers: MERGE, body: {} });
  assertEquals(bad.status, 422);
});

Deno.test("patch: fieldValidation applies to the patched object", async () => {
  await using ts = await testServer();
  await seed(ts);
  const strict = await ts.json("PATCH", `${CM}/a?fieldValidation=Strict`, {
    headers: MERGE,
    body: { bogus: 1 },
  });
  assertEquals(strict.status, 400);
  assertMatch(strict.body.message, /unknown field "bogus"/);
  const warn = await ts.request("PATCH", `${CM}/a?fieldValidation=Warn`, {
    headers: MERGE,
    body: { bogus: 1 },
  });
  await warn.body?.cancel();
  assertEquals(warn.status, 200);
  assertMatch(warn.headers.get("Warning") ?? "", /^299 - "unknown field \\"bogus\\""$/);
});
