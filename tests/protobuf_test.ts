// deno-lint-ignore-file no-explicit-any
/** Protobuf on the wire: bodies in and out, lists, watch frames, errors, negotiation. */

import { assert, assertEquals } from "./assert.ts";
import { ownConfigMaps, testServer } from "./harness.ts";
import {
  decodeObject,
  decodeWatchEvent,
  encodeObject,
  splitWatchFrames,
} from "../lib/codec/mod.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const PB = "application/vnd.platform.protobuf";
const KPB = "application/vnd.kubernetes.protobuf";

async function bytesOf(res: Response): Promise<Uint8Array> {
  return new Uint8Array(await res.arrayBuffer());
}

Deno.test("protobuf: create in protobuf, read back in protobuf and JSON", async () => {
  await using ts = await testServer();
  const body = encodeObject({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "pb", labels: { a: "b" } },
    data: { k: "v" },
  });
  // kubectl's typed commands send kube's media type and accept protobuf then JSON.
  const created = await fetch(ts.server.url + CM, {
    method: "POST",
    body: body as Uint8Array<ArrayBuffer>,
    client: Deno.createHttpClient({ caCerts: [ts.server.caCertPem] }),
    headers: {
      Authorization: `Bearer ${ts.server.adminToken}`,
      "Content-Type": KPB,
      Accept: `${KPB}, application/json`,
    },
  });
  assertEquals([created.status, created.headers.get("content-type")], [201, KPB]);
  const obj = decodeObject(await bytesOf(created)) as any;
  assertEquals([obj.kind, obj.metadata.name, obj.data], ["ConfigMap", "pb", { k: "v" }]);

  const json = await ts.json("GET", `${CM}/pb`);
  assertEquals(json.body.metadata.resourceVersion, obj.metadata.resourceVersion);
  assertEquals(json.body.metadata.labels, { a: "b" });

  const got = await ts.request("GET", `${CM}/pb`, { headers: { Accept: PB } });
  assertEquals(got.headers.get("content-type"), PB);
  assertEquals(decodeObject(await bytesOf(got)), json.body);

  const list = await ts.request("GET", CM, { headers: { Accept: PB } });
  const decoded = decodeObject(await bytesOf(list)) as any;
  assertEquals([decoded.kind, ownConfigMaps(decoded.items).length], ["ConfigMapList", 1]);
  assertEquals(typeof decoded.metadata.resourceVersion, "string");
});

Deno.test("protobuf: watch streams length-delimited WatchEvent frames", async () => {
  await using ts = await testServer();
  const first = await ts.json("POST", CM, { body: { metadata: { name: "w" } } });
  const res = await ts.request(
    "GET",
    `${CM}?watch=1&resourceVersion=${first.body.metadata.resourceVersion}`,
    {
      headers: { Accept: KPB },
    },
  );
  assertEquals(res.headers.get("content-type"), `${KPB};stream=watch`);
  await ts.json("PUT", `${CM}/w`, { body: { metadata: { name: "w" }, data: { x: "1" } } });
  const reader = res.body!.getReader();
  let buf: Uint8Array = new Uint8Array();
  let frames: Uint8Array[] = [];
  while (!frames.length) {
    const { value } = await reader.read();
    const joined = new Uint8Array(buf.length + value!.length);
    joined.set(buf);
    joined.set(value!, buf.length);
    ({ frames, rest: buf } = splitWatchFrames(joined));
  }
  await reader.cancel();
  const ev = decodeWatchEvent(frames[0]) as any;
  assertEquals(ev.type, "MODIFIED");
  const object = ev.object.metadata ? ev.object : decodeObject(ev.object.raw) as any;
  assertEquals([object.metadata.name, object.data], ["w", { x: "1" }]);
});

Deno.test("protobuf: errors come back as a protobuf Status; negotiation 406 and 415", async () => {
  await using ts = await testServer();
  const missing = await ts.request("GET", `${CM}/nope`, { headers: { Accept: PB } });
  assertEquals(missing.status, 404);
  const status = decodeObject(await bytesOf(missing)) as any;
  assertEquals([status.kind, status.code, status.reason], ["Status", 404, "NotFound"]);

  const none = await ts.json("GET", CM, { headers: { Accept: "application/xml" } });
  assertEquals(none.status, 406);
  assert(none.body.message.includes(PB), none.body.message);

  const unsupported = await ts.json("POST", CM, {
    body: "<configmap/>",
    headers: { "Content-Type": "application/xml" },
  });
  assertEquals([unsupported.status, unsupported.body.reason], [415, "UnsupportedMediaType"]);

  const garbage = await ts.json("POST", CM, {
    body: "k8s\0garbage",
    headers: { "Content-Type": PB },
  });
  assertEquals([garbage.status, garbage.body.reason], [400, "BadRequest"]);
  assertEquals(ownConfigMaps((await ts.json("GET", CM)).body.items).length, 0);
});

Deno.test("a body without Content-Type is 415, as kube reads it as octet-stream", async () => {
  await using ts = await testServer();
  const res = await fetch(ts.server.url + CM, {
    method: "POST",
    body: new TextEncoder().encode('{"metadata":{"name":"x"}}'),
    client: Deno.createHttpClient({ caCerts: [ts.server.caCertPem] }),
    headers: { Authorization: `Bearer ${ts.server.adminToken}` },
  });
  const body = await res.json();
  assertEquals([res.status, body.reason], [415, "UnsupportedMediaType"]);
  assertEquals((await ts.json("GET", `${CM}/x`)).status, 404);
});
