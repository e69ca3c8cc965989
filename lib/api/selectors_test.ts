import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import { StatusError } from "./errors.ts";
import {
  escapeFieldValue,
  type FieldRequirement,
  type LabelRequirement,
  LabelSelector,
  labelSelectorFromObject,
  type LabelSelectorObject,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
} from "./selectors.ts";

const NAME_PART_MSG = "name part must consist of alphanumeric characters, '-', '_' or '.', and " +
  "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or " +
  "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG = "a valid label must be an empty string or consist of alphanumeric " +
  "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. " +
  "'MyValue',  or 'my_value',  or '12345', regex used for validation is " +
  "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const OPERATORS = "in, notin, =, ==, !=, gt, lt";

/** Asserts `fn` throws a 400 BadRequest StatusError with exactly `message`. */
function throwsBadRequest(fn: () => unknown, message: string) {
  throws(fn, (e: unknown) => {
    ok(e instanceof StatusError, `not a StatusError: ${e}`);
    strictEqual(e.message, message);
    strictEqual(e.code, 400);
    strictEqual(e.reason, "BadRequest");
    return true;
  });
}

function req(key: string, operator: LabelRequirement["operator"], ...values: string[]) {
  return { key, operator, values };
}

// ---- label selectors ----

const validLabelSelectors: [input: string, requirements: LabelRequirement[], text: string][] = [
  ["", [], ""],
  ["   ", [], ""],
  ["x=a", [req("x", "=", "a")], "x=a"],
  ["x==a", [req("x", "==", "a")], "x==a"],
  ["x!=a", [req("x", "!=", "a")], "x!=a"],
  ["x=", [req("x", "=", "")], "x="],
  ["x=,y=b", [req("x", "=", ""), req("y", "=", "b")], "x=,y=b"],
  ["x!=,y=b", [req("x", "!=", ""), req("y", "=", "b")], "x!=,y=b"],
  ["x=a,y=b,z=c", [req("x", "=", "a"), req("y", "=", "b"), req("z", "=", "c")], "x=a,y=b,z=c"],
  ["z=c,x=a", [req("x", "=", "a"), req("z", "=", "c")], "x=a,z=c"],
  ["x=a,x=b", [req("x", "=", "a"), req("x", "=", "b")], "x=a,x=b"],
  ["x in (a,b)", [req("x", "in", "a", "b")], "x in (a,b)"],
  ["x in (b,a,b)", [req("x", "in", "a", "b")], "x in (a,b)"],
  ["x notin (a)", [req("x", "notin", "a")], "x notin (a)"],
  ["x in ()", [req("x", "in", "")], "x in ()"],
  ["x notin ()", [req("x", "notin", "")], "x notin ()"],
  ["x in (,)", [req("x", "in", "")], "x in ()"],
  ["x in (,a)", [req("x", "in", "", "a")], "x in (,a)"],
  ["x in (a,)", [req("x", "in", "", "a")], "x in (,a)"],
  ["x in (a,,b)", [req("x", "in", "", "a", "b")], "x in (,a,b)"],
  ["x in(a)", [req("x", "in", "a")], "x in (a)"],
  ["x", [req("x", "exists")], "x"],
  ["!x", [req("x", "!")], "!x"],
  ["! x", [req("x", "!")], "!x"],
  ["x,!y", [req("x", "exists"), req("y", "!")], "x,!y"],
  ["x>1", [req("x", "gt", "1")], "x>1"],
  ["x<5,x>1", [req("x", "lt", "5"), req("x", "gt", "1")], "x<5,x>1"],
  [
    " x = a ,\ty\tin ( b , c ) ,\n!z ",
    [req("x", "=", "a"), req("y", "in", "b", "c"), req("z", "!")],
    "x=a,y in (b,c),!z",
  ],
  [
    "app.kubernetes.io/name=web",
    [req("app.kubernetes.io/name", "=", "web")],
    "app.kubernetes.io/name=web",
  ],
  ["a_b.C-d=E_f.g-H", [req("a_b.C-d", "=", "E_f.g-H")], "a_b.C-d=E_f.g-H"],
  ["in in (in,notin)", [req("in", "in", "in", "notin")], "in in (in,notin)"],
  ["notin=in", [req("notin", "=", "in")], "notin=in"],
];

