// deno-lint-ignore-file no-explicit-any
/**
 * `platform patch` against a real server: each option, the output and errors compared byte
 * for byte with the real kubectl running the same patch on an equivalent object, `--local`
 * without a server, -f/-k inputs, custom resources, and the entrypoint (`--help`, `--version`,
 * bad input in one line). Credentials and connection options: client_credentials_test.ts.
 */

import { join } from "node:path";
import { stringify as yaml } from "yaml";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { kubectlInstalled } from "./kubectl.ts";
import { ALL_PATCH_FLAGS } from "../lib/client/mod.ts";
import { CLIENT_VERSION, env, ours, platformPatch, same, tempDir } from "./client_harness.ts";

Deno.test({
  name: "patch: each type, no change, and the server's errors print as kubectl prints them",
  ignore: !kubectlInstalled,
  async fn() {
    await using t = await env();
    await using dir = await tempDir();
    await t.namespace("kube-side");
    await t.namespace("ours-side");
    for (const ns of ["kube-side", "ours-side"]) await t.configMap(ns, "x", { a: "1" });
    const elsewhere = join(dir.path, "cm.yaml");
    await Deno.writeTextFile(
      elsewhere,
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: ours-side}\n",
    );
    // Changing cases: each side patches its own object; the messages do not name the namespace.
    const changing: string[][] = [
      ["patch", "configmap", "x", "-p", '{"data":{"b":"2"}}'],
      ["patch", "configmap", "x", "-p", '{"data":{"b":"2"}}'],
      ["patch", "cm/x", "--type", "merge", "-p", 'data: {c: "3"}'],
      [
        "patch",
        "configmaps",
        "x",
        "--type=json",
        "-p",
        '[{"op":"replace","path":"/data/a","value":"9"}]',
      ],
      ["patch", "configmap", "x", "-o", "name", "-p", '{"data":{"d":"4"}}'],
      ["patch", "configmap", "x", "-p", '{"spec":{"unknown":1}}'],
    ];
    for (const args of changing) {
      const o = await ours([...args.slice(1), "-n", "ours-side", "--platformconfig", t.kc]);
      const k = await t.e.kubectl([...args, "-n", "kube-side"]);
      assertEquals(o, { code: k.code, stdout: k.stdout, stderr: k.stderr }, args.join(" "));
    }
    const data = async (ns: string) =>
      (await t.api("GET", `/api/v1/namespaces/${ns}/configmaps/x`)).body.data;
    assertEquals(await data("ours-side"), await data("kube-side"));
    assertEquals(await data("ours-side"), { a: "9", b: "2", c: "3", d: "4" });

    // Failing cases change nothing: both sides run on the same object.
    const failing: string[][] = [
      ["configmap", "nope", "-p", "{}"],
      ["configmap", "x", "-n", "ours-side", "-p", '{"data":{"c":3}}'],
      [
        "configmap",
        "x",
        "-n",
        "ours-side",
        "--type",
        "json",
        "-p",
        '[{"op":"remove","path":"/data/zz"}]',
      ],
      ["configmap", "x", "-n", "ours-side", "-p", '{"metadata":{"labels":{"a":"-bad-"}}}'],
      ["foos", "x", "-p", "{}"],
      ["configmap", "x", "--type", "foo", "-p", "{}"],
      ["configmap", "x", "-p", "{}", "--dry-run=bogus"],
      ["configmap", "x"],
      ["configmap", "x", "-p", "{}", "--request-timeout=abc"],
      ["configmap", "x", "-p", "{}", "--subresource", "scale"],
      ["configmap", "x", "-p", "{}", "--subresource=status"],
      ["configmap", "x", "-p", "{}", "--local"],
      ["-f", "/nonexistent/cm.yaml", "-p", "{}"],
      ["-f", elsewhere, "-n", "default", "-p", "{}"],
      ["-f", "/nonexistent/cm.yaml", "-k", "/tmp", "-p", "{}"],
      ["configmap", "x", "-p", "{}", "--token", "wrong"],
      ["configmap", "x", "-n", "ours-side", "-p", "{}", "--as", "nobody"],
    ];
    for (const args of failing) await same(t.e, t.kc, args, ["patch", ...args]);
  },
});

