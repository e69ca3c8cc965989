import { parse } from "yaml";
import { assert, assertEquals } from "../../tests/assert.ts";
import { encodeBody } from "./encode.ts";
import { emitYaml, isPlainSafe } from "./yaml_emit.ts";
import { sampleConfigMap, sampleConfigMapList } from "./yaml_emit_testdata.ts";

/** Strings that a careless emitter would write so that they read back as something else. */
const TRICKY: string[] = [
  // YAML 1.1 / 1.2 booleans and nulls, in several cases.
  ..."true false yes no on off y n null ~ True FALSE Yes NO On OFF Y N Null NULL nUlL tRuE"
    .split(" "),
  "=",
  "<<",
  // Numbers of every YAML 1.1 / 1.2 / go-yaml form.
  ..."0 1 -1 +1 0123 0o17 0x1F 0X1f 0b101 -0b1 1_000 1e3 1E3 1e+3 1.0e-5 .5 -.5 +.5 5. 1.2.3 1:20"
    .split(" "),
  ..."190:20:30 -1:20 1:20.5 .inf -.inf +.Inf .NaN .nan .NAN . .. +. 007 1d 0xG".split(" "),
  // Timestamps.
  "2024-01-01",
  "2001-12-14t21:59:43.10-05:00",
  "2001-12-14T21:59:43Z",
  "2001-12-14 21:59:43.10 -5",
  "2002-1-2",
  // Indicators and syntax.
  ..."- -- --- ... ...x ? : | > @x `x %x 'x \"x [x ]x {x }x !x &x *x #x ,x".split(" "),
  "- x",
  "+",
  "+x",
  ".x",
  "..x",
  "-x",
  "? x",
  ": x",
  "a: b",
  "a:",
  "a:b",
  "a #b",
  "a#b",
  "x ",
  " x",
  " ",
  "",
  "\t",
  "a\tb",
  "a,b[c]{d}",
  "\\",
  "\\n",
  "\\/",
  "/",
  "'",
  '"',
  "''",
  "a'b\"c",
  // Multi-line, literal-safe or not.
  "line1\nline2",
  "line1\nline2\n",
  "line1\nline2\n\n",
  "line1\n\nline2\n\n\n",
  "\n",
  "\n\n",
  "\nx",
  " x\ny",
  "x\n y\n  z",
  "trailing space \nx",
  "x\ny ",
  "x\n \ny",
  "a\r\nb",
  "a\rb",
  "x\n\ty",
  "#x\n# y\n",
  "- x\n- y",
  "---\n...\n",
  "key: value\nother: 1\n",
  "x\n\u2028y",
  // Control, non-printable and special Unicode characters.
  "\u0000",
  "a\u0001b",
  "\u001b[0m",
  "\u007f",
  "\u0085",
  "a\u0085b",
  "\u00a0",
  "a\u00a0b",
  "\u2028",
  "\u2029",
  "a\u2028b",
  "\ufeff",
  "a\ufeffb",
  "\ufffe",
  "\uffff",
  "\ud800",
  "a\udc00b",
  // Unicode that should stay as it is.
  "é",
  "日本語",
  "emoji 😀",
  "😀",
  "👩‍👩‍👧",
  "Ünïcödé: ok",
  // Everyday kube values.
  "v1",
  "apps/v1",
  "ConfigMap",
  "f:metadata",
  'k:{"type":"Ready"}',
  "v:10",
  ".dockerconfigjson",
  "10.0.0.1",
  "100m",
  "1Gi",
  "https://example.com/a?b=c#d",
  "a b c",
  "some text, with: colons and #hashes",
  "x".repeat(2000),
];

/** The value from TRICKY in every position: top level, key, value, sequence item, nested. */
function inEveryPosition(s: string): unknown[] {
  return [s, { [s]: s }, [s], [[s]], { k: [s, { [s]: [s] }] }, [{ a: s, b: s }]];
}

const yaml12 = (text: string) => parse(text);
const yaml11 = (text: string) => parse(text, { version: "1.1" });

Deno.test("emitYaml: tricky strings read back the same with the yaml package (YAML 1.2 and 1.1)", () => {
  for (const s of TRICKY) {
    for (const value of inEveryPosition(s)) {
      const text = emitYaml(value);
      assert(text.endsWith("\n"), JSON.stringify(text));
      for (const [name, read] of [["1.2", yaml12], ["1.1", yaml11]] as const) {
        let back: unknown;
        try {
          back = read(text);
        } catch (err) {
          throw new Error(`YAML ${name} of ${JSON.stringify(value)} failed: ${err}\n${text}`);
        }
        assertEquals(back, value, `YAML ${name}: ${JSON.stringify(value)} as\n${text}`);
      }
    }
  }
});

