/**
 * Strategic merge patch: the 51 kubectl-checked vectors (testdata/smp-vectors.json, on an
 * apps/v1 Deployment test schema and the built-in ConfigMap and Namespace), then one test per
 * behaviour of the SMP catalogue (B-numbers) the vectors do not cover, error statuses, input
 * immutability, `__proto__` keys and the depth cap.
 */

import assert from "node:assert/strict";
import { StatusError } from "../api/errors.ts";
import { type SchemaNode, SchemaSet } from "../schema/schema_set.ts";
import { type FieldType, typeOf } from "../schema/typed.ts";
import { applyStrategicMergePatch, MAX_PATCH_DEPTH } from "./strategic.ts";
import { at, corpus } from "./testing/smp_vectors.ts";

type Json = Record<string, unknown>;

const TESTDATA = new URL("../../testdata/", import.meta.url);

function readJson(name: string): unknown {
  return JSON.parse(Deno.readTextFileSync(new URL(name, TESTDATA)));
}

const schemas = SchemaSet.builtin().extend(
  readJson("smp-schema.json") as Record<string, SchemaNode>,
);

const TYPES: Record<string, FieldType> = {
  deploy: typeOf(schemas, "io.k8s.api.apps.v1.Deployment"),
  cm: typeOf(schemas, "io.k8s.api.core.v1.ConfigMap"),
  ns: typeOf(schemas, "io.k8s.api.core.v1.Namespace"),
};

// ---- helpers ----

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** Applies with frozen inputs, so any mutation of doc or patch throws. */
function apply(doc: Json, patch: unknown, type: FieldType): Json {
  return applyStrategicMergePatch(
    deepFreeze(structuredClone(doc)),
    deepFreeze(structuredClone(patch)),
    type,
  );
}

function assertStatus(fn: () => unknown, code: number, text: string): StatusError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof StatusError, `expected a StatusError, got ${caught}`);
  assert.equal(caught.code, code, caught.message);
  assert.equal(caught.reason, code === 400 ? "BadRequest" : "Invalid");
  assert.ok(caught.message.includes(text), `${JSON.stringify(caught.message)} lacks ${text}`);
  return caught;
}

// ---- (1) the kubectl-checked vectors ----

Deno.test("vectors: the corpus holds 51 vectors", () => {
  assert.equal(corpus.vectors.length, 51);
});

for (const v of corpus.vectors) {
  Deno.test(`vector ${v.id}`, () => {
    const run = () => apply(corpus.bases[v.base], v.patch, TYPES[v.base]);
    if (v.expectError !== undefined) {
      let caught: unknown;
      try {
        run();
      } catch (err) {
        caught = err;
      }
      assert.ok(caught instanceof StatusError, `expected a StatusError, got ${caught}`);
      assert.ok(caught.code >= 400 && caught.code < 500, `code ${caught.code}`);
      assert.ok(caught.message.includes(v.expectError), caught.message);
      return;
    }
    const out = run();
    for (const [path, want] of Object.entries(v.expect ?? {})) {
      assert.deepStrictEqual(at(out, path), want === null ? undefined : want, path);
    }
  });
}

Deno.test("vectors: error statuses follow kube's mapping, 4xx for kube's 500s", () => {
  const byId = new Map(corpus.vectors.map((v) => [v.id, v]));
  const code = (id: string) => {
    const v = byId.get(id)!;
    try {
      apply(corpus.bases[v.base], v.patch, TYPES[v.base]);
    } catch (err) {
      return (err as StatusError).code;
    }
    return 0;
  };
  assert.equal(code("retainkeys-map-content-mismatch"), 400);
  assert.equal(code("retainkeys-map-not-a-list"), 400);
  assert.equal(code("merge-list-set-order-mismatch"), 400);
  assert.equal(code("missing-merge-key"), 400);
  assert.equal(code("invalid-patch-directive"), 400);
  assert.equal(code("set-order-prim-bad-format"), 400);
});

// ---- (2) behaviours the vectors do not cover, on an abstract schema ----

