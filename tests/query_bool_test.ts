// deno-lint-ignore-file no-explicit-any
/**
 * Boolean query parameters spelled as clients other than kubectl send them: the Python client's
 * `force=True` on server-side apply, and `pretty=True`.
 */

import { assert, assertEquals } from "./assert.ts";
import { type TestServer, testServer } from "./harness.ts";

const CM = "/api/v1/namespaces/default/configmaps";

function apply(ts: TestServer, manager: string, data: Record<string, string>, query = "") {
  return ts.json("PATCH", `${CM}/c?fieldManager=${manager}${query}`, {
    headers: { "Content-Type": "application/apply-patch+yaml" },
    body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data }),
  });
}

Deno.test("query bools: force=True overrides an apply conflict; force=False does not", async () => {
  await using ts = await testServer();
  assertEquals((await apply(ts, "a", { k: "1" })).status, 201);
  assertEquals((await apply(ts, "b", { k: "2" })).status, 409);
  assertEquals((await apply(ts, "b", { k: "2" }, "&force=False")).status, 409);
  const forced = await apply(ts, "b", { k: "2" }, "&force=True");
  assertEquals(forced.status, 200, JSON.stringify(forced.body));
  assertEquals(forced.body.data, { k: "2" });
  const managers = forced.body.metadata.managedFields.map((e: any) => e.manager);
  assertEquals(managers, ["b"]);
  // As kube, `force` present at all (even false) is forbidden on a non-apply patch.
  const merge = await ts.json("PATCH", `${CM}/c?force=false`, {
    headers: { "Content-Type": "application/merge-patch+json" },
    body: {},
  });
  assertEquals(merge.status, 422);
});

Deno.test("query bools: pretty=True indents JSON", async () => {
  await using ts = await testServer();
  await ts.json("POST", CM, { body: { metadata: { name: "p" }, data: { a: "1" } } });
  const pretty = await (await ts.request("GET", `${CM}/p?pretty=True`)).text();
  assert(pretty.includes('\n  "kind": "ConfigMap"'), pretty);
  const plain = await (await ts.request("GET", `${CM}/p?pretty=False`)).text();
  assert(!plain.includes("\n  "), plain);
});
