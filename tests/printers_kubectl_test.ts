/**
 * kubectl's output formats, byte for byte: for each object (a ConfigMap with data, labels and
 * annotations, a Namespace, a Service and a Lease with numbers, and a list of ConfigMaps) and
 * each format of a catalogue (json, yaml, name, JSONPath and Go templates: ranges, filters,
 * recursive descent, quoting, if/else, printf, index, len, comparisons, missing keys with and
 * without --allow-missing-template-keys, parse errors), the real kubectl's `get -o …` output
 * is compared with `printObject` of the same object fetched as JSON from the server: standard
 * output, and for failures kubectl's `error: …` line on standard error.
 *
 * kubectl's output is deterministic for everything here except where Go visits a map in
 * random order: `.*` and `..` over a map with several keys, which the catalogue avoids (our
 * order, sorted keys, is one of kubectl's possible outputs).
 */

import { join } from "node:path";
import { assertEquals } from "./assert.ts";
import { createAsAdmin, testServer } from "./harness.ts";
import { kubectlFor, kubectlInstalled } from "./kubectl.ts";
import {
  listForPrinting,
  parseOutputFormat,
  PrintError,
  printObject,
} from "../lib/printers/mod.ts";

const NS = "printers";

/** How kubectl names an object, and where the server serves it. */
interface Target {
  args: string[];
  path: string;
  /** A list path: kubectl prints the items in a `List`. */
  list?: boolean;
}

const TARGETS: Record<string, Target> = {
  configmap: {
    args: ["get", "configmap", "demo", "-n", NS],
    path: `/api/v1/namespaces/${NS}/configmaps/demo`,
  },
  namespace: { args: ["get", "namespace", NS], path: `/api/v1/namespaces/${NS}` },
  service: {
    args: ["get", "service", "web", "-n", NS],
    path: `/api/v1/namespaces/${NS}/services/web`,
  },
  lease: {
    args: ["get", "lease", "big", "-n", NS],
    path: `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/big`,
  },
  list: {
    args: ["get", "configmaps", "-n", NS, "-l", "group=printers"],
    path: `/api/v1/namespaces/${NS}/configmaps?labelSelector=group%3Dprinters`,
    list: true,
  },
};

/** [target, -o value, extra flags]. `FILE:` in a value names a template file written first. */
type Case = [keyof typeof TARGETS, string, ...string[]];

const STRICT = "--allow-missing-template-keys=false";