const ITEM = "test.smp.MergeItem";
const REF = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Modelled on the upstream test schema: one field per patch strategy. */
const abstractSchemas = SchemaSet.builtin().extend({
  [ITEM]: {
    type: "object",
    properties: {
      name: { type: "string" },
      value: { type: "string" },
      other: { type: "string" },
      mergingList: {
        type: "array",
        items: REF(ITEM),
        "x-kubernetes-patch-strategy": "merge",
        "x-kubernetes-patch-merge-key": "name",
      },
      nonMergingList: { type: "array", items: REF(ITEM) },
      mergingIntList: {
        type: "array",
        items: { type: "integer" },
        "x-kubernetes-patch-strategy": "merge",
      },
      nonMergingIntList: { type: "array", items: { type: "integer" } },
      // A list type but no patch markers: SMP replaces it.
      setList: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" },
      mapList: {
        type: "array",
        items: REF(ITEM),
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      },
      simpleMap: { type: "object", additionalProperties: { type: "string" } },
      replacingMap: {
        type: "object",
        additionalProperties: { type: "string" },
        "x-kubernetes-patch-strategy": "replace",
      },
      retainKeysMap: {
        ...REF("test.smp.RetainKeysMap"),
        "x-kubernetes-patch-strategy": "retainKeys",
      },
      retainKeysMergingList: {
        type: "array",
        items: REF(ITEM),
        "x-kubernetes-patch-strategy": "merge,retainKeys",
        "x-kubernetes-patch-merge-key": "name",
      },
      listOfLists: {
        type: "array",
        items: { type: "array", items: { type: "string" } },
        "x-kubernetes-patch-strategy": "merge",
      },
      free: { "x-kubernetes-preserve-unknown-fields": true },
    },
  },
  "test.smp.RetainKeysMap": {
    type: "object",
    properties: {
      name: { type: "string" },
      value: { type: "string" },
      other: { type: "string" },
      simpleMap: { type: "object", additionalProperties: { type: "string" } },
    },
  },
} as Record<string, SchemaNode>);
const T = typeOf(abstractSchemas, ITEM);

function smp(doc: Json, patch: unknown): Json {
  return apply(doc, patch, T);
}

const items = (...names: string[]) => names.map((name) => ({ name }));

Deno.test("B1 add field to map; unknown fields merge as maps and replace as lists", () => {
  assert.deepStrictEqual(smp({ name: "1" }, { value: "1" }), { name: "1", value: "1" });
  assert.deepStrictEqual(
    smp({ unknown: { a: 1, l: [1, 2] } }, { unknown: { b: 2, l: [3] } }),
    { unknown: { a: 1, b: 2, l: [3] } },
  );
  assert.deepStrictEqual(
    smp({ free: { m: { a: 1 }, l: [{ k: 1 }] } }, { free: { m: { b: 2 }, l: [{ k: 2 }] } }),
    { free: { m: { a: 1, b: 2 }, l: [{ k: 2 }] } },
  );
});

Deno.test("B2 null deletes: nested map field, every field of a map, absent key", () => {
  assert.deepStrictEqual(
    smp({ simpleMap: { a: "1", b: "2" } }, { simpleMap: { a: null } }),
    { simpleMap: { b: "2" } },
  );
  assert.deepStrictEqual(smp({ name: "1", value: "1" }, { name: null, value: null }), {});
  assert.deepStrictEqual(smp({ name: "1" }, { other: null }), { name: "1" });
  assert.deepStrictEqual(smp({ name: "1", mergingList: items("a") }, { mergingList: null }), {
    name: "1",
  });
});

