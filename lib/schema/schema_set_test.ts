import assert from "node:assert/strict";
import { SchemaSet } from "./schema_set.ts";
import { parsePath, unknownFieldsMessage } from "./schema_node.ts";
import { base64ErrorOffset, isDateTime } from "./formats.ts";
import { type FieldError, fieldErrorMessage } from "../api/errors.ts";
import type { KubeObject } from "../registry/definition.ts";

const schemas = SchemaSet.builtin();
const CM = "io.k8s.api.core.v1.ConfigMap";
const SECRET = "io.k8s.api.core.v1.Secret";
const CSR = "io.k8s.api.certificates.v1.CertificateSigningRequest";
const NS = "io.k8s.api.core.v1.Namespace";
const LEASE = "io.k8s.api.coordination.v1.Lease";

function configMap(keys = 3) {
  const data: Record<string, string> = {};
  for (let i = 0; i < keys; i++) data[`key-${i}`] = `value ${i}`;
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: "cm",
      namespace: "default",
      labels: { app: "web" },
      annotations: { "a.platform.io/x": "y" },
      creationTimestamp: "2024-07-21T10:00:00Z",
      resourceVersion: "12",
      generation: 1,
      uid: "0b9e0b3a-1111-2222-3333-444455556666",
      managedFields: [{
        manager: "kubectl",
        operation: "Apply",
        apiVersion: "v1",
        time: "2024-07-21T10:00:00Z",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:data": { "f:key-0": {} } },
      }],
    },
    data,
  };
}

function csr() {
  return {
    apiVersion: "certificates.platform.io/v1",
    kind: "CertificateSigningRequest",
    metadata: { name: "c" },
    spec: {
      request: btoa("-----BEGIN CERTIFICATE REQUEST-----\n...\n"),
      signerName: "example.com/signer",
      usages: ["client auth", "digital signature"],
      expirationSeconds: 3600,
    },
  };
}

function fields(errors: FieldError[]): string[] {
  return errors.map(fieldErrorMessage);
}

Deno.test("builtin: has the served kinds with renamed GVKs", () => {
  for (const name of [CM, SECRET, NS, LEASE, CSR, "io.k8s.api.events.v1.Event"]) {
    assert.ok(schemas.has(name), name);
  }
  assert.deepEqual(schemas.get(CM)!["x-kubernetes-group-version-kind"], [
    { group: "", kind: "ConfigMap", version: "v1" },
  ]);
  assert.deepEqual(schemas.get(LEASE)!["x-kubernetes-group-version-kind"], [
    { group: "coordination.platform.io", kind: "Lease", version: "v1" },
  ]);
  // Later groups are ready too.
  assert.ok(schemas.has("io.k8s.api.rbac.v1.ClusterRole"));
  assert.ok(schemas.has("io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration"));
  assert.ok(
    schemas.has("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"),
  );
  assert.ok(schemas.has("io.k8s.api.authorization.v1.SubjectAccessReview"));
  assert.ok(schemas.has("io.k8s.api.authentication.v1.TokenReview"));
  // No k8s.io group survives in any GVK list.
  for (const name of schemas.names()) {
    for (const g of schemas.get(name)!["x-kubernetes-group-version-kind"] ?? []) {
      assert.ok(!g.group.endsWith("k8s.io"), `${name}: ${g.group}`);
    }
  }
});

Deno.test("resolve: follows allOf wrappers and keeps the wrapper's own keys", () => {
  const meta = schemas.schemaAt(CM, "metadata")!;
  assert.ok(meta.properties?.labels, "ObjectMeta properties");
  assert.deepEqual(meta.$ref, undefined);
  assert.deepEqual(meta.allOf, undefined);
  assert.ok(String(meta.description).startsWith("Standard object's metadata"));
  assert.deepEqual(schemas.resolve(CM), schemas.resolve(CM)); // cached
});

Deno.test("validate: a valid ConfigMap has no errors and no unknown fields", () => {
  assert.deepEqual(schemas.validate(configMap(), CM), { errors: [], unknownFields: [] });
  assert.deepEqual(schemas.validate(csr(), CSR), { errors: [], unknownFields: [] });
});

