import { strictEqual } from "node:assert/strict";
import { escapePropertyName, unescapePropertyName } from "./escaping.ts";

Deno.test("escapePropertyName: Kubernetes' escape sequences", () => {
  const cases: [string, string | undefined][] = [
    ["plain", "plain"],
    ["foo-bar", "foo__dash__bar"],
    ["a.b", "a__dot__b"],
    ["a/b", "a__slash__b"],
    ["x__y", "x__underscores__y"],
    ["x_y", "x_y"],
    ["namespace", "__namespace__"],
    ["in", "__in__"],
    ["while", "__while__"],
    ["namespaces", "namespaces"],
    ["-leading", "__dash__leading"],
    ["__", "__underscores__"],
    ["___", "__underscores___"],
    // Not reachable by field selection: a digit first, other characters, empty.
    ["1st", undefined],
    ["foo bar", undefined],
    ["foo@bar", undefined],
    ["", undefined],
  ];
  for (const [name, escaped] of cases) strictEqual(escapePropertyName(name), escaped, name);
});

Deno.test("unescapePropertyName inverts escaping and rejects unknown sequences", () => {
  for (const name of ["foo-bar", "a.b", "a/b", "x__y", "namespace", "a-b.c/d__e", "plain"]) {
    strictEqual(unescapePropertyName(escapePropertyName(name)!), name, name);
  }
  // A lone "__" is not an escape sequence.
  strictEqual(unescapePropertyName("x__y"), "x__y");
  strictEqual(unescapePropertyName("__private"), "__private");
  // Unknown sequences, and reserved words that are not the whole name.
  strictEqual(unescapePropertyName("a__b__c"), undefined);
  strictEqual(unescapePropertyName("a__namespace__"), undefined);
  strictEqual(unescapePropertyName("__constructor__"), undefined);
});
