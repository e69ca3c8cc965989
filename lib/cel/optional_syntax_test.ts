import * as assert from "node:assert/strict";
import { CelCompileError, CelEvaluationError, compile, INT, object, STRING } from "./mod.ts";
import { desugarOptionalSyntax } from "./optional_syntax.ts";

const run = (expression: string, claims: object) =>
  compile("claims", expression, { expect: "any" }).evaluate({ claims });

Deno.test("optional syntax: x.?f and x[?k] are none when missing, chains stay optional", () => {
  assert.equal(run("claims.?email.orValue('none')", { email: "a@b.c" }), "a@b.c");
  assert.equal(run("claims.?email.orValue('none')", {}), "none");
  assert.equal(run("claims.?a.?b.hasValue()", { a: {} }), false);
  // A plain selection after `.?` selects on the value: none stays none.
  assert.equal(run("claims.?a.b.orValue(0)", { a: { b: 2 } }), 2n);
  assert.equal(run("claims.?a.b.orValue(0)", {}), 0n);
  assert.equal(run("claims.groups[?0].orValue('x')", { groups: ["g"] }), "g");
  assert.equal(run("claims.groups[?5].orValue('x')", { groups: ["g"] }), "x");
  assert.equal(run("claims[?'k'].hasValue()", { k: 1 }), true);
  assert.equal(run("claims.?a[?1].orValue(7)", { a: [1, 2] }), 2n);
  assert.equal(run("claims.?a[1].orValue(7)", {}), 7n);
  // But a present value without the field is an error, as in cel-go.
  assert.throws(() => run("claims.?a.b.hasValue()", { a: {} }), CelEvaluationError);
});

Deno.test("optional syntax: {?k: v} entries are set only when v has a value", () => {
  assert.deepEqual(run("{?'a': claims.?x, 'b': 1}", {}), { b: 1n });
  assert.deepEqual(run("{?'a': claims.?x, 'b': 1}", { x: 3 }), { a: 3n, b: 1n });
  assert.deepEqual(run("{'b': 1, ?'a': optional.none()}", {}), { b: 1n });
  assert.throws(
    () => compile("claims", "{?'a': 1}", { expect: "any" }),
    /found no matching overload for optional map entry of type 'int'/,
  );
});

Deno.test("optional syntax: strings, comments and ternaries are left alone", () => {
  for (
    const text of ["'a.?b' + \"[?x]\"", "x ? y : z // .?f {?k", "r'''.?'''", "{'a': b ? c : d}"]
  ) {
    assert.equal(desugarOptionalSyntax(text).text, text);
  }
  assert.equal(run("claims.?k.hasValue() ? '.?x' : \"[?y]\"", { k: 1 }), ".?x");
});

Deno.test("optional syntax: typed, checked and positioned on the text as written", () => {
  const self = object("Spec", { replicas: INT, name: STRING });
  const types = { self: object("Obj", { spec: self }) };
  const ok = compile("crdRule", "self.?spec.?replicas.orValue(0) <= 10", { expect: "bool", types });
  assert.equal(ok.resultType.kind, "scalar");
  // A closed object has no such field, optional or not; the position is the user's.
  try {
    compile("crdRule", "self.?spec.?nope.hasValue()", { expect: "bool", types });
    assert.fail("compiled");
  } catch (err) {
    assert.ok(err instanceof CelCompileError);
    assert.match(err.message, /undefined field 'nope' of Spec/);
    assert.equal(err.position?.column, 11);
  }
  // The result of `.?` is an optional: used as an int it does not fit.
  assert.throws(
    () => compile("crdRule", "self.?spec.?replicas + 1 > 0", { expect: "bool", types }),
    /found no matching overload for '_\+_' applied to '\(optional_type\(int\), int\)'/,
  );
  // A syntax error after the optional syntax points where the user wrote it.
  try {
    compile("claims", "claims.?email +", { expect: "any" });
    assert.fail("compiled");
  } catch (err) {
    assert.ok(err instanceof CelCompileError);
    assert.equal(err.position?.column, 15);
  }
});

Deno.test("optional syntax: cost estimates count .? as a selection", () => {
  const types = { self: object("Obj", { spec: object("Spec", { replicas: INT }) }) };
  const plain = compile("crdRule", "self.spec.replicas <= 10", { expect: "bool", types });
  const opt = compile("crdRule", "self.?spec.?replicas.orValue(0) <= 10", {
    expect: "bool",
    types,
  });
  // self (1), two selections (1 each), <= (1); the optional form adds orValue (1).
  assert.equal(plain.estimatedCost, 4);
  assert.equal(opt.estimatedCost, 5);
  const at = (v: unknown) => opt.evaluateWithCost({ self: v });
  assert.deepEqual(at({ spec: { replicas: 3 } }), { value: true, cost: 5 });
  assert.deepEqual(at({}).value, true);
});

Deno.test("optional syntax: what it does not take gets a clear error; optionals compare", () => {
  const problem = (expression: string) => {
    try {
      compile("claims", expression, { expect: "any" });
    } catch (err) {
      return (err as Error).message;
    }
    return "compiled";
  };
  assert.equal(problem("has(claims.?a)"), "invalid argument to has() macro");
  assert.equal(problem("[?claims.?a]"), "unsupported syntax: optional list elements ([?x])");
  assert.equal(run("claims.?a == optional.none()", {}), true);
  assert.equal(run("claims.?a == optional.of(1)", { a: 1 }), true);
  assert.equal(run("claims.?a == optional.of('1')", { a: 1 }), false);
});