Deno.test("validate: type mismatches with kube field paths", () => {
  const cm = configMap() as KubeObject;
  cm.data.n = 5;
  cm.metadata.labels.count = true;
  cm.immutable = "yes";
  cm.metadata.finalizers = "x";
  const { errors } = schemas.validate(cm, CM);
  assert.deepEqual(fields(errors).sort(), [
    'data[n]: Invalid value: "integer": must be of type string',
    'immutable: Invalid value: "string": must be of type boolean',
    'metadata.finalizers: Invalid value: "string": must be of type array',
    'metadata.labels[count]: Invalid value: "boolean": must be of type string',
  ]);
  assert.ok(errors.every((e) => e.type === "TypeInvalid"));
  const list = csr() as KubeObject;
  list.spec.usages = ["client auth", 7];
  assert.deepEqual(fields(schemas.validate(list, CSR).errors), [
    'spec.usages[1]: Invalid value: "integer": must be of type string',
  ]);
  assert.deepEqual(fields(schemas.validate({ ...csr(), spec: [] }, CSR).errors), [
    'spec: Invalid value: "array": must be of type object',
  ]);
});

Deno.test("validate: required properties", () => {
  const c = csr() as KubeObject;
  delete c.spec.request;
  c.spec.signerName = null;
  assert.deepEqual(fields(schemas.validate(c, CSR).errors), [
    "spec.request: Required value",
    "spec.signerName: Required value",
  ]);
  const noSpec = { apiVersion: "certificates.platform.io/v1", kind: "CertificateSigningRequest" };
  assert.deepEqual(fields(schemas.validate(noSpec, CSR).errors), ["spec: Required value"]);
  // Required fields of list items: an ownerReference needs apiVersion, kind, name, uid.
  const cm = configMap() as KubeObject;
  cm.metadata.ownerReferences = [{ apiVersion: "v1", kind: "Pod", name: "p" }];
  assert.deepEqual(fields(schemas.validate(cm, CM).errors), [
    "metadata.ownerReferences[0].uid: Required value",
  ]);
});

Deno.test("validate: null counts as absent", () => {
  const cm = configMap() as KubeObject;
  cm.data = null;
  cm.metadata.labels = null;
  cm.metadata.annotations = { a: null };
  assert.deepEqual(schemas.validate(cm, CM), { errors: [], unknownFields: [] });
});

Deno.test("validate: formats", () => {
  // byte: Secret data must be standard padded base64; the value is not echoed.
  const secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "s" },
    data: { ok: btoa("hello"), wrapped: "aGVs\nbG8=", bad: "not base64!", short: "abc" },
  };
  const errs = schemas.validate(secret, SECRET).errors;
  assert.deepEqual(fields(errs), [
    "data[bad]: Invalid value: illegal base64 data at input byte 3",
    "data[short]: Invalid value: illegal base64 data at input byte 3",
  ]);
  assert.ok(errs.every((e) => e.value === undefined));
  // date-time
  const cm = configMap() as KubeObject;
  cm.metadata.creationTimestamp = "yesterday";
  cm.metadata.deletionTimestamp = "2024-07-21T10:00:00.123456+02:00";
  assert.deepEqual(fields(schemas.validate(cm, CM).errors), [
    'metadata.creationTimestamp: Invalid value: "yesterday": must be of type date-time',
  ]);
  // int32 / int64
  const c = csr() as KubeObject;
  c.spec.expirationSeconds = 1.5;
  assert.deepEqual(fields(schemas.validate(c, CSR).errors), [
    'spec.expirationSeconds: Invalid value: "number": must be of type integer',
  ]);
  c.spec.expirationSeconds = 2 ** 31;
  assert.deepEqual(fields(schemas.validate(c, CSR).errors), [
    'spec.expirationSeconds: Invalid value: "integer": must be of type int32',
  ]);
  c.spec.expirationSeconds = -(2 ** 31);
  assert.deepEqual(schemas.validate(c, CSR).errors, []);
  const cm2 = configMap() as KubeObject;
  cm2.metadata.generation = 2 ** 40;
  assert.deepEqual(schemas.validate(cm2, CM).errors, []);
  cm2.metadata.generation = 2 ** 64;
  assert.deepEqual(fields(schemas.validate(cm2, CM).errors), [
    'metadata.generation: Invalid value: "integer": must be of type int64',
  ]);
  // double (JSONSchemaProps.minimum)
  const props = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";
  assert.deepEqual(schemas.validate({ minimum: 1.5, maximum: 3 }, props).errors, []);
  assert.deepEqual(fields(schemas.validate({ minimum: "1" }, props).errors), [
    'minimum: Invalid value: "string": must be of type number',
  ]);
});

