// deno-lint-ignore-file no-explicit-any
/** REST over real HTTPS: CRUD, metadata, selectors, errors, namespaces, events in two versions. */

import { assert, assertEquals, assertMatch } from "./assert.ts";
import { ownConfigMaps, testServer, WITHOUT_NAMESPACE_DEFAULTS } from "./harness.ts";

const CM = "/api/v1/namespaces/default/configmaps";

Deno.test("configmap create, get, list, update, delete", async () => {
  await using t = await testServer();
  const created = await t.json("POST", CM, {
    body: {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", labels: { app: "x" } },
      data: { k: "v" },
    },
  });
  assertEquals(created.status, 201);
  const meta = created.body.metadata;
  assertEquals(meta.namespace, "default");
  assertMatch(meta.uid, /^[0-9a-f-]{36}$/);
  assertMatch(meta.resourceVersion, /^\d+$/);
  assertMatch(meta.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

  const got = await t.json("GET", `${CM}/a`);
  assertEquals(got.status, 200);
  assertEquals(got.body.data, { k: "v" });
  assertEquals(got.body.metadata.resourceVersion, meta.resourceVersion);

  const list = await t.json("GET", CM);
  assertEquals(list.body.kind, "ConfigMapList");
  assertEquals(list.body.apiVersion, "v1");
  assertEquals(ownConfigMaps(list.body.items).map((i: any) => i.metadata.name), ["a"]);
  assert(Number(list.body.metadata.resourceVersion) >= Number(meta.resourceVersion));

  const updated = await t.json("PUT", `${CM}/a`, {
    body: { ...got.body, data: { k: "w" } },
  });
  assertEquals(updated.status, 200);
  assertEquals(updated.body.data, { k: "w" });
  assert(Number(updated.body.metadata.resourceVersion) > Number(meta.resourceVersion));
  assertEquals(updated.body.metadata.uid, meta.uid);

  // A PUT with the old resourceVersion is a 409 Conflict.
  const stale = await t.json("PUT", `${CM}/a`, { body: { ...got.body, data: { k: "z" } } });
  assertEquals(stale.status, 409);
  assertEquals(stale.body.reason, "Conflict");
  assertEquals(
    stale.body.message,
    'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again',
  );

  const del = await t.json("DELETE", `${CM}/a`);
  assertEquals(del.status, 200);
  assertEquals(del.body.kind, "Status");
  assertEquals(del.body.status, "Success");
  assertEquals(del.body.details.name, "a");
  const missing = await t.json("GET", `${CM}/a`);
  assertEquals(missing.status, 404);
  assertEquals(missing.body.reason, "NotFound");
  assertEquals(missing.body.message, 'configmaps "a" not found');
  assertEquals(missing.body.details, { name: "a", kind: "configmaps" });
});

Deno.test("PUT of a missing object creates it; name mismatch is 400", async () => {
  await using t = await testServer();
  const put = await t.json("PUT", `${CM}/fresh`, {
    body: { metadata: { name: "fresh" }, data: {} },
  });
  assertEquals(put.status, 201);
  const bad = await t.json("PUT", `${CM}/other`, { body: { metadata: { name: "fresh" } } });
  assertEquals(bad.status, 400);
  assertEquals(
    bad.body.message,
    "the name of the object (fresh) does not match the name on the URL (other)",
  );
  const ns = await t.json("POST", CM, { body: { metadata: { name: "x", namespace: "kube" } } });
  assertEquals(ns.status, 400);
  assertMatch(ns.body.message, /namespace of the provided object does not match/);
});

Deno.test("AlreadyExists, generateName, and generation bumps on spec changes only", async () => {
  await using t = await testServer();
  await t.json("POST", CM, { body: { metadata: { name: "dup" } } });
  const again = await t.json("POST", CM, { body: { metadata: { name: "dup" } } });
  assertEquals(again.status, 409);
  assertEquals(again.body.reason, "AlreadyExists");
  assertEquals(again.body.message, 'configmaps "dup" already exists');

  const gen = await t.json("POST", CM, {
    body: { metadata: { generateName: "web-" }, data: { a: "1" } },
  });
  assertEquals(gen.status, 201);
  assertMatch(gen.body.metadata.name, /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  assertEquals(gen.body.metadata.generation, 1);

  const labelled = await t.json("PUT", `${CM}/${gen.body.metadata.name}`, {
    body: { ...gen.body, metadata: { ...gen.body.metadata, labels: { a: "b" } } },
  });
  assertEquals(labelled.body.metadata.generation, 1);
  const changed = await t.json("PUT", `${CM}/${gen.body.metadata.name}`, {
    body: { ...labelled.body, data: { a: "2" } },
  });
  assertEquals(changed.body.metadata.generation, 2);
});

Deno.test("validation errors list every offending field (422)", async () => {
  await using t = await testServer();
  const res = await t.json("POST", CM, {
    body: {
      metadata: { name: "Bad_Name", labels: { "bad key!": "v" } },
      data: { "no/slash": "x" },
    },
  });
  assertEquals(res.status, 422);
  assertEquals(res.body.reason, "Invalid");
  const fields = res.body.details.causes.map((c: any) => c.field).sort();
  assert(fields.includes("metadata.name"), JSON.stringify(fields));
  assert(fields.includes("metadata.labels"), JSON.stringify(fields));
  assertMatch(res.body.message, /^ConfigMap "Bad_Name" is invalid: \[/);

  const typed = await t.json("POST", CM, { body: { metadata: { name: "t" }, data: { a: 1 } } });
  assertEquals(typed.status, 422);
  assertEquals(typed.body.details.causes[0].field, "data[a]");

  const noName = await t.json("POST", CM, { body: { data: {} } });
  assertEquals(noName.status, 422);
  assertMatch(noName.body.message, /metadata.name: Required value/);
});

Deno.test("malformed bodies and unknown paths are 4xx, never 500", async () => {
  await using t = await testServer();
  const cases: [string, string, unknown, number][] = [
    ["POST", CM, "{not json", 400],
    ["POST", CM, "[]", 400],
    ["POST", CM, '"str"', 400],
    ["POST", CM, "", 400],
    ["POST", CM, { kind: "Secret", metadata: { name: "x" } }, 400],
    ["POST", CM, { metadata: "nope" }, 422],
    ["GET", "/api/v1/nothings", undefined, 404],
    ["GET", "/apis/nope.platform.io/v1/things", undefined, 404],
    ["POST", "/api/v1/configmaps", { metadata: { name: "x" } }, 405],
    ["PATCH", "/api/v1/namespaces/default/configmaps/x/nosuch", "{}", 404],
    ["GET", "/api/v1/namespaces/default/configmaps?labelSelector=a%20in%20(", undefined, 400],
    ["GET", "/api/v1/namespaces/default/configmaps?fieldSelector=spec.x%3Dy", undefined, 400],
    ["GET", "/api/v1/namespaces/default/configmaps?limit=-1", undefined, 400],
    ["GET", "/api/v1/namespaces/default/configmaps?limit=1&continue=garbage", undefined, 400],
  ];
  for (const [method, path, body, code] of cases) {
    const res = await t.json(method, path, { body });
    assertEquals(
      res.status,
      code,
      `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`,
    );
    assertEquals(res.body.kind, "Status");
    assertEquals(res.body.code, code);
  }
  const big = await t.json("POST", CM, {
    body: { metadata: { name: "big" }, data: { a: "x".repeat(3 * 1024 * 1024 + 10) } },
  });
  assertEquals(big.status, 413);
  assertEquals(big.body.reason, "RequestEntityTooLarge");
});

Deno.test("authentication: 401 without a token, health and version open", async () => {
  await using t = await testServer();
  const res = await t.json("GET", "/api/v1/namespaces", { token: null });
  assertEquals(res.status, 401);
  assertEquals(res.body.reason, "Unauthorized");
  const wrong = await t.json("GET", "/api/v1/namespaces", { token: "nope" });
  assertEquals(wrong.status, 401);
  for (const p of ["/livez", "/readyz", "/healthz", "/version"]) {
    const r = await t.request("GET", p, { token: null });
    assertEquals(r.status, 200, p);
    await r.body?.cancel();
  }
  const verbose = await t.request("GET", "/readyz?verbose", { token: null });
  assertMatch(await verbose.text(), /\[\+\]storage ok\n[\s\S]*readyz check passed/);
  const v = await t.json("GET", "/version", { token: null });
  assertEquals([v.body.major, v.body.minor], ["1", "32"]);
});

Deno.test("label and field selectors on list and deletecollection", async () => {
  await using t = await testServer();
  for (
    const [name, labels] of [["a", { env: "prod", tier: "web" }], ["b", { env: "dev" }], [
      "c",
      {},
    ]] as const
  ) {
    await t.json("POST", CM, { body: { metadata: { name, labels } } });
  }
  const names = async (q: string) =>
    ownConfigMaps((await t.json("GET", `${CM}?${q}`)).body.items).map((i: any) => i.metadata.name);
  assertEquals(await names("labelSelector=env%3Dprod"), ["a"]);
  assertEquals(await names("labelSelector=env!%3Dprod"), ["b", "c"]);
  assertEquals(await names("labelSelector=env%20in%20(prod,dev)"), ["a", "b"]);
  assertEquals(await names("labelSelector=env%20notin%20(prod)"), ["b", "c"]);
  assertEquals(await names("labelSelector=tier"), ["a"]);
  assertEquals(await names("labelSelector=!env"), ["c"]);
  assertEquals(await names("fieldSelector=metadata.name%3Db"), ["b"]);
  assertEquals(await names("fieldSelector=metadata.name!%3Db"), ["a", "c"]);
  const del = await t.json("DELETE", `${CM}?labelSelector=env`);
  assertEquals(del.status, 200);
  assertEquals(del.body.items.map((i: any) => i.metadata.name), ["a", "b"]);
  assertEquals(await names(""), ["c"]);
});

Deno.test("chunked list keeps one snapshot across pages", async () => {
  // Pages count every ConfigMap: without the namespace's kube-root-ca.crt.
  await using t = await testServer({ controllers: WITHOUT_NAMESPACE_DEFAULTS });
  for (let i = 0; i < 5; i++) await t.json("POST", CM, { body: { metadata: { name: `p${i}` } } });
  const first = await t.json("GET", `${CM}?limit=2`);
  assertEquals(first.body.items.length, 2);
  assertEquals(first.body.metadata.remainingItemCount, 3);
  const rv = first.body.metadata.resourceVersion;
  await t.json("POST", CM, { body: { metadata: { name: "p9" } } });
  const names = first.body.items.map((i: any) => i.metadata.name);
  let cont = first.body.metadata.continue;
  while (cont) {
    const page = await t.json("GET", `${CM}?limit=2&continue=${encodeURIComponent(cont)}`);
    assertEquals(page.body.metadata.resourceVersion, rv);
    names.push(...page.body.items.map((i: any) => i.metadata.name));
    cont = page.body.metadata.continue;
  }
  assertEquals(names, ["p0", "p1", "p2", "p3", "p4"]);
});

Deno.test("delete preconditions and finalizers", async () => {
  await using t = await testServer();
  const c = await t.json("POST", CM, {
    body: { metadata: { name: "f", finalizers: ["example.com/hold"] } },
  });
  const pre = await t.json("DELETE", `${CM}/f`, {
    body: { kind: "DeleteOptions", apiVersion: "v1", preconditions: { uid: "wrong" } },
  });
  assertEquals(pre.status, 409);
  assertMatch(pre.body.message, /Precondition failed: UID in precondition: wrong/);
  const marked = await t.json("DELETE", `${CM}/f`, { body: { propagationPolicy: "Background" } });
  assertEquals(marked.status, 200);
  assertEquals(marked.body.kind, "ConfigMap");
  assert(marked.body.metadata.deletionTimestamp);
  assertEquals((await t.json("GET", `${CM}/f`)).status, 200);
  const released = await t.json("PUT", `${CM}/f`, {
    body: { ...marked.body, metadata: { ...marked.body.metadata, finalizers: [] } },
  });
  assertEquals(released.status, 200);
  assertEquals((await t.json("GET", `${CM}/f`)).status, 404);
  assertEquals(c.status, 201);
  const badPolicy = await t.json("DELETE", `${CM}/nope?propagationPolicy=Sometimes`);
  assertEquals(badPolicy.status, 422);
});

Deno.test("namespaces: system namespaces, missing namespace, terminating namespace, cleanup", async () => {
  await using t = await testServer();
  const list = await t.json("GET", "/api/v1/namespaces");
  const names = list.body.items.map((i: any) => i.metadata.name);
  for (const n of ["default", "platform-system", "platform-public", "platform-node-lease"]) {
    assert(names.includes(n), n);
  }
  const missing = await t.json("POST", "/api/v1/namespaces/nope/configmaps", {
    body: { metadata: { name: "x" } },
  });
  assertEquals(missing.status, 404);
  assertEquals(missing.body.message, 'namespaces "nope" not found');

  const ns = await t.json("POST", "/api/v1/namespaces", { body: { metadata: { name: "team" } } });
  assertEquals(ns.status, 201);
  assertEquals(ns.body.status.phase, "Active");
  assertEquals(ns.body.spec.finalizers, ["kubernetes"]);
  await t.json("POST", "/api/v1/namespaces/team/configmaps", {
    body: { metadata: { name: "c1" } },
  });
  await t.json("POST", "/api/v1/namespaces/team/secrets", { body: { metadata: { name: "s1" } } });
  await t.json("POST", "/api/v1/namespaces/team/configmaps", {
    body: { metadata: { name: "held", finalizers: ["example.com/hold"] } },
  });
  const del = await t.json("DELETE", "/api/v1/namespaces/team");
  assertEquals(del.status, 200);
  assertEquals(del.body.status.phase, "Terminating");
  const refused = await t.json("POST", "/api/v1/namespaces/team/configmaps", {
    body: { metadata: { name: "late" } },
  });
  assertEquals(refused.status, 403);
  assertEquals(
    refused.body.message,
    'configmaps "late" is forbidden: unable to create new content in namespace team because it is being terminated',
  );
  // The held configmap keeps the namespace until its finalizer is removed.
  await waitFor(async () =>
    (await t.json("GET", "/api/v1/namespaces/team/secrets/s1")).status === 404
  );
  assertEquals((await t.json("GET", "/api/v1/namespaces/team")).status, 200);
  const held = (await t.json("GET", "/api/v1/namespaces/team/configmaps/held")).body;
  await t.json("PUT", "/api/v1/namespaces/team/configmaps/held", {
    body: { ...held, metadata: { ...held.metadata, finalizers: [] } },
  });
  await waitFor(async () => (await t.json("GET", "/api/v1/namespaces/team")).status === 404);
});

Deno.test("events written as events.platform.io/v1 read back as core v1 and vice versa", async () => {
  await using t = await testServer();
  const v1 = "/apis/events.platform.io/v1/namespaces/default/events";
  const now = new Date().toISOString().replace("Z", "000Z");
  const bad = await t.json("POST", v1, {
    body: { metadata: { name: "e0" }, type: "Odd", deprecatedCount: 2 },
  });
  assertEquals(bad.status, 422);
  const fields = bad.body.details.causes.map((c: any) => c.field);
  for (
    const f of [
      "type",
      "action",
      "reason",
      "reportingController",
      "reportingInstance",
      "deprecatedCount",
    ]
  ) {
    assert(fields.includes(f), `${f} in ${fields}`);
  }
  const created = await t.json("POST", v1, {
    body: {
      metadata: { name: "e1" },
      eventTime: now,
      type: "Normal",
      reason: "Started",
      action: "Start",
      note: "hello",
      reportingController: "example.com/ctl",
      reportingInstance: "ctl-1",
      regarding: { kind: "ConfigMap", namespace: "default", name: "x" },
    },
  });
  assertEquals(created.status, 201, JSON.stringify(created.body));
  assertEquals(created.body.apiVersion, "events.platform.io/v1");
  assertEquals(created.body.regarding.name, "x");
  const core = await t.json("GET", "/api/v1/namespaces/default/events/e1");
  assertEquals(core.body.apiVersion, "v1");
  assertEquals(core.body.involvedObject.name, "x");
  assertEquals(core.body.message, "hello");
  assertEquals(core.body.reportingComponent, "example.com/ctl");
  assertEquals(core.body.regarding, undefined);
  const sel = await t.json("GET", `${v1}?fieldSelector=regarding.name%3Dx`);
  assertEquals(sel.body.items.length, 1);
});

Deno.test("discovery: legacy and aggregated", async () => {
  await using t = await testServer();
  const api = await t.json("GET", "/api");
  assertEquals(api.body.versions, ["v1"]);
  const apis = await t.json("GET", "/apis");
  const groups = apis.body.groups.map((g: any) => g.name);
  for (const g of ["coordination.platform.io", "events.platform.io", "certificates.platform.io"]) {
    assert(groups.includes(g), g);
  }
  const core = await t.json("GET", "/api/v1");
  const cm = core.body.resources.find((r: any) => r.name === "configmaps");
  assertEquals(cm.shortNames, ["cm"]);
  assertEquals(cm.namespaced, true);
  assertEquals(cm.kind, "ConfigMap");
  assert(core.body.resources.some((r: any) => r.name === "namespaces/status"));
  const agg = await t.request("GET", "/apis", {
    headers: {
      Accept:
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
    },
  });
  assertEquals(
    agg.headers.get("Content-Type"),
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
  );
  const body = await agg.json();
  assertEquals(body.kind, "APIGroupDiscoveryList");
  const csr = body.items.find((i: any) => i.metadata.name === "certificates.platform.io");
  assertEquals(csr.versions[0].resources[0].resource, "certificatesigningrequests");
  const none = await t.json("GET", "/api/v1", { headers: { Accept: "application/vnd.nothing" } });
  assertEquals(none.status, 406);
});

Deno.test("Table output for kubectl get", async () => {
  await using t = await testServer();
  await t.json("POST", CM, { body: { metadata: { name: "t1" }, data: { a: "1", b: "2" } } });
  const res = await t.json("GET", CM, {
    headers: { Accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json" },
  });
  assertEquals(res.body.kind, "Table");
  assertEquals(res.body.columnDefinitions.map((c: any) => c.name), ["Name", "Data", "Age"]);
  const row = res.body.rows.find((r: any) => r.cells[0] === "t1");
  assertEquals(row.cells.slice(0, 2), ["t1", 2]);
  assertEquals(row.object.kind, "PartialObjectMetadata");
});

async function waitFor(cond: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("condition not met in time");
}

Deno.test("bodies without a declared length (chunked) are read and capped like declared ones", async () => {
  await using t = await testServer();
  const client = Deno.createHttpClient({ caCerts: [t.server.caCertPem] });
  try {
    const chunked = (text: string) =>
      fetch(t.server.url + CM, {
        method: "POST",
        headers: {
          "Authorization": `Bearer ${t.server.adminToken}`,
          "Content-Type": "application/json",
        },
        // A stream has no length: fetch sends it with Transfer-Encoding: chunked.
        body: ReadableStream.from([text.slice(0, 10), text.slice(10)]).pipeThrough(
          new TextEncoderStream(),
        ),
        client,
      });
    const ok = await chunked(JSON.stringify({ metadata: { name: "streamed" }, data: { a: "b" } }));
    assertEquals(ok.status, 201, await ok.clone().text());
    assertEquals((await ok.json()).data, { a: "b" });
    const big = await chunked(
      JSON.stringify({ metadata: { name: "big" }, data: { a: "x".repeat(3 * 1024 * 1024) } }),
    );
    assertEquals(big.status, 413);
    assertEquals((await big.json()).reason, "RequestEntityTooLarge");
    assertEquals((await t.json("GET", `${CM}/big`)).status, 404);
  } finally {
    client.close();
  }
  const empty = await t.json("POST", CM, { body: "" });
  assertEquals(empty.status, 400);
  assertMatch(empty.body.message, /the request body is empty/);
});
