/** The protobuf codec against its references: Kubernetes' fixtures, the descriptors, built bodies. */

import { assert, assertEquals } from "../../../tests/assert.ts";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  decodeObject,
  encodeEnvelope,
  encodeListBody,
  encodeMessage,
  encodeObject,
  hasProtobuf,
  listBodyChunks,
  ProtobufError,
  toKubeApiVersion,
} from "./mod.ts";
import { assertThrows, fixture, hex } from "./protobuf_testdata.ts";

/** Kubernetes' round-trip fixtures this codec covers (ServiceAccount has none upstream). */
const CASES: { file: string; as?: { apiVersion: string; kind: string } }[] = [
  { file: "core.v1.ConfigMap" },
  { file: "core.v1.Namespace" },
  { file: "core.v1.Secret" },
  { file: "core.v1.Event" },
  { file: "core.v1.Status" },
  { file: "core.v1.DeleteOptions" },
  // a WatchEvent has no TypeMeta: its envelope names no type, the caller does
  { file: "core.v1.WatchEvent", as: { apiVersion: "v1", kind: "WatchEvent" } },
  { file: "coordination.k8s.io.v1.Lease" },
  { file: "events.k8s.io.v1.Event" },
  { file: "certificates.k8s.io.v1.CertificateSigningRequest" },
  { file: "apiextensions.k8s.io.v1.CustomResourceDefinition" },
  { file: "authentication.k8s.io.v1.TokenReview" },
  { file: "authorization.k8s.io.v1.SubjectAccessReview" },
  { file: "rbac.authorization.k8s.io.v1.Role" },
  { file: "rbac.authorization.k8s.io.v1.ClusterRole" },
  { file: "rbac.authorization.k8s.io.v1.RoleBinding" },
  { file: "rbac.authorization.k8s.io.v1.ClusterRoleBinding" },
  { file: "admissionregistration.k8s.io.v1.MutatingWebhookConfiguration" },
  { file: "admissionregistration.k8s.io.v1.ValidatingWebhookConfiguration" },
];
for (const { file, as } of CASES) {
  Deno.test(`protobuf fixture ${file}: decoding the .pb gives the .json`, () => {
    const { json, pb } = fixture(file);
    assertEquals(decodeObject(pb, { as }), json);
  });

  Deno.test(`protobuf fixture ${file}: encoding the .json gives the .pb bytes`, () => {
    const { json, pb } = fixture(file);
    const envelopeApiVersion = typeof json.apiVersion === "string"
      ? toKubeApiVersion(json.apiVersion)
      : undefined;
    assertEquals(hex(encodeObject(json, { as, envelopeApiVersion })), hex(pb));
  });
}
Deno.test("protobuf object bodies built from message bytes equal Kubernetes' fixtures", () => {
  for (const { file } of CASES.filter((c) => !c.as)) {
    const { json, pb } = fixture(file);
    const type = { apiVersion: json.apiVersion as string, kind: json.kind as string };
    const body = encodeEnvelope(
      { apiVersion: toKubeApiVersion(type.apiVersion), kind: type.kind },
      encodeMessage(json, type),
    );
    assertEquals(hex(body), hex(pb), file);
  }
});

Deno.test("protobuf list bodies built from item messages equal encoding the whole list", () => {
  const items = [
    { metadata: { name: "a", namespace: "default", resourceVersion: "99" }, data: { k: "v" } },
    {
      metadata: { name: "b", namespace: "default", labels: { x: "y" } },
      binaryData: { b: "AQI=" },
    },
  ];
  for (const metadata of [{ resourceVersion: "100" }, { resourceVersion: "7", continue: "t" }]) {
    const whole = encodeObject({ kind: "ConfigMapList", apiVersion: "v1", metadata, items });
    const parts = items.map((i) =>
      encodeMessage({ apiVersion: "v1", kind: "ConfigMap", ...i }, {
        apiVersion: "v1",
        kind: "ConfigMap",
      })
    );
    assertEquals(
      encodeListBody({ apiVersion: "v1", kind: "ConfigMapList" }, metadata, parts),
      whole,
    );
  }
  // In chunks, as large lists are sent: the same bytes, however they are cut.
  const many = Array.from({ length: 300 }, (_, i) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: `cm-${i}`, namespace: "default" },
    data: { v: "x".repeat(i) },
  }));
  const manyParts = many.map((i) => encodeMessage(i, { apiVersion: "v1", kind: "ConfigMap" }));
  const manyWhole = encodeObject({
    kind: "ConfigMapList",
    apiVersion: "v1",
    metadata: { resourceVersion: "9" },
    items: many,
  });
  for (const chunkBytes of [1, 100, 4096, 1 << 20]) {
    const chunks = [
      ...listBodyChunks(
        { apiVersion: "v1", kind: "ConfigMapList" },
        { resourceVersion: "9" },
        manyParts,
        chunkBytes,
      ),
    ];
    const joined = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      joined.set(c, at);
      at += c.length;
    }
    assertEquals(joined, manyWhole, `chunks of ${chunkBytes} bytes`);
    if (chunkBytes < 4096) assert(chunks.length > 10, `${chunks.length} chunks`);
  }
  const empty = encodeListBody(
    { apiVersion: "coordination.platform.io/v1", kind: "LeaseList" },
    { resourceVersion: "5" },
    [],
  );
  assertEquals(
    empty,
    encodeObject({
      kind: "LeaseList",
      apiVersion: "coordination.platform.io/v1",
      metadata: { resourceVersion: "5" },
      items: [],
    }),
  );
});
Deno.test("protobuf hasProtobuf names the served kinds", () => {
  assert(hasProtobuf("v1", "ConfigMap"));
  assert(hasProtobuf("v1", "ServiceAccountList"));
  assert(hasProtobuf("certificates.platform.io/v1", "CertificateSigningRequest"));
  assert(hasProtobuf("events.platform.io/v1", "Status"));
  assert(hasProtobuf("meta.platform.io/v1", "Status"));
  assert(hasProtobuf("apiextensions.platform.io/v1", "CustomResourceDefinitionList"));
  assert(hasProtobuf("authentication.platform.io/v1", "TokenReview"));
  assert(hasProtobuf("authorization.platform.io/v1", "SelfSubjectRulesReview"));
  // the review kinds are only created: they have no List
  assert(!hasProtobuf("authentication.platform.io/v1", "TokenReviewList"));
  assert(!hasProtobuf("authorization.platform.io/v1", "SubjectAccessReviewList"));
  assert(!hasProtobuf("certificates.k8s.io/v1", "CertificateSigningRequest"));
  assert(!hasProtobuf("example.com/v1", "Widget"));
  assert(!hasProtobuf("v1", "Pod"));
  assertThrows(
    () => encodeObject({ apiVersion: "example.com/v1", kind: "Widget" }),
    ProtobufError,
    'kind "Widget" in apiVersion "example.com/v1" has no protobuf encoding',
  );
});
const PROTO_ROOT = fileURLToPath(new URL("../../../testdata/k8s-proto", import.meta.url));

Deno.test("protobuf descriptors.json is what tools/extract_proto.ts generates", async () => {
  const { extract } = await import("../../../tools/extract_proto.ts");
  const committed = readFileSync(new URL("./descriptors.json", import.meta.url), "utf8");
  assertEquals(JSON.stringify(extract(PROTO_ROOT), null, 2) + "\n", committed);
});