Deno.test("B3 nulls: dropped in new maps and nested slices, kept in originals and scalar lists", () => {
  assert.deepStrictEqual(
    smp({}, { simpleMap: { a: "1", b: null }, unknown: { x: { y: null, z: 1 } } }),
    { simpleMap: { a: "1" }, unknown: { x: { z: 1 } } },
  );
  assert.deepStrictEqual(
    smp({}, { nonMergingList: [{ name: "a", value: null }], unknown: [{ a: null, b: "x" }] }),
    { nonMergingList: [{ name: "a" }], unknown: [{ b: "x" }] },
  );
  assert.deepStrictEqual(
    smp({ simpleMap: { a: null }, other: null }, { value: "x" }),
    { simpleMap: { a: null }, other: null, value: "x" },
  );
  assert.deepStrictEqual(smp({}, { unknown: ["key1", null, "key2"] }), {
    unknown: ["key1", null, "key2"],
  });
  // Cross-check "defined null values should propagate overwrite current fields".
  assert.deepStrictEqual(smp({ name: "2" }, { name: "1", value: "1", other: null }), {
    name: "1",
    value: "1",
  });
});

Deno.test("B4 nil patch: {} and a JSON null body change nothing", () => {
  const doc = { name: "1", mergingList: items("a", "b"), mergingIntList: [1, 2] };
  assert.deepStrictEqual(smp(doc, {}), doc);
  assert.deepStrictEqual(smp(doc, null), doc);
});

Deno.test("B5 $patch: replace at top level and in nested maps", () => {
  assert.deepStrictEqual(smp({ name: "1", value: "2" }, { $patch: "replace" }), {});
  assert.deepStrictEqual(smp({ name: "1", value: "2" }, { $patch: "replace", other: "x" }), {
    other: "x",
  });
  // The replacing content is itself a patch of nothing: its directives apply, nulls vanish.
  assert.deepStrictEqual(
    smp({ simpleMap: { a: "1" } }, { simpleMap: { $patch: "replace", b: "2", c: null } }),
    { simpleMap: { b: "2" } },
  );
});

Deno.test("B6 $patch: delete empties a map, at top level too", () => {
  assert.deepStrictEqual(smp({ simpleMap: { a: "1" } }, { simpleMap: { $patch: "delete" } }), {
    simpleMap: {},
  });
  assert.deepStrictEqual(smp({ name: "1" }, { $patch: "delete" }), {});
});

Deno.test("B7 $patch values other than replace and delete fail as in kube (merge included)", () => {
  assertStatus(
    () => smp({ simpleMap: {} }, { simpleMap: { $patch: "merge", a: "1" } }),
    400,
    "unknown patch type: merge in map: map[$patch:merge a:1]",
  );
  assertStatus(
    () => smp({ mergingList: items("a") }, { mergingList: [{ $patch: "merge" }] }),
    400,
    "merging lists cannot yet be specified in the patch",
  );
  assertStatus(
    () => smp({ mergingList: items("a") }, { mergingList: [{ name: "a", $patch: "bogus" }] }),
    400,
    "unknown patch type: bogus in map: map[$patch:bogus name:a]",
  );
  assertStatus(
    () => smp({}, { simpleMap: { $patch: 1 } }),
    400,
    "unknown patch type: %!s(int64=1)",
  );
});

Deno.test("B8 lists without a patch strategy are replaced, whatever their list type", () => {
  assert.deepStrictEqual(smp({ nonMergingIntList: [1, 2] }, { nonMergingIntList: [3] }), {
    nonMergingIntList: [3],
  });
  assert.deepStrictEqual(smp({ setList: ["a", "b"] }, { setList: ["c"] }), { setList: ["c"] });
  assert.deepStrictEqual(
    smp({ mapList: [{ name: "a", value: "1" }] }, { mapList: [{ name: "b" }] }),
    { mapList: [{ name: "b" }] },
  );
  // Items of a replaced list are data: kept as given.
  assert.deepStrictEqual(
    smp({ nonMergingList: items("a") }, { nonMergingList: [{ name: "b", $patch: "delete" }] }),
    { nonMergingList: [{ name: "b", $patch: "delete" }] },
  );
});

Deno.test("B10 unique scalars when merging lists; patch order wins", () => {
  assert.deepStrictEqual(smp({ mergingIntList: [1, 2] }, { mergingIntList: [2, 3] }), {
    mergingIntList: [1, 2, 3],
  });
  assert.deepStrictEqual(smp({ mergingIntList: [1, 2, 3] }, { mergingIntList: [3, 1] }), {
    mergingIntList: [2, 3, 1],
  });
  assert.deepStrictEqual(smp({}, { mergingIntList: [2, 1] }), { mergingIntList: [2, 1] });
});

