/**
 * Memory (issue 17): large lists are sent as the client reads them (chunked, no
 * Content-Length), and what arrives is the whole list in every encoding, gzip included.
 */

import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { decodeObject } from "../../lib/codec/mod.ts";
import { ownConfigMaps, testServer } from "../harness.ts";

const COUNT = 700; // over the 500 items from which lists are streamed
const CM = "/api/v1/namespaces/default/configmaps";

Deno.test("a list of 700 configmaps is streamed and complete as JSON, YAML, protobuf and gzip", async () => {
  await using t = await testServer();
  for (let i = 0; i < COUNT; i += 50) {
    await Promise.all(Array.from({ length: 50 }, async (_, j) => {
      const res = await t.request("POST", CM, {
        body: { metadata: { name: `cm-${i + j}` }, data: { v: "x".repeat(200) } },
      });
      assert.equal(res.status, 201);
      await res.body?.cancel();
    }));
  }
  const names = (items: { metadata: { name: string } }[]) =>
    new Set(ownConfigMaps(items).map((i) => i.metadata.name));
  const expected = new Set(Array.from({ length: COUNT }, (_, i) => `cm-${i}`));

  const json = await t.request("GET", CM);
  assert.equal(json.headers.get("Content-Length"), null, "a streamed body has no length");
  assert.deepEqual(names((await json.json()).items), expected);

  const yaml = await t.request("GET", CM, { headers: { Accept: "application/yaml" } });
  assert.equal(yaml.headers.get("Content-Length"), null);
  assert.deepEqual(names((parseYaml(await yaml.text()) as { items: [] }).items), expected);

  const pb = await t.request("GET", CM, {
    headers: { Accept: "application/vnd.kubernetes.protobuf" },
  });
  assert.match(pb.headers.get("Content-Type") ?? "", /protobuf/);
  assert.equal(pb.headers.get("Content-Length"), null);
  const list = decodeObject(new Uint8Array(await pb.arrayBuffer())) as {
    items: { metadata: { name: string } }[];
  };
  assert.deepEqual(names(list.items), expected);

  // Table (what kubectl get reads) and metadata lists: streamed, and the same document as the
  // one built whole (pretty printing builds it whole).
  for (
    const accept of [
      "application/json;as=Table;g=meta.k8s.io;v=v1",
      "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    ]
  ) {
    const streamed = await t.request("GET", CM, { headers: { Accept: accept } });
    assert.equal(streamed.headers.get("Content-Length"), null, accept);
    const whole = await t.request("GET", `${CM}?pretty=true`, { headers: { Accept: accept } });
    assert.ok(whole.headers.get("Content-Length") !== null, accept);
    const a = await streamed.json(), b = await whole.json();
    // The two were rendered moments apart: an Age cell may have ticked over a second.
    const ageless = (doc: { rows?: { cells: unknown[] }[] }) =>
      doc.rows?.forEach((r) => r.cells[r.cells.length - 1] = "");
    ageless(a);
    ageless(b);
    assert.deepEqual(a, b, accept);
    const objects = a.rows ? a.rows.map((r: { object: unknown }) => r.object) : a.items;
    assert.equal(ownConfigMaps(objects).length, COUNT);
  }

  // fetch asks for gzip and inflates it: the header says it was compressed.
  const gz = await t.request("GET", CM, { headers: { "Accept-Encoding": "gzip" } });
  assert.equal(gz.headers.get("Content-Encoding"), "gzip");
  assert.deepEqual(names((await gz.json()).items), expected);
});