Deno.test("emitYaml: plain, quoted or literal as kubectl would", () => {
  const plain = ["v1", "apps/v1", "f:metadata", 'k:{"type":"Ready"}', "100m", "a b", "😀", "é"];
  for (const s of plain) assertEquals([s, isPlainSafe(s)], [s, true]);
  const quoted = ["yes", "1", "0123", "1e3", "2024-01-01", "-", "x ", "", "a: b", ".", "~"];
  for (const s of quoted) assertEquals([s, isPlainSafe(s)], [s, false]);
  assertEquals(emitYaml({ a: "yes" }), 'a: "yes"\n');
  assertEquals(emitYaml({ a: "\u2028\u0085\u007f\ufeff" }), 'a: "\\u2028\\u0085\\u007f\\ufeff"\n');
  assertEquals(emitYaml({ a: "\ud800" }), 'a: "\\ud800"\n');
  assertEquals(emitYaml({ a: "x\ny" }), "a: |-\n  x\n  y\n");
  assertEquals(emitYaml({ a: "x\ny\n" }), "a: |\n  x\n  y\n");
  assertEquals(emitYaml({ a: "x\n\ny\n\n" }), "a: |+\n  x\n\n  y\n\n");
  assertEquals(emitYaml({ a: "x \ny" }), 'a: "x \\ny"\n');
  assertEquals(emitYaml({ a: " x\ny" }), 'a: " x\\ny"\n');
  assertEquals(emitYaml({ a: "x\r\ny" }), 'a: "x\\r\\ny"\n');
  assertEquals(emitYaml(["x\ny"]), "- |-\n  x\n  y\n");
  assertEquals(emitYaml("x\ny"), "|-\n  x\n  y\n");
  assertEquals(emitYaml("yes"), '"yes"\n');
});

Deno.test("emitYaml: numbers, booleans, null and empty collections", () => {
  const numbers = [
    0,
    -0,
    1,
    -1,
    42,
    -123456789,
    2 ** 53,
    -(2 ** 53),
    0.1,
    -2.5,
    1e21,
    -1e21,
    1.5e300,
    1e-7,
    5e-324,
    Number.MAX_VALUE,
    Number.MIN_SAFE_INTEGER,
  ];
  const value = { numbers, t: true, f: false, n: null, o: {}, a: [], nested: [[], {}, [[]], [{}]] };
  const text = emitYaml(value);
  for (const read of [yaml12, yaml11]) {
    const back = read(text) as typeof value;
    assertEquals(back, JSON.parse(JSON.stringify(value)));
    assert(Object.is(back.numbers[1], 0), "-0 is written as 0");
  }
  assertEquals(emitYaml(1e21), "1.0e+21\n");
  assertEquals(emitYaml(-0), "0\n");
  assertEquals(emitYaml([1e-7, 1.5e300]), "- 1.0e-7\n- 1.5e+300\n");
  assertEquals(emitYaml(null), "null\n");
  assertEquals(emitYaml(true), "true\n");
  assertEquals(emitYaml({}), "{}\n");
  assertEquals(emitYaml([]), "[]\n");
  assertEquals(emitYaml({ a: {}, b: [], c: [[], {}] }), "a: {}\nb: []\nc:\n- []\n- {}\n");
});

Deno.test("emitYaml: JSON's view of the value (toJSON, undefined, functions, NaN)", () => {
  const value = {
    date: new Date(Date.UTC(2024, 0, 2, 3, 4, 5)),
    u: undefined,
    f: () => 1,
    nan: NaN,
    inf: -Infinity,
    arr: [undefined, () => 1, 1],
    custom: { toJSON: (key: string) => ({ key }) },
    onlyUndefined: { u: undefined },
  };
  const text = emitYaml(value);
  assertEquals(parse(text), JSON.parse(JSON.stringify(value)));
  assertEquals(
    text,
    'date: "2024-01-02T03:04:05.000Z"\nnan: null\ninf: null\narr:\n- null\n- null\n- 1\n' +
      "custom:\n  key: custom\nonlyUndefined: {}\n",
  );
  assertEquals(emitYaml(undefined), "null\n");
});

Deno.test("emitYaml: deep nesting and long keys", () => {
  let deep: unknown = "bottom";
  for (let i = 0; i < 200; i++) {
    deep = i % 3 === 0 ? [deep, i] : i % 3 === 1 ? { [`k${i}`]: deep } : [deep];
  }
  assertEquals(parse(emitYaml(deep)), deep);
  assertEquals(parse(emitYaml(deep), { version: "1.1" }), deep);

  // Implicit keys are limited to 1024 characters; longer ones are explicit (`? key`).
  const long = "k".repeat(1500);
  const withLong = [{ [long]: "v", a: 1 }, { b: 1, [long]: { x: [1, "y\nz"] } }, { [long]: [] }];
  const text = emitYaml({ [long]: withLong, [long + "2"]: "a\nb", [long + "3"]: [1, [2]] });
  assertEquals(parse(text), { [long]: withLong, [long + "2"]: "a\nb", [long + "3"]: [1, [2]] });
});

