import { match, strictEqual, throws } from "node:assert/strict";
import { CelCompileError, CelEvaluationError, compile } from "../mod.ts";

const CLAIMS = { nums: [3, 1, 2], words: ["b", "a", "c"], empty: [], mixed: [1, "a"] };

const run = (expression: string) =>
  compile("claims", expression, { expect: "any" }).evaluate({ claims: CLAIMS });

Deno.test("isSorted: comparable elements in order", () => {
  strictEqual(run("[1, 2, 3].isSorted()"), true);
  strictEqual(run("['a', 'b', 'b', 'c'].isSorted()"), true);
  strictEqual(run("[2.0, 1.0].isSorted()"), false);
  strictEqual(run("[].isSorted()"), true);
  strictEqual(run("claims.nums.isSorted()"), false);
  throws(() => run("claims.mixed.isSorted()"), CelEvaluationError);
  throws(() => compile("claims", "[{'a': 1}].isSorted()", { expect: "any" }), CelCompileError);
});

Deno.test("sum: ints, uints, doubles and durations", () => {
  strictEqual(run("[1, 3].sum()"), 4n);
  strictEqual(run("[1u, 3u].sum()"), 4n);
  strictEqual(run("[1.5, 3.0].sum()"), 4.5);
  strictEqual(run("[duration('1m'), duration('1s')].sum() == duration('61s')"), true);
  strictEqual(run("claims.nums.sum()"), 6n);
  strictEqual(run("claims.empty.sum()"), 0n);
  throws(
    () => compile("claims", "['a'].sum()", { expect: "any" }),
    /no matching overload for 'sum'/,
  );
  throws(() => run("claims.words.sum()"), /no matching overload/);
  throws(() => run("[9223372036854775807, 1].sum()"), /overflow/);
});

Deno.test("min and max: comparable elements, an error when empty", () => {
  strictEqual(run("[1, 3].min()"), 1n);
  strictEqual(run("[1, 3].max()"), 3n);
  strictEqual(run("claims.words.min()"), "a");
  strictEqual(run("claims.words.max()"), "c");
  strictEqual(run("[1.5, -2.0].min()"), -2);
  match(
    (() => {
      try {
        run("claims.empty.min()");
      } catch (err) {
        return (err as Error).message;
      }
    })()!,
    /^min called on empty list/,
  );
  throws(() => run("claims.empty.max()"), /max called on empty list/);
  throws(() => run("claims.mixed.max()"), CelEvaluationError);
});

Deno.test("indexOf and lastIndexOf: the first and last position, or -1", () => {
  strictEqual(run("[1, 2, 2, 3].indexOf(2)"), 1n);
  strictEqual(run("['a', 'b', 'b', 'c'].lastIndexOf('b')"), 2n);
  strictEqual(run("[1.0].indexOf(1.1)"), -1n);
  strictEqual(run("claims.empty.indexOf('x')"), -1n);
  strictEqual(run("claims.words.indexOf('c')"), 2n);
  // Numbers compare across types, as CEL's == does.
  strictEqual(run("claims.nums.lastIndexOf(1.0)"), 1n);
  throws(() => compile("claims", "[1, 2].lastIndexOf('a')", { expect: "any" }), CelCompileError);
  // The strings extension keeps its own indexOf.
  strictEqual(run("'banana'.indexOf('an')"), 1n);
  strictEqual(run("'banana'.lastIndexOf('an')"), 3n);
});