Deno.test("validate: enum and int-or-string in custom schemas", () => {
  const set = new SchemaSet({
    T: {
      type: "object",
      properties: {
        mode: { type: "string", enum: ["A", "B"] },
        port: { type: "string", format: "int-or-string" },
        ref: { allOf: [{ $ref: "#/components/schemas/R" }], default: {} },
      },
    },
    R: { type: "object", required: ["name"], properties: { name: { type: "string" } } },
  });
  assert.deepEqual(set.validate({ mode: "A", port: 80, ref: { name: "x" } }, "T").errors, []);
  assert.deepEqual(set.validate({ port: "http" }, "T").errors, []);
  assert.deepEqual(fields(set.validate({ mode: "C", port: 1.5, ref: {} }, "T").errors), [
    'mode: Unsupported value: "C": supported values: "A", "B"',
    'port: Invalid value: "number": must be of type integer or string',
    "ref.name: Required value",
  ]);
  assert.throws(() => set.validate({}, "Missing"), /unknown schema/);
});

Deno.test("validate: unknown fields are collected, not errors; fieldValidation=Ignore skips", () => {
  const c = csr() as KubeObject;
  c.spec.foo = 1;
  c.extra = { a: 1 };
  c.status = { conditions: [{ type: "Approved", status: "True", bogus: true }] };
  c.metadata.nope = "x";
  const r = schemas.validate(c, CSR, { fieldValidation: "Strict" });
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.unknownFields.sort(), [
    "extra",
    "metadata.nope",
    "spec.foo",
    "status.conditions[0].bogus",
  ]);
  assert.deepEqual(schemas.validate(c, CSR, { fieldValidation: "Ignore" }).unknownFields, []);
  assert.deepEqual(
    unknownFieldsMessage(["spec.foo", "extra"]),
    'unknown field "spec.foo", unknown field "extra"',
  );
  // Free-form nodes (managedFields[].fieldsV1, RawExtension) accept anything.
  const cm = configMap();
  assert.deepEqual(schemas.validate(cm, CM).unknownFields, []);
});

Deno.test("validate: apiVersion, kind and metadata are always known at the top level", () => {
  const set = new SchemaSet({ Bare: { type: "object", properties: { spec: { type: "object" } } } });
  const r = set.validate(
    { apiVersion: "x/v1", kind: "Bare", metadata: {}, spec: {}, z: 1 },
    "Bare",
  );
  assert.deepEqual(r.unknownFields, ["z"]);
  // Only at the top level.
  const nested = new SchemaSet({
    N: { type: "object", properties: { spec: { type: "object", properties: { a: {} } } } },
  });
  assert.deepEqual(nested.validate({ spec: { kind: "x" } }, "N").unknownFields, ["spec.kind"]);
});

Deno.test("prune: removes unknown fields in place", () => {
  const c = csr() as KubeObject;
  c.spec.foo = 1;
  c.status = { conditions: [{ type: "Approved", status: "True", bogus: true }] };
  const removed = schemas.prune(c, CSR);
  assert.deepEqual(removed.sort(), ["spec.foo", "status.conditions[0].bogus"]);
  assert.deepEqual(c.spec.foo, undefined);
  assert.deepEqual(c.status.conditions[0], { type: "Approved", status: "True" });
  assert.deepEqual(schemas.validate(c, CSR), { errors: [], unknownFields: [] });
  assert.deepEqual(c.spec.signerName, "example.com/signer");
});

Deno.test("validate: recursive schemas (JSONSchemaProps) compile and validate", () => {
  const props = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";
  const schema = {
    type: "object",
    properties: {
      spec: { type: "object", properties: { replicas: { type: "integer", minimum: 0 } } },
    },
    required: ["spec"],
  };
  assert.deepEqual(schemas.validate(schema, props), { errors: [], unknownFields: [] });
  const bad = { type: "object", properties: { spec: { type: 5, wat: 1 } } };
  const r = schemas.validate(bad, props);
  assert.deepEqual(fields(r.errors), [
    'properties[spec].type: Invalid value: "integer": must be of type string',
  ]);
  assert.deepEqual(r.unknownFields, ["properties[spec].wat"]);
});