Deno.test("patch: --dry-run=server and client change nothing; they say so", async () => {
  await using t = await env();
  await t.configMap("default", "x", { a: "1" });
  const server = await t.patch(["cm", "x", "-p", '{"data":{"a":"2"}}', "--dry-run=server"]);
  assertEquals(server, { code: 0, stdout: "configmap/x patched (server dry run)\n", stderr: "" });
  const client = await t.patch(["cm", "x", "-p", '{"data":{"a":"3"}}', "--dry-run=client"]);
  assertEquals(client, { code: 0, stdout: "configmap/x patched (dry run)\n", stderr: "" });
  const shown = await t.patch(["cm", "x", "-p", '{"data":{"b":"3"}}', "--dry-run", "-o", "json"]);
  assertEquals(JSON.parse(shown.stdout).data, { a: "1", b: "3" });
  const same = await t.patch(["cm", "x", "-p", '{"data":{"a":"1"}}', "--dry-run=server"]);
  assertEquals(same.stdout, "configmap/x patched (no change) (server dry run)\n");
  assertEquals((await t.api("GET", "/api/v1/namespaces/default/configmaps/x")).body.data, {
    a: "1",
  });
});

Deno.test("patch: --field-manager and --show-managed-fields", async () => {
  await using t = await env();
  await t.configMap("default", "x", { a: "1" });
  const managers = async (args: string[]) => {
    const r = await t.patch(["cm", "x", "-o", "json", ...args]);
    assertEquals(r.code, 0, r.stderr);
    return JSON.parse(r.stdout).metadata.managedFields?.map((m: any) => m.manager);
  };
  assertEquals(await managers(["-p", '{"data":{"b":"2"}}']), undefined, "hidden by default");
  const all = await managers(["-p", '{"data":{"c":"3"}}', "--show-managed-fields"]);
  assert(all.includes("client-patch"), `default manager: ${all}`);
  const named = await managers([
    "-p",
    '{"data":{"d":"4"}}',
    "--field-manager=team-tool",
    "--show-managed-fields",
  ]);
  assert(named.includes("team-tool"), `named manager: ${named}`);
});

Deno.test({
  name: "patch: --local patches file content with no server, as kubectl --local prints it",
  ignore: !kubectlInstalled,
  async fn() {
    await using t = await env();
    await using dir = await tempDir();
    const file = join(dir.path, "cm.yaml");
    await Deno.writeTextFile(
      file,
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {app: web}\ndata:\n  a: "1"\n',
    );
    for (
      const args of [
        ["-f", file, "--local", "-p", '{"data":{"l":"1"}}'],
        ["-f", file, "--local", "-p", '{"data":{"a":"1"}}'],
        ["-f", file, "--local", "-o", "json", "-p", '{"data":{"l":"1"}}'],
        [
          "-f",
          file,
          "--local",
          "-o",
          "yaml",
          "--type",
          "merge",
          "-p",
          '{"metadata":{"labels":null}}',
        ],
        [
          "-f",
          file,
          "--local",
          "-o",
          "name",
          "--type",
          "json",
          "-p",
          '[{"op":"add","path":"/data/z","value":"2"}]',
        ],
      ]
    ) {
      await same(t.e, t.kc, args, ["patch", ...args]);
    }
    // No server and no configuration at all.
    const alone = await ours([
      "-f",
      file,
      "--local",
      "-o",
      "json",
      "--platformconfig",
      join(dir.path, "none"),
      "-p",
      '{"data":{"b":"2"}}',
    ]);
    assertEquals(alone.code, 0, alone.stderr);
    assertEquals(JSON.parse(alone.stdout).data, { a: "1", b: "2" });
    // A custom resource: strategic merge patch needs a built-in schema.
    const cr = join(dir.path, "cr.yaml");
    await Deno.writeTextFile(cr, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n");
    assertEquals(await ours(["-f", cr, "--local", "-p", "{}"]), {
      code: 1,
      stdout: "",
      stderr: "error: strategic merge patch is not supported for custom resources " +
        "(Widget.example.com); use --type merge or --type json\n",
    });
  },
});

Deno.test("patch: -f a file, a directory with and without -R, a URL; -n", async () => {
  await using t = await env();
  await using dir = await tempDir();
  await t.namespace("team");
  for (const name of ["a", "b", "c"]) await t.configMap("team", name, {});
  const cm = (name: string) =>
    yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "team" } });
  await Deno.mkdir(join(dir.path, "sub"));
  await Deno.writeTextFile(join(dir.path, "a.yaml"), cm("a"));
  await Deno.writeTextFile(join(dir.path, "sub", "b.yml"), cm("b"));
  await Deno.writeTextFile(join(dir.path, "notes.txt"), "not a manifest");
  const p = ["-p", '{"data":{"k":"v"}}'];
  assertEquals((await t.patch(["-f", dir.path, ...p])).stdout, "configmap/a patched\n");
  assertEquals(
    (await t.patch(["-f", dir.path, "-R", ...p, "--type", "merge"])).stdout,
    "configmap/a patched (no change)\nconfigmap/b patched\n",
  );
  // By URL.
  await using served = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(cm("c")),
  );
  const url = `http://127.0.0.1:${served.addr.port}/c.yaml`;
  assertEquals((await t.patch(["-f", url, ...p])).stdout, "configmap/c patched\n");
  // -n: TYPE NAME in another namespace.
  assertEquals(
    (await t.patch(["cm", "c", "-n", "team", "-p", '{"data":{"n":"1"}}'])).stdout,
    "configmap/c patched\n",
  );
  const c = await t.api("GET", "/api/v1/namespaces/team/configmaps/c");
  assertEquals(c.body.data, { k: "v", n: "1" });
});

