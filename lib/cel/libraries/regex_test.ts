import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { CelCompileError, CelEvaluationError, compile } from "../mod.ts";
import { find, findAll } from "./regex.ts";

const run = (expression: string, claims: object = {}) =>
  compile("claims", expression, { expect: "any" }).evaluate({ claims });

Deno.test("find: the first match, or an empty string", () => {
  strictEqual(run("'abc 123'.find('[0-9]+')"), "123");
  strictEqual(run("'abc 123'.find('xyz')"), "");
  strictEqual(run("'Hello World'.find('(?i)world')"), "World");
  strictEqual(run("claims.email.find('@.*$')", { email: "jane@example.com" }), "@example.com");
  // Leftmost first, as Go's regexp: an empty match at the start wins.
  strictEqual(run("'abc 123'.find('[0-9]*')"), "");
});

Deno.test("findAll: every match, or at most n", () => {
  deepStrictEqual(run("'123 abc 456'.findAll('[0-9]+')"), ["123", "456"]);
  deepStrictEqual(run("'123 abc 456'.findAll('[0-9]+', 1)"), ["123"]);
  deepStrictEqual(run("'123 abc 456'.findAll('[0-9]+', -1)"), ["123", "456"]);
  deepStrictEqual(run("'123 abc 456'.findAll('[0-9]+', 0)"), []);
  deepStrictEqual(run("'123 abc 456'.findAll('xyz')"), []);
});

Deno.test("findAll follows Go for empty matches", () => {
  // An empty match right after a match is dropped.
  deepStrictEqual(findAll("abc", "b*", -1), ["", "b", ""]);
  deepStrictEqual(findAll("123 abc 456", "[0-9]*", -1), ["123", "", "", "", "", "456"]);
  deepStrictEqual(findAll("ab", "x*", -1), ["", "", ""]);
  deepStrictEqual(findAll("😀😀", "", -1), ["", "", ""]);
});

Deno.test("invalid patterns: at load when literal, at evaluation otherwise", () => {
  throws(() => compile("claims", "'a'.find('(')", { expect: "any" }), CelCompileError);
  throws(() => compile("claims", "'a'.findAll('[a-')", { expect: "any" }), CelCompileError);
  // Backreferences and lookarounds are not RE2.
  throws(() => compile("claims", "'aa'.find('(a)\\\\1')", { expect: "any" }), /invalid escape/);
  throws(() => run("'a'.find(claims.p)", { p: "(" }), CelEvaluationError);
  throws(() => run("'a'.findAll(claims.p)", { p: "a(?!b)" }), /unsupported Perl syntax/);
});

Deno.test("patterns have RE2's meaning", () => {
  const cases: [string, string, string[]][] = [
    ["(?i)abc|def", "ABC xDeF", ["ABC", "DeF"]],
    ["a(?i)b|c", "aB C ab", ["aB", "C", "ab"]],
    ["(?P<n>a+)b", "aab", ["aab"]],
    ["[[:alpha:]]+", "ab1cd", ["ab", "cd"]],
    ["[[:^digit:]]+", "ab1cd", ["ab", "cd"]],
    ["\\pL+", "añb 1", ["añb"]],
    ["\\p{Greek}+", "abc αβγ", ["αβγ"]],
    ["a{2,3}?", "aaaa", ["aa", "aa"]],
    ["x{,3}", "x{,3}", ["x{,3}"]],
    ["(?U)a+", "aaa", ["a", "a", "a"]],
    ["^a$", "a\na", []],
    ["(?m)^a$", "a\na", ["a", "a"]],
    ["\\Qa.b\\E", "a.b axb", ["a.b"]],
    ["[]a]+", "]a]b", ["]a]"]],
    ["\\x{41}\\x42", "AB", ["AB"]],
    ["a.b", "a\nb a\rb", ["a\rb"]],
    ["(?s:a.b)", "a\nb", ["a\nb"]],
    ["\\s+", "a\u00a0b c", [" "]],
    ["[^\\S]+", "a\u00a0b\tc", ["\t"]],
    ["\\Aab\\z", "ab", ["ab"]],
    ["\\bfoo\\b", "foo foobar", ["foo"]],
    ["[a-]+", "a-b", ["a-"]],
  ];
  for (const [pattern, input, expected] of cases) {
    deepStrictEqual(findAll(input, pattern, -1), expected, pattern);
  }
});

Deno.test("patterns that backtrack catastrophically in JS run in linear time", () => {
  // A backtracking engine (a JS RegExp) takes minutes on these; RE2 answers at once.
  const input = `${"a".repeat(47)}!`;
  strictEqual(run(`'${input}'.find('(a+)+$')`), "");
  deepStrictEqual(run(`'${input}'.findAll('(a+)+$')`), []);
  deepStrictEqual(run(`'${input}'.findAll('(a|aa)+b', 3)`), []);
  strictEqual(run("claims.s.find('(a*)*b')", { s: "a".repeat(5000) }), "");
  strictEqual(find(`${input}b`, "(a+)+b|!"), "!");
  deepStrictEqual(findAll(`${"a".repeat(30)}b ${"a".repeat(30)}`, "(a+)+b", -1), [
    `${"a".repeat(30)}b`,
  ]);
});
