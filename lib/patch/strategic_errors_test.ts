/** Strategic merge patch: error statuses, input immutability, `__proto__` keys and the depth cap. */

import assert from "node:assert/strict";
import { StatusError } from "../api/errors.ts";
import { applyStrategicMergePatch, MAX_PATCH_DEPTH } from "./strategic.ts";
import { corpus } from "./testing/smp_vectors.ts";
import {
  apply,
  assertStatus,
  deepFreeze,
  items,
  type Json,
  smp,
  T,
  TYPES,
} from "./strategic_testdata.ts";

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
