/** The protobuf codec's round trips: every kind it serves, lists and watch events. */

import { assert, assertEquals } from "../../../tests/assert.ts";
import {
  decodeObject,
  decodeWatchEvent,
  encodeObject,
  encodeWatchEvent,
  frame,
  type JsonObject,
  ProtobufError,
  splitWatchFrames,
} from "./mod.ts";
import { assertThrows, hex } from "./protobuf_testdata.ts";

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