Deno.test("schemaAt: reads x-kubernetes markers of fields", () => {
  const conditions = schemas.schemaAt(NS, "status.conditions")!;
  assert.deepEqual(conditions["x-kubernetes-list-type"], "map");
  assert.deepEqual(conditions["x-kubernetes-list-map-keys"], ["type"]);
  assert.deepEqual(conditions["x-kubernetes-patch-strategy"], "merge");
  assert.deepEqual(conditions["x-kubernetes-patch-merge-key"], "type");
  const owners = schemas.schemaAt(CM, "metadata.ownerReferences")!;
  assert.deepEqual(owners["x-kubernetes-patch-merge-key"], "uid");
  assert.deepEqual(owners["x-kubernetes-list-map-keys"], ["uid"]);
  const owner = schemas.schemaAt(CM, "metadata.ownerReferences[0]")!;
  assert.deepEqual(owner["x-kubernetes-map-type"], "atomic");
  assert.deepEqual(schemas.schemaAt(CM, ["metadata", "ownerReferences", "[]"]), owner);
  assert.deepEqual(schemas.schemaAt(CM, "metadata.finalizers")!["x-kubernetes-list-type"], "set");
  assert.deepEqual(schemas.schemaAt(CSR, "spec.usages")!["x-kubernetes-list-type"], "atomic");
  assert.deepEqual(schemas.schemaAt(CM, "metadata.labels[app]")!.type, "string");
  assert.deepEqual(schemas.schemaAt(CM, "data[0]")!.type, "string");
  assert.deepEqual(schemas.schemaAt(CM, "data.constructor")!.type, "string");
  assert.deepEqual(schemas.schemaAt(NS, "status.conditions.type")!.type, "string");
  assert.deepEqual(schemas.schemaAt(CM, "spec"), undefined);
  assert.deepEqual(schemas.schemaAt(CM, "immutable.x"), undefined);
});

