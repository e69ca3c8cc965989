import assert from "node:assert/strict";
import { SchemaSet } from "./schema_set.ts";
import { typeOf, UNTYPED } from "./typed.ts";

const builtin = SchemaSet.builtin();

Deno.test("typed: ObjectMeta markers (set finalizers, ownerReferences keyed by uid, maps)", () => {
  const cm = typeOf(builtin, "io.k8s.api.core.v1.ConfigMap");
  assert.deepStrictEqual(cm.shape, "struct");
  const meta = cm.field("metadata")!;
  assert.deepStrictEqual(meta.shape, "struct");
  const finalizers = meta.field("finalizers")!;
  assert.deepStrictEqual([finalizers.shape, finalizers.listType], ["list", "set"]);
  assert.deepStrictEqual(finalizers.patchStrategy, ["merge"]);
  const owners = meta.field("ownerReferences")!;
  assert.deepStrictEqual([owners.listType, owners.listMapKeys, owners.patchMergeKey], [
    "map",
    ["uid"],
    "uid",
  ]);
  assert.deepStrictEqual(owners.items!.field("uid")!.shape, "scalar");
  const labels = meta.field("labels")!;
  assert.deepStrictEqual([labels.shape, labels.mapType], ["map", "granular"]);
  assert.deepStrictEqual(labels.field("anything")!.shape, "scalar");
  assert.deepStrictEqual(cm.field("data")!.shape, "map");
  assert.deepStrictEqual(meta.field("creationTimestamp")!.shape, "scalar");
  assert.deepStrictEqual(meta.field("nope"), undefined);
});

Deno.test("typed: free-form and preserve-unknown nodes are untyped; lists fall back to patch markers", () => {
  const set = new SchemaSet({
    "x.Free": {
      type: "object",
      properties: {
        free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        keyed: {
          type: "array",
          "x-kubernetes-patch-strategy": "merge,retainKeys",
          "x-kubernetes-patch-merge-key": "name",
          items: { type: "object", properties: { name: { type: "string" } } },
        },
        plain: { type: "array", items: { type: "string" } },
        atomic: {
          type: "object",
          "x-kubernetes-map-type": "atomic",
          properties: { a: { type: "string" } },
        },
      },
    },
  });
  const t = typeOf(set, "x.Free");
  assert(t.field("free") === UNTYPED);
  assert.deepStrictEqual(t.field("free")!.field("x")!.shape, "untyped");
  const keyed = t.field("keyed")!;
  assert.deepStrictEqual([keyed.listType, keyed.listMapKeys, keyed.patchStrategy], [
    "map",
    ["name"],
    [
      "merge",
      "retainKeys",
    ],
  ]);
  assert.deepStrictEqual(t.field("plain")!.listType, "atomic");
  assert.deepStrictEqual(t.field("atomic")!.mapType, "atomic");
});
