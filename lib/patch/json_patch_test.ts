/**
 * JSON Patch (RFC 6902) against the public json-patch-tests suite (testdata/json-patch-tests): every
 * record that is not `disabled` runs as one step. A record with `expected` must apply to a value
 * deep-equal to it; a record with `error` must be refused with a 400, 413 or 422 StatusError.
 * Either way the input document must come out untouched.
 */

import assert from "node:assert/strict";
import { StatusError } from "../api/errors.ts";
import { applyJsonPatch } from "./json_patch.ts";

const SUITE = new URL("../../testdata/json-patch-tests/", import.meta.url);

interface Record {
  comment?: string;
  doc?: unknown;
  patch?: unknown;
  expected?: unknown;
  error?: string;
  disabled?: boolean;
}

async function runSuite(t: Deno.TestContext, file: string): Promise<void> {
  const records = JSON.parse(await Deno.readTextFile(new URL(file, SUITE))) as Record[];
  let ran = 0;
  for (const [i, rec] of records.entries()) {
    // The README allows comment-only records; `disabled` marks cases the suite itself skips.
    if (rec.disabled || !("patch" in rec)) continue;
    ran++;
    await t.step(`#${i} ${rec.comment ?? "(no comment)"}`, () => checkRecord(rec));
  }
  assert.ok(ran > 0, `${file}: no cases ran`);
}

function checkRecord(rec: Record): void {
  const before = structuredClone(rec.doc);
  const patchBefore = structuredClone(rec.patch);
  if ("expected" in rec) {
    assert.deepStrictEqual(applyJsonPatch(rec.doc, rec.patch), rec.expected);
  } else {
    assert.ok("error" in rec, "a record needs `expected` or `error`");
    assert.throws(
      () => applyJsonPatch(rec.doc, rec.patch),
      (err: unknown) => {
        assert.ok(err instanceof StatusError, `expected a StatusError (${rec.error}), got ${err}`);
        assert.ok(
          [400, 413, 422].includes(err.code),
          `expected 400, 413 or 422 (${rec.error}), got ${err.code}: ${err.message}`,
        );
        return true;
      },
      `expected an error: ${rec.error}`,
    );
  }
  assert.deepStrictEqual(rec.doc, before, "the document was mutated");
  assert.deepStrictEqual(rec.patch, patchBefore, "the patch was mutated");
}

Deno.test("json-patch-tests: tests.json", (t) => runSuite(t, "tests.json"));

Deno.test("json-patch-tests: spec_tests.json", (t) => runSuite(t, "spec_tests.json"));

// Beyond the suite: where fast-json-patch alone is laxer than RFC 6902, and the status codes.

function assertRefused(doc: unknown, patch: unknown, code = 422): StatusError {
  let caught: unknown;
  try {
    applyJsonPatch(doc, patch);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof StatusError, `expected a StatusError, got ${caught}`);
  assert.equal(caught.code, code, caught.message);
  return caught;
}

Deno.test("json patch: status codes for a malformed patch", () => {
  assertRefused({}, { op: "add", path: "/a", value: 1 }, 400);
  assertRefused({}, ["add"], 400);
  assertRefused({}, [{ op: "spam", path: "/a" }], 422);
  const many = Array.from({ length: 10_001 }, () => ({ op: "test", path: "", value: {} }));
  assertRefused({}, many, 413);
  assert.deepStrictEqual(applyJsonPatch({}, many.slice(1)), {});
});

Deno.test("json patch: array indices are plain decimals within range", () => {
  for (const path of ["/a/01", "/a/00", "/a/", "/a/1e0", "/a/-1", "/a/+1", "/a/4294967296"]) {
    assertRefused({ a: [1, 2] }, [{ op: "add", path, value: 0 }]);
    assertRefused({ a: [1, 2] }, [{ op: "remove", path }]);
    assertRefused({ a: [1, 2] }, [{ op: "copy", from: "/a/0", path }]);
    assertRefused({ a: [1, 2] }, [{ op: "move", from: "/a/0", path }]);
  }
  // "-" is only a place to add.
  assert.deepStrictEqual(applyJsonPatch({ a: [1] }, [{ op: "add", path: "/a/-", value: 2 }]), {
    a: [1, 2],
  });
  for (const op of ["remove", "replace", "test"]) {
    assertRefused({ a: [1] }, [{ op, path: "/a/-", value: 1 }]);
  }
  assertRefused({ a: [{}] }, [{ op: "add", path: "/a/-/b", value: 1 }]);
  // On an object, numbers and "-" are ordinary keys.
  assert.deepStrictEqual(
    applyJsonPatch({}, [{ op: "add", path: "/01", value: 1 }, { op: "add", path: "/-", value: 2 }]),
    { "01": 1, "-": 2 },
  );
});