Deno.test("patch: -k runs the installed kustomize, or says none is installed", async () => {
  await using t = await env();
  await using dir = await tempDir();
  await t.configMap("default", "from-kustomize", {});
  const bin = join(dir.path, "bin");
  await Deno.mkdir(bin);
  // A kustomize that prints one object, whatever the directory.
  await Deno.writeTextFile(
    join(bin, "kustomize"),
    "#!/bin/sh\n[ \"$1\" = build ] || exit 9\necho 'apiVersion: v1'\necho 'kind: ConfigMap'\n" +
      "echo 'metadata: {name: from-kustomize, namespace: default}'\n",
  );
  await Deno.chmod(join(bin, "kustomize"), 0o755);
  const args = ["-k", dir.path, "-p", '{"data":{"k":"1"}}', "--platformconfig", t.kc];
  const withIt = await platformPatch(args, { PATH: `${bin}:/usr/bin:/bin` });
  assertEquals(withIt, { code: 0, stdout: "configmap/from-kustomize patched\n", stderr: "" });
  const without = await platformPatch(args, { PATH: join(dir.path, "empty") });
  assertEquals(without, {
    code: 1,
    stdout: "",
    stderr: "error: -k needs the kustomize program, and none is installed (no kustomize on " +
      "PATH)\n",
  });
});

const WIDGETS_CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { plural: "widgets", singular: "widget", kind: "Widget", shortNames: ["wd"] },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      schema: {
        openAPIV3Schema: {
          type: "object",
          properties: {
            spec: {
              type: "object",
              properties: { replicas: { type: "integer" }, color: { type: "string" } },
            },
            status: {
              type: "object",
              properties: { replicas: { type: "integer" }, phase: { type: "string" } },
            },
          },
        },
      },
      // No scale: the server does not serve that subresource for custom resources yet.
      subresources: { status: {} },
    }],
  },
};

Deno.test("patch: custom resources: merge and json, no strategic, --subresource status", async () => {
  await using t = await env();
  const crd = await t.api(
    "POST",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    WIDGETS_CRD,
  );
  assertEquals(crd.status, 201, JSON.stringify(crd.body));
  // The CRD controller serves the new resource a moment later: wait until discovery lists it.
  // (A generous bound: only a broken controller reaches it.)
  const deadline = Date.now() + 60_000;
  while ((await t.api("GET", "/apis/example.com/v1")).status !== 200) {
    assert(Date.now() < deadline, "the CRD was not served within 60s");
    await new Promise((r) => setTimeout(r, 50));
  }
  const created = await t.api("POST", "/apis/example.com/v1/namespaces/default/widgets", {
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name: "w" },
    spec: { replicas: 1, color: "red" },
  });
  assertEquals(created.status, 201, JSON.stringify(created.body));
  assertEquals(await t.patch(["widget", "w", "-p", '{"spec":{"color":"blue"}}']), {
    code: 1,
    stdout: "",
    stderr: "error: strategic merge patch is not supported for custom resources " +
      "(widgets.example.com); use --type merge or --type json\n",
  });
  assertEquals(
    (await t.patch(["wd/w", "--type", "merge", "-p", '{"spec":{"color":"blue"}}'])).stdout,
    "widget.example.com/w patched\n",
  );
  assertEquals(
    (await t.patch([
      "widgets.example.com",
      "w",
      "--type=json",
      "-p",
      '[{"op":"replace","path":"/spec/replicas","value":3}]',
    ])).stdout,
    "widget.example.com/w patched\n",
  );
  const status = await t.patch([
    "widgets.v1.example.com",
    "w",
    "--type",
    "merge",
    "--subresource=status",
    "-p",
    '{"status":{"phase":"Ready"}}',
  ]);
  assertEquals(status, { code: 0, stdout: "widget.example.com/w patched\n", stderr: "" });
  const w = (await t.api("GET", "/apis/example.com/v1/namespaces/default/widgets/w")).body;
  assertEquals([w.spec, w.status], [{ replicas: 3, color: "blue" }, { phase: "Ready" }]);
  assertEquals(
    (await t.patch(["wd", "w", "-p", "{}", "--subresource", "logs"])).stderr,
    'error: invalid subresource value: "logs". Must be one of [status scale]\n',
  );
});

