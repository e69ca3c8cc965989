// deno-lint-ignore-file no-explicit-any
/** Metadata-only responses: as=PartialObjectMetadata on get and watch, …List on list. */

import { assertEquals } from "./assert.ts";
import { ownConfigMaps, testServer } from "./harness.ts";
import { openWatch } from "./watch_client.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const accept = (as: string, g = "meta.platform.io") => ({
  headers: { Accept: `application/json;as=${as};g=${g};v=v1` },
});

Deno.test("as=PartialObjectMetadata[List]: metadata only, for get, list and watch", async () => {
  await using ts = await testServer();
  const body = { metadata: { name: "a", labels: { x: "1" } }, data: { secret: "s" } };
  const created = (await ts.json("POST", CM, { body })).body;
  const one = await ts.json("GET", `${CM}/a`, accept("PartialObjectMetadata"));
  assertEquals(one.status, 200);
  assertEquals(
    one.headers.get("content-type"),
    "application/json;g=meta.platform.io;v=v1;as=PartialObjectMetadata",
  );
  assertEquals(one.body, {
    kind: "PartialObjectMetadata",
    apiVersion: "meta.platform.io/v1",
    metadata: created.metadata,
  });
  // kubectl spells the group meta.k8s.io.
  const list = await ts.json("GET", CM, accept("PartialObjectMetadataList", "meta.k8s.io"));
  assertEquals(list.body.kind, "PartialObjectMetadataList");
  assertEquals(list.body.apiVersion, "meta.k8s.io/v1");
  assertEquals(ownConfigMaps(list.body.items).map((o: any) => [o.kind, o.metadata.name, o.data]), [[
    "PartialObjectMetadata",
    "a",
    undefined,
  ]]);
  assertEquals(typeof list.body.metadata.resourceVersion, "string");
  // The wrong form for the verb is not acceptable.
  const wrong = await ts.json("GET", `${CM}/a`, accept("PartialObjectMetadataList"));
  assertEquals([wrong.status, wrong.body.reason], [406, "NotAcceptable"]);
  await using w = await openWatch(
    ts,
    `${CM}?watch=1&resourceVersion=${created.metadata.resourceVersion}`,
    accept("PartialObjectMetadata").headers,
  );
  await ts.json("PUT", `${CM}/a`, { body: { ...body, data: { secret: "t" } } });
  const ev = await w.next();
  assertEquals([ev.type, ev.object.kind, ev.object.metadata.name, ev.object.data], [
    "MODIFIED",
    "PartialObjectMetadata",
    "a",
    undefined,
  ]);
});
