/**
 * Feature gates as an operator meets them, with kube's messages: an unknown gate and a locked
 * one (GA, or deprecated and locked) are refused at start (exit 2, one line), a GA or
 * deprecated gate that is set is logged as kube logs it, `--help` lists every gate with its
 * stage, and the gates change what the server does (the deprecated, locked
 * AllowServiceLBStatusOnNonLB's rule holds; APIServerTracing gates the tracing file).
 */

import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { assertConfigError, createAsAdmin, runPlatform, testServer } from "./harness.ts";
import { ConfigError } from "../lib/config/mod.ts";
import { startServer } from "../mod.ts";
import { createLogger, silentLogger } from "../lib/api/log.ts";

const GA_WARNING =
  "Setting GA feature gate APIListChunking=true. It will be removed in a future release.";
const DEPRECATED_WARNING = "Setting deprecated feature gate AllowServiceLBStatusOnNonLB=false. " +
  "It will be removed in a future release.";

Deno.test("platform serve: an unknown or locked gate exits 2 with kube's message", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-gates-test-" });
  try {
    const cases: [string, RegExp][] = [
      ["Nope=true", /^platform: --feature-gates: unrecognized feature gate: Nope$/],
      [
        "APIListChunking=false",
        /^platform: --feature-gates: cannot set feature gate APIListChunking to false, feature is locked to true$/,
      ],
      [
        "WatchList=true,StructuredAuthorizationConfiguration=false",
        /^platform: --feature-gates: cannot set feature gate StructuredAuthorizationConfiguration to false, feature is locked to true$/,
      ],
      [
        "AllowServiceLBStatusOnNonLB=true",
        /^platform: --feature-gates: cannot set feature gate AllowServiceLBStatusOnNonLB to true, feature is locked to false$/,
      ],
      ["WatchList=maybe", /^platform: --feature-gates: invalid value of WatchList=maybe, err: /],
      ["WatchList", /^platform: --feature-gates: missing bool value for WatchList$/],
    ];
    const data = join(dir, "data");
    for (const [gates, re] of cases) {
      assertConfigError(
        await runPlatform("--data-dir", data, "--secure-port", "0", "--feature-gates", gates),
        re,
      );
      // Refused before anything was made.
      assertEquals(await Deno.stat(data).then(() => true, () => false), false, gates);
    }
    // The same from the configuration file, with the field path.
    const file = join(dir, "c.yaml");
    await Deno.writeTextFile(
      file,
      "apiVersion: platform.io/v1alpha1\nkind: ServerConfiguration\n" +
        "featureGates:\n  RetryGenerateName: false\n",
    );
    assertConfigError(
      await runPlatform("check-config", "--config", file),
      /^platform: \S*\/c\.yaml: featureGates\.RetryGenerateName: cannot set feature gate RetryGenerateName to false, feature is locked to true$/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("startServer refuses a locked gate as the flag does", async () => {
  const err = await startServer({
    storage: "memory",
    logger: silentLogger,
    featureGates: new Map([["WatchBookmark", false]]),
  }).then(async (s) => {
    await s.close();
    return undefined;
  }, (e) => e);
  assert(err instanceof ConfigError, String(err));
  assertEquals(
    err.message,
    "--feature-gates: cannot set feature gate WatchBookmark to false, feature is locked to true",
  );
});

Deno.test("GA and deprecated gates that are set are logged at start, in kube's words", async () => {
  const lines: string[] = [];
  {
    await using ts = await testServer({
      logger: createLogger("info", (line) => lines.push(line)),
      featureGates: new Map([
        ["APIListChunking", true],
        ["AllowServiceLBStatusOnNonLB", false],
        ["WatchList", true],
      ]),
    });
    assertEquals((await ts.json("GET", "/version")).status, 200);
  }
  const warnings = lines.filter((l) => / WARN {2}/.test(l)).map((l) =>
    l.replace(/^.* WARN {2}/, "")
  );
  assert(warnings.includes(GA_WARNING), lines.join("\n"));
  assert(warnings.includes(DEPRECATED_WARNING), lines.join("\n"));
  // A beta gate set explicitly is not warned about.
  assert(!lines.some((l) => l.includes("WatchList")), lines.join("\n"));
});

Deno.test("platform serve logs the deprecated gate's warning; check-config prints it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-gates-test-" });
  try {
    const check = await runPlatform(
      "check-config",
      "--feature-gates",
      "AllowServiceLBStatusOnNonLB=false,APIListChunking=true",
    );
    assertEquals(check.code, 0, check.stderr);
    // One line per gate, in the order given.
    assertEquals(check.stderr.trimEnd().split("\n"), [
      `platform: ${DEPRECATED_WARNING}`,
      `platform: ${GA_WARNING}`,
    ]);

    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        new URL("../main.ts", import.meta.url).pathname,
        "--data-dir",
        join(dir, "data"),
        "--secure-port",
        "0",
        "--storage",
        "memory",
        "--feature-gates",
        "AllowServiceLBStatusOnNonLB=false",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    // Read the log until the server says it serves, then stop it.
    const seen: string[] = [];
    let rest = "";
    const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    while (!seen.some((l) => l.includes("serving on"))) {
      const { value, done } = await reader.read();
      if (done) break;
      const parts = (rest + value).split("\n");
      rest = parts.pop()!;
      seen.push(...parts);
    }
    child.kill("SIGTERM");
    await reader.cancel();
    await child.status;
    const warning = seen.find((l) => l.includes("deprecated feature gate"));
    assert(warning !== undefined, seen.join("\n"));
    assertMatch(
      warning,
      / WARN {2}Setting deprecated feature gate AllowServiceLBStatusOnNonLB=false\./,
    );
    // Before the server served.
    assert(seen.indexOf(warning) < seen.findIndex((l) => l.includes("serving on")));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--help lists every gate with its stage, default and lock, in kube's form", async () => {
  const run = await runPlatform("--help");
  assertEquals(run.code, 0, run.stderr);
  const gates = run.stdout.slice(run.stdout.indexOf("Feature gates (--feature-gates):"));
  for (
    const line of [
      "  AllAlpha=true|false (ALPHA - default=false)",
      "  AllowUnsafeMalformedObjectDeletion=true|false (ALPHA - default=false)",
      "  AllBeta=true|false (BETA - default=false)",
      "  WatchList=true|false (BETA - default=true)",
      "  APIListChunking=true|false (GA - default=true, locked to true)",
      "  AllowServiceLBStatusOnNonLB=true|false (DEPRECATED - default=false, locked to false)",
    ]
  ) {
    assert(gates.split("\n").includes(line), `${line}\n${gates}`);
  }
});

Deno.test("the deprecated, locked AllowServiceLBStatusOnNonLB: ingress only on a LoadBalancer", async () => {
  await using ts = await testServer();
  const svcs = "/api/v1/namespaces/default/services";
  const svc = (name: string, type: string) => ({
    metadata: { name },
    spec: { type, ports: [{ port: 80 }] },
  });
  await createAsAdmin(ts, svcs, svc("plain", "ClusterIP"));
  await createAsAdmin(ts, svcs, svc("lb", "LoadBalancer"));
  const status = (name: string) =>
    ts.json("PATCH", `${svcs}/${name}/status`, {
      headers: { "Content-Type": "application/merge-patch+json" },
      body: { status: { loadBalancer: { ingress: [{ ip: "192.0.2.7" }] } } },
    });
  const refused = await status("plain");
  assertEquals(refused.status, 422, JSON.stringify(refused.body));
  assertEquals(refused.body.reason, "Invalid");
  assertEquals(
    refused.body.message,
    'Service "plain" is invalid: status.loadBalancer.ingress: Forbidden: may only be used ' +
      "when `spec.type` is 'LoadBalancer'",
  );
  const ok = await status("lb");
  assertEquals(ok.status, 200, JSON.stringify(ok.body));
  assertEquals(ok.body.status.loadBalancer.ingress, [{ ip: "192.0.2.7", ipMode: "VIP" }]);
});

Deno.test("APIServerTracing off (or AllBeta=false): a tracing file is refused in kube's words", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-gates-test-" });
  try {
    const tracing = join(dir, "tracing.yaml");
    await Deno.writeTextFile(
      tracing,
      "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\n" +
        "endpoint: 127.0.0.1:4317\nsamplingRatePerMillion: 0\n",
    );
    for (const gates of ["APIServerTracing=false", "AllBeta=false"]) {
      assertConfigError(
        await runPlatform(
          "--data-dir",
          join(dir, "data"),
          "--secure-port",
          "0",
          "--storage",
          "memory",
          "--tracing-config-file",
          tracing,
          "--feature-gates",
          gates,
        ),
        /^platform: --tracing-config-file: APIServerTracing feature is not enabled, but tracing config file was provided$/,
      );
    }
    // check-config refuses it as serve does.
    assertConfigError(
      await runPlatform(
        "check-config",
        "--tracing-config-file",
        tracing,
        "--feature-gates",
        "APIServerTracing=false",
      ),
      /^platform: --tracing-config-file: APIServerTracing feature is not enabled, but tracing config file was provided$/,
    );
    // On (the default), the same file is taken.
    await using ts = await testServer({ tracingConfigFile: tracing });
    assertEquals((await ts.json("GET", "/version")).status, 200);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("WatchList (beta, on by default): streaming lists unless switched off", async () => {
  const path = "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true" +
    "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1";
  {
    await using ts = await testServer();
    const res = await ts.request("GET", path);
    assertEquals(res.status, 200);
    await res.body?.cancel();
  }
  await using ts = await testServer({ featureGates: new Map([["WatchList", false]]) });
  const res = await ts.json("GET", path);
  assertEquals(res.status, 422);
  assertMatch(
    res.body.message,
    /sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled/,
  );
});

// A GA, locked gate's behaviour is always on: kube's chunked lists (APIListChunking) with
// remainingItemCount (RemainingItemCount).
Deno.test("GA gates: chunked lists with remainingItemCount, whatever is set", async () => {
  await using ts = await testServer({
    featureGates: new Map([["APIListChunking", true], ["RemainingItemCount", true]]),
  });
  await createAsAdmin(ts, "/api/v1/namespaces", { metadata: { name: "chunks" } });
  for (const name of ["a", "b", "c"]) {
    await createAsAdmin(ts, "/api/v1/namespaces/chunks/configmaps", { metadata: { name } });
  }
  // Every namespace also gets its root CA ConfigMap.
  const all = await ts.json("GET", "/api/v1/namespaces/chunks/configmaps");
  assertEquals(all.body.items.length, 4);
  const page = await ts.json("GET", "/api/v1/namespaces/chunks/configmaps?limit=1");
  assertEquals(page.status, 200);
  assertEquals(page.body.items.length, 1);
  assert(page.body.metadata.continue, JSON.stringify(page.body.metadata));
  assertEquals(page.body.metadata.remainingItemCount, 3);
  assertEquals(page.body.items[0].metadata.name, "a");
});

Deno.test("/metrics: kubernetes_feature_enabled gives every gate's stage and value, as kube", async () => {
  await using ts = await testServer({ featureGates: new Map([["WatchList", false]]) });
  const res = await ts.request("GET", "/metrics");
  assertEquals(res.status, 200);
  const lines = (await res.text()).split("\n").filter((l) =>
    l.startsWith("kubernetes_feature_enabled") || l.includes(" kubernetes_feature_enabled ")
  );
  for (
    const line of [
      "# HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage " +
      "and enablement of a k8s feature.",
      "# TYPE kubernetes_feature_enabled gauge",
      'kubernetes_feature_enabled{name="WatchList",stage="BETA"} 0',
      'kubernetes_feature_enabled{name="APIResponseCompression",stage="BETA"} 1',
      'kubernetes_feature_enabled{name="APIListChunking",stage=""} 1',
      'kubernetes_feature_enabled{name="AllowServiceLBStatusOnNonLB",stage="DEPRECATED"} 0',
      'kubernetes_feature_enabled{name="AllAlpha",stage="ALPHA"} 0',
      'kubernetes_feature_enabled{name="AllowUnsafeMalformedObjectDeletion",stage="ALPHA"} 0',
    ]
  ) {
    assert(lines.includes(line), `${line}\n${lines.join("\n")}`);
  }
});
