import { assert, assertEquals } from "../../../tests/assert.ts";
import { MAX_NESTING_DEPTH } from "../../api/nesting.ts";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  decodeObject,
  decodeWatchEvent,
  encodeEnvelope,
  encodeListBody,
  encodeMessage,
  encodeObject,
  encodeWatchEvent,
  frame,
  hasProtobuf,
  type JsonObject,
  listBodyChunks,
  MAGIC,
  ProtobufError,
  splitWatchFrames,
  toKubeApiVersion,
  toPlatformApiVersion,
} from "./mod.ts";

const FIXTURES = fileURLToPath(new URL("../../../testdata/k8s-api-testdata/", import.meta.url));

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

function fixture(file: string): { json: JsonObject; pb: Uint8Array } {
  const json = JSON.parse(readFileSync(`${FIXTURES}${file}.json`, "utf8"));
  if (typeof json.apiVersion === "string") json.apiVersion = toPlatformApiVersion(json.apiVersion);
  return { json, pb: new Uint8Array(readFileSync(`${FIXTURES}${file}.pb`)) };
}

/** Asserts that `fn` throws an instance of `type` whose message contains `includes`. */
function assertThrows(
  fn: () => unknown,
  type: new (...args: never[]) => Error,
  includes = "",
): void {
  try {
    fn();
  } catch (e) {
    assert(e instanceof type, `expected ${type.name}, got ${e}`);
    assert(e.message.includes(includes), `"${e.message}" does not contain "${includes}"`);
    return;
  }
  throw new Error("expected an exception");
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

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

function roundTrip(obj: JsonObject): JsonObject {
  const bytes = encodeObject(obj);
  const back = decodeObject(bytes);
  assertEquals(back, obj);
  // re-encoding the decoded object gives the same bytes
  assertEquals(hex(encodeObject(back)), hex(bytes));
  return back;
}

Deno.test("protobuf round-trips a ConfigMap with data", () => {
  roundTrip({
    kind: "ConfigMap",
    apiVersion: "v1",
    metadata: {
      name: "demo",
      namespace: "default",
      uid: "0c7c8b8e-4b1d-4a5e-9e58-2d5f4f1a9a10",
      resourceVersion: "42",
      creationTimestamp: "2024-05-06T07:08:09Z",
      labels: { app: "demo", "z-last": "1", "a-first": "2" },
      managedFields: [{
        manager: "kubectl",
        operation: "Update",
        apiVersion: "v1",
        time: "2024-05-06T07:08:09Z",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:data": { ".": {}, "f:greeting": {} } },
      }],
    },
    data: { greeting: "hello", empty: "" },
    binaryData: { blob: "AAEC/w==" },
  });
});

Deno.test("protobuf writes map entries sorted by key and empty value fields", () => {
  const a = encodeObject({ kind: "ConfigMap", apiVersion: "v1", data: { b: "2", a: "1" } });
  const b = encodeObject({ kind: "ConfigMap", apiVersion: "v1", data: { a: "1", b: "2" } });
  assertEquals(hex(a), hex(b));
  // an empty ConfigMap: raw = {metadata = {name, generateName, namespace, selfLink, uid,
  // resourceVersion written empty, generation 0, creationTimestamp an empty message; no
  // deletionTimestamp (a pointer)}}; no immutable (a pointer); contentEncoding and contentType ""
  const empty = hex(encodeObject({ kind: "ConfigMap", apiVersion: "v1" }));
  assertEquals(
    empty,
    "6b387300" + "0a0f0a02763112" + "09" + hex(new TextEncoder().encode("ConfigMap")) +
      "1212" + "0a10" + "0a0012001a0022002a00320038004200" + "1a002200",
  );
});

Deno.test("protobuf round-trips a Namespace with status phase and a Secret", () => {
  roundTrip({
    kind: "Namespace",
    apiVersion: "v1",
    metadata: { name: "team-a", resourceVersion: "7", creationTimestamp: "2024-01-01T00:00:00Z" },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  });
  roundTrip({
    kind: "Secret",
    apiVersion: "v1",
    metadata: { name: "s", namespace: "default" },
    data: { "tls.key": "c2VjcmV0" },
    type: "Opaque",
    immutable: false,
  });
});

Deno.test("protobuf round-trips lists with resourceVersion, continue and remainingItemCount", () => {
  const list = roundTrip({
    kind: "ConfigMapList",
    apiVersion: "v1",
    metadata: { resourceVersion: "100", continue: "eyJydiI6MTAwfQ", remainingItemCount: 0 },
    items: [
      { metadata: { name: "a", namespace: "default", resourceVersion: "99" }, data: { k: "v" } },
    ],
  });
  assertEquals(list.metadata, {
    resourceVersion: "100",
    continue: "eyJydiI6MTAwfQ",
    remainingItemCount: 0,
  });
  roundTrip({
    kind: "LeaseList",
    apiVersion: "coordination.platform.io/v1",
    metadata: { resourceVersion: "5" },
    items: [],
  });
});

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

Deno.test("protobuf round-trips a Status with details.causes", () => {
  roundTrip({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: 'ConfigMap "x" is invalid: data: Invalid value',
    reason: "Invalid",
    details: {
      name: "x",
      kind: "configmaps",
      causes: [{ reason: "FieldValueInvalid", message: "Invalid value", field: "data" }],
    },
    code: 422,
  });
});

Deno.test("protobuf round-trips Lease, events.platform.io Event and CSR with group names", () => {
  const lease = roundTrip({
    kind: "Lease",
    apiVersion: "coordination.platform.io/v1",
    metadata: { name: "node-1", namespace: "platform-node-lease" },
    spec: {
      holderIdentity: "node-1",
      leaseDurationSeconds: 40,
      renewTime: "2024-05-06T07:08:09.123456Z",
      leaseTransitions: 0,
    },
  });
  assertEquals((lease.spec as JsonObject).leaseTransitions, 0);
  const bytes = encodeObject(lease, { envelopeApiVersion: "coordination.k8s.io/v1" });
  assertEquals(decodeObject(bytes).apiVersion, "coordination.platform.io/v1");
  roundTrip({
    kind: "Event",
    apiVersion: "events.platform.io/v1",
    metadata: { name: "e", namespace: "default" },
    eventTime: "2024-05-06T07:08:09.000001Z",
    reportingController: "platform.io/controller",
    reportingInstance: "i",
    action: "Create",
    reason: "Created",
    regarding: { kind: "ConfigMap", namespace: "default", name: "demo" },
    note: "created",
    type: "Normal",
    deprecatedSource: {},
  });
  roundTrip({
    kind: "CertificateSigningRequest",
    apiVersion: "certificates.platform.io/v1",
    metadata: { name: "csr" },
    spec: {
      request: "LS0tLS1CRUdJTg==",
      signerName: "platform.io/kube-apiserver-client",
      usages: ["client auth"],
      username: "alice",
      extra: { scopes: ["a", "b"], empty: [] },
    },
    status: {
      conditions: [{
        type: "Approved",
        status: "True",
        reason: "OK",
        lastUpdateTime: "2024-01-01T00:00:00Z",
      }],
    },
  });
});

Deno.test("protobuf round-trips admission policies and webhooks: inline rules, unset pointers absent", () => {
  const webhooks = {
    kind: "ValidatingWebhookConfiguration",
    apiVersion: "admissionregistration.platform.io/v1",
    metadata: { name: "hooks" },
    webhooks: [{
      name: "a.example.com",
      clientConfig: { service: { namespace: "ns", name: "svc" } },
      // Rule is embedded inline in RuleWithOperations: its fields sit beside operations
      rules: [{
        operations: ["CREATE"],
        apiGroups: [""],
        apiVersions: ["v1"],
        resources: ["pods"],
      }],
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
    }],
  };
  assertEquals(roundTrip(webhooks), webhooks);
  const policy = {
    kind: "ValidatingAdmissionPolicy",
    apiVersion: "admissionregistration.platform.io/v1",
    metadata: { name: "p" },
    spec: {
      matchConstraints: {
        resourceRules: [{
          resourceNames: ["x"],
          operations: ["*"],
          apiGroups: ["apps"],
          apiVersions: ["v1"],
          resources: ["deployments"],
          scope: "*",
        }],
      },
      validations: [{ expression: "true", messageExpression: "'m'" }],
      variables: [{ name: "v", expression: "1" }],
    },
    status: { observedGeneration: 2 },
  };
  assertEquals(roundTrip(policy), policy);
  const binding = {
    kind: "ValidatingAdmissionPolicyBinding",
    apiVersion: "admissionregistration.platform.io/v1",
    metadata: { name: "b" },
    spec: {
      policyName: "p",
      paramRef: { name: "cfg", parameterNotFoundAction: "Deny" },
      validationActions: ["Deny"],
    },
  };
  assertEquals(roundTrip(binding), binding);
});

Deno.test("protobuf round-trips a small CRD: unset pointer fields stay absent", () => {
  const crd = roundTrip({
    kind: "CustomResourceDefinition",
    apiVersion: "apiextensions.platform.io/v1",
    metadata: { name: "widgets.example.com" },
    spec: {
      group: "example.com",
      names: { plural: "widgets", kind: "Widget" },
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
                // a map of schemas (JSONSchemaPropsOrBool: a schema also sets `allows`)
                additionalProperties: { type: "string", minLength: 0 },
                "x-kubernetes-preserve-unknown-fields": true,
              },
              // JSONSchemaPropsOrArray: one schema for every item
              tags: { type: "array", items: { type: "string", maxLength: 63 } },
              size: {
                type: "number",
                maximum: 10.5,
                default: { value: 1, unit: ["m", null] },
                enum: [1, "two", null],
              },
              closed: { type: "object", additionalProperties: false },
              linked: { $ref: "#/definitions/x", "x-kubernetes-list-type": "atomic" },
            },
            required: ["spec"],
          },
        },
      }],
    },
    status: { acceptedNames: { plural: "widgets", kind: "Widget" }, storedVersions: ["v1"] },
  });
  const spec = crd.spec as JsonObject;
  assertEquals(spec.conversion, undefined);
  const version = (spec.versions as JsonObject[])[0];
  assertEquals(version.subresources, undefined);
  assertEquals(version.deprecationWarning, undefined);
  const bytes = hex(encodeObject(crd));
  // additionalProperties (field 30): {allows = false} and {allows = true, schema = {…}}
  assert(bytes.includes("f20102" + "0800"), "additionalProperties: false");
  assert(/f201..0801/.test(bytes), "additionalProperties: a schema allows");
});