Deno.test("B11 $deleteFromPrimitiveList removes every copy; malformed directives are 400", () => {
  assert.deepStrictEqual(
    smp({ mergingIntList: [1, 2, 3, 3] }, { "$deleteFromPrimitiveList/mergingIntList": [3] }),
    { mergingIntList: [1, 2] },
  );
  assert.deepStrictEqual(
    smp({ nonMergingIntList: [1, 2, 1] }, { "$deleteFromPrimitiveList/nonMergingIntList": [1] }),
    { nonMergingIntList: [2] },
  );
  // Added and deleted in one patch: deletions apply after the merge.
  assert.deepStrictEqual(
    smp({ mergingIntList: [1, 2] }, {
      mergingIntList: [3],
      "$deleteFromPrimitiveList/mergingIntList": [1],
    }),
    { mergingIntList: [3, 2] },
  );
  assertStatus(
    () => smp({}, { $deleteFromPrimitiveList: [1] }),
    400,
    "invalid patch format of primitive list",
  );
  assertStatus(
    () => smp({ mergingIntList: [1] }, { "$deleteFromPrimitiveList/mergingIntList": 1 }),
    400,
    "invalid patch format of primitive list",
  );
  assertStatus(
    () => smp({ mergingIntList: [1] }, { "$deleteFromPrimitiveList/mergingIntList": ["a"] }),
    400,
    "list element types are not identical",
  );
});

Deno.test("B12 $setElementOrder of scalars: unknown entries ignored, server-only items kept", () => {
  assert.deepStrictEqual(
    smp({ mergingIntList: [1, 3] }, { "$setElementOrder/mergingIntList": [3, 2, 1] }),
    { mergingIntList: [3, 1] },
  );
  assert.deepStrictEqual(
    smp({ mergingIntList: [1, 2, 3] }, { "$setElementOrder/mergingIntList": [3, 1] }),
    { mergingIntList: [2, 3, 1] },
  );
  assert.deepStrictEqual(
    smp({}, { "$setElementOrder/mergingIntList": [2, 1], mergingIntList: [2, 1] }),
    { mergingIntList: [2, 1] },
  );
  // No list on either side: nothing to order, nothing created.
  assert.deepStrictEqual(smp({}, { "$setElementOrder/mergingIntList": [1] }), {});
  assertStatus(
    () => smp({}, { $setElementOrder: [1] }),
    400,
    "invalid patch format of setElementOrder list",
  );
  assertStatus(
    () =>
      smp({ mergingIntList: [1] }, {
        "$setElementOrder/mergingIntList": [1],
        mergingIntList: null,
      }),
    400,
    "expected a []interface {}, but received a %!s(<nil>)",
  );
});

Deno.test("B15 $setElementOrder of maps: merge lists of maps, two lists in one patch", () => {
  // Cross-check "merge lists of maps".
  assert.deepStrictEqual(
    smp({
      mergingList: [{ name: "1", other: "a" }, { name: "2", value: "2", other: "b" }],
    }, {
      "$setElementOrder/mergingList": items("4", "1", "2", "3"),
      mergingList: [{ name: "4", value: "4" }, { name: "3", value: "3" }],
    }),
    {
      mergingList: [
        { name: "4", value: "4" },
        { name: "1", other: "a" },
        { name: "2", value: "2", other: "b" },
        { name: "3", value: "3" },
      ],
    },
  );
  assert.deepStrictEqual(
    smp({ mergingList: items("a", "b", "c"), mergingIntList: [1, 2, 3] }, {
      "$setElementOrder/mergingList": items("c", "a"),
      mergingList: [{ name: "b", $patch: "delete" }],
      "$setElementOrder/mergingIntList": [3, 2, 1],
    }),
    { mergingList: items("c", "a"), mergingIntList: [3, 2, 1] },
  );
  assertStatus(
    () => smp({ mergingList: items("a") }, { "$setElementOrder/mergingList": ["a"] }),
    400,
    "value for key 0 is not a map.",
  );
});