const CASES: Case[] = [
  // json, yaml, name
  ["configmap", "json"],
  ["configmap", "json", "--show-managed-fields"],
  ["configmap", "yaml"],
  ["configmap", "name"],
  ["namespace", "json"],
  ["namespace", "yaml"],
  ["namespace", "name"],
  ["service", "json"],
  ["service", "yaml"],
  ["lease", "name"],
  ["lease", "yaml"],
  ["list", "json"],
  ["list", "yaml"],
  ["list", "name"],

  // JSONPath
  ["configmap", "jsonpath={.metadata.name}"],
  ["configmap", "jsonpath={.data}"],
  ["configmap", "jsonpath={.metadata.labels.app} {.metadata.labels['tier']}"],
  ["configmap", "jsonpath={.data.a\\.b}|{.metadata.annotations.example\\.com/note}"],
  ["configmap", "jsonpath={.data.greeting}{\"\\n\"}{.data.multi}{'\\t'}end"],
  ["configmap", "jsonpath={.metadata..app} {..name}"],
  ["configmap", "jsonpath={.metadata.labels}{.metadata.annotations}"],
  ["configmap", "jsonpath={.metadata.managedFields[0].manager}", "--show-managed-fields"],
  ["configmap", "jsonpath-as-json={.metadata.labels}{.metadata.name}"],
  ["configmap", "jsonpath=[{.x}] [{.data.nope}]"],
  ["configmap", "jsonpath={.x}", STRICT],
  ["configmap", "jsonpath={.metadata.name"],
  ["configmap", 'jsonpath={.data["greeting"]}'],
  ["namespace", "jsonpath={.status.phase} {.metadata.labels.team}"],
  [
    "service",
    "jsonpath={.spec.ports[*].port} {.spec.ports[-1].name} {.spec.ports[0:1].targetPort}",
  ],
  ["service", "jsonpath={.spec.ports[?(@.port>100)].name} {.spec.ports[?(@.name=='http')].port}"],
  ["service", "jsonpath={.spec.ports[?(@.port==80.0)].name}"],
  ["service", "jsonpath={.spec.selector}{.spec.ports[5]}"],
  ["service", "jsonpath-as-json={.spec.ports[*].port}"],
  ["lease", "jsonpath={.spec.leaseDurationSeconds} {.spec.holderIdentity}"],
  ["list", 'jsonpath={range .items[*]}{.metadata.name}{"\\t"}{.data.v}{"\\n"}{end}'],
  ["list", 'jsonpath={.items[?(@.data.v=="2")].metadata.name}'],
  ["list", 'jsonpath={.items[?(@.data.v>"1")].metadata.name}'],
  ["list", "jsonpath={.items[?(@.data.extra)].metadata.name}"],
  ["list", "jsonpath={.items[?(@.data.extra)].metadata.name}", STRICT],
  [
    "list",
    "jsonpath={.items[-1:].metadata.name} {.items[0:2].metadata.name} {.items[*]['metadata.name']}",
  ],
  ["list", "jsonpath={.items[*].metadata.name,.kind}"],
  ["list", "jsonpath={.kind} {.metadata} {.items[1].metadata.labels}"],
  ["list", "jsonpath={range .items[*]}[{.metadata.name}]{end}"],
  ["list", "jsonpath={end}"],
  ["list", 'jsonpath-file=FILE:{range .items[*]}{.metadata.name}{"\\n"}{end}'],

  // Go templates
  ["configmap", "go-template={{.metadata.name}}"],
  ["configmap", "go-template={{.data}} {{.metadata.labels}}"],
  [
    "configmap",
    'go-template={{index .data "a.b"}} {{index .metadata.labels "app"}} {{index .data "nope"}}',
  ],
  ["configmap", "go-template={{range $k, $v := .data}}{{$k}}={{$v}};{{end}}"],
  [
    "configmap",
    'go-template={{if eq .metadata.labels.app "web"}}web{{else if .x}}x{{else}}other{{end}}',
  ],
  [
    "configmap",
    "go-template={{with .metadata.labels}}{{.tier}}{{end}}{{with .x}}x{{else}}none{{end}}",
  ],
  [
    "configmap",
    'go-template={{printf "%s has %d keys, %q" .metadata.name (len .data) .data.greeting}}',
  ],
  [
    "configmap",
    'go-template={{printf "%-8s|%5.2f|%x|%v|%d" .metadata.name 3.14159 "hi" .data .metadata.name}}',
  ],
  [
    "configmap",
    'go-template={{gt (len .data) 3}} {{lt 1 2}} {{ne .metadata.name "x"}} {{le 2 2}} {{ge 1 2}} {{and .data 0}} {{or .x "dflt"}} {{not .x}}',
  ],
  ["configmap", "go-template={{.x}} {{.x.y}} {{.metadata.labels.nope}}"],
  ["configmap", "go-template={{.metadata.name}} then {{.x}}", STRICT],
  ["configmap", "go-template={{.metadata.labels.app.x}}"],
  ["configmap", "go-template={{eq .metadata.name 1}}"],
  ["configmap", "go-template={{upper .metadata.name}}"],
  ["configmap", "go-template={{.metadata.name"],
  [
    "configmap",
    'go-template={{base64decode "aGVsbG8="}} {{exists . "data" "num"}} {{exists . "data" "zz"}}',
  ],
  ["configmap", "go-template={{- /* trimmed */ -}}  {{ .metadata.name -}}  !  {{- .data.num }}"],
  ["configmap", 'go-template={{define "n"}}[{{.}}]{{end}}{{template "n" .metadata.name}}'],
  ["configmap", "template={{.metadata.namespace}}"],
  ["namespace", "go-template={{.status}} {{.spec}}"],
  ["service", "go-template={{range .spec.ports}}{{.name}}:{{.port}} {{end}}{{len .spec.ports}}"],
  ["service", "go-template={{range .spec.ports}}{{if gt .port 100}}{{.name}}{{end}}{{end}}"],
  ["service", 'go-template={{(index .spec.ports 0).port | printf "%05d"}} {{index .spec.ports 9}}'],
  ["lease", "go-template={{.spec.leaseDurationSeconds}} {{.spec}}"],
  ["list", 'go-template={{range .items}}{{.metadata.name}}:{{.data.v}}{{"\\n"}}{{end}}'],
  [
    "list",
    "go-template={{range $i, $cm := .items}}{{if $i}},{{end}}{{$cm.metadata.name}}{{else}}none{{end}}",
  ],
  [
    "list",
    'go-template={{range .items}}{{if eq .data.v "2"}}{{break}}{{end}}{{.metadata.name}}{{end}}',
  ],
  ["list", "go-template-file=FILE:{{range .items}}{{.metadata.name}}\n{{end}}"],
  ["list", "templatefile=FILE:{{len .items}} {{.kind}}"],
  ["configmap", "go-template={{with .metadata.name}}{{.x}}{{end}}"],
  ["list", "go-template={{range .items}}{{.metadata.name.x}}{{end}}"],
  ["service", 'go-template={{printf "%.0f %.1f %q %#x" 2.5 0.25 "a\\u00a0b" "hi"}}'],
  ["configmap", "go-template-file=/nonexistent/printers-template"],
  ["configmap", "jsonpath-file=/nonexistent/printers-template"],
];

