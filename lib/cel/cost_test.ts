import { match, strictEqual, throws } from "node:assert/strict";
import {
  type CelAuthorizer,
  CelEvaluationError,
  compile,
  type CompileOptions,
  DEFAULT_COST_LIMIT,
} from "./mod.ts";

function evaluate(
  expression: string,
  claims: object,
  options: Partial<CompileOptions> = {},
  authorizer?: CelAuthorizer,
) {
  return compile("claims", expression, { expect: "any", ...options })
    .evaluate({ claims }, { authorizer });
}

function costExceeded(run: () => unknown): CelEvaluationError {
  try {
    run();
  } catch (err) {
    if (err instanceof CelEvaluationError && err.costExceeded) return err;
    throw err;
  }
  throw new Error("the budget held");
}

const numbers = (n: number) => Array.from({ length: n }, (_, i) => i);

Deno.test("each access and operator costs 1, constants nothing", () => {
  // claims (1), .exp (1), > (1)
  strictEqual(evaluate("claims.exp > 5", { exp: 10 }, { costLimit: 3 }), true);
  const err = costExceeded(() => evaluate("claims.exp > 5", { exp: 10 }, { costLimit: 2 }));
  strictEqual(err.message, "operation cancelled: evaluation cost exceeded the budget of 2");
});

Deno.test("a budget must be positive", () => {
  throws(() => compile("claims", "true", { expect: "bool", costLimit: 0 }), RangeError);
  throws(() => compile("claims", "true", { expect: "bool", costLimit: NaN }), RangeError);
});

Deno.test("a list literal costs 10", () => {
  // [..] (10), size (1), == (1)
  strictEqual(evaluate("size([1, 2, 3]) == 3", {}, { costLimit: 12 }), true);
  costExceeded(() => evaluate("size([1, 2, 3]) == 3", {}, { costLimit: 11 }));
});

Deno.test("nested comprehensions over a big list run out of budget", () => {
  const expression = "claims.xs.all(x, claims.xs.all(y, claims.xs.all(z, x + y + z >= 0)))";
  strictEqual(evaluate(expression, { xs: numbers(5) }, { costLimit: 10_000 }), true);
  costExceeded(() => evaluate(expression, { xs: numbers(100) }, { costLimit: 10_000 }));
  costExceeded(() => evaluate("claims.xs.map(x, claims.xs.map(y, x * y))", { xs: numbers(2000) }));
});

Deno.test("a spent budget is not absorbed by || or &&", () => {
  const expensive = "claims.xs.all(x, claims.xs.all(y, x != y || x == y))";
  costExceeded(() => evaluate(`${expensive} || true`, { xs: numbers(200) }, { costLimit: 1000 }));
  costExceeded(() => evaluate(`${expensive} && false`, { xs: numbers(200) }, { costLimit: 1000 }));
});

Deno.test("strings cost by length, regexes by length times pattern length", () => {
  const long = "a".repeat(20_000);
  strictEqual(evaluate("claims.s == claims.s", { s: "abc" }, { costLimit: 10 }), true);
  costExceeded(() => evaluate("claims.s == claims.s", { s: long }, { costLimit: 1000 }));
  strictEqual(evaluate("claims.s.matches('a+b')", { s: "aab" }, { costLimit: 10 }), true);
  // (20001 × 0.1) × (3 × 0.25) rounded up: about 2000 per match.
  costExceeded(() => evaluate("claims.s.matches('a+b')", { s: long }, { costLimit: 1500 }));
  costExceeded(() => evaluate("claims.s.findAll('a+b')", { s: long }, { costLimit: 1500 }));
});

Deno.test("an authorization check costs 350000: two fit the default budget, three do not", () => {
  const authorizer: CelAuthorizer = { check: () => ({ decision: "allow", reason: "" }) };
  const check = "authorizer.path('/a').check('get').allowed()";
  const options = { expect: "bool" as const, authorizer: true };
  strictEqual(DEFAULT_COST_LIMIT, 1_000_000);
  strictEqual(evaluate(`${check} && ${check}`, {}, options, authorizer), true);
  costExceeded(() => evaluate(`${check} && ${check} && ${check}`, {}, options, authorizer));
});

Deno.test("an evaluation inside an authorization check has its own budget", () => {
  const inner = compile("claims", "claims.xs.all(x, claims.xs.all(y, x >= 0))", {
    expect: "bool",
    costLimit: 100,
  });
  const authorizer: CelAuthorizer = {
    check: () => {
      inner.evaluate({ claims: { xs: numbers(50) } });
      return { decision: "allow", reason: "" };
    },
  };
  const decision = evaluate(
    "authorizer.path('/a').check('get').error()",
    {},
    { expect: "string", authorizer: true },
    authorizer,
  );
  match(decision as string, /cost exceeded the budget of 100/);
});