Deno.test("protobuf CRD schemas: every union shape, JSON values and JSON names", () => {
  const schema = {
    type: "object",
    // a list of schemas (JSONSchemaPropsOrArray's other shape) and of property names
    items: [{ type: "string" }, { type: "integer", minimum: -1, exclusiveMinimum: true }],
    dependencies: { a: ["b", "c"], d: { required: ["e"] } },
    additionalItems: true,
    not: { type: "null", nullable: true },
    externalDocs: { url: "https://example.com" },
    example: "x",
    multipleOf: 0.25,
    "x-kubernetes-int-or-string": true,
    "x-kubernetes-map-type": "granular",
    "x-kubernetes-list-map-keys": ["name"],
    "x-kubernetes-validations": [{ rule: "self.a > 0", optionalOldSelf: false }],
    $schema: "http://json-schema.org/draft-04/schema#",
  };
  const crd = {
    kind: "CustomResourceDefinition",
    apiVersion: "apiextensions.platform.io/v1",
    metadata: { name: "a.b" },
    spec: {
      names: { plural: "a", kind: "A" },
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      conversion: { strategy: "None" },
    },
    status: { acceptedNames: {} },
  };
  roundTrip(crd);
  const back = decodeObject(encodeObject(crd));
  const version = ((back.spec as JsonObject).versions as JsonObject[])[0];
  assertEquals((version.schema as JsonObject).openAPIV3Schema, schema);
  assertThrows(
    () =>
      encodeObject({
        ...crd,
        spec: { versions: [{ schema: { openAPIV3Schema: { additionalProperties: "no" } } }] },
      }),
    ProtobufError,
    "CustomResourceDefinition.spec.versions[0].schema.openAPIV3Schema.additionalProperties " +
      "must be an object or a boolean, got string",
  );
  assertThrows(
    () =>
      encodeObject({
        ...crd,
        spec: { versions: [{ schema: { openAPIV3Schema: { maximum: "1" } } }] },
      }),
    ProtobufError,
    "openAPIV3Schema.maximum must be a number, got string",
  );
});

