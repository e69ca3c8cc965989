/**
 * YAML over HTTP: request bodies in, responses out on get, list, create, update and patch;
 * watch streams are JSON or protobuf only (406 when only YAML is acceptable).
 */

import { parse, stringify } from "yaml";
import { assertEquals, assertMatch } from "./assert.ts";
import { ownConfigMaps, testServer } from "./harness.ts";
import { emitYaml } from "../lib/codec/mod.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const YAML = "application/yaml";

Deno.test("yaml: bodies in and responses out on every verb with a body", async () => {
  await using ts = await testServer();
  const created = await ts.request("POST", CM, {
    headers: { "Content-Type": YAML, Accept: YAML },
    body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  a: '1'\n",
  });
  assertEquals(created.status, 201);
  assertEquals(created.headers.get("Content-Type"), YAML);
  const obj = parse(await created.text());
  assertEquals([obj.kind, obj.metadata.name, obj.data], ["ConfigMap", "y", { a: "1" }]);

  const got = await ts.request("GET", `${CM}/y`, { headers: { Accept: YAML } });
  const text = await got.text();
  assertMatch(text, /^apiVersion: v1\n/);
  assertEquals(parse(text).data, { a: "1" });

  obj.data.b = "2";
  const updated = await ts.request("PUT", `${CM}/y`, {
    headers: { "Content-Type": YAML, Accept: YAML },
    body: stringify(obj),
  });
  assertEquals(updated.status, 200);
  assertEquals(parse(await updated.text()).data, { a: "1", b: "2" });

  const applied = await ts.request("PATCH", `${CM}/y?fieldManager=me&force=true`, {
    headers: { "Content-Type": "application/apply-patch+yaml", Accept: YAML },
    body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  c: '3'\n",
  });
  assertEquals(applied.status, 200);
  assertEquals(parse(await applied.text()).data.c, "3");

  const list = await ts.request("GET", CM, { headers: { Accept: YAML } });
  const items = parse(await list.text());
  assertEquals([
    items.kind,
    ownConfigMaps(items.items).map((i: { metadata: { name: string } }) => i.metadata.name),
  ], [
    "ConfigMapList",
    ["y"],
  ]);

  const broken = await ts.json("POST", CM, {
    headers: { "Content-Type": YAML },
    body: "metadata: [unclosed\n",
  });
  assertEquals(broken.status, 400);
  assertEquals(broken.body.reason, "BadRequest");
});

Deno.test("yaml: a watch that accepts only YAML is 406; with JSON also acceptable it is JSON", async () => {
  await using ts = await testServer();
  const only = await ts.json("GET", `${CM}?watch=1`, { headers: { Accept: YAML } });
  assertEquals(only.status, 406);
  assertMatch(JSON.stringify(only.body), /application\/json/);
  const res = await ts.request("GET", `${CM}?watch=1&timeoutSeconds=1`, {
    headers: { Accept: `${YAML}, application/json;q=0.5` },
  });
  assertEquals(res.status, 200);
  assertEquals(res.headers.get("Content-Type"), "application/json");
  await res.body?.cancel();
});

Deno.test("yaml: a list built from cached items is the document the emitter gives for the whole list", async () => {
  await using ts = await testServer();
  const cm = "/api/v1/namespaces/default/configmaps";
  const data = { script: "line one\n\n  indented\nlast\n", plain: "x", tricky: "yes" };
  for (const name of ["a", "b"]) {
    assertEquals((await ts.json("POST", cm, { body: { metadata: { name }, data } })).status, 201);
  }
  for (let pass = 0; pass < 2; pass++) { // the second pass reads the cached items
    const yamlText =
      await (await ts.request("GET", cm, { headers: { Accept: "application/yaml" } })).text();
    const json = (await ts.json("GET", cm)).body;
    assertEquals(yamlText, emitYaml(json));
    assertEquals(parse(yamlText), json);
  }
  const empty = await (await ts.request("GET", "/api/v1/namespaces/default/secrets", {
    headers: { Accept: "application/yaml" },
  })).text();
  assertEquals(parse(empty).items, []);
});
