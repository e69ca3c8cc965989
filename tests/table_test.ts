// deno-lint-ignore-file no-explicit-any
/**
 * Table responses (`Accept: application/json;as=Table;v=v1;g=meta.platform.io`, kubectl's
 * `g=meta.k8s.io` and the v1beta1 form) on get, list and watch, with `includeObject`.
 */

import { assertEquals } from "./assert.ts";
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