Deno.test("protobuf round-trips the review kinds, whose unset pointer fields stay absent", () => {
  const request = roundTrip({
    kind: "TokenRequest",
    apiVersion: "authentication.platform.io/v1",
    metadata: { name: "default", namespace: "default" },
    spec: { audiences: ["api"] },
    status: {},
  });
  assertEquals(request.spec, { audiences: ["api"] });
  roundTrip({
    kind: "TokenRequest",
    apiVersion: "authentication.platform.io/v1",
    metadata: { name: "default", namespace: "default" },
    spec: {
      audiences: ["api"],
      expirationSeconds: 0,
      // BoundObjectReference's `uid` is `uID` in the proto
      boundObjectRef: { kind: "Pod", apiVersion: "v1", name: "p", uid: "u-1" },
      attestations: { "node.name": ["n1"] },
    },
    status: { token: "t", expirationTimestamp: "2030-01-01T00:00:00Z" },
  });
  roundTrip({
    kind: "SelfSubjectReview",
    apiVersion: "authentication.platform.io/v1",
    metadata: {},
    status: { userInfo: { username: "alice", groups: ["g"], extra: { scopes: ["a"] } } },
  });
  const review = roundTrip({
    kind: "SelfSubjectAccessReview",
    apiVersion: "authorization.platform.io/v1",
    metadata: {},
    spec: { nonResourceAttributes: { path: "/healthz", verb: "get" } },
    status: { allowed: true },
  });
  assertEquals((review.spec as JsonObject).resourceAttributes, undefined);
  roundTrip({
    kind: "LocalSubjectAccessReview",
    apiVersion: "authorization.platform.io/v1",
    metadata: { namespace: "default" },
    spec: {
      resourceAttributes: { namespace: "default", verb: "list", resource: "pods" },
      user: "bob",
    },
    status: { denied: true, reason: "no" },
  });
  roundTrip({
    kind: "SelfSubjectRulesReview",
    apiVersion: "authorization.platform.io/v1",
    metadata: {},
    spec: { namespace: "default" },
    status: {
      resourceRules: [{ verbs: ["get"], apiGroups: [""], resources: ["pods"] }],
      nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/api"] }],
    },
  });
});

