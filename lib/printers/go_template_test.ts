// The expected texts are what kubectl 1.32 prints for the same template and object (checked
// with `kubectl annotate --local -f obj.json -o go-template=…`); tests/printers_kubectl_test.ts
// compares against the real kubectl end to end.
import assert from "node:assert/strict";
import { assertEquals } from "../../tests/assert.ts";
import { compileGoTemplate, TemplateSyntaxError } from "./go_template.ts";
import { goSprintf } from "./go_fmt.ts";
import { GoFloat, GoInt } from "./go_value.ts";

const obj = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "demo", labels: { app: "web", tier: "front" } },
  data: { a: "x<y", b: "2" },
  spec: {
    n: 3,
    f: 1.5,
    big: 1000000,
    huge: 1e20,
    fl: [1, 2.5],
    nul: null,
    items: [{ name: "a", v: 1 }, { name: "b", v: 2 }],
  },
};

function run(template: string, missingKeyError = false): string {
  const r = compileGoTemplate(template).execute(obj, { missingKeyError });
  if (r.error) throw r.error;
  return r.output;
}

function failure(template: string, missingKeyError = false): { output: string; message: string } {
  const r = compileGoTemplate(template).execute(obj, { missingKeyError });
  assert.ok(r.error, `expected ${template} to fail`);
  return { output: r.output, message: r.error.message };
}

Deno.test("go-template: fields, maps, slices and numbers print as Go prints kubectl's data", () => {
  assertEquals(
    run("{{.metadata.name}} {{.spec.n}} {{.spec.f}} {{.spec.big}} {{.spec.huge}}"),
    "demo 3 1.5 1000000 1e+20",
  );
  assertEquals(run("{{.spec.fl}} {{.metadata.labels}}"), "[1 2.5] map[app:web tier:front]");
  assertEquals(run("{{.spec.items}}"), "[map[name:a v:1] map[name:b v:2]]");
  assertEquals(
    run("{{.spec.nul}} {{.missing}} {{.missing.deeper}}"),
    "<no value> <no value> <no value>",
  );
  assertEquals(
    run("{{ 1.0 }} {{ 1e6 }} {{ 0x1F }} {{ 'a' }} {{ -3 }} {{ 1.5e3 }}"),
    "1 1e+06 31 97 -3 1500",
  );
});

Deno.test("go-template: control structures", () => {
  assertEquals(run("{{range $i, $e := .spec.items}}{{$i}}={{$e.name}} {{end}}"), "0=a 1=b ");
  assertEquals(
    run("{{range $k, $v := .metadata.labels}}{{$k}}={{$v}};{{end}}"),
    "app=web;tier=front;",
  );
  assertEquals(run("{{range .spec.nope}}x{{else}}empty{{end}}"), "empty");
  assertEquals(run("{{if gt .spec.n 2}}big{{else if eq .spec.n 2}}two{{else}}small{{end}}"), "big");
  assertEquals(
    run("{{with .metadata.labels}}{{.app}}{{end}}{{with .missing}}y{{else}}n{{end}}"),
    "webn",
  );
  assertEquals(run("{{with $x := .spec.n}}{{$x}}{{end}}"), "3");
  assertEquals(
    run('{{range .spec.items}}{{if eq .name "a"}}{{continue}}{{end}}{{.name}}{{end}}'),
    "b",
  );
  assertEquals(
    run('{{range .spec.items}}{{if eq .name "b"}}{{break}}{{end}}{{.name}}{{end}}'),
    "a",
  );
  assertEquals(run("{{range .spec.items}}{{$.metadata.name}}{{end}}"), "demodemo");
  assertEquals(run("{{$x := 5}}{{$x = 6}}{{$x}}"), "6");
  assertEquals(run('{{define "t"}}T{{.}}{{end}}{{template "t" .metadata.name}}'), "Tdemo");
  assertEquals(run('{{ .metadata.name -}}  x  {{- "y" }}{{/* c */}}'), "demoxy");
});

Deno.test("go-template: functions", () => {
  assertEquals(
    run('{{index .data "a"}} {{index .spec.items 1 "name"}} {{index .data "zz"}}'),
    "x<y b <no value>",
  );
  assertEquals(
    run(
      "{{len .spec.items}} {{len .metadata.name}} {{slice .metadata.name 1 3}} {{slice .spec.fl 1}}",
    ),
    "2 4 em [2.5]",
  );
  assertEquals(
    run('{{and 1 0}} {{or 0 "x"}} {{not true}} {{and .missing 1}} {{or .missing 1}}'),
    "0 x false <no value> 1",
  );
  assertEquals(
    run('{{eq .spec.n 3}} {{lt .spec.f 2.0}} {{ne "a" "b"}} {{eq .missing "x"}}'),
    "true true true false",
  );
  assertEquals(
    run('{{html "<a>"}} {{js "a\\"b"}} {{urlquery "a b"}} {{print 1 2 "x" "y" 3}}'),
    '&lt;a&gt; a\\"b a+b 1 2xy3',
  );
  assertEquals(
    run('{{.metadata.labels.app | printf "%s!"}} {{.spec.n | printf "%d-%d" 1}}'),
    "web! 1-3",
  );
  assertEquals(
    run('{{base64decode "aGk="}} {{exists . "spec" "n"}} {{exists . "x"}}'),
    "hi true false",
  );
  assertEquals(
    run('{{printf "%s" .missing}} {{printf "%v %v" .spec.nul .missing}}'),
    "%!s(<nil>) <nil> <nil>",
  );
});

