/** Strategic merge patch: one test per behaviour (B-numbers) the vectors do not cover. */

import assert from "node:assert/strict";
import { assertStatus, items, type Json, smp } from "./strategic_testdata.ts";

// ---- (2) behaviours the vectors do not cover, on an abstract schema ----
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
