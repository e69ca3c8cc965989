/**
 * Content negotiation over HTTP: q-values and wildcards in Accept pick the best supported
 * type; `?pretty=true` indents JSON.
 */

import { assert, assertEquals } from "./assert.ts";
import { testServer } from "./harness.ts";

const CM = "/api/v1/namespaces/default/configmaps";

Deno.test("negotiation: the best acceptable type wins, by q-value, then order; wildcards are JSON", async () => {
  await using ts = await testServer();
  await ts.json("POST", CM, { body: { metadata: { name: "n" } } });
  const cases: [string, string][] = [
    ["application/yaml;q=0.5, application/json", "application/json"],
    ["application/json;q=0.1, application/yaml", "application/yaml"],
    ["application/yaml, application/json", "application/yaml"],
    ["text/html, application/*;q=0.2", "application/json"],
    ["*/*", "application/json"],
    [
      "application/vnd.platform.protobuf;q=0.9, application/json;q=0.8",
      "application/vnd.platform.protobuf",
    ],
  ];
  for (const [accept, want] of cases) {
    const res = await ts.request("GET", `${CM}/n`, { headers: { Accept: accept } });
    await res.body?.cancel();
    assertEquals([res.status, res.headers.get("Content-Type")], [200, want], accept);
  }
});

Deno.test("negotiation: ?pretty=true indents JSON", async () => {
  await using ts = await testServer();
  await ts.json("POST", CM, { body: { metadata: { name: "p" }, data: { a: "1" } } });
  const pretty = await (await ts.request("GET", `${CM}/p?pretty=true`)).text();
  assert(pretty.includes('\n  "kind": "ConfigMap"'), pretty);
  const plain = await (await ts.request("GET", `${CM}/p`)).text();
  assert(!plain.includes("\n  "), plain);
  assertEquals(JSON.parse(pretty), JSON.parse(plain));
});
