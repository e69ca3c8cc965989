/**
 * `/openapi/v2` over HTTPS: JSON and gnostic protobuf, ETag / If-None-Match / Vary as
 * kube-openapi's handler answers, compression, and a new document when the catalogue changes.
 */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { type TestServer, testServer } from "./harness.ts";
import { decodeOpenAPIv2 } from "./gnostic.ts";

const PB_AT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
const PB_DOT = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

async function get(t: TestServer, headers: Record<string, string> = {}) {
  // identity unless a test asks for gzip: fetch would otherwise ask for it and hide it.
  const res = await t.request("GET", "/openapi/v2", {
    headers: { "Accept-Encoding": "identity", ...headers },
  });
  return { res, bytes: await res.bytes() };
}

function sha512Tag(text: string | Uint8Array): string {
  return `"${createHash("sha512").update(text).digest("hex").toUpperCase()}"`;
}

Deno.test("openapi v2: JSON by default and for */*, with a content-hash ETag, Vary and Last-Modified", async () => {
  await using t = await testServer();
  for (const accept of [undefined, "*/*", "application/json", "application/*"]) {
    const { res, bytes } = await get(t, accept ? { Accept: accept } : {});
    assert.equal(res.status, 200, `Accept: ${accept}`);
    assert.equal(res.headers.get("Content-Type"), "application/json");
    assert.equal(res.headers.get("ETag"), sha512Tag(bytes));
    assert.match(res.headers.get("Vary") ?? "", /\bAccept\b/);
    assert.ok(Date.parse(res.headers.get("Last-Modified")!) <= Date.now());
    assert.equal(JSON.parse(new TextDecoder().decode(bytes)).swagger, "2.0");
  }
});

Deno.test("openapi v2: protobuf in both spellings, the same document, the same ETag", async () => {
  await using t = await testServer();
  const json = await get(t, { Accept: "application/json" });
  const doc = JSON.parse(new TextDecoder().decode(json.bytes));
  for (const accept of [PB_AT, PB_DOT, `${PB_AT}, application/json;q=0.9`]) {
    const { res, bytes } = await get(t, { Accept: accept });
    assert.equal(res.status, 200, accept);
    assert.equal(res.headers.get("Content-Type"), PB_DOT);
    assert.equal(res.headers.get("ETag"), json.res.headers.get("ETag"));
    assert.match(res.headers.get("Vary") ?? "", /\bAccept\b/);
    assert.deepStrictEqual(decodeOpenAPIv2(bytes), doc);
  }
  // A preference for JSON wins over the protobuf form.
  const preferJson = await get(t, { Accept: `${PB_AT};q=0.5, application/json` });
  assert.equal(preferJson.res.headers.get("Content-Type"), "application/json");
});

Deno.test("openapi v2: If-None-Match with the ETag (strong, weak or *) is 304; another tag is 200", async () => {
  await using t = await testServer();
  const first = await get(t, { Accept: PB_AT });
  const etag = first.res.headers.get("ETag")!;
  for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
    for (const accept of [PB_AT, "application/json"]) {
      const { res, bytes } = await get(t, { Accept: accept, "If-None-Match": inm });
      assert.equal(res.status, 304, `If-None-Match: ${inm}, Accept: ${accept}`);
      assert.equal(bytes.length, 0);
      assert.equal(res.headers.get("ETag"), etag);
      assert.match(res.headers.get("Vary") ?? "", /\bAccept\b/);
    }
  }
  const other = await get(t, { Accept: PB_AT, "If-None-Match": '"0123"' });
  assert.equal(other.res.status, 200);
  assert.deepStrictEqual(other.bytes, first.bytes);
  // Without If-None-Match, If-Modified-Since decides (as Go's ServeContent does).
  const lastModified = first.res.headers.get("Last-Modified")!;
  const ims = await get(t, { Accept: PB_AT, "If-Modified-Since": lastModified });
  assert.equal(ims.res.status, 304);
  const older = new Date(Date.parse(lastModified) - 60_000).toUTCString();
  assert.equal((await get(t, { Accept: PB_AT, "If-Modified-Since": older })).res.status, 200);
  // If-None-Match wins over If-Modified-Since.
  const both = await get(t, {
    Accept: PB_AT,
    "If-None-Match": '"0123"',
    "If-Modified-Since": lastModified,
  });
  assert.equal(both.res.status, 200);
});

