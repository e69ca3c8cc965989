// deno-lint-ignore-file no-explicit-any
/**
 * Table responses (`Accept: application/json;as=Table;v=v1;g=meta.platform.io`, kubectl's
 * `g=meta.k8s.io` and the v1beta1 form) on get, list and watch, with `includeObject`.
 */

import { assertEquals, assertMatch } from "./assert.ts";
import { testServer } from "./harness.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const TABLE = (g: string, v = "v1") => `application/json;as=Table;v=${v};g=${g}`;

Deno.test("table: get, list and the v1beta1 form, each with includeObject", async () => {
  await using ts = await testServer();
  await ts.json("POST", CM, { body: { metadata: { name: "t1" }, data: { a: "1" } } });

  const get = await ts.json("GET", `${CM}/t1`, { headers: { Accept: TABLE("meta.platform.io") } });
  assertEquals(get.status, 200);
  assertEquals([get.body.kind, get.body.apiVersion], ["Table", "meta.platform.io/v1"]);
  assertEquals(get.body.rows.length, 1);
  assertEquals(get.body.rows[0].cells.slice(0, 2), ["t1", 1]);
  // Metadata is the default object in each row.
  assertEquals(get.body.rows[0].object.kind, "PartialObjectMetadata");

  const full = await ts.json("GET", `${CM}/t1?includeObject=Object`, {
    headers: { Accept: TABLE("meta.k8s.io") },
  });
  assertEquals(full.body.apiVersion, "meta.k8s.io/v1");
  assertEquals([full.body.rows[0].object.kind, full.body.rows[0].object.data], ["ConfigMap", {
    a: "1",
  }]);
  const none = await ts.json("GET", `${CM}?includeObject=None`, {
    headers: { Accept: TABLE("meta.platform.io") },
  });
  assertEquals(none.body.rows[0].object, undefined);

  const beta = await ts.json("GET", CM, { headers: { Accept: TABLE("meta.k8s.io", "v1beta1") } });
  assertEquals([beta.status, beta.body.kind, beta.body.apiVersion], [
    200,
    "Table",
    "meta.k8s.io/v1beta1",
  ]);
  // An unknown group or version is not a Table this server makes: 406 when nothing else is
  // acceptable.
  const other = await ts.json("GET", CM, { headers: { Accept: TABLE("example.com") } });
  assertEquals(other.status, 406);
});

Deno.test("table: a watch sends each event's object as a one-row Table", async () => {
  await using ts = await testServer();
  const created = await ts.json("POST", CM, { body: { metadata: { name: "w1" }, data: {} } });
  const rv = Number(created.body.metadata.resourceVersion) - 1;
  const res = await ts.request("GET", `${CM}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`, {
    headers: { Accept: TABLE("meta.k8s.io") },
  });
  assertEquals(res.status, 200);
  const lines = (await res.text()).trim().split("\n").map((l) => JSON.parse(l));
  assertEquals(lines.length, 1);
  const ev: any = lines[0];
  assertEquals([ev.type, ev.object.kind, ev.object.rows.length], ["ADDED", "Table", 1]);
  assertEquals(ev.object.rows[0].cells[0], "w1");
  assertEquals(ev.object.metadata.resourceVersion, created.body.metadata.resourceVersion);
});

Deno.test("table: events have kube's columns in both APIs, Name last and only with -o wide", async () => {
  await using ts = await testServer();
  const now = new Date(Date.now() - 90_000).toISOString().replace(/\.\d+Z$/, "Z");
  const core = await ts.json("POST", "/api/v1/namespaces/default/events", {
    body: {
      metadata: { name: "e1" },
      involvedObject: { kind: "ConfigMap", name: "cm", namespace: "default", fieldPath: "data" },
      reason: "Changed",
      message: "  it changed  ",
      type: "Normal",
      source: { component: "tester", host: "h1" },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 3,
    },
  });
  assertEquals(core.status, 201);
  const expected = [
    ["Last Seen", 0],
    ["Type", 0],
    ["Reason", 0],
    ["Object", 0],
    ["Subobject", 1],
    ["Source", 1],
    ["Message", 0],
    ["First Seen", 1],
    ["Count", 1],
    ["Name", 1],
  ];
  for (
    const path of [
      "/api/v1/namespaces/default/events",
      "/apis/events.platform.io/v1/namespaces/default/events",
    ]
  ) {
    const table = await ts.json("GET", path, { headers: { Accept: TABLE("meta.k8s.io") } });
    assertEquals(table.status, 200);
    assertEquals(table.body.columnDefinitions.map((c: any) => [c.name, c.priority]), expected);
    const cells = table.body.rows[0].cells;
    // Ages are computed when the table is: about 90 seconds.
    assertMatch(cells[0], /^9\ds$/);
    assertMatch(cells[7], /^9\ds$/);
    cells[0] = cells[7] = "90s";
    assertEquals(cells, [
      "90s",
      "Normal",
      "Changed",
      "configmap/cm",
      "data",
      "tester, h1",
      "it changed",
      "90s",
      3,
      "e1",
    ]);
  }
});
