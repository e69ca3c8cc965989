/** The protobuf codec's errors and limits: wrong types, truncated or garbled input, nesting. */

import { assert, assertEquals } from "../../../tests/assert.ts";
import { MAX_NESTING_DEPTH } from "../../api/nesting.ts";
import { decodeObject, encodeObject, type JsonObject, MAGIC, ProtobufError } from "./mod.ts";
import { assertThrows, fixture } from "./protobuf_testdata.ts";

Deno.test("protobuf encode rejects wrongly typed fields with the path", () => {
  assertThrows(
    () => encodeObject({ apiVersion: "v1", kind: "ConfigMap", data: { a: 1 } }),
    ProtobufError,
    'ConfigMap.data["a"] must be a string, got number',
  );
  assertThrows(
    () => encodeObject({ apiVersion: "v1", kind: "ConfigMap", metadata: { generation: 1.5 } }),
    ProtobufError,
    "ConfigMap.metadata.generation must be an int64",
  );
  assertThrows(
    () =>
      encodeObject({ apiVersion: "v1", kind: "Namespace", metadata: { creationTimestamp: "x" } }),
    ProtobufError,
    "creationTimestamp must be an RFC 3339 time",
  );
});

Deno.test("protobuf decode of truncated input throws a clear error at every cut", () => {
  const { pb } = fixture("core.v1.ConfigMap");
  for (let cut = 0; cut < pb.length; cut++) {
    try {
      decodeObject(pb.subarray(0, cut));
    } catch (e) {
      assert(e instanceof ProtobufError, `cut ${cut}: ${e}`);
      assert((e as Error).message.startsWith("Cannot decode protobuf"), (e as Error).message);
      continue;
    }
    // a cut at a field boundary is a valid (shorter) message; it must still decode
  }
  assertThrows(
    () => decodeObject(pb.subarray(0, pb.length - 3)),
    ProtobufError,
    "Cannot decode protobuf",
  );
});

Deno.test("protobuf decode of garbage throws a ProtobufError, never anything else", () => {
  assertThrows(() => decodeObject(new Uint8Array()), ProtobufError, 'start with "k8s\\0"');
  assertThrows(() => decodeObject(new TextEncoder().encode("{}")), ProtobufError);
  // magic, then a tag with wire type 3 (groups are not supported)
  assertThrows(
    () => decodeObject(new Uint8Array([...MAGIC, 0x0b])),
    ProtobufError,
    "wire type 3",
  );
  // a varint that never ends
  assertThrows(
    () => decodeObject(new Uint8Array([...MAGIC, 0x08, ...new Array(12).fill(0xff)])),
    ProtobufError,
  );
  // an envelope without a type
  assertThrows(() => decodeObject(new Uint8Array([...MAGIC])), ProtobufError, "no protobuf");

  let seed = 1;
  const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const { pb } = fixture("core.v1.Event");
  for (let i = 0; i < 2000; i++) {
    const bytes = pb.slice();
    for (let j = 0; j < 3; j++) {
      const at = 4 + Math.floor(random() * (bytes.length - 4));
      bytes[at] = Math.floor(random() * 256);
    }
    try {
      decodeObject(bytes);
    } catch (e) {
      assert(e instanceof ProtobufError, `mutation ${i}: ${e}`);
    }
  }
});

Deno.test("protobuf decode rejects content encodings and raw bytes that are not JSON", () => {
  const w = [
    ...MAGIC,
    0x0a,
    0x04,
    0x0a,
    0x00,
    0x12,
    0x00,
    0x1a,
    0x04,
    ...new TextEncoder().encode(
      "gzip",
    ),
  ];
  assertThrows(() => decodeObject(new Uint8Array(w)), ProtobufError, 'contentEncoding "gzip"');
  const as = { apiVersion: "v1", kind: "WatchEvent" };
  // WatchEvent{type: "A", object: {raw: 0xff}}
  const body = [...MAGIC, 0x12, 0x08, 0x0a, 0x01, 0x41, 0x12, 0x03, 0x0a, 0x01, 0xff];
  assertThrows(
    () => decodeObject(new Uint8Array(body), { as }),
    ProtobufError,
    "neither a protobuf object nor JSON",
  );
});
Deno.test("protobuf decode refuses messages and raw JSON nested past the limit", () => {
  // A CRD whose schema nests `properties` n levels: each level is two messages deep.
  const schema = (n: number): JsonObject =>
    n === 0 ? { type: "string" } : { type: "object", properties: { a: schema(n - 1) } };
  const crd = (n: number): JsonObject => ({
    apiVersion: "apiextensions.platform.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "deep.example.com" },
    spec: { versions: [{ name: "v1", schema: { openAPIV3Schema: schema(n) } }] },
  });
  assertEquals(decodeObject(encodeObject(crd(100))).kind, "CustomResourceDefinition");
  assertThrows(
    () => decodeObject(encodeObject(crd(MAX_NESTING_DEPTH))),
    ProtobufError,
    "exceeded max depth",
  );
  // WatchEvent{type: "A", object: {raw: <JSON nested past the limit>}}
  const json = new TextEncoder().encode(
    `${"[".repeat(MAX_NESTING_DEPTH)}${"]".repeat(MAX_NESTING_DEPTH)}`,
  );
  const raw = [0x0a, ...varint(json.length), ...json];
  const event = [0x0a, 0x01, 0x41, 0x12, ...varint(raw.length), ...raw];
  const body = new Uint8Array([...MAGIC, 0x12, ...varint(event.length), ...event]);
  assertThrows(
    () => decodeObject(body, { as: { apiVersion: "v1", kind: "WatchEvent" } }),
    ProtobufError,
    "exceeded max depth",
  );
});

function varint(n: number): number[] {
  const out: number[] = [];
  for (; n >= 0x80; n >>>= 7) out.push((n & 0x7f) | 0x80);
  out.push(n);
  return out;
}