Deno.test("emitYaml: the kubectl layout, exactly", () => {
  const obj = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: "cfg",
      namespace: "default",
      resourceVersion: "12",
      creationTimestamp: "2024-05-06T07:08:09Z",
      labels: { app: "web", "app.kubernetes.io/part-of": "shop" },
      annotations: {},
      finalizers: ["example.com/cleanup"],
      managedFields: [{
        manager: "kubectl",
        operation: "Apply",
        fieldsV1: { "f:data": { ".": {}, "f:a": {} } },
      }],
    },
    data: { a: "1", script: "#!/bin/sh\necho hi\n", empty: "", on: "on", list: "- a" },
    items: [[1, 2], { x: [true, null] }, 1.5],
  };
  assertEquals(
    emitYaml(obj),
    `apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: default
  resourceVersion: "12"
  creationTimestamp: "2024-05-06T07:08:09Z"
  labels:
    app: web
    app.kubernetes.io/part-of: shop
  annotations: {}
  finalizers:
  - example.com/cleanup
  managedFields:
  - manager: kubectl
    operation: Apply
    fieldsV1:
      f:data:
        ".": {}
        f:a: {}
data:
  a: "1"
  script: |
    #!/bin/sh
    echo hi
  empty: ""
  "on": "on"
  list: "- a"
items:
- - 1
  - 2
- x:
  - true
  - null
- 1.5
`,
  );
});

Deno.test("emitYaml: a 1,000-configmap list reads back as the same value; YAML bodies use it", () => {
  const list = sampleConfigMapList(1000);
  const text = emitYaml(list);
  assertEquals(parse(text), list);
  assert(text.startsWith("kind: ConfigMapList\napiVersion: v1\nmetadata:\n"));
  assert(text.includes("\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n"));
  const one = sampleConfigMap(1);
  assertEquals(encodeBody(one, "yaml"), emitYaml(one));
});

// --- other readers, when this machine has them ------------------------------------------------

/** Every tricky string in every position, in one document (a list, so a reader sees all). */
function trickyDocument(): { value: unknown; skipped: string[] } {
  // Lone surrogates are not Unicode: other languages' readers cannot return them.
  const usable = TRICKY.filter((s) => s.isWellFormed());
  return {
    value: usable.map((s) => ({ s, positions: inEveryPosition(s) })),
    skipped: TRICKY.filter((s) => !s.isWellFormed()),
  };
}

async function run(cmd: string, args: string[], stdin: string): Promise<string | undefined> {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(cmd, { args, stdin: "piped", stdout: "piped", stderr: "piped" })
      .spawn();
  } catch {
    return undefined;
  }
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const out = await child.output();
  const dec = new TextDecoder();
  if (!out.success) throw new Error(`${cmd} failed: ${dec.decode(out.stderr)}`);
  return dec.decode(out.stdout);
}

const PYTHON = "/usr/bin/python3";
const hasPyYaml = await new Deno.Command(PYTHON, { args: ["-c", "import yaml"] }).output()
  .then((o) => o.success, () => false);

Deno.test({
  name: "emitYaml: PyYAML (YAML 1.1) reads the tricky strings back the same",
  // Skipped without PyYAML, except under CI, where .ci/run installs it (python3-kubernetes).
  ignore: !hasPyYaml && Deno.env.get("CI") !== "true",
  fn: async () => {
    const { value } = trickyDocument();
    const script = "import json, sys, yaml\n" +
      "v = yaml.safe_load(sys.stdin.read())\n" +
      "sys.stdout.write(json.dumps(v, default=lambda o: '<not JSON: %r>' % (o,)))\n";
    const out = await run(PYTHON, ["-c", script], emitYaml(value));
    assertEquals(JSON.parse(out!), value);
    // Numbers too: PyYAML reads 1e+21 as a string, so exponents get a dot.
    const numbers = [1e21, 1e-7, 5e-324, Number.MAX_VALUE, -0, 0.1, 2 ** 53];
    const nums = await run(PYTHON, ["-c", script], emitYaml(numbers));
    assertEquals(JSON.parse(nums!), JSON.parse(JSON.stringify(numbers)));
  },
});

const KUBECTL = "/usr/bin/kubectl";
const hasKubectl = await Deno.stat(KUBECTL).then((s) => s.isFile, () => false);

Deno.test({
  name: "emitYaml: kubectl (go-yaml, YAML 1.1) reads the tricky strings back the same",
  ignore: !hasKubectl && Deno.env.get("CI") !== "true",
  fn: async () => {
    const { value } = trickyDocument();
    const numbers = [1e21, 1e-7, 5e-324, Number.MAX_VALUE, -0, 0.1, 2 ** 53, -17];
    // A ConfigMap that kubectl annotates locally (no server) and prints as JSON; it keeps the
    // fields it does not know.
    const cm = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "yaml-emit-test" },
      tricky: value,
      numbers,
    };
    const home = await Deno.makeTempDir();
    try {
      const child = new Deno.Command(KUBECTL, {
        args: ["annotate", "--local", "-f", "-", "checked=yes", "-o", "json"],
        env: { HOME: home, KUBECONFIG: `${home}/none` },
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(emitYaml(cm)));
      await writer.close();
      const out = await child.output();
      const dec = new TextDecoder();
      assert(out.success, dec.decode(out.stderr));
      const back = JSON.parse(dec.decode(out.stdout));
      assertEquals(back.tricky, value);
      assertEquals(back.numbers, JSON.parse(JSON.stringify(numbers)));
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});
