// deno-lint-ignore-file no-explicit-any
/**
 * Dry run (`dryRun=All`) on create, update, delete and deletecollection: the same answer as the
 * real request, nothing stored, no revision used, no watch event. Other values are 422.
 */

import { assert, assertEquals, assertMatch } from "./assert.ts";
import { ownConfigMaps, testServer } from "./harness.ts";
import { openWatch } from "./watch_client.ts";

const CM = "/api/v1/namespaces/default/configmaps";

Deno.test("dryRun=All on every write verb changes nothing and answers as the real request", async () => {
  await using ts = await testServer();
  const created =
    (await ts.json("POST", CM, { body: { metadata: { name: "a" }, data: { v: "1" } } })).body;
  const rv = created.metadata.resourceVersion;
  await using w = await openWatch(
    ts,
    `${CM}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=false`,
  );
  const revision = () => ts.server.store.currentRevision();
  const before = revision();

  const create = await ts.json("POST", `${CM}?dryRun=All`, {
    body: { metadata: { name: "b" }, data: { v: "1" } },
  });
  assertEquals(create.status, 201);
  assertEquals([create.body.metadata.name, create.body.data], ["b", { v: "1" }]);
  assert(
    create.body.metadata.uid && create.body.metadata.creationTimestamp,
    "defaulted like a real create",
  );
  assertEquals((await ts.json("GET", `${CM}/b`)).status, 404);
  // Validation runs too.
  const invalidCreate = await ts.json("POST", `${CM}?dryRun=All`, {
    body: { metadata: { name: "Bad_Name" } },
  });
  assertEquals(invalidCreate.status, 422);
  const duplicate = await ts.json("POST", `${CM}?dryRun=All`, {
    body: { metadata: { name: "a" } },
  });
  assertEquals(duplicate.status, 409);

  const update = await ts.json("PUT", `${CM}/a?dryRun=All`, {
    body: { metadata: { name: "a" }, data: { v: "2" } },
  });
  assertEquals([update.status, update.body.data], [200, { v: "2" }]);
  assertEquals((await ts.json("GET", `${CM}/a`)).body.data, { v: "1" });

  const del = await ts.json("DELETE", `${CM}/a?dryRun=All`);
  assertEquals(del.status, 200);
  assertEquals((await ts.json("GET", `${CM}/a`)).status, 200);

  const delBody = await ts.json("DELETE", `${CM}/a`, { body: { dryRun: ["All"] } });
  assertEquals(delBody.status, 200);
  assertEquals((await ts.json("GET", `${CM}/a`)).status, 200);

  const collection = await ts.json("DELETE", `${CM}?dryRun=All`);
  assertEquals(collection.status, 200);
  assertEquals(ownConfigMaps(collection.body.items).map((o: any) => o.metadata.name), ["a"]);
  assertEquals(ownConfigMaps((await ts.json("GET", CM)).body.items).length, 1);

  assertEquals(revision(), before, "no revision was used");
  assertEquals(await w.collect(500), [], "no watch event");
});

Deno.test("dryRun values other than All are 422 naming the parameter and the supported value", async () => {
  await using ts = await testServer();
  for (
    const [method, path] of [["POST", CM], ["PUT", `${CM}/a`], ["DELETE", `${CM}/a`], [
      "DELETE",
      CM,
    ]]
  ) {
    const res = await ts.json(method, `${path}?dryRun=Everything`, {
      body: { metadata: { name: "a" } },
    });
    assertEquals([res.status, res.body.reason], [422, "Invalid"], `${method} ${path}`);
    assertMatch(
      res.body.message,
      /dryRun: Unsupported value: \["Everything"\]: supported values: "All"/,
    );
  }
});
