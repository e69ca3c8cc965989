/**
 * JSON merge patch (RFC 7386): the RFC's example vectors (testdata/merge-patch-tests), applied at the
 * library level with input immutability checked, and `__proto__` kept as a plain key.
 */

import assert from "node:assert/strict";
import { applyMergePatch } from "./merge_patch.ts";

interface Vector {
  id: number;
  comment: string;
  original: unknown;
  patch: unknown;
  result: unknown;
}

Deno.test("merge-patch-tests.json: RFC 7386 vectors", async (t) => {
  const corpus = JSON.parse(
    await Deno.readTextFile(
      new URL("../../testdata/merge-patch-tests/merge-patch-tests.json", import.meta.url),
    ),
  ) as { tests: Vector[] };
  assert.ok(corpus.tests.length > 0, "no vectors");
  for (const v of corpus.tests) {
    await t.step(`#${v.id} ${v.comment}`, () => {
      const original = structuredClone(v.original);
      const patch = structuredClone(v.patch);
      const result = applyMergePatch(v.original, v.patch);
      assert.deepStrictEqual(result, v.result);
      assert.deepStrictEqual(v.original, original, "the target was mutated");
      assert.deepStrictEqual(v.patch, patch, "the patch was mutated");
    });
  }
});

Deno.test("merge patch: the result shares no objects with the patch", () => {
  const patch = { a: { b: [1, { c: 2 }] }, d: [{ e: 3 }] };
  const result = applyMergePatch({}, patch) as typeof patch;
  assert.notEqual(result.a.b, patch.a.b);
  assert.notEqual(result.a.b[1], patch.a.b[1]);
  assert.notEqual(result.d, patch.d);
  assert.notEqual(result.d[0], patch.d[0]);
});

Deno.test("merge patch: __proto__ is a plain key and pollutes no prototype", () => {
  // JSON.parse makes `__proto__` an own data property, as a request body would.
  const patch = JSON.parse('{"__proto__": {"polluted": true}, "a": {"__proto__": {"x": 1}}}');
  const result = applyMergePatch({ a: {} }, patch) as Record<string, unknown>;

  assert.ok(Object.hasOwn(result, "__proto__"));
  assert.equal(Object.getPrototypeOf(result), Object.prototype);
  assert.deepStrictEqual(Object.keys(result).sort(), ["__proto__", "a"]);
  assert.deepStrictEqual(Object.getOwnPropertyDescriptor(result, "__proto__")?.value, {
    polluted: true,
  });
  const a = result.a as Record<string, unknown>;
  assert.ok(Object.hasOwn(a, "__proto__"));
  assert.equal(Object.getPrototypeOf(a), Object.prototype);
  assert.equal((result as { polluted?: unknown }).polluted, undefined);
  assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  assert.equal(Object.hasOwn(Object.prototype, "polluted"), false);
  assert.equal(Object.hasOwn(Object.prototype, "x"), false);

  // It round-trips through JSON as the key it was sent as.
  assert.deepStrictEqual(JSON.parse(JSON.stringify(result)), patch);

  // A null under `__proto__` deletes that own key, not the prototype.
  const removed = applyMergePatch(result, JSON.parse('{"__proto__": null}')) as object;
  assert.equal(Object.hasOwn(removed, "__proto__"), false);
  assert.equal(Object.getPrototypeOf(removed), Object.prototype);
});
