import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { compile } from "./mod.ts";

const run = (expression: string, claims: object = {}) =>
  compile("claims", expression, { expect: "any" }).evaluate({ claims });

Deno.test("map and filter results are built in place, without aliasing", () => {
  deepStrictEqual(run("[1, 2, 3].map(x, x * 2)"), [2n, 4n, 6n]);
  deepStrictEqual(run("[1, 2, 3, 4].filter(x, x % 2 == 0)"), [2n, 4n]);
  deepStrictEqual(run("[1, 2, 3].map(x, x > 1, x * 10)"), [20n, 30n]);
  // Lists the user concatenates are values: appending to one does not change another.
  deepStrictEqual(run("[[0] + [0]].map(l, [l + [1], l + [2]])"), [[[0n, 0n, 1n], [0n, 0n, 2n]]]);
  // Each evaluation of a nested macro starts from an empty list.
  deepStrictEqual(run("[1, 2].map(x, [1, 2].map(y, x * y))"), [[1n, 2n], [2n, 4n]]);
  const twice = compile("claims", "claims.xs.map(x, x + 1)", { expect: "any" });
  deepStrictEqual(twice.evaluate({ claims: { xs: [1] } }), [2n]);
  deepStrictEqual(twice.evaluate({ claims: { xs: [5, 6] } }), [6n, 7n]);
});

Deno.test("a long map stays linear", () => {
  const groups = Array.from({ length: 20_000 }, (_, i) => `g${i}`);
  const started = performance.now();
  const mapped = run("claims.groups.map(g, 'oidc:' + g)", { groups }) as string[];
  strictEqual(mapped.length, 20_000);
  strictEqual(mapped[19_999], "oidc:g19999");
  ok(performance.now() - started < 2_000);
});
