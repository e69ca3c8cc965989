/**
 * Strategic merge patch: the 51 kubectl-checked vectors (testdata/smp-vectors.json, on an
 * apps/v1 Deployment test schema and the built-in ConfigMap and Namespace). The one test per
 * behaviour of the SMP catalogue (B-numbers) the vectors do not cover is in
 * strategic_behaviours_test.ts; error statuses, input immutability, `__proto__` keys and the
 * depth cap are in strategic_errors_test.ts.
 */

import assert from "node:assert/strict";
import { StatusError } from "../api/errors.ts";
import { at, corpus } from "./testing/smp_vectors.ts";
import { apply, TYPES } from "./strategic_testdata.ts";

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