Deno.test("go-template: printf follows Go's fmt", () => {
  const f = (format: string, ...args: unknown[]) => goSprintf(format, args);
  assertEquals(
    f(
      "%x %X %o %b %c %U %e %g %8.3f|%-6s|%6s|%+d|%t",
      255,
      255,
      8,
      5,
      65,
      65,
      1234.5,
      1234.5,
      3.14159,
      "ab",
      "ab",
      3,
      true,
    ),
    "ff FF 10 101 A U+0041 1.234500e+03 1234.5    3.142|ab    |    ab|+3|true",
  );
  assertEquals(
    f("%q %v %s", [1, 2.5], [1, 2.5], [1, 2.5]),
    "['\\x01' %!q(float64=2.5)] [1 2.5] [%!s(int64=1) %!s(float64=2.5)]",
  );
  assertEquals(f("%d", "demo"), "%!d(string=demo)");
  assertEquals(f("%s"), "%!s(MISSING)");
  assertEquals(f("%d %s", 1, "a", "extra"), "1 a%!(EXTRA string=extra)");
  assertEquals(
    f("%T %T %T %T %T %T", 3, 1.5, "s", {}, [], new GoInt(1)),
    "int64 float64 string map[string]interface {} []interface {} int",
  );
  assertEquals(f("%5.2v|%.3s|%x", 1.5, "demo", "hi"), "  1.5|dem|6869");
  assertEquals(f("%v %.2f", new GoFloat(1), new GoFloat(2)), "1 2.00");
  // Checked with kubectl: hex floats, ties rounded to even, bad verbs keep width, invalid runes.
  assertEquals(f("%x|%X|%x", 1.5, 3.5, 1e20), "0x1.8p+00|0X1.CP+01|0x1.5af1d78b58c4p+66");
  assertEquals(f("%.0f|%.1f|%.0e", 2.5, 0.25, 2.5), "2|0.2|2e+00");
  assertEquals(f("%5.1f|%q", "0x1F", -5), "%!f(string=    0)|'\uFFFD'");
});

Deno.test("go-template: missing keys fail with Go's message when not allowed", () => {
  assertEquals(failure(".{{.x}}", true), {
    output: ".",
    message: 'template: output:1:3: executing "output" at <.x>: map has no entry for key "x"',
  });
  assertEquals(
    failure('{{eq .missing "x"}}', true).message,
    'template: output:1:5: executing "output" at <.missing>: map has no entry for key "missing"',
  );
});

Deno.test("go-template: execution errors name the node, as Go does", () => {
  assertEquals(
    failure("{{.spec.items.name}}").message,
    `template: output:1:7: executing "output" at <.spec.items.name>: can't evaluate field name in type interface {}`,
  );
  assertEquals(
    failure("{{.spec.nul.x}}").message,
    'template: output:1:7: executing "output" at <.spec.nul.x>: nil pointer evaluating interface {}.x',
  );
  assertEquals(
    failure("{{eq .spec.n 3.0}}").message,
    'template: output:1:2: executing "output" at <eq .spec.n 3.0>: error calling eq: incompatible types for comparison',
  );
  assertEquals(
    failure("{{index .spec.items 5}}").message,
    'template: output:1:2: executing "output" at <index .spec.items 5>: error calling index: index out of range: 5',
  );
  assertEquals(
    failure("{{len .spec.nul}}").message,
    'template: output:1:2: executing "output" at <len .spec.nul>: error calling len: len of nil pointer',
  );
  assertEquals(
    failure("{{range $i, $c := .metadata.name}}{{end}}").message,
    'template: output:1:27: executing "output" at <.metadata.name>: range can\'t iterate over demo',
  );
  assertEquals(
    failure("{{nil}}").message,
    'template: output:1:2: executing "output" at <nil>: nil is not a command',
  );
  assertEquals(
    failure('{{template "t"}}').message,
    'template: output:1:11: executing "output" at <{{template "t"}}>: template "t" not defined',
  );
  assertEquals(
    failure("a\n  {{.spec.nul.x}}").message.split(":").slice(1, 4).join(":"),
    " output:2:9",
  );
});

Deno.test("go-template: parse errors carry Go's message and line", () => {
  const cases: [string, string, number][] = [
    ['{{upper "x"}}', 'function "upper" not defined', 1],
    ["{{break}}", "{{break}} outside {{range}}", 1],
    ["{{.a}", "bad character U+007D '}'", 1],
    ["a\n{{$x}}", 'undefined variable "$x"', 2],
    ["{{if .a}}x", "unexpected EOF", 1],
    ["{{end}}", "unexpected {{end}}", 1],
  ];
  for (const [template, message, line] of cases) {
    try {
      compileGoTemplate(template);
      assert.fail(`${template} parsed`);
    } catch (e) {
      assert.ok(e instanceof TemplateSyntaxError, String(e));
      assertEquals([e.message, e.line], [message, line], template);
    }
  }
});
