import { strictEqual, throws } from "node:assert/strict";
import { CelCompileError, CelEvaluationError, compile } from "../mod.ts";
import { parseQuantity } from "./quantity_value.ts";

const run = (expression: string, claims: object = {}) =>
  compile("claims", expression, { expect: "any" }).evaluate({ claims });

Deno.test("parseQuantity: suffixes, exponents, signs and fractions", () => {
  const value = (s: string) => parseQuantity(s).key();
  strictEqual(value("1Gi"), "1073741824e0");
  strictEqual(value("500m"), "5e-1");
  strictEqual(value("1e3"), "1e3");
  strictEqual(value("1E-3"), "1e-3");
  strictEqual(value("1.5G"), "15e8");
  strictEqual(value("-1.5Ki"), "-1536e0");
  strictEqual(value("+.5"), "5e-1");
  strictEqual(value("1."), "1e0");
  strictEqual(value("0"), "0");
  strictEqual(value("100n"), "1e-7");
  strictEqual(value("3u"), "3e-6");
  // Below nano precision rounds up, away from zero.
  strictEqual(value("0.1n"), "1e-9");
  strictEqual(value("-0.1n"), "-1e-9");
  // Binary suffixes are capped at 2^63-1; decimal ones are not.
  strictEqual(value("99999999999999999999Ei"), "9223372036854775807e0");
  strictEqual(value("99999999999999999999E"), "99999999999999999999e18");
});

Deno.test("parseQuantity rejects what Kubernetes rejects", () => {
  for (
    const bad of ["", "200K", "Three", "Mi", "1,3G", "1e", "1.2.3", "--1", ".", "1 Gi", "1e1.5"]
  ) {
    throws(() => parseQuantity(bad), Error, JSON.stringify(bad));
  }
});

Deno.test("quantity() and isQuantity()", () => {
  strictEqual(run("isQuantity('1.3Gi')"), true);
  strictEqual(run("isQuantity('10000k')"), true);
  strictEqual(run("isQuantity('200K')"), false);
  strictEqual(run("isQuantity(claims.q)", { q: "Mi" }), false);
  throws(() => compile("claims", "quantity('Three')", { expect: "any" }), CelCompileError);
  throws(() => run("quantity(claims.q).sign()", { q: "1,3G" }), CelEvaluationError);
});

Deno.test("isInteger, asInteger and asApproximateFloat", () => {
  strictEqual(run("quantity('50000000G').isInteger()"), true);
  strictEqual(run("quantity('50k').asInteger()"), 50000n);
  strictEqual(run("quantity('1Gi').asInteger()"), 1073741824n);
  strictEqual(run("quantity('500m').isInteger()"), false);
  strictEqual(run("quantity('9999999999999999999999999999999999999G').isInteger()"), false);
  throws(
    () => run("quantity('9999999999999999999999999999999999999G').asInteger()"),
    /cannot convert value to integer/,
  );
  throws(() => run("quantity('1.5').asInteger()"), /cannot convert value to integer/);
  strictEqual(run("quantity('500m').asApproximateFloat()"), 0.5);
  strictEqual(run("quantity('1.5').asApproximateFloat()"), 1.5);
  strictEqual(run("quantity('50k').sub(20000).asApproximateFloat() == 30000.0"), true);
});

Deno.test("sign, add and sub", () => {
  strictEqual(run("quantity('-1m').sign()"), -1n);
  strictEqual(run("quantity('0').sign()"), 0n);
  strictEqual(run("sign(quantity('5Mi'))"), 1n);
  strictEqual(run("quantity('50k').add(quantity('20k')) == quantity('70k')"), true);
  strictEqual(run("quantity('50k').add(20) == quantity('50020')"), true);
  strictEqual(run("quantity('50k').sub(quantity('20k')) == quantity('30k')"), true);
  strictEqual(run("quantity('50k').sub(20000) == quantity('30k')"), true);
  strictEqual(
    run("quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')"),
    true,
  );
  strictEqual(run("quantity('1') == quantity('1000m')"), true);
  strictEqual(run("quantity('1') != quantity('1Ki')"), true);
  throws(() => compile("claims", "quantity('1').add('2')", { expect: "any" }), CelCompileError);
});

Deno.test("isLessThan, isGreaterThan and compareTo", () => {
  strictEqual(run("quantity('200M').compareTo(quantity('0.2G'))"), 0n);
  strictEqual(run("quantity('50M').compareTo(quantity('50Mi'))"), -1n);
  strictEqual(run("quantity('50Mi').compareTo(quantity('50M'))"), 1n);
  strictEqual(run("quantity('150Mi').isGreaterThan(quantity('100Mi'))"), true);
  strictEqual(run("quantity('50Mi').isGreaterThan(quantity('100Mi'))"), false);
  strictEqual(run("quantity('50M').isLessThan(quantity('100M'))"), true);
  strictEqual(run("quantity('100M').isLessThan(quantity('50M'))"), false);
  throws(
    () => compile("claims", "quantity('1').isLessThan(1)", { expect: "any" }),
    CelCompileError,
  );
  // A map is not a Quantity, even where the checker only sees dyn.
  throws(() => run("claims.m.isLessThan(quantity('1'))", { m: {} }), /no matching overload/);
});