Deno.test("closure: every schema referenced, transitively", () => {
  const names = schemas.closure([CM]);
  assert.ok(names.includes(CM));
  assert.ok(names.includes("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));
  assert.ok(names.includes("io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry"));
  assert.ok(names.includes("io.k8s.apimachinery.pkg.apis.meta.v1.Time"));
  assert.ok(!names.includes(SECRET));
});

Deno.test("helpers: base64ErrorOffset, isDateTime, parsePath", () => {
  assert.deepEqual(base64ErrorOffset(""), -1);
  assert.deepEqual(base64ErrorOffset("aGVsbG8="), -1);
  assert.deepEqual(base64ErrorOffset("aGVsbA=="), -1);
  assert.deepEqual(base64ErrorOffset("aGVs\r\nbA=="), -1);
  assert.deepEqual(base64ErrorOffset("aGVsbA="), 7);
  assert.deepEqual(base64ErrorOffset("aGVsbG8"), 7);
  assert.deepEqual(base64ErrorOffset("a==="), 1);
  assert.deepEqual(base64ErrorOffset("aGVsbA==x"), 8);
  assert.deepEqual(base64ErrorOffset("aG-s"), 2);
  assert.ok(isDateTime("2024-02-29T23:59:59Z"));
  assert.ok(isDateTime("2024-07-21T10:00:00.5-07:30"));
  assert.ok(!isDateTime("2023-02-29T00:00:00Z"));
  assert.ok(!isDateTime("2024-07-21t10:00:00Z"));
  assert.ok(!isDateTime("2024-07-21T24:00:00Z"));
  assert.ok(!isDateTime("2024-07-21T10:00:00"));
  assert.ok(!isDateTime(""));
  assert.deepEqual(parsePath("spec.usages[0]"), ["spec", "usages", 0]);
  assert.deepEqual(parsePath("data[a.b]"), ["data", "a.b"]);
  assert.deepEqual(parsePath("status.conditions[].type"), ["status", "conditions", "[]", "type"]);
});

Deno.test("validate: a ConfigMap with 20 keys validates in well under 0.1 ms", () => {
  const cm = configMap(20);
  for (let i = 0; i < 2000; i++) schemas.validate(cm, CM); // warm up
  const n = 20000;
  const start = performance.now();
  for (let i = 0; i < n; i++) schemas.validate(cm, CM, { fieldValidation: "Strict" });
  const perCall = (performance.now() - start) / n;
  console.log(`ConfigMap (20 keys, full metadata) validate: ${(perCall * 1000).toFixed(2)} µs`);
  assert.ok(perCall < 0.1, `${perCall} ms per validation`);
});

Deno.test("schema: value validations of custom resource schemas, in Kubernetes' words", () => {
  const set = new SchemaSet({
    T: {
      type: "object",
      properties: {
        n: { type: "integer", minimum: 1, maximum: 10, multipleOf: 2 },
        x: {
          type: "number",
          exclusiveMinimum: true,
          minimum: 0,
          exclusiveMaximum: true,
          maximum: 1,
        },
        s: { type: "string", minLength: 2, maxLength: 4, pattern: "^[a-z]+$" },
        l: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 2 },
        m: { type: "object", additionalProperties: { type: "string" }, maxProperties: 1 },
        e: { type: "object", additionalProperties: { type: "string" }, minProperties: 1 },
        one: {
          type: "object",
          properties: { a: { type: "string" }, b: { type: "string" } },
          oneOf: [{ required: ["a"] }, { required: ["b"] }],
        },
        any: { type: "string", anyOf: [{ pattern: "^a" }, { pattern: "^b" }] },
        not: { type: "string", not: { pattern: "^z" } },
      },
    },
  });
  const ok = { n: 4, x: 0.5, s: "abc", l: ["a"], m: { a: "" }, e: { a: "" }, one: { a: "x" } };
  assert.deepEqual(set.validate({ ...ok, any: "apple", not: "a" }, "T").errors, []);
  const messages = (obj: Record<string, unknown>) =>
    set.validate({ ...ok, ...obj }, "T").errors.map(fieldErrorMessage);
  assert.deepEqual(messages({ n: 12 }), [
    "n: Invalid value: 12: n in body should be less than or equal to 10",
  ]);
  assert.deepEqual(messages({ n: 3 }), [
    "n: Invalid value: 3: n in body should be a multiple of 2",
  ]);
  assert.deepEqual(messages({ n: 0 }), [
    "n: Invalid value: 0: n in body should be greater than or equal to 1",
  ]);
  assert.deepEqual(messages({ x: 1 }), ["x: Invalid value: 1: x in body should be less than 1"]);
  assert.deepEqual(messages({ x: 0 }), ["x: Invalid value: 0: x in body should be greater than 0"]);
  assert.deepEqual(messages({ s: "abcdef" }), ["s: Too long: may not be more than 4 bytes"]);
  assert.deepEqual(messages({ s: "a" }), [
    's: Invalid value: "a": s in body should be at least 2 chars long',
  ]);
  assert.deepEqual(messages({ s: "AB" }), [
    `s: Invalid value: "AB": s in body should match '^[a-z]+$'`,
  ]);
  assert.deepEqual(messages({ l: [] }), [
    "l: Invalid value: []: l in body should have at least 1 items",
  ]);
  assert.deepEqual(messages({ l: ["a", "b", "c"] }), ["l: Too many: must have at most 2 items"]);
  assert.deepEqual(messages({ m: { a: "", b: "" } }), ["m: Too many: must have at most 1 items"]);
  assert.deepEqual(messages({ e: {} }), [
    "e: Invalid value: {}: e in body should have at least 1 properties",
  ]);
  assert.deepEqual(messages({ one: { a: "x", b: "y" } }), [
    'one: Invalid value: {"a":"x","b":"y"}: one in body must validate one and only one schema (oneOf)',
  ]);
  assert.deepEqual(messages({ any: "cherry" }), [
    'any: Invalid value: "cherry": any in body must validate at least one schema (anyOf)',
  ]);
  assert.deepEqual(messages({ not: "zed" }), [
    'not: Invalid value: "zed": not in body must not validate the schema (not)',
  ]);
  // Value validations apply only to values of their type (a type error is reported instead).
  assert.deepEqual(messages({ n: "many" }).length, 1);
});
