import { parse } from "yaml";
import { assert, assertEquals, assertMatch } from "../../tests/assert.ts";
import { StatusError } from "../api/errors.ts";
import { MAX_NESTING_DEPTH } from "../api/nesting.ts";
import { decodeYaml } from "./yaml_decode.ts";

function refused(text: string): StatusError {
  try {
    decodeYaml(text);
  } catch (err) {
    assert(err instanceof StatusError, `expected a StatusError, got ${err}`);
    assertEquals(err.code, 400);
    return err;
  }
  throw new Error("expected the YAML to be refused");
}

Deno.test("decodeYaml gives what the yaml package gave for manifests (YAML 1.2 core schema)", () => {
  const manifests = [
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {a: b}\ndata:\n  n: '1'\n",
    "spec:\n  replicas: 3\n  ratio: 0.5\n  on: yes\n  off: false\n  none: ~\n  hex: 0x1f\n  oct: 0o17\n" +
    "  date: 2001-12-14\n  list:\n  - a\n  - {b: [1, 2]}\n  text: |\n    line one\n    line two\n",
    "quoted: \"a\\tb\\u00e9\"\nsingle: 'it''s'\nfolded: >\n  one\n  two\n# comment\n",
    "a: &x {k: v}\nb: *x\n",
  ];
  for (const m of manifests) assertEquals(decodeYaml(m).value, parse(m));
  assertEquals(decodeYaml("# only a comment\n").value, null);
});

Deno.test("decodeYaml reports repeated keys with their paths, the last value winning", () => {
  const d = decodeYaml(
    "metadata:\n  name: a\n  name: b\nspec:\n  c:\n  - n: 1\n  - {n: 1, n: 2}\n  p: 1\n  'p': 2\n",
  );
  assertEquals(d.duplicateFields, ["metadata.name", "spec.c[1].n", "spec.p"]);
  assertEquals(d.value, { metadata: { name: "b" }, spec: { c: [{ n: 1 }, { n: 2 }], p: 2 } });
  // Equal keys in different mappings are fine; so are keys in a sequence of scalars.
  assertEquals(decodeYaml("x: {k: 1}\ny: {k: 1}\nz: [k, k]\n").duplicateFields, []);
  assertEquals(decodeYaml("a: [{b: {c: 1, c: 2}}]\n").duplicateFields, ["a[0].b.c"]);
});

Deno.test("decodeYaml refuses nesting deeper than the limit, in flow and block style", () => {
  const flow = (n: number) => `a: ${"[".repeat(n - 1)}${"]".repeat(n - 1)}\n`;
  assertEquals(decodeYaml(flow(MAX_NESTING_DEPTH)).duplicateFields, []);
  assertMatch(refused(flow(MAX_NESTING_DEPTH + 1)).message, /^error converting YAML to JSON: /);
  // Far beyond the limit the parser would run out of stack: still a 400.
  assertMatch(refused(flow(50_000)).message, /max ?depth/i);
  const block = Array.from({ length: MAX_NESTING_DEPTH + 1 }, (_, i) => `${" ".repeat(i)}k:`);
  refused(`${block.join("\n")} 1\n`);
});

Deno.test("decodeYaml refuses aliases that expand exponentially, and several documents", () => {
  const laughs = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i < 10; i++) {
    const prev = String.fromCharCode(96 + i);
    const next = String.fromCharCode(97 + i);
    laughs.push(`${next}: &${next} [${Array(10).fill(`*${prev}`).join(", ")}]`);
  }
  assertMatch(refused(laughs.join("\n")).message, /aliases expand to more than/);
  assertMatch(refused("a: 1\n---\nb: 2\n").message, /more than one YAML document/);
  assertMatch(refused("metadata: [unclosed\n").message, /^error converting YAML to JSON: yaml: /);
});