Deno.test("patch: the entrypoint: --help lists every option, --version, bad input in one line", async () => {
  const help = await platformPatch(["--help"]);
  assertEquals(help.code, 0);
  for (const flag of ALL_PATCH_FLAGS) {
    assert(help.stdout.includes(`--${flag.name}`), `--help lacks --${flag.name}`);
  }
  assertMatch(help.stdout, /--profile=none:\n\t.*\(accepted; does nothing in this client\)/);
  assertEquals(await platformPatch(["--version"]), {
    code: 0,
    stdout: `Client Version: ${CLIENT_VERSION}\n`,
    stderr: "",
  });
  for (
    const args of [
      ["--bogus"],
      ["cm", "x", "-p", "{not: [json"],
      ["cm", "x", "-p", "{}", "--patch-file", "/nonexistent"],
      ["cm", "x", "--patch-file", "/nonexistent"],
      [
        "cm",
        "x",
        "-p",
        "{}",
        "--server",
        "https://127.0.0.1:1",
        "--platformconfig",
        "/nonexistent",
      ],
      ["cm", "x", "-p", "{}", "--server", "::bad::"],
    ]
  ) {
    const r = await platformPatch(args, { HOME: "/nonexistent" });
    assertEquals(r.code, 1, `${args.join(" ")}: ${r.stderr}`);
    assertEquals(r.stdout, "");
    assertEquals(r.stderr.split("\n").length, 2, `one line: ${r.stderr}`);
    assertMatch(r.stderr, /^(error: |The connection|Unable to connect)/);
    assert(!/\bat .*:\d+:\d+/.test(r.stderr), `a stack: ${r.stderr}`);
  }
});

Deno.test({
  name: "patch: -o jsonpath and Go templates print as kubectl prints them",
  ignore: !kubectlInstalled,
  async fn() {
    await using t = await env();
    await using dir = await tempDir();
    await t.namespace("kube-side");
    await t.namespace("ours-side");
    for (const ns of ["kube-side", "ours-side"]) await t.configMap(ns, "x", { a: "1" });
    await Deno.writeTextFile(
      join(dir.path, "t.tmpl"),
      "{{range $k, $v := .data}}{{$k}}={{$v}};{{end}}",
    );
    await Deno.writeTextFile(join(dir.path, "p.jsonpath"), "{.metadata.name}: {.data.a}");
    const cases: string[][] = [
      ["-o", "jsonpath={.data}", "-p", '{"data":{"b":"2"}}'],
      ["-o", "jsonpath-as-json={.data.c}", "-p", '{"data":{"c":"3"}}'],
      ["-o", `jsonpath-file=${join(dir.path, "p.jsonpath")}`, "-p", '{"data":{"a":"2"}}'],
      ["-o", "go-template={{.data.a}}/{{len .data}}", "-p", '{"data":{"d":"4"}}'],
      ["-o", "go-template", "--template", '{{index .data "b"}}', "-p", "{}"],
      ["-o", `go-template-file=${join(dir.path, "t.tmpl")}`, "-p", "{}"],
      ["-o", "template={{.data.missing}}", "-p", "{}"],
      ["-o", "jsonpath={.data", "-p", "{}"],
      ["-o", "go-template", "-p", "{}"],
    ];
    for (const args of cases) {
      const o = await ours([
        "configmap",
        "x",
        ...args,
        "-n",
        "ours-side",
        "--platformconfig",
        t.kc,
      ]);
      const k = await t.e.kubectl(["patch", "configmap", "x", ...args, "-n", "kube-side"]);
      assertEquals(o, { code: k.code, stdout: k.stdout, stderr: k.stderr }, args.join(" "));
    }
    // kubectl's message then dumps the object (uid, timestamps): only its first line compares.
    const strict = await t.patch([
      "cm",
      "x",
      "-n",
      "ours-side",
      "-o",
      "jsonpath={.data.missing}",
      "--allow-missing-template-keys=false",
      "-p",
      "{}",
    ]);
    assertEquals(strict.code, 1);
    assertEquals(
      strict.stderr.split("\n")[0],
      'error: error executing jsonpath "{.data.missing}": Error executing template: missing is ' +
        "not found. Printing more information for debugging the template:",
    );
  },
});