Deno.test("openapi v2: an Accept naming neither form is a 406 Status", async () => {
  await using t = await testServer();
  const res = await t.json("GET", "/openapi/v2", { headers: { Accept: "application/xml" } });
  assert.equal(res.status, 406);
  assert.equal(res.body.kind, "Status");
  assert.equal(res.body.reason, "NotAcceptable");
  assert.match(res.body.message, /application\/json/);
  assert.match(res.body.message, /proto-openapi/);
});

Deno.test("openapi v2: gzip for clients that ask, with a weak ETag that still revalidates", async () => {
  await using t = await testServer();
  const client = Deno.createHttpClient({ caCerts: [t.server.caCertPem] });
  try {
    for (const accept of [PB_AT, "application/json"]) {
      const plain = await get(t, { Accept: accept });
      // fetch asks for gzip and unzips; the headers still tell how it came.
      const res = await fetch(`${t.server.url}/openapi/v2`, {
        client,
        headers: { Authorization: `Bearer ${t.server.adminToken}`, Accept: accept },
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("Content-Encoding"), "gzip");
      assert.match(res.headers.get("Vary") ?? "", /Accept-Encoding/);
      assert.deepStrictEqual(await res.bytes(), plain.bytes);
      const weak = res.headers.get("ETag")!;
      assert.equal(weak, `W/${plain.res.headers.get("ETag")}`);
      const again = await get(t, { Accept: accept, "If-None-Match": weak });
      assert.equal(again.res.status, 304);
    }
  } finally {
    client.close();
  }
});

Deno.test("openapi v2: a new custom resource gives a new document, ETag and protobuf bytes", async () => {
  await using t = await testServer();
  const before = await get(t, { Accept: PB_AT });
  const crd = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "gadgets.v2.example.com" },
    spec: {
      group: "v2.example.com",
      names: { plural: "gadgets", singular: "gadget", kind: "Gadget", listKind: "GadgetList" },
      scope: "Namespaced",
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                required: ["size"],
                properties: {
                  size: { type: "integer", minimum: 1, maximum: 10, default: 3 },
                  mode: { type: "string", enum: ["on", "off"], nullable: true },
                  port: { "x-kubernetes-int-or-string": true },
                  tags: {
                    type: "array",
                    items: { type: "string" },
                    "x-kubernetes-list-type": "set",
                  },
                  extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
                  labels: { type: "object", additionalProperties: { type: "string" } },
                },
              },
            },
          },
        },
      }],
    },
  };
  const created = await t.json("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
    body: crd,
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const path = "/apis/v2.example.com/v1/namespaces/{namespace}/gadgets/{name}";
  let after = await get(t, { Accept: PB_AT });
  for (let i = 0; i < 100 && !decodeOpenAPIv2(after.bytes).paths[path]; i++) {
    await new Promise((r) => setTimeout(r, 50));
    after = await get(t, { Accept: PB_AT });
  }
  assert.notEqual(after.res.headers.get("ETag"), before.res.headers.get("ETag"));
  const json = await get(t, { Accept: "application/json" });
  assert.equal(json.res.headers.get("ETag"), after.res.headers.get("ETag"));
  const doc = JSON.parse(new TextDecoder().decode(json.bytes));
  assert.deepStrictEqual(decodeOpenAPIv2(after.bytes), doc);
  const spec = doc.definitions["com.example.v2.v1.Gadget"].properties.spec;
  assert.deepStrictEqual(spec.properties.size, {
    type: "integer",
    minimum: 1,
    maximum: 10,
    default: 3,
  });
  assert.equal(spec.properties.port["x-kubernetes-int-or-string"], true);
  // The old tag no longer matches.
  const stale = await get(t, {
    Accept: PB_AT,
    "If-None-Match": before.res.headers.get("ETag")!,
  });
  assert.equal(stale.res.status, 200);
});
