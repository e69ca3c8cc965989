// The expected texts below are what kubectl 1.32 prints for the same template and object
// (checked with `kubectl annotate --local -f obj.json -o jsonpath=…`); tests/printers_kubectl_test.ts
// compares against the real kubectl end to end.
import assert from "node:assert/strict";
import { assertEquals } from "../../tests/assert.ts";
import { columnValue, compileJsonPath, JsonPathError, JsonPathParseError } from "./jsonpath.ts";

/** Runs `fn`, which must throw a `type` whose message includes `part`; returns the error. */
function assertThrows<E extends Error>(
  fn: () => unknown,
  type: new (m: string) => E,
  part = "",
): E {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof type, `expected ${type.name}, got ${e}`);
    assert.ok(
      e.message.includes(part),
      `message ${JSON.stringify(e.message)} lacks ${JSON.stringify(part)}`,
    );
    return e;
  }
  throw new Error(`expected ${type.name} to be thrown`);
}

const obj = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "demo", labels: { app: "web", "kubernetes.io/part-of": "shop" } },
  data: { a: "x<y", b: "2" },
  spec: {
    n: 3,
    f: 1.5,
    big: 1000000,
    tiny: 0.00001,
    fl: [1, 2.5],
    nul: null,
    items: [{ name: "a", v: 1 }, { name: "b", v: 2, ready: true }],
    conditions: [{ type: "Ready", status: "True" }, { type: "Synced", status: "False" }],
  },
};

function print(template: string, opts = {}): string {
  return compileJsonPath(template).print(obj, opts);
}

Deno.test("jsonpath: fields, text between actions and Go's printing of values", () => {
  assertEquals(print("name={.metadata.name} n={.spec.n}"), "name=demo n=3");
  assertEquals(
    print("{.spec.f} {.spec.big} {.spec.tiny} {.spec.fl} {.spec.nul}"),
    "1.5 1000000 1e-05 [1,2.5] null",
  );
  assertEquals(print("{.data}"), '{"a":"x\\u003cy","b":"2"}');
  assertEquals(print("{.data.a}"), "x<y");
  assertEquals(print("{@.spec.n}{$.spec.f}"), "31.5");
});

Deno.test("jsonpath: indexes, slices, wildcards and unions", () => {
  assertEquals(print("{.spec.items[0].name} {.spec.items[-1].name}"), "a b");
  assertEquals(print("{.spec.items[*].name}"), "a b");
  assertEquals(
    print("{.spec.items[1:].name}|{.spec.items[:-1].name}|{.spec.items[0:2:2].name}"),
    "b|a|a",
  );
  assertEquals(print("{.spec.items[*]['name','v']}"), "a b 1 2");
  assertEquals(print("{.spec['n','f']}"), "3 1.5");
  assertEquals(print("{.metadata.name.*}"), "100 101 109 111");
  assertEquals(print("{.metadata.labels['app']}"), "web");
  assertEquals(print("{.metadata.labels.kubernetes\\.io/part-of}"), "shop");
});

Deno.test("jsonpath: recursive descent visits containers in pre-order", () => {
  assertEquals(print("{.spec..v}"), "1 2");
  assertEquals(print("{.spec.items..name}"), "a b");
});

Deno.test("jsonpath: filters compare like Go templates", () => {
  assertEquals(print('{.spec.conditions[?(@.type=="Ready")].status}'), "True");
  assertEquals(print("{.spec.conditions[?(@.type!='Ready')].type}"), "Synced");
  assertEquals(print("{.spec.items[?(@.v>1)].name} {.spec.items[?(@.v<=1)].name}"), "b a");
  assertEquals(print('{.spec.items[?(@.name<"b")].name}'), "a");
  assertEquals(print("{.spec.items[?(@.ready)].name}"), "b");
  assertEquals(print("{.spec.items[?(@.ready==true)].name}"), "b");
  assertThrows(
    () => print("{.spec.items[?(@.v==1.0)].name}"),
    JsonPathError,
    "incompatible types for comparison",
  );
  assertThrows(
    () => print("{.spec[?(@.a)]}"),
    JsonPathError,
    "is not array or slice and cannot be filtered",
  );
});