Deno.test("B16 the patch list must follow $setElementOrder (delete items excepted)", () => {
  assertStatus(
    () =>
      smp({ mergingIntList: [1, 2] }, {
        "$setElementOrder/mergingIntList": [1, 2],
        mergingIntList: [2, 1],
      }),
    400,
    "The order in patch list:\n[2 1]\n doesn't match $setElementOrder list:\n[1 2]\n",
  );
  assert.deepStrictEqual(
    smp({ mergingList: items("a", "b") }, {
      "$setElementOrder/mergingList": items("b", "c"),
      mergingList: [{ name: "a", $patch: "delete" }, { name: "b" }, { name: "c" }],
    }),
    { mergingList: items("b", "c") },
  );
});

Deno.test("B17 server-only items are slotted in by their live position", () => {
  const order = (live: string[], wanted: string[]) =>
    (smp({ mergingList: items(...live) }, { "$setElementOrder/mergingList": items(...wanted) })
      .mergingList as Json[]).map((x) => x.name);
  assert.deepStrictEqual(order(["1", "2", "9", "3", "4"], ["2", "1", "4", "3"]), [
    "2",
    "1",
    "9",
    "4",
    "3",
  ]);
  assert.deepStrictEqual(order(["1", "2", "7", "9", "8", "3", "4"], ["2", "1", "4", "3"]), [
    "2",
    "1",
    "7",
    "9",
    "8",
    "4",
    "3",
  ]);
  assert.deepStrictEqual(order(["1", "2", "3", "4", "9"], ["4", "2", "3", "1"]), [
    "4",
    "2",
    "3",
    "1",
    "9",
  ]);
});

Deno.test("B18 $patch: delete removes every item with the key; it needs the merge key", () => {
  assert.deepStrictEqual(
    smp({ mergingList: [{ name: "1", value: "a" }, { name: "2" }, { name: "1", value: "b" }] }, {
      mergingList: [{ name: "1", $patch: "delete" }],
    }),
    { mergingList: [{ name: "2" }] },
  );
  assertStatus(
    () => smp({ mergingList: items("1") }, { mergingList: [{ $patch: "delete", value: "x" }] }),
    400,
    "map: map[$patch:delete value:x] does not contain declared merge key: name",
  );
  // Cross-check "delete map from merging list".
  assert.deepStrictEqual(
    smp({ mergingList: [{ name: "1" }, { name: "2", other: "b" }] }, {
      "$setElementOrder/mergingList": items("2"),
      mergingList: [{ name: "1", $patch: "delete" }],
    }),
    { mergingList: [{ name: "2", other: "b" }] },
  );
});

Deno.test("B19 {$patch: replace} replaces a merge list; the new items are patches of nothing", () => {
  assert.deepStrictEqual(
    smp({ mergingList: items("a", "b") }, {
      mergingList: [{ name: "c", value: null, other: "x" }, { $patch: "replace" }],
    }),
    { mergingList: [{ name: "c", other: "x" }] },
  );
  assert.deepStrictEqual(
    smp({ mergingIntList: [1] }, { mergingList: [{ $patch: "replace" }] }),
    { mergingIntList: [1], mergingList: [] },
  );
});

Deno.test("B22 nested merge lists merge inside the matched item", () => {
  assert.deepStrictEqual(
    smp({ mergingList: [{ name: "a", mergingList: items("x", "y") }, { name: "b" }] }, {
      mergingList: [{ name: "a", mergingList: [{ name: "y", value: "1" }, { name: "z" }] }],
    }),
    {
      mergingList: [
        { name: "a", mergingList: [{ name: "x" }, { name: "y", value: "1" }, { name: "z" }] },
        { name: "b" },
      ],
    },
  );
});

