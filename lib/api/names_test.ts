import { deepStrictEqual, match, ok, strictEqual, throws } from "node:assert/strict";
import {
  GENERATED_NAME_ALPHABET,
  generateName,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  MAX_GENERATED_NAME_PREFIX_LENGTH,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  nameIsPathSegment,
  nameValidationFunc,
  validatePathSegmentName,
} from "./names.ts";

const SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric " +
  "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. " +
  "'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters " +
  "or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or " +
  "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QNAME_RULE = "must consist of alphanumeric characters, '-', '_' or '.', and must start and " +
  "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used " +
  "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const NAME_PART_MSG = `name part ${QNAME_RULE}`;
const LABEL_VALUE_MSG = "a valid label must be an empty string or consist of alphanumeric " +
  "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. " +
  "'MyValue',  or 'my_value',  or '12345', regex used for validation is " +
  "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

type Case = [input: string, want: string[]];

function table(name: string, fn: (v: string) => string[], cases: Case[]) {
  Deno.test(name, async (t) => {
    for (const [input, want] of cases) {
      await t.step(JSON.stringify(input.length > 40 ? `${input.slice(0, 40)}…` : input), () => {
        deepStrictEqual(fn(input), want);
      });
    }
  });
}

table("isDNS1123Subdomain", isDNS1123Subdomain, [
  ["a", []],
  ["example.com", []],
  ["my-name.example.com", []],
  ["0", []],
  ["1.2.3.4", []],
  ["a".repeat(253), []],
  [`${"a".repeat(63)}.${"b".repeat(63)}`, []],
  ["", [SUBDOMAIN_MSG]],
  ["A", [SUBDOMAIN_MSG]],
  ["Example.com", [SUBDOMAIN_MSG]],
  ["-a", [SUBDOMAIN_MSG]],
  ["a-", [SUBDOMAIN_MSG]],
  [".a", [SUBDOMAIN_MSG]],
  ["a.", [SUBDOMAIN_MSG]],
  ["a..b", [SUBDOMAIN_MSG]],
  ["a_b", [SUBDOMAIN_MSG]],
  ["a b", [SUBDOMAIN_MSG]],
  ["a/b", [SUBDOMAIN_MSG]],
  ["é", [SUBDOMAIN_MSG]],
  ["a".repeat(254), ["must be no more than 253 characters"]],
  ["A".repeat(254), ["must be no more than 253 characters", SUBDOMAIN_MSG]],
]);

table("isDNS1123Label", isDNS1123Label, [
  ["a", []],
  ["my-ns", []],
  ["123-abc", []],
  ["a".repeat(63), []],
  ["", [LABEL_MSG]],
  ["My-ns", [LABEL_MSG]],
  ["-a", [LABEL_MSG]],
  ["a-", [LABEL_MSG]],
  ["a_b", [LABEL_MSG]],
  ["a.b", ["must not contain dots"]],
  ["a.", [LABEL_MSG]],
  ["a".repeat(64), ["must be no more than 63 characters"]],
  [`${"a".repeat(32)}.${"a".repeat(32)}`, [
    "must be no more than 63 characters",
    "must not contain dots",
  ]],
  ["A".repeat(64), ["must be no more than 63 characters", LABEL_MSG]],
]);

table("isQualifiedName", isQualifiedName, [
  ["a", []],
  ["MyName", []],
  ["my.name", []],
  ["123-abc", []],
  ["a_b", []],
  ["A-B.c_D", []],
  ["example.com/MyName", []],
  ["app.kubernetes.io/name", []],
  ["a".repeat(63), []],
  [`${"a".repeat(253)}/${"b".repeat(63)}`, []],
  ["", ["name part must be non-empty", NAME_PART_MSG]],
  ["bad key", [NAME_PART_MSG]],
  ["-a", [NAME_PART_MSG]],
  ["a-", [NAME_PART_MSG]],
  ["_a", [NAME_PART_MSG]],
  ["a:b", [NAME_PART_MSG]],
  ["a".repeat(64), ["name part must be no more than 63 characters"]],
  ["/a", ["prefix part must be non-empty"]],
  ["a/", ["name part must be non-empty", NAME_PART_MSG]],
  ["Example.com/a", [`prefix part ${SUBDOMAIN_MSG}`]],
  ["app.kubernetes_io/name", [`prefix part ${SUBDOMAIN_MSG}`]],
  [`${"a".repeat(254)}/b`, ["prefix part must be no more than 253 characters"]],
  ["a/b/c", [
    `a qualified name ${QNAME_RULE} with an optional DNS subdomain prefix and '/' (e.g. ` +
    "'example.com/MyName')",
  ]],
]);

table("isValidLabelValue", isValidLabelValue, [
  ["", []],
  ["a", []],
  ["MyValue", []],
  ["my_value", []],
  ["12345", []],
  ["a.b-c_d", []],
  ["a".repeat(63), []],
  ["-a", [LABEL_VALUE_MSG]],
  ["a-", [LABEL_VALUE_MSG]],
  ["a b", [LABEL_VALUE_MSG]],
  ["a/b", [LABEL_VALUE_MSG]],
  ["a".repeat(64), ["must be no more than 63 characters"]],
  ["é".repeat(32), ["must be no more than 63 characters", LABEL_VALUE_MSG]],
]);

