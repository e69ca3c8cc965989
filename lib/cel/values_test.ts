import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { CelEvaluationError } from "./errors.ts";
import { BOOL, DYN, INT, listOf, mapOf, NULL, opaque, STRING, TYPE } from "./types.ts";
import { resultTypeProblem, resultValue, toCelInput } from "./values.ts";

Deno.test("toCelInput: integral numbers become int, the rest stays", () => {
  strictEqual(toCelInput(5, "x"), 5n);
  strictEqual(toCelInput(-0, "x"), 0n);
  strictEqual(toCelInput(1.5, "x"), 1.5);
  strictEqual(toCelInput(2 ** 63, "x"), 2 ** 63);
  strictEqual(toCelInput(7n, "x"), 7n);
  deepStrictEqual(toCelInput([1, "a", null, true], "x"), [1n, "a", null, true]);
  // Objects become maps; undefined properties are absent, as in JSON.
  deepStrictEqual(
    toCelInput({ a: 1, b: undefined, c: { d: 2.5 } }, "x"),
    new Map<string, unknown>([
      ["a", 1n],
      ["c", new Map([["d", 2.5]])],
    ]),
  );
  throws(() => toCelInput({ when: new Date() }, "claims"), {
    name: "CelEvaluationError",
    message: "claims.when: cannot pass a Date to CEL",
  });
  throws(() => toCelInput([undefined], "xs"), { message: "xs[0]: cannot pass undefined to CEL" });
});

Deno.test("resultValue checks the expected kind", () => {
  strictEqual(resultValue(true, "bool"), true);
  strictEqual(resultValue("a", "string"), "a");
  strictEqual(resultValue(null, "string|list<string>"), null);
  throws(() => resultValue("a", "bool"), CelEvaluationError);
  throws(() => resultValue(1n, "string|list<string>"), /a string or a list of strings, got int/);
  strictEqual(resultValue(3n, "any"), 3n);
});

Deno.test("resultTypeProblem: only types that can never fit are rejected", () => {
  strictEqual(resultTypeProblem(DYN, "bool"), undefined);
  strictEqual(resultTypeProblem(BOOL, "bool"), undefined);
  strictEqual(resultTypeProblem(INT, "bool"), "expression must evaluate to a boolean, got int");
  strictEqual(resultTypeProblem(listOf(DYN), "string|list<string>"), undefined);
  strictEqual(resultTypeProblem(listOf(STRING), "string|list<string>"), undefined);
  strictEqual(resultTypeProblem(NULL, "string|list<string>"), undefined);
  strictEqual(
    resultTypeProblem(listOf(INT), "string|list<string>"),
    "expression must evaluate to a string or a list of strings, got list(int)",
  );
  strictEqual(resultTypeProblem(mapOf(STRING, listOf(STRING)), "any"), undefined);
  strictEqual(resultTypeProblem(TYPE, "any"), "expression must evaluate to a value, got type");
  strictEqual(
    resultTypeProblem(listOf(opaque("kubernetes.URL")), "any"),
    "expression must evaluate to a value, got list(kubernetes.URL)",
  );
});