Deno.test("B24 every patch item merged into a merge list needs the merge key", () => {
  assertStatus(
    () => smp({ mergingList: items("a") }, { mergingList: [{ value: "1" }] }),
    400,
    "map: map[value:1] does not contain declared merge key: name",
  );
  assertStatus(
    () => smp({ mergingList: [] }, { mergingList: [{ value: "1" }] }),
    400,
    "does not contain declared merge key: name",
  );
  // A list the object lacks is stored as given (as kube): validation judges its items.
  assert.deepStrictEqual(smp({}, { mergingList: [{ value: "1" }, { value: "1" }] }), {
    mergingList: [{ value: "1" }, { value: "1" }],
  });
  assert.deepStrictEqual(smp({}, { mergingIntList: [1, 1] }), { mergingIntList: [1, 1] });
});

Deno.test("B25 a retainKeys map without the directive merges normally", () => {
  assert.deepStrictEqual(
    smp({ retainKeysMap: { name: "foo", value: "bar" } }, {
      retainKeysMap: { other: "x", value: null, name: "baz" },
    }),
    { retainKeysMap: { name: "baz", other: "x" } },
  );
});

Deno.test("B26 $retainKeys clears unlisted keys: defaulted field, discriminated union", () => {
  assert.deepStrictEqual(
    smp({ retainKeysMap: { name: "foo", value: "defaulted" } }, {
      retainKeysMap: { $retainKeys: ["name"], name: "foo" },
    }),
    { retainKeysMap: { name: "foo" } },
  );
  assert.deepStrictEqual(
    smp({ retainKeysMap: { name: "type1", value: "foo" } }, {
      retainKeysMap: { $retainKeys: ["name", "other"], name: "type2", other: "bar" },
    }),
    { retainKeysMap: { name: "type2", other: "bar" } },
  );
  // Kubernetes honours the directive wherever it appears, not only on retainKeys fields.
  assert.deepStrictEqual(
    smp({ simpleMap: { a: "1", b: "2" } }, { simpleMap: { $retainKeys: ["a"] } }),
    { simpleMap: { a: "1" } },
  );
});

Deno.test("B27 $retainKeys: nulls and list directives need not be listed; others must", () => {
  assert.deepStrictEqual(
    smp({ retainKeysMap: { name: "a", value: "b", simpleMap: { x: "1" } } }, {
      retainKeysMap: {
        $retainKeys: ["name", "simpleMap"],
        value: null,
        "$deleteFromPrimitiveList/simpleMap": [],
        simpleMap: { y: "2" },
      },
    }),
    { retainKeysMap: { name: "a", simpleMap: { x: "1", y: "2" } } },
  );
  assertStatus(
    () => smp({}, { retainKeysMap: { $retainKeys: ["name"], value: "x" } }),
    400,
    "invalid patch format of retainKeys",
  );
});

Deno.test("B28 $retainKeys inside a merge-list item works on that item only", () => {
  assert.deepStrictEqual(
    smp({ retainKeysMergingList: [{ name: "a", value: "1" }, { name: "b", value: "2" }] }, {
      retainKeysMergingList: [{ name: "a", $retainKeys: ["name", "other"], other: "x" }],
    }),
    { retainKeysMergingList: [{ name: "a", other: "x" }, { name: "b", value: "2" }] },
  );
});

Deno.test("cross-check: nested patch merge with empty list (unmatched order entry ignored)", () => {
  assert.deepStrictEqual(
    smp({ name: "hi", mergingList: items("hello2") }, {
      "$setElementOrder/mergingList": items("hello", "doesntexist"),
      mergingList: items("hello"),
    }),
    { name: "hi", mergingList: items("hello", "hello2") },
  );
});

Deno.test("cross-check: $setElementOrder with duplicate keys groups them first", () => {
  const live = [
    { name: "1" },
    { name: "2", value: "dup1" },
    { name: "3" },
    { name: "2", value: "dup2" },
    { name: "4" },
  ];
  assert.deepStrictEqual(
    smp({ mergingList: live }, { "$setElementOrder/mergingList": items("2", "1", "4", "3", "2") }),
    {
      mergingList: [
        { name: "2", value: "dup1" },
        { name: "2", value: "dup2" },
        { name: "1" },
        { name: "4" },
        { name: "3" },
      ],
    },
  );
});