Deno.test("parseLabelSelector accepts kube's syntax", async (t) => {
  for (const [input, requirements, text] of validLabelSelectors) {
    await t.step(JSON.stringify(input), () => {
      const sel = parseLabelSelector(input);
      deepStrictEqual(sel.requirements.map((r) => ({ ...r, values: [...r.values] })), requirements);
      strictEqual(sel.toString(), text);
      strictEqual(sel.isEmpty(), requirements.length === 0);
      // The canonical form parses back to the same selector.
      strictEqual(parseLabelSelector(text).toString(), text);
    });
  }
});

const invalidLabelSelectors: [input: string, message: string][] = [
  [",x=a", `found ',', expected: !, identifier, or 'end of string'`],
  ["=a", `found '=', expected: !, identifier, or 'end of string'`],
  ["(x)", `found '(', expected: !, identifier, or 'end of string'`],
  ["x=a,", `found '', expected: identifier after ','`],
  ["x=a,,y=b", `found ',', expected: identifier after ','`],
  ["x=a,=b", `found '=', expected: identifier after ','`],
  ["x==a==b", `found '==', expected: ',' or 'end of string'`],
  ["!x=a", `found '=', expected: ',' or 'end of string'`],
  ["x=a y=b", `found 'y', expected: ',' or 'end of string'`],
  ["x y", `unable to parse requirement: found 'y', expected: ${OPERATORS}`],
  ["x!", `unable to parse requirement: found '!', expected: ${OPERATORS}`],
  ["x(a)", `unable to parse requirement: found '(', expected: ${OPERATORS}`],
  ["!", "unable to parse requirement: found '', expected: identifier"],
  ["!=a", `found '!=', expected: !, identifier, or 'end of string'`],
  ["!!x", "unable to parse requirement: found '!', expected: identifier"],
  ["x=(a)", "unable to parse requirement: found '(', expected: identifier"],
  ["x=!a", "unable to parse requirement: found '!', expected: identifier"],
  ["x>=1", "unable to parse requirement: found '=', expected: identifier"],
  ["x in a", "unable to parse requirement: found 'a' expected: '('"],
  ["x in", "unable to parse requirement: found '' expected: '('"],
  ["x in (a", "unable to parse requirement: found '', expected: ',' or ')'"],
  ["x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"],
  ["x in (", "unable to parse requirement: found '', expected: ',', ')' or identifier"],
  ["x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
  ["x in (a,=)", "unable to parse requirement: found '=', expected: ',', or identifier"],
  [
    "app:monolith",
    `unable to parse requirement: <nil>: Invalid value: "app:monolith": ${NAME_PART_MSG}`,
  ],
  ["*bar", `unable to parse requirement: <nil>: Invalid value: "*bar": ${NAME_PART_MSG}`],
  [
    "a/b/c=x",
    `unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name must consist ` +
    "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric " +
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' " +
    "(e.g. 'example.com/MyName')",
  ],
  [
    `${"k".repeat(64)}=v`,
    `unable to parse requirement: <nil>: Invalid value: "${"k".repeat(64)}": ` +
    "name part must be no more than 63 characters",
  ],
  ["x=-a", `unable to parse requirement: values[0][x]: Invalid value: "-a": ${LABEL_VALUE_MSG}`],
  [
    "x=a||y=b",
    `unable to parse requirement: values[0][x]: Invalid value: "a||y": ${LABEL_VALUE_MSG}`,
  ],
  [
    "x in (b,-a)",
    `unable to parse requirement: values[0][x]: Invalid value: "-a": ${LABEL_VALUE_MSG}`,
  ],
  [
    "x in (_b,-a)",
    `unable to parse requirement: [values[0][x]: Invalid value: "-a": ${LABEL_VALUE_MSG}, ` +
    `values[1][x]: Invalid value: "_b": ${LABEL_VALUE_MSG}]`,
  ],
  [
    `x=${"v".repeat(64)}`,
    `unable to parse requirement: values[0][x]: Invalid value: "${"v".repeat(64)}": ` +
    "must be no more than 63 characters",
  ],
  [
    "x<a",
    `unable to parse requirement: values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, ` +
    "the value must be an integer",
  ],
  [
    "x>",
    `unable to parse requirement: values[0]: Invalid value: "": for 'Gt', 'Lt' operators, ` +
    "the value must be an integer",
  ],
  [
    "x>99999999999999999999",
    `unable to parse requirement: values[0]: Invalid value: "99999999999999999999": for 'Gt', ` +
    "'Lt' operators, the value must be an integer",
  ],
];

Deno.test("parseLabelSelector rejects bad input with kube's messages", async (t) => {
  for (const [input, message] of invalidLabelSelectors) {
    await t.step(JSON.stringify(input), () => {
      throwsBadRequest(() => parseLabelSelector(input), message);
    });
  }
});

const labelMatches: [
  selector: string,
  labels: Record<string, string> | undefined,
  want: boolean,
][] = [
  ["", undefined, true],
  ["", { a: "b" }, true],
  ["x=a", { x: "a" }, true],
  ["x=a", { x: "b" }, false],
  ["x=a", {}, false],
  ["x=a", undefined, false],
  ["x==a", { x: "a", y: "b" }, true],
  ["x=", { x: "" }, true],
  ["x=", {}, false],
  ["x!=a", { x: "b" }, true],
  ["x!=a", {}, true],
  ["x!=a", { x: "a" }, false],
  ["x in (a,b)", { x: "b" }, true],
  ["x in (a,b)", { x: "c" }, false],
  ["x in (a,b)", {}, false],
  ["x in ()", { x: "" }, true],
  ["x notin (a,b)", { x: "c" }, true],
  ["x notin (a,b)", {}, true],
  ["x notin (a,b)", { x: "a" }, false],
  ["x", { x: "" }, true],
  ["x", { y: "" }, false],
  ["!x", { y: "" }, true],
  ["!x", { x: "" }, false],
  ["x>1", { x: "2" }, true],
  ["x>1", { x: "1" }, false],
  ["x>1", { x: "abc" }, false],
  ["x>1", {}, false],
  ["x<10", { x: "9" }, true],
  ["x<10", { x: "-3" }, true],
  ["x<10", { x: "10" }, false],
  ["x>1,x<3", { x: "2" }, true],
  ["x>1,x<3", { x: "3" }, false],
  ["a=b,c in (d),!e", { a: "b", c: "d" }, true],
  ["a=b,c in (d),!e", { a: "b", c: "d", e: "" }, false],
  ["constructor", {}, false],
  ["toString", { toString: "x" }, true],
];

Deno.test("matchesLabels", async (t) => {
  for (const [selector, labels, want] of labelMatches) {
    await t.step(`${JSON.stringify(selector)} on ${JSON.stringify(labels)}`, () => {
      const sel = parseLabelSelector(selector);
      strictEqual(matchesLabels(sel, labels), want);
      strictEqual(sel.matches(labels), want);
    });
  }
});

Deno.test("LabelSelector everything and nothing", () => {
  const all = LabelSelector.everything();
  ok(all.isEmpty());
  ok(all.matches(undefined));
  strictEqual(all.toString(), "");
  const none = LabelSelector.nothing();
  ok(!none.isEmpty());
  ok(!none.matches({}));
  ok(!none.matches({ a: "b" }));
  strictEqual(none.toString(), "");
});

Deno.test("LabelSelector requiresExactMatch", () => {
  const sel = parseLabelSelector("a=1,b==2,c in (3),d in (4,5),e!=6,f");
  strictEqual(sel.requiresExactMatch("a"), "1");
  strictEqual(sel.requiresExactMatch("b"), "2");
  strictEqual(sel.requiresExactMatch("c"), "3");
  strictEqual(sel.requiresExactMatch("d"), undefined);
  strictEqual(sel.requiresExactMatch("e"), undefined);
  strictEqual(sel.requiresExactMatch("f"), undefined);
  strictEqual(sel.requiresExactMatch("g"), undefined);
});

const validSelectorObjects: [obj: LabelSelectorObject | null | undefined, text: string][] = [
  [{}, ""],
  [{ matchLabels: {}, matchExpressions: [] }, ""],
  [{ matchLabels: null, matchExpressions: null }, ""],
  [{ matchLabels: { b: "2", a: "1" } }, "a=1,b=2"],
  [{ matchExpressions: [{ key: "x", operator: "In", values: ["b", "a"] }] }, "x in (a,b)"],
  [{ matchExpressions: [{ key: "x", operator: "NotIn", values: ["a"] }] }, "x notin (a)"],
  [{ matchExpressions: [{ key: "x", operator: "Exists" }] }, "x"],
  [{ matchExpressions: [{ key: "x", operator: "DoesNotExist", values: [] }] }, "!x"],
  [
    {
      matchLabels: { z: "1" },
      matchExpressions: [{ key: "a", operator: "Exists" }, {
        key: "m",
        operator: "In",
        values: [""],
      }],
    },
    "a,m in (),z=1",
  ],
];

Deno.test("labelSelectorFromObject converts the JSON form", async (t) => {
  for (const [obj, text] of validSelectorObjects) {
    await t.step(JSON.stringify(obj), () => {
      const sel = labelSelectorFromObject(obj);
      strictEqual(sel.toString(), text);
      strictEqual(sel.isEmpty(), text === "");
      // The string form selects the same thing.
      strictEqual(parseLabelSelector(text).toString(), text);
    });
  }
  await t.step("absent selects nothing, empty everything", () => {
    ok(!labelSelectorFromObject(null).matches({ a: "b" }));
    ok(!labelSelectorFromObject(undefined).matches({}));
    ok(labelSelectorFromObject({}).matches({ a: "b" }));
  });
  await t.step("matching", () => {
    const sel = labelSelectorFromObject({
      matchLabels: { app: "web" },
      matchExpressions: [
        { key: "tier", operator: "In", values: ["front", "back"] },
        { key: "canary", operator: "DoesNotExist" },
      ],
    });
    ok(sel.matches({ app: "web", tier: "front" }));
    ok(!sel.matches({ app: "web", tier: "db" }));
    ok(!sel.matches({ app: "web", tier: "front", canary: "true" }));
    ok(!sel.matches({ tier: "front" }));
  });
});

const invalidSelectorObjects: [obj: unknown, message: string][] = [
  [
    { matchExpressions: [{ key: "x", operator: "In", values: [] }] },
    "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
  ],
  [
    { matchExpressions: [{ key: "x", operator: "NotIn" }] },
    "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
  ],
  [
    { matchExpressions: [{ key: "x", operator: "Exists", values: ["a"] }] },
    'values: Invalid value: []string{"a"}: values set must be empty for exists and does not exist',
  ],
  [
    { matchExpressions: [{ key: "x", operator: "Equals", values: ["a"] }] },
    '"Equals" is not a valid label selector operator',
  ],
  [
    { matchExpressions: [{ key: "x", operator: "toString", values: ["a"] }] },
    '"toString" is not a valid label selector operator',
  ],
  [{ matchLabels: { "bad key": "v" } }, `key: Invalid value: "bad key": ${NAME_PART_MSG}`],
  [{ matchLabels: { a: "-v" } }, `values[0][a]: Invalid value: "-v": ${LABEL_VALUE_MSG}`],
  [
    { matchExpressions: [{ key: "-k", operator: "In", values: ["ok", "-v"] }] },
    `[key: Invalid value: "-k": ${NAME_PART_MSG}, ` +
    `values[1][-k]: Invalid value: "-v": ${LABEL_VALUE_MSG}]`,
  ],
  [{ matchLabels: { a: 1 } }, "invalid label selector: matchLabels[a] must be a string"],
  [{ matchLabels: ["a"] }, "invalid label selector: matchLabels must be an object"],
  [{ matchExpressions: {} }, "invalid label selector: matchExpressions must be an array"],
  [
    { matchExpressions: [{ key: "x", operator: "In", values: [1] }] },
    "invalid label selector: matchExpressions[0] must have a string key and operator and string " +
    "values",
  ],
  ["x=y", "invalid label selector: must be an object"],
];

Deno.test("labelSelectorFromObject rejects bad selectors", async (t) => {
  for (const [obj, message] of invalidSelectorObjects) {
    await t.step(JSON.stringify(obj), () => {
      throwsBadRequest(() => labelSelectorFromObject(obj as LabelSelectorObject), message);
    });
  }
});

// ---- field selectors ----

const FIELDS = ["metadata.name", "metadata.namespace", "spec.signerName", "a", "b"];

function freq(field: string, operator: "=" | "!=", value: string): FieldRequirement {
  return { field, operator, value };
}

const validFieldSelectors: [input: string, requirements: FieldRequirement[], text: string][] = [
  ["", [], ""],
  [",", [], ""],
  ["metadata.name=x", [freq("metadata.name", "=", "x")], "metadata.name=x"],
  ["metadata.name==x", [freq("metadata.name", "=", "x")], "metadata.name=x"],
  ["metadata.name!=x", [freq("metadata.name", "!=", "x")], "metadata.name!=x"],
  ["metadata.name=", [freq("metadata.name", "=", "")], "metadata.name="],
  ["b=2,a=1", [freq("a", "=", "1"), freq("b", "=", "2")], "a=1,b=2"],
  [",a=1,,b!=2,", [freq("a", "=", "1"), freq("b", "!=", "2")], "a=1,b!=2"],
  ["a=x\\,y", [freq("a", "=", "x,y")], "a=x\\,y"],
  ["a=x\\=y", [freq("a", "=", "x=y")], "a=x\\=y"],
  ["a=x\\\\y", [freq("a", "=", "x\\y")], "a=x\\\\y"],
  ["a=x\\!y", [freq("a", "=", "x!y")], "a=x!y"],
  ["a=x!y", [freq("a", "=", "x!y")], "a=x!y"],
  ["a=\\,\\,,b=\\\\", [freq("a", "=", ",,"), freq("b", "=", "\\")], "a=\\,\\,,b=\\\\"],
  ["a= spaced value ", [freq("a", "=", " spaced value ")], "a= spaced value "],
  [
    "spec.signerName=example.com/signer",
    [freq("spec.signerName", "=", "example.com/signer")],
    "spec.signerName=example.com/signer",
  ],
];

Deno.test("parseFieldSelector accepts kube's syntax", async (t) => {
  for (const [input, requirements, text] of validFieldSelectors) {
    await t.step(JSON.stringify(input), () => {
      const sel = parseFieldSelector(input, FIELDS);
      deepStrictEqual(sel.requirements.map((r) => ({ ...r })), requirements);
      strictEqual(sel.toString(), text);
      strictEqual(sel.isEmpty(), requirements.length === 0);
      strictEqual(parseFieldSelector(text, new Set(FIELDS)).toString(), text);
    });
  }
});

const invalidFieldSelectors: [input: string, message: string][] = [
  ["a", "invalid selector: 'a'; can't understand 'a'"],
  ["a=1,b", "invalid selector: 'a=1,b'; can't understand 'b'"],
  ["b,a", "invalid selector: 'b,a'; can't understand 'a'"],
  ["a>1", "invalid selector: 'a>1'; can't understand 'a>1'"],
  ["a in (x)", "invalid selector: 'a in (x)'; can't understand 'a in (x)'"],
  ["a=b=c", "invalid field selector: unescaped character in value: 61"],
  ["a==b=c", "invalid field selector: unescaped character in value: 61"],
  ["a=x\\y", "invalid field selector: invalid escape sequence: \\y"],
  ["a=x\\", "invalid field selector: invalid escape sequence: \\"],
  ["foo=bar", "field label not supported: foo"],
  ["metadata.name=x,zzz=1,yyy=2", "field label not supported: yyy"],
  ["metadata.name = x", "field label not supported: metadata.name "],
  ["=x", "field label not supported: "],
  ["a!b=c", "field label not supported: a!b"],
  ["a\\=b", "field label not supported: a\\"],
  ["a\\=b=c", "invalid field selector: unescaped character in value: 61"],
];

Deno.test("parseFieldSelector rejects bad input with kube's messages", async (t) => {
  for (const [input, message] of invalidFieldSelectors) {
    await t.step(JSON.stringify(input), () => {
      throwsBadRequest(() => parseFieldSelector(input, FIELDS), message);
    });
  }
  await t.step("a parse error wins over an unsupported field", () => {
    throwsBadRequest(
      () => parseFieldSelector("foo=1,bar", FIELDS),
      "invalid selector: 'foo=1,bar'; can't understand 'bar'",
    );
  });
  await t.step("nothing is allowed", () => {
    throwsBadRequest(() => parseFieldSelector("a=1", []), "field label not supported: a");
    ok(parseFieldSelector("", []).isEmpty());
  });
});

const fieldMatches: [selector: string, fields: Record<string, string>, want: boolean][] = [
  ["", {}, true],
  ["a=1", { a: "1" }, true],
  ["a=1", { a: "2" }, false],
  ["a==1", { a: "1" }, true],
  ["a!=1", { a: "2" }, true],
  ["a!=1", { a: "1" }, false],
  ["a=", {}, true],
  ["a!=", {}, false],
  ["a!=1", {}, true],
  ["a=1", {}, false],
  ["a=1,b=2", { a: "1", b: "2" }, true],
  ["a=1,b=2", { a: "1", b: "3" }, false],
  ["a=x\\,y", { a: "x,y" }, true],
];

Deno.test("matchesFields", async (t) => {
  for (const [selector, fields, want] of fieldMatches) {
    await t.step(`${JSON.stringify(selector)} on ${JSON.stringify(fields)}`, () => {
      const sel = parseFieldSelector(selector, FIELDS);
      strictEqual(matchesFields(sel, fields), want);
      strictEqual(sel.matches(fields), want);
    });
  }
});

Deno.test("FieldSelector requiresExactMatch finds single-object selections", () => {
  const one = parseFieldSelector("metadata.namespace=ns,metadata.name=web", FIELDS);
  strictEqual(one.requiresExactMatch("metadata.name"), "web");
  strictEqual(one.requiresExactMatch("metadata.namespace"), "ns");
  strictEqual(one.requiresExactMatch("spec.signerName"), undefined);
  const not = parseFieldSelector("metadata.name!=web", FIELDS);
  strictEqual(not.requiresExactMatch("metadata.name"), undefined);
  deepStrictEqual(
    parseFieldSelector("metadata.name==web", FIELDS).requirements,
    [{ field: "metadata.name", operator: "=", value: "web" }],
  );
});

Deno.test("escapeFieldValue round-trips through parseFieldSelector", () => {
  for (const value of ["plain", "a,b", "a=b", "a\\b", "\\,=\\", "a!=b", ""]) {
    const sel = parseFieldSelector(`a=${escapeFieldValue(value)}`, FIELDS);
    strictEqual(sel.requirements[0].value, value);
    ok(sel.matches({ a: value }));
  }
});

Deno.test("parsed selectors are immutable", () => {
  const sel = parseLabelSelector("a in (b)");
  throws(() => (sel.requirements as LabelRequirement[]).push(req("c", "exists")));
  throws(() => (sel.requirements[0].values as string[]).push("x"));
  const fsel = parseFieldSelector("a=1", FIELDS);
  throws(() => ((fsel.requirements[0] as { value: string }).value = "2"));
});