/** What kubectl prints, per `printObject`: stdout, and `error: …` on stderr for a failure. */
async function ours(obj: Record<string, unknown>, output: string, flags: string[]) {
  try {
    const stdout = await printObject(obj, parseOutputFormat(output), {
      allowMissingTemplateKeys: !flags.includes(STRICT),
      showManagedFields: flags.includes("--show-managed-fields"),
    });
    return { code: 0, stdout, stderr: "" };
  } catch (e) {
    if (!(e instanceof PrintError)) throw e;
    const line = `error: ${e.message}`;
    return { code: 1, stdout: e.stdout, stderr: line.endsWith("\n") ? line : line + "\n" };
  }
}

Deno.test({
  name: "printers: every output format prints what kubectl prints for the same object",
  ignore: !kubectlInstalled,
  async fn() {
    await using ts = await testServer();
    await using k = await kubectlFor(ts.server);
    const dir = await Deno.makeTempDir({ prefix: "printers-kubectl-" });
    try {
      await createAsAdmin(ts, "/api/v1/namespaces", {
        metadata: { name: NS, labels: { team: "core" } },
      });
      await createAsAdmin(ts, `/api/v1/namespaces/${NS}/configmaps`, {
        metadata: {
          name: "demo",
          labels: { app: "web", tier: "front" },
          annotations: { "example.com/note": "a <note> & more" },
        },
        data: {
          "a.b": "dotted",
          greeting: "hello <world> & 'you'",
          multi: "line1\nline2\n",
          num: "42",
          empty: "",
          yes: "on",
          when: "2026-01-02T03:04:05Z",
          tabbed: "a\tb",
          long:
            "a sentence that is long enough to pass the eighty columns at which go-yaml folds plain scalars",
        },
      });
      for (
        const [name, v, extra] of [["a", "1", undefined], ["b", "2", "yes"], ["c", "3", undefined]]
      ) {
        await createAsAdmin(ts, `/api/v1/namespaces/${NS}/configmaps`, {
          metadata: { name, labels: { group: "printers", rank: v } },
          data: extra ? { v, extra } : { v },
        });
      }
      await createAsAdmin(ts, `/api/v1/namespaces/${NS}/services`, {
        metadata: { name: "web" },
        spec: {
          selector: { app: "web" },
          ports: [{ name: "http", port: 80, targetPort: 8080 }, {
            name: "https",
            port: 443,
            targetPort: "tls",
          }],
        },
      });
      await createAsAdmin(ts, `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`, {
        metadata: { name: "big" },
        spec: { holderIdentity: "node-1", leaseDurationSeconds: 1000000 },
      });

      let fileCount = 0;
      const mismatches: string[] = [];
      for (const [target, rawOutput, ...flags] of CASES) {
        let output = rawOutput;
        const file = /^([a-z-]+)=FILE:([\s\S]*)$/.exec(rawOutput);
        if (file) {
          const path = join(dir, `template-${fileCount++}`);
          await Deno.writeTextFile(path, file[2]);
          output = `${file[1]}=${path}`;
        }
        const t = TARGETS[target];
        const before = await fetchObject(ts, t);
        const theirs = await k.kubectl([...t.args, "-o", output, ...flags]);
        const after = await fetchObject(ts, t);
        // The objects are not written during the test; a change would make the comparison moot.
        assertEquals(
          JSON.stringify(after),
          JSON.stringify(before),
          `${target} changed during ${rawOutput}`,
        );
        const mine = await ours(before, output, flags);
        if (JSON.stringify(mine) !== JSON.stringify(theirs)) {
          mismatches.push(
            `${target} -o ${rawOutput} ${flags.join(" ")}\n  kubectl: ${
              JSON.stringify(theirs)
            }\n  ours:    ${JSON.stringify(mine)}`,
          );
        }
      }
      assertEquals(
        mismatches,
        [],
        `${mismatches.length} of ${CASES.length} formats differ from kubectl`,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** The object as the server serves it (a list as kubectl's `List`). */
async function fetchObject(
  ts: Awaited<ReturnType<typeof testServer>>,
  t: Target,
): Promise<Record<string, unknown>> {
  const res = await ts.json("GET", t.path);
  assertEquals(res.status, 200, `GET ${t.path}`);
  if (!t.list) return res.body;
  return listForPrinting(res.body.items, { apiVersion: res.body.apiVersion, kind: res.body.kind });
}