Deno.test("new values: directives inside a value the object lacks take effect, never stored", () => {
  assert.deepStrictEqual(
    smp({}, {
      retainKeysMap: { $patch: "replace", name: "x" },
      mergingList: [{ name: "a", mergingList: [{ name: "z", $patch: "delete" }] }, {
        name: "b",
        $patch: "delete",
      }],
      simpleMap: { $patch: "delete" },
    }),
    { retainKeysMap: { name: "x" }, mergingList: [{ name: "a", mergingList: [] }], simpleMap: {} },
  );
  // Type change: a value of another type is replaced by the patch's, made the same way.
  assert.deepStrictEqual(smp({ simpleMap: "oops" }, { simpleMap: { a: "1", b: null } }), {
    simpleMap: { a: "1" },
  });
});

Deno.test("replace strategy on a map: the patch map replaces it", () => {
  assert.deepStrictEqual(
    smp({ replacingMap: { a: "1", b: "2" } }, { replacingMap: { c: "3" } }),
    { replacingMap: { c: "3" } },
  );
});

Deno.test("errors: lists of lists are 422, mixed element types and bad merge lists are 400", () => {
  assertStatus(
    () => smp({ listOfLists: [["a"]] }, { listOfLists: [["b"]] }),
    422,
    "lists of lists are not supported",
  );
  assertStatus(
    () => smp({ mergingIntList: [1] }, { mergingIntList: ["a"] }),
    400,
    "list element types are not identical: [[1] [a]]",
  );
  assertStatus(
    () => smp({ mergingIntList: [1] }, { mergingIntList: [{ name: "a" }] }),
    400,
    "list element types are not identical",
  );
  assertStatus(
    () => smp({ mergingIntList: [{ a: 1 }] }, { mergingIntList: [{ a: 2 }] }),
    400,
    "cannot merge lists without merge key",
  );
  assertStatus(() => apply({}, [1], T), 400, "json: cannot unmarshal array into Go value");
});

Deno.test("errors: malformed patches only ever raise 4xx StatusErrors", () => {
  const doc = { name: "a", mergingList: items("a"), mergingIntList: [1], simpleMap: { k: "v" } };
  const patches: unknown[] = [
    { $retainKeys: 5 },
    { $retainKeys: ["name"], value: "x" },
    { "$setElementOrder/mergingList": 5 },
    { "$setElementOrder/mergingList": [1] },
    { "$setElementOrder/mergingList": [{ value: "x" }] },
    { "$setElementOrder/mergingIntList": [{ a: 1 }], mergingIntList: [2] },
    { "$setElementOrder/nonMergingList": [{ name: "a" }], nonMergingList: [{ name: "a" }] },
    { "$deleteFromPrimitiveList/mergingList": [{ name: "a" }] },
    { "$deleteFromPrimitiveList/mergingList": ["a"] },
    { mergingList: [1] },
    { mergingList: [[1]] },
    { mergingList: [{ name: "a" }, 2] },
    { mergingList: [{ $patch: null }] },
    { mergingIntList: [null, 1] },
    { simpleMap: { $patch: ["x"] } },
    { $patch: { deep: true } },
  ];
  for (const patch of patches) {
    try {
      smp(doc, patch);
    } catch (err) {
      assert.ok(err instanceof StatusError, `${JSON.stringify(patch)}: ${err}`);
      assert.ok(err.code === 400 || err.code === 422, `${JSON.stringify(patch)}: ${err.code}`);
    }
  }
});

// ---- (3) inputs, prototypes, depth ----

