import { deepStrictEqual, match, ok, strictEqual, throws } from "node:assert/strict";
import {
  CelCompileError,
  CelEvaluationError,
  type CelResultKind,
  compile,
  type CompiledExpression,
} from "./mod.ts";

const CLAIMS = {
  sub: "user-1",
  exp: 1700000000,
  ratio: 1.5,
  email: "jane@example.com",
  email_verified: true,
  groups: ["dev", "ops"],
  "foo-bar": "dash",
  "a.b": "dot",
  "a/b": "slash",
  "x__y": "underscores",
  namespace: "ns-1",
  nested: { inner: 7 },
  nothing: null,
};

function claims(expression: string, expect: CelResultKind = "any", value: object = CLAIMS) {
  return compile("claims", expression, { expect }).evaluate({ claims: value });
}

function compileError(expression: string, expect: CelResultKind = "any"): CelCompileError {
  try {
    compile("claims", expression, { expect });
  } catch (err) {
    if (err instanceof CelCompileError) return err;
    throw err;
  }
  throw new Error(`${expression} compiled`);
}

function evaluationError(run: () => unknown): CelEvaluationError {
  try {
    run();
  } catch (err) {
    if (err instanceof CelEvaluationError) return err;
    throw err;
  }
  throw new Error("evaluation succeeded");
}

Deno.test("claims: JSON integers are CEL ints, other numbers doubles", () => {
  strictEqual(claims("claims.exp > 5", "bool"), true);
  strictEqual(claims("type(claims.exp) == int", "bool"), true);
  strictEqual(claims("type(claims.ratio) == double", "bool"), true);
  strictEqual(claims("claims.exp + 1"), 1700000001n);
  strictEqual(claims("claims.ratio * 2.0"), 3);
  strictEqual(claims("claims.nested.inner == 7", "bool"), true);
  // bigint inputs are taken as they are, and ints beyond int64 stay doubles.
  strictEqual(claims("claims.n", "any", { n: 12n }), 12n);
  strictEqual(claims("type(claims.n) == double", "bool", { n: 2 ** 64 }), true);
});

Deno.test("claims: has() on dynamic fields", () => {
  strictEqual(claims("has(claims.email)", "bool"), true);
  strictEqual(claims("has(claims.missing)", "bool"), false);
  strictEqual(claims("has(claims.nested.inner)", "bool"), true);
  match(evaluationError(() => claims("claims.missing", "string")).message, /missing/);
});

Deno.test("escaped field names reach properties that are not identifiers", () => {
  strictEqual(claims("claims.foo__dash__bar", "string"), "dash");
  strictEqual(claims("claims.a__dot__b", "string"), "dot");
  strictEqual(claims("claims.a__slash__b", "string"), "slash");
  strictEqual(claims("claims.x__underscores__y", "string"), "underscores");
  strictEqual(claims("claims.__namespace__", "string"), "ns-1");
  strictEqual(claims("has(claims.foo__dash__bar)", "bool"), true);
  strictEqual(claims('claims["foo-bar"]', "string"), "dash");
  const err = compileError("claims.a__b__c");
  match(err.message, /invalid escape sequence in field name 'a__b__c'/);
  deepStrictEqual(err.position, { line: 1, column: 7, offset: 6 });
});

Deno.test("results come out as plain JS values", () => {
  deepStrictEqual(claims("claims.groups"), ["dev", "ops"]);
  deepStrictEqual(claims("{'a': [1, 2u], 'b': {'c': true}}"), { a: [1n, 2n], b: { c: true } });
  strictEqual(claims("claims.nothing"), null);
  strictEqual(claims("b'ab'") instanceof Uint8Array, true);
  match(evaluationError(() => claims("claims.exp.size()")).message, /no matching overload/);
});

Deno.test("string|list<string> accepts a string, a list of strings or null", () => {
  strictEqual(claims("claims.sub", "string|list<string>"), "user-1");
  deepStrictEqual(claims("claims.groups", "string|list<string>"), ["dev", "ops"]);
  deepStrictEqual(claims("claims.groups.map(g, 'oidc:' + g)", "string|list<string>"), [
    "oidc:dev",
    "oidc:ops",
  ]);
  strictEqual(claims("claims.nothing", "string|list<string>"), null);
  match(
    evaluationError(() => claims("claims.mixed", "string|list<string>", { mixed: ["a", 1] }))
      .message,
    /must evaluate to a string or a list of strings, got a list with int/,
  );
});

Deno.test("the result type is checked at evaluation when it is only known then", () => {
  const err = evaluationError(() => claims("claims.sub", "bool"));
  strictEqual(err.message, "expression must evaluate to a boolean, got string");
  strictEqual(err.costExceeded, false);
  match(evaluationError(() => claims("claims.exp", "string")).message, /a string, got int/);
});

Deno.test("wrong result types are rejected at load", () => {
  for (
    const [expression, expect, got] of [
      ["1", "bool", "int"],
      ['"x"', "bool", "string"],
      ["claims.sub == 'a'", "string", "bool"],
      ["[1, 2]", "string|list<string>", "list(int)"],
      ["claims.groups.map(g, size(g))", "string|list<string>", "list(int)"],
      ["quantity('1')", "any", "kubernetes.Quantity"],
      ["type(1)", "any", "type"],
    ] as const
  ) {
    const err = compileError(expression, expect);
    match(
      err.message,
      new RegExp(`^expression must evaluate to .*, got ${got.replace(/[()]/g, "\\$&")}$`),
    );
    deepStrictEqual(err.position, { line: 1, column: 1, offset: 0 });
  }
});