Deno.test("protobuf DeleteOptions keeps pointer fields that are set to zero", () => {
  const opts = roundTrip({
    kind: "DeleteOptions",
    apiVersion: "v1",
    gracePeriodSeconds: 0,
    preconditions: { uid: "u", resourceVersion: "" },
    orphanDependents: false,
    propagationPolicy: "Background",
    dryRun: ["All"],
  });
  assertEquals(opts.gracePeriodSeconds, 0);
});

Deno.test("protobuf watch events are length-prefixed raw WatchEvent messages", () => {
  const cm = {
    kind: "ConfigMap",
    apiVersion: "v1",
    metadata: { name: "a", namespace: "default", resourceVersion: "3" },
    data: { k: "v" },
  };
  const status = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: "too old resource version: 1 (3)",
    reason: "Expired",
    code: 410,
  };
  const a = encodeWatchEvent("ADDED", cm);
  const b = encodeWatchEvent("ERROR", status);
  const length = new DataView(a.buffer).getUint32(0);
  assertEquals(length, a.length - 4);
  // no magic inside the frame itself: the WatchEvent starts with its `type` field
  assertEquals(a[4], 0x0a);

  const stream = new Uint8Array([...a, ...b, ...b.subarray(0, 7)]);
  const { frames, rest } = splitWatchFrames(stream);
  assertEquals(frames.length, 2);
  assertEquals(rest.length, 7);
  assertEquals(decodeWatchEvent(frames[0]), { type: "ADDED", object: cm });
  assertEquals(decodeWatchEvent(frames[1]), { type: "ERROR", object: status });
  // the embedded object is a complete protobuf body
  assertEquals(hex(frames[0]).includes(hex(encodeObject(cm))), true);
  assertThrows(() => splitWatchFrames(frame(new Uint8Array(10)), 5), ProtobufError);
});

Deno.test("protobuf WatchEvent objects round-trip through encodeObject", () => {
  const event = {
    type: "MODIFIED",
    object: { kind: "Namespace", apiVersion: "v1", metadata: { name: "n" }, spec: {}, status: {} },
  };
  const as = { apiVersion: "v1", kind: "WatchEvent" };
  assertEquals(decodeObject(encodeObject(event, { as }), { as }), event);
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

Deno.test("protobuf sorts map keys by UTF-8 bytes and keeps __proto__ as a plain key", () => {
  const cm = {
    kind: "ConfigMap",
    apiVersion: "v1",
    // a computed key: a literal `"__proto__": …` would set the prototype instead
    metadata: { labels: { "\u{1F600}": "a", "\uFFFF": "b", ["__proto__"]: "c" } },
  };
  const back = decodeObject(encodeObject(cm));
  const labels = (back.metadata as JsonObject).labels as JsonObject;
  // Go order: "__proto__" (0x5f) < U+FFFF (0xef…) < U+1F600 (0xf0…); UTF-16 order differs
  assertEquals(Object.keys(labels), ["__proto__", "\uFFFF", "\u{1F600}"]);
  assertEquals(Object.getPrototypeOf(labels), Object.prototype);
  assertEquals(labels["__proto__"], "c");
});

const PROTO_ROOT = fileURLToPath(new URL("../../../testdata/k8s-proto", import.meta.url));

Deno.test("protobuf descriptors.json is what tools/extract_proto.ts generates", async () => {
  const { extract } = await import("../../../tools/extract_proto.ts");
  const committed = readFileSync(new URL("./descriptors.json", import.meta.url), "utf8");
  assertEquals(JSON.stringify(extract(PROTO_ROOT), null, 2) + "\n", committed);
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