table("validatePathSegmentName", (v) => validatePathSegmentName(v), [
  ["a", []],
  ["system:admin", []],
  ["Any Thing", []],
  ["...", []],
  [".", ["may not be '.'"]],
  ["..", ["may not be '..'"]],
  ["a/b", ["may not contain '/'"]],
  ["a%b", ["may not contain '%'"]],
  ["a/%", ["may not contain '/'", "may not contain '%'"]],
  ["a\u0000b", ["may not contain control characters"]],
  ["a\nb", ["may not contain control characters"]],
  ["\u001b[31mred", ["may not contain control characters"]],
  ["a\u007fb", ["may not contain control characters"]],
  ["a\ud800b", ["may not contain unpaired surrogates"]],
  ["caf\u00e9 \ud83d\ude00", []],
]);

Deno.test("validatePathSegmentName with prefix checks only characters", () => {
  deepStrictEqual(validatePathSegmentName(".", { prefix: true }), []);
  deepStrictEqual(validatePathSegmentName("..", { prefix: true }), []);
  deepStrictEqual(validatePathSegmentName("a/", { prefix: true }), ["may not contain '/'"]);
});

Deno.test("name functions", async (t) => {
  await t.step("nameIsDNSSubdomain", () => {
    deepStrictEqual(nameIsDNSSubdomain("a.b"), []);
    deepStrictEqual(nameIsDNSSubdomain("A"), [SUBDOMAIN_MSG]);
    deepStrictEqual(nameIsDNSSubdomain("web-"), [SUBDOMAIN_MSG]);
  });
  await t.step("a generateName may end in a dash", () => {
    deepStrictEqual(nameIsDNSSubdomain("web-", { prefix: true }), []);
    deepStrictEqual(nameIsDNSSubdomain("a.b-", { prefix: true }), []);
    deepStrictEqual(nameIsDNSLabel("web-", { prefix: true }), []);
    deepStrictEqual(nameIsDNSSubdomain("-", { prefix: true }), [SUBDOMAIN_MSG]);
    deepStrictEqual(nameIsDNSSubdomain("Web-", { prefix: true }), [SUBDOMAIN_MSG]);
    deepStrictEqual(nameIsDNSSubdomain("A-", { prefix: true }), []); // kube: "a"
    deepStrictEqual(nameIsDNSSubdomain("a..-", { prefix: true }), []); // kube: "a.a"
    deepStrictEqual(nameIsDNSSubdomain("a...-", { prefix: true }), [SUBDOMAIN_MSG]);
  });
  await t.step("nameIsDNSLabel", () => {
    deepStrictEqual(nameIsDNSLabel("ns-1"), []);
    deepStrictEqual(nameIsDNSLabel("a.b"), ["must not contain dots"]);
  });
  await t.step("nameIsPathSegment", () => {
    deepStrictEqual(nameIsPathSegment("system:controller:x"), []);
    deepStrictEqual(nameIsPathSegment(".."), ["may not be '..'"]);
    deepStrictEqual(nameIsPathSegment("..", { prefix: true }), []);
  });
});

Deno.test("nameValidationFunc picks a rule by name", () => {
  strictEqual(nameValidationFunc("dns1123Subdomain"), nameIsDNSSubdomain);
  strictEqual(nameValidationFunc("dns1123Label"), nameIsDNSLabel);
  strictEqual(nameValidationFunc("pathSegment"), nameIsPathSegment);
  const custom = () => ["no"];
  strictEqual(nameValidationFunc(custom), custom);
  throws(() => nameValidationFunc("toString" as "pathSegment"), TypeError);
});

Deno.test("generateName", async (t) => {
  const suffix = new RegExp(`^[${GENERATED_NAME_ALPHABET}]{5}$`);
  await t.step("appends 5 characters of kube's alphabet", () => {
    const name = generateName("web-");
    strictEqual(name.length, 9);
    ok(name.startsWith("web-"));
    match(name.slice(4), suffix);
  });
  await t.step("empty prefix", () => {
    match(generateName(""), suffix);
  });
  await t.step("long prefixes are cut to 58 so the name fits in 63", () => {
    strictEqual(MAX_GENERATED_NAME_PREFIX_LENGTH, 58);
    const name = generateName("p".repeat(100));
    strictEqual(name.length, 63);
    ok(name.startsWith("p".repeat(58)));
    match(name.slice(58), suffix);
    strictEqual(generateName("p".repeat(58)).length, 63);
    strictEqual(generateName("p".repeat(57)).length, 62);
  });
  await t.step("result is a valid name and varies", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const name = generateName("x-");
      deepStrictEqual(nameIsDNSSubdomain(name), []);
      seen.add(name);
    }
    ok(seen.size > 190);
  });
  await t.step("every character of the alphabet occurs", () => {
    const chars = new Set(Array.from({ length: 400 }, () => generateName("")).join(""));
    strictEqual(chars.size, GENERATED_NAME_ALPHABET.length);
  });
});