Deno.test("jsonpath: range and end, with kubectl's edges", () => {
  assertEquals(print('{range .spec.items[*]}{.name}{"\\n"}{end}'), "a\nb\n");
  assertEquals(print("{range .spec.items[*]}[{.name}]{end}tail"), "[a][b]tail");
  assertEquals(print("{range .spec.items[*]}{.name}:{range .name}{@}{end};{end}"), "a:a;b:b;");
  assertEquals(print("{range .spec.nope[*]}{.name}{end}after"), "after");
  // Without {end} the rest runs per value and once more on the object itself.
  assertEquals(print("{range .spec.items[*]}{.name}"), "ab");
  assertThrows(() => print("{end}"), JsonPathError, "not in range, nothing to end");
});

Deno.test("jsonpath: quoted text uses Go escapes, numbers and booleans print", () => {
  assertEquals(print(`{'a\\tb'}{"c\\"d"}{'e\\'f'}{"\\u00e9\\x41\\101"}`), "a\tbc\"de'féAA");
  assertEquals(print("{1}{2.5}{true}"), "12.5true");
});

Deno.test("jsonpath: missing keys are empty, or errors when not allowed", () => {
  assertEquals(print("[{.x}] [{.spec.nul.x}] [{.}]"), "[] [] []");
  assertThrows(() => print("{.x}", { allowMissingKeys: false }), JsonPathError, "x is not found");
  assertEquals(print("{.spec.items[?(@.zz)].name}", { allowMissingKeys: false }), "");
});

Deno.test("jsonpath: index errors carry client-go's messages", () => {
  assertThrows(
    () => print("{.spec.items[5]}"),
    JsonPathError,
    "array index out of bounds: index 5, length 2",
  );
  assertThrows(
    () => print("{.spec.items[-3]}"),
    JsonPathError,
    "array index out of bounds: index -1, length 2",
  );
  assertThrows(
    () => print("{.spec.items[1:0]}"),
    JsonPathError,
    "starting index 1 is greater than ending index 0",
  );
  assertThrows(() => print("{.spec.items[0:1:0]}"), JsonPathError, "step must be > 0");
  assertThrows(() => print("{.spec.n[0]}"), JsonPathError, "int64 is not array or slice");
  assertThrows(() => print("{foo}"), JsonPathError, "unrecognized identifier foo");
});

Deno.test("jsonpath: parse errors carry client-go's messages", () => {
  const cases: [string, string][] = [
    ["{.a", "unclosed action"],
    ["{.a\t}", "unrecognized character in action: U+0009"],
    ["{~}", "unrecognized character in action: U+007E '~'"],
    ['{.spec["items"]}', 'invalid array index "items"'],
    ["{.a[0}", "unterminated array"],
    ['{.a[?(@.b=="x"].c}', "unterminated filter"],
    ["{'abc}", "unterminated quoted string"],
    ["{1.2.3}", "cannot parse number 1.2.3"],
    ["{.a....b}", "invalid multiple recursive descent"],
  ];
  for (const [template, message] of cases) {
    const err = assertThrows(() => compileJsonPath(template), JsonPathParseError);
    assertEquals(err.message, message, template);
  }
});

Deno.test("jsonpath-as-json prints each result set as an indented array", () => {
  assertEquals(print("{.spec.items[*].name}", { json: true }), '[\n    "a",\n    "b"\n]\n');
  assertEquals(print("{.x}", { json: true }), "[]\n");
});

Deno.test("jsonpath: evaluate gives plain result sets, columnValue the first value", () => {
  assertEquals(compileJsonPath("{.spec.items[*].v}{.spec.f}").evaluate(obj), [[1, 2], [1.5]]);
  assertEquals(columnValue(".spec.n", obj), 3);
  assertEquals(columnValue('.spec.conditions[?(@.type=="Ready")].status', obj), "True");
  assertEquals(columnValue(".metadata.labels.app", obj), "web");
  assertEquals(columnValue(".spec.missing", obj), undefined);
});
