// The expected document is what kubectl 1.32 printed (`kubectl annotate --local -f obj.json
// -o yaml`) for the same object; tests/printers_kubectl_test.ts compares against kubectl end
// to end.
import { assertEquals } from "../../tests/assert.ts";
import { goYamlKeyCompare, kubectlYaml } from "./yaml_kubectl.ts";

const obj = {
  "apiVersion": "v1",
  "kind": "ConfigMap",
  "metadata": {
    "name": "y",
    "labels": { "n": "123", "a10": "x", "a9": "y", "_u": "z", "B": "w" },
    "annotations": { "foo": "bar" },
  },
  "data": {
    "colon": "a: b",
    "hash": "#x",
    "lead": " lead",
    "multi": "line1\nline2\n",
    "nochomp": "a\nb",
    "keep": "a\n\n",
    "stamp": "2026-01-02T03:04:05Z",
    "yes": "yes",
    "empty": "",
    "tab": "a\tb",
    "quote": "'q'",
    "long":
      "averyveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryvery long string with spaces in it that goes past eighty columns",
  },
  "spec": {
    "n": 3,
    "f": 1.5,
    "big": 1e+20,
    "e": {},
    "l": [],
    "nested": [[1, 2], { "a": null, "b": true }],
  },
};

const KUBECTL_YAML =
  'apiVersion: v1\ndata:\n  colon: \'a: b\'\n  empty: ""\n  hash: \'#x\'\n  keep: |+\n    a\n\n  lead: \' lead\'\n  long: averyveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryvery\n    long string with spaces in it that goes past eighty columns\n  multi: |\n    line1\n    line2\n  nochomp: |-\n    a\n    b\n  quote: \'\'\'q\'\'\'\n  stamp: "2026-01-02T03:04:05Z"\n  tab: "a\\tb"\n  "yes": "yes"\nkind: ConfigMap\nmetadata:\n  annotations:\n    foo: bar\n  labels:\n    _u: z\n    B: w\n    a9: "y"\n    a10: x\n    "n": "123"\n  name: "y"\nspec:\n  big: 1e+20\n  e: {}\n  f: 1.5\n  l: []\n  "n": 3\n  nested:\n  - - 1\n    - 2\n  - a: null\n    b: true\n';

Deno.test("kubectl yaml: key order, quoting, folding, block scalars and numbers as kubectl prints them", () => {
  assertEquals(kubectlYaml(obj), KUBECTL_YAML);
});

Deno.test("kubectl yaml: go-yaml sorts non-letters before letters and digit runs as numbers (checked with kubectl)", () => {
  assertEquals(["a10", "b", "_u", "a9", "B", "0", "10", "9"].sort(goYamlKeyCompare), [
    "_u",
    "0",
    "9",
    "10",
    "B",
    "a9",
    "a10",
    "b",
  ]);
});

Deno.test("kubectl yaml: a next-line character folds into a space, as go-yaml reads kubectl's JSON", () => {
  assertEquals(kubectlYaml({ a: "x\u0085y" }), "a: x y\n");
});

Deno.test("kubectl yaml: a multi-line key becomes an explicit ? key / : value pair (checked with kubectl)", () => {
  assertEquals(
    kubectlYaml({ spec: { "a\nb": 1, k: { "x\ny": [1, { p: "q" }] } } }),
    "spec:\n  ? |-\n    a\n    b\n  : 1\n  k:\n    ? |-\n      x\n      y\n    : - 1\n      - p: q\n",
  );
});