Deno.test("inputs are not mutated and the result shares nothing with them", () => {
  for (const v of corpus.vectors.filter((v) => !v.expectError)) {
    const base = corpus.bases[v.base];
    const before = JSON.stringify([base, v.patch]);
    // apply() freezes copies; here the originals are checked too.
    const out = applyStrategicMergePatch(base, v.patch, TYPES[v.base]);
    assert.equal(JSON.stringify([base, v.patch]), before, v.id);
    const frozenBase = deepFreeze(structuredClone(base));
    const frozenPatch = deepFreeze(structuredClone(v.patch));
    const fresh = applyStrategicMergePatch(frozenBase, frozenPatch, TYPES[v.base]);
    const stack: unknown[] = [fresh, out];
    while (stack.length) {
      const x = stack.pop();
      if (typeof x !== "object" || x === null) continue;
      assert.ok(!Object.isFrozen(x), `${v.id}: result shares an input object`);
      stack.push(...Object.values(x));
    }
  }
});

Deno.test("__proto__ and constructor keys are plain data and pollute nothing", () => {
  const patch = JSON.parse(
    '{"__proto__": {"polluted": "yes"}, "metadata": {"labels": {"__proto__": {"polluted": "yes"}}},' +
      ' "data": {"constructor": "c", "toString": "t"}}',
  );
  const doc = JSON.parse('{"kind": "ConfigMap", "data": {"__proto__": "kept"}}');
  const out = applyStrategicMergePatch(doc, patch, TYPES.cm);
  assert.equal(({} as Json).polluted, undefined);
  assert.equal((Object.prototype as Json).polluted, undefined);
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.ok(Object.hasOwn(out, "__proto__"));
  assert.deepStrictEqual(Object.getOwnPropertyDescriptor(out, "__proto__")?.value, {
    polluted: "yes",
  });
  const labels = (out.metadata as Json).labels as Json;
  assert.equal(Object.getPrototypeOf(labels), Object.prototype);
  assert.ok(Object.hasOwn(labels, "__proto__"));
  const data = out.data as Json;
  assert.deepStrictEqual(Object.keys(data).sort(), ["__proto__", "constructor", "toString"]);
  assert.equal(Object.getOwnPropertyDescriptor(data, "__proto__")?.value, "kept");
  assert.equal(Object.getPrototypeOf(data), Object.prototype);

  // Merging into an existing own __proto__ key, deleting it, and $patch: replace with it.
  const merged = applyStrategicMergePatch(
    JSON.parse('{"unknown": {"__proto__": {"a": 1}}}'),
    JSON.parse('{"unknown": {"__proto__": {"b": 2}}}'),
    T,
  );
  assert.deepStrictEqual(
    Object.getOwnPropertyDescriptor(merged.unknown, "__proto__")?.value,
    { a: 1, b: 2 },
  );
  const deleted = applyStrategicMergePatch(
    JSON.parse('{"unknown": {"__proto__": {"a": 1}, "b": 1}}'),
    JSON.parse('{"unknown": {"__proto__": null}}'),
    T,
  );
  assert.deepStrictEqual(Object.keys(deleted.unknown as Json), ["b"]);
  const replaced = applyStrategicMergePatch(
    {},
    JSON.parse('{"simpleMap": {"$patch": "replace", "__proto__": "x"}}'),
    T,
  );
  assert.ok(Object.hasOwn(replaced.simpleMap as Json, "__proto__"));
  assert.equal(Object.getPrototypeOf(replaced.simpleMap), Object.prototype);
});

function nested(depth: number, leaf: unknown, list = false): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = list ? [value] : { n: value };
  return value;
}

Deno.test("depth cap: patches nested deeper than the limit are 400, up to it they apply", () => {
  const deepest = nested(MAX_PATCH_DEPTH, 1) as Json;
  assert.deepStrictEqual(smp({}, deepest), deepest);
  assertStatus(() => smp({}, nested(MAX_PATCH_DEPTH + 1, 1) as Json), 400, "nested too deeply");
  // Far deeper than the stack allows recursion (inputs not copied: the helpers recurse).
  const direct = (patch: unknown) => () => applyStrategicMergePatch({}, patch, T);
  assertStatus(direct(nested(100_000, 1)), 400, "nested too deeply");
  assertStatus(direct({ unknown: nested(100_000, 1, true) }), 400, "nested too deeply");
});