Deno.test("syntax errors name their position", () => {
  const err = compileError("claims.sub ==\n  'a' 'b'");
  match(err.message, /^syntax error: /);
  deepStrictEqual(err.position, { line: 2, column: 7, offset: 20 });
  deepStrictEqual(compileError("[1, 2").position, { line: 1, column: 6, offset: 5 });
  match(compileError("namespace").message, /reserved identifier/);
});

Deno.test("undeclared variables and functions are rejected at load", () => {
  const err = compileError("foo.bar");
  strictEqual(err.message, "undeclared reference to 'foo'");
  deepStrictEqual(err.position, { line: 1, column: 1, offset: 0 });
  deepStrictEqual(compileError("claims.sub == 'a' &&\n user.username == 'b'").position, {
    line: 2,
    column: 2,
    offset: 22,
  });
  strictEqual(
    compileError("claims.sub.frobnicate()").message,
    "undeclared reference to 'frobnicate'",
  );
  // Comprehension variables are in scope only inside their macro.
  strictEqual(claims("claims.groups.all(g, g != '')", "bool"), true);
  strictEqual(
    compileError("claims.groups.all(g, true) && g == ''").message,
    "undeclared reference to 'g'",
  );
});

Deno.test("user: a UserInfo with username, uid, groups and extra", () => {
  const rule = compile(
    "user",
    "user.username.startsWith('system:') || ('admins' in user.groups && user.uid != '' && " +
      "user.extra['scopes'].all(s, s.size() > 0))",
    { expect: "bool" },
  );
  const user = { username: "jane", uid: "42", groups: ["admins"], extra: { scopes: ["a"] } };
  strictEqual(rule.evaluate({ user }), true);
  strictEqual(rule.evaluate({ user: { ...user, groups: [] } }), false);
  const err = (() => {
    try {
      compile("user", "user.name == 'x'", { expect: "bool" });
    } catch (e) {
      return e as CelCompileError;
    }
  })();
  strictEqual(err?.message, "undefined field 'name' of kubernetes.UserInfo");
  deepStrictEqual(err?.position, { line: 1, column: 5, offset: 4 });
  throws(() => compile("user", "claims.sub == 'x'", { expect: "bool" }), CelCompileError);
});

Deno.test("request: a SubjectAccessReviewSpec for match conditions", () => {
  const condition = compile(
    "request",
    "has(request.resourceAttributes) && request.resourceAttributes.__namespace__ == 'kube-system'" +
      " && request.resourceAttributes.verb in ['get', 'list']",
    { expect: "bool" },
  );
  const spec = {
    user: "jane",
    groups: ["dev"],
    resourceAttributes: { namespace: "kube-system", verb: "get", resource: "pods", version: "v1" },
  };
  strictEqual(condition.evaluate({ request: spec }), true);
  strictEqual(condition.evaluate({ request: { user: "jane", nonResourceAttributes: {} } }), false);
  const nonResource = compile(
    "request",
    "has(request.nonResourceAttributes) && request.nonResourceAttributes.path.startsWith('/healthz')",
    { expect: "bool" },
  );
  strictEqual(
    nonResource.evaluate({ request: { nonResourceAttributes: { path: "/healthz" } } }),
    true,
  );
  // Kubernetes' field names, and plain `namespace` parses as a field too.
  for (const field of ["user", "groups", "uid", "extra"]) {
    compile("request", `has(request.${field})`, { expect: "bool" });
  }
  compile("request", "request.resourceAttributes.namespace == ''", { expect: "bool" });
  compile("request", "request.resourceAttributes.labelSelector.rawSelector == ''", {
    expect: "bool",
  });
  throws(
    () => compile("request", "request.verb == 'get'", { expect: "bool" }),
    /undefined field 'verb'/,
  );
});

Deno.test("usesClaim finds claims read by selection, has() and index", () => {
  const expr = (e: string) => compile("claims", e, { expect: "any" });
  ok(expr("claims.email_verified == true").usesClaim("email_verified"));
  ok(expr("has(claims.email_verified)").usesClaim("email_verified"));
  ok(expr("claims['email_verified']").usesClaim("email_verified"));
  ok(expr("claims.foo__dash__bar").usesClaim("foo-bar"));
  const email = expr("claims.email");
  ok(email.usesClaim("email"));
  ok(!email.usesClaim("email_verified"));
  ok(
    !compile("user", "user.username == 'email_verified'", { expect: "bool" }).usesClaim(
      "email_verified",
    ),
  );
});

Deno.test("evaluation needs the variables the expression names", () => {
  const rule: CompiledExpression = compile("claims", "claims.sub != ''", { expect: "bool" });
  strictEqual(rule.expression, "claims.sub != ''");
  strictEqual(rule.environment, "claims");
  strictEqual(evaluationError(() => rule.evaluate({})).message, "variable claims is not set");
  // Expressions that name no variable need none.
  strictEqual(compile("claims", "1 < 2", { expect: "bool" }).evaluate({}), true);
  match(
    evaluationError(() => rule.evaluate({ claims: { sub: new Date() } })).message,
    /claims\.sub: cannot pass/,
  );
});

Deno.test("runtime errors say where they happened", () => {
  const err = evaluationError(() => claims("claims.sub == 'a' || claims.exp / 0 == 1", "bool"));
  strictEqual(err.message, "int divide by zero (line 1, column 33)");
});
