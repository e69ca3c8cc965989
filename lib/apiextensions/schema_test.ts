import assert from "node:assert/strict";
import { customResourceSchema, customResourceSchemaName, schemasWith } from "./schema.ts";
import { typeOf, UNTYPED } from "../schema/typed.ts";
import type { SchemaNode } from "../schema/schema_set.ts";

const NAME = "com.example.test.v1.Thing";

const openAPIV3Schema: SchemaNode = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        replicas: { type: "integer", minimum: 0 },
        port: {
          "x-kubernetes-int-or-string": true,
          anyOf: [{ type: "integer" }, { type: "string" }],
        },
        free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        partly: {
          type: "object",
          "x-kubernetes-preserve-unknown-fields": true,
          properties: { known: { type: "string" } },
        },
        template: {
          type: "object",
          "x-kubernetes-embedded-resource": true,
          properties: { spec: { type: "object", properties: { a: { type: "string" } } } },
        },
        items: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
          items: { type: "object", properties: { name: { type: "string" } } },
        },
      },
    },
  },
};

const schemas = schemasWith({ [NAME]: customResourceSchema(openAPIV3Schema) });

function thing(spec: unknown, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: "test.example.com/v1",
    kind: "Thing",
    metadata: { name: "t" },
    spec,
    ...extra,
  };
}

Deno.test("crd schema: names follow Kubernetes' reversed-group form", () => {
  assert.equal(
    customResourceSchemaName("ssa.example.com", "v1", "Widget"),
    "com.example.ssa.v1.Widget",
  );
  // A name a built-in schema has is never shadowed.
  assert.equal(
    customResourceSchemaName("core.api.k8s.io", "v1", "ConfigMap"),
    "crd.io.k8s.api.core.v1.ConfigMap",
  );
});

Deno.test("crd schema: apiVersion, kind and ObjectMeta are added at the root and in embedded resources", () => {
  const node = customResourceSchema(openAPIV3Schema);
  assert.deepEqual(Object.keys(node.properties!).sort(), [
    "apiVersion",
    "kind",
    "metadata",
    "spec",
  ]);
  const template = node.properties!.spec.properties!.template;
  assert.deepEqual(Object.keys(template.properties!).sort(), [
    "apiVersion",
    "kind",
    "metadata",
    "spec",
  ]);
  // The input is not changed.
  assert.equal(openAPIV3Schema.properties!.apiVersion, undefined);
});

Deno.test("crd schema: validation and pruning honour the x-kubernetes markers", () => {
  const obj = thing({
    replicas: 1,
    port: "http",
    free: { anything: [1, { deep: true }] },
    partly: { known: "k", unknown: 1 },
    template: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", nope: 1 },
      spec: { a: "x", b: 2 },
    },
    gone: true,
  }, { top: 1 });
  const res = schemas.validate(obj, NAME);
  assert.deepEqual(res.errors, []);
  assert.deepEqual(res.unknownFields.sort(), [
    "spec.gone",
    "spec.template.metadata.nope",
    "spec.template.spec.b",
    "top",
  ]);
  schemas.prune(obj, NAME);
  assert.deepEqual(obj.spec, {
    replicas: 1,
    port: "http",
    free: { anything: [1, { deep: true }] },
    partly: { known: "k", unknown: 1 },
    template: { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { a: "x" } },
  });
  assert.equal((obj as Record<string, unknown>).top, undefined);

  const bad = schemas.validate(thing({ replicas: -1, port: 1.5, partly: { known: 3 } }), NAME);
  assert.deepEqual(bad.errors.map((e) => [e.type, e.field]).sort(), [
    ["Invalid", "spec.replicas"],
    ["TypeInvalid", "spec.partly.known"],
    ["TypeInvalid", "spec.port"],
  ]);
});

Deno.test("crd schema: the typed view used by patch and apply", () => {
  const t = typeOf(schemas, NAME);
  assert.equal(t.shape, "struct");
  assert.equal(t.field("metadata")!.field("labels")!.shape, "map");
  const spec = t.field("spec")!;
  assert.equal(spec.field("port")!.shape, "scalar");
  assert.equal(spec.field("free"), UNTYPED);
  assert.equal(spec.field("partly")!.field("unknown"), UNTYPED);
  assert.equal(spec.field("partly")!.field("known")!.shape, "scalar");
  assert.deepEqual([spec.field("items")!.listType, spec.field("items")!.listMapKeys], ["map", [
    "name",
  ]]);
  assert.equal(spec.field("nope"), undefined);
});
