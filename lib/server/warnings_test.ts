import assert from "node:assert/strict";
import { limitWarnings } from "./warnings.ts";

Deno.test("warnings: kept whole within 4,096 characters, duplicates dropped", () => {
  const long = "w".repeat(1000);
  assert.deepEqual(limitWarnings(["a", "a", " b ", "", long]), ["a", "b", long]);
});

Deno.test("warnings: past 4,096 characters each is cut to 256, and what still does not fit goes", () => {
  const big = (c: string) => c.repeat(3000);
  const out = limitWarnings([
    big("x"),
    big("y"),
    ...Array.from({ length: 20 }, (_, i) => `z${i}`.repeat(200)),
  ]);
  assert.deepEqual(out.slice(0, 2), ["x".repeat(256), "y".repeat(256)]);
  assert.ok(out.every((w) => w.length <= 256));
  assert.ok(out.reduce((n, w) => n + w.length, 0) <= 4096);
  assert.equal(out.length, 16);
});