Deno.test("json patch: inherited members such as toString are not in the document", () => {
  for (const key of ["toString", "constructor", "hasOwnProperty"]) {
    assertRefused({}, [{ op: "remove", path: `/${key}` }]);
    assertRefused({}, [{ op: "replace", path: `/${key}`, value: 1 }]);
    assertRefused({}, [{ op: "test", path: `/${key}`, value: 1 }]);
    assertRefused({}, [{ op: "copy", from: `/${key}`, path: "/x" }]);
    assertRefused({}, [{ op: "move", from: `/${key}`, path: "/x" }]);
    // Adding one is fine: it is just a key.
    assert.deepStrictEqual(applyJsonPatch({}, [{ op: "add", path: `/${key}`, value: 1 }]), {
      [key]: 1,
    });
  }
});

Deno.test("json patch: move and copy check where they add", () => {
  assertRefused({ a: { b: 1 } }, [{ op: "move", from: "/a", path: "/a/c" }]);
  assertRefused({ a: 1 }, [{ op: "move", from: "/a", path: "/x/y" }]);
  assertRefused({ a: 1 }, [{ op: "copy", from: "/a", path: "/x/y" }]);
  assertRefused({ a: 1, b: [] }, [{ op: "copy", from: "/a", path: "/b/1" }]);
  // The add of a move applies to the document the remove left: index 2 is past the end then.
  assertRefused({ a: [1, 2] }, [{ op: "move", from: "/a/0", path: "/a/2" }]);
  assert.deepStrictEqual(
    applyJsonPatch({ a: [1, 2] }, [{ op: "move", from: "/a/0", path: "/a/1" }]),
    { a: [2, 1] },
  );
  assert.deepStrictEqual(applyJsonPatch({ a: 1 }, [{ op: "move", from: "/a", path: "/a" }]), {
    a: 1,
  });
  // "/ab" is not inside "/a".
  assert.deepStrictEqual(applyJsonPatch({ a: 1 }, [{ op: "move", from: "/a", path: "/ab" }]), {
    ab: 1,
  });
});

Deno.test("json patch: prototype keys in a path are a 422, not a TypeError", () => {
  assertRefused({}, [{ op: "add", path: "/__proto__", value: { polluted: true } }]);
  assertRefused({}, [{ op: "add", path: "/a/__proto__/polluted", value: true }]);
  assertRefused({ constructor: {} }, [{ op: "add", path: "/constructor/prototype", value: 1 }]);
  assertRefused(JSON.parse('{"__proto__": 1}'), [{ op: "copy", from: "/__proto__", path: "/x" }]);
  assert.equal(Object.hasOwn(Object.prototype, "polluted"), false);
  // A `__proto__` member inside a value is plain data.
  const value = JSON.parse('{"__proto__": {"polluted": true}}');
  const out = applyJsonPatch({}, [{ op: "add", path: "/a", value }]) as { a: object };
  assert.ok(Object.hasOwn(out.a, "__proto__"));
  assert.equal(Object.getPrototypeOf(out.a), Object.prototype);
  assert.equal(Object.hasOwn(Object.prototype, "polluted"), false);
});

Deno.test("json patch: test compares JSON values", () => {
  const doc = { n: 1, o: { hasOwnProperty: 1, b: [1, { c: null }] } };
  const ok = (path: string, value: unknown) =>
    assert.deepStrictEqual(applyJsonPatch(doc, [{ op: "test", path, value }]), doc);
  ok("/n", JSON.parse("1.0"));
  ok("/n", 1e0);
  ok("/o", { b: [1, { c: null }], hasOwnProperty: 1 });
  ok("", structuredClone(doc));
  for (
    const [path, value] of [
      ["/n", "1"],
      ["/n", [1]],
      ["/o", { hasOwnProperty: 1 }],
      ["/o/b", [{ c: null }, 1]],
      ["/o/b/1", { c: null, d: null }],
      ["/o/b/1/c", {}],
    ] as const
  ) {
    const err = assertRefused(doc, [{ op: "test", path, value }]);
    assert.match(err.message, /^testing value .* failed: test failed \(operation 0\)$/);
  }
});

Deno.test("json patch: neither the document nor the patch is changed", () => {
  const doc = { a: { b: [1] } };
  const patch = [
    { op: "add", path: "/c", value: { d: [] } },
    { op: "add", path: "/c/d/-", value: 1 },
    { op: "copy", from: "/a", path: "/e" },
    { op: "add", path: "/e/b/-", value: 2 },
    { op: "move", from: "/c", path: "/a/f" },
    { op: "replace", path: "/a/f/d/0", value: 3 },
  ];
  const docBefore = structuredClone(doc);
  const patchBefore = structuredClone(patch);
  assert.deepStrictEqual(applyJsonPatch(doc, patch), {
    a: { b: [1], f: { d: [3] } },
    e: { b: [1, 2] },
  });
  assert.deepStrictEqual(doc, docBefore);
  assert.deepStrictEqual(patch, patchBefore);
});
