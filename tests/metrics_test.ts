/**
 * `/metrics` over HTTPS as a monitoring system sees it: who may read it (RBAC's
 * `system:monitoring`), kube's names, labels and stability levels, and that requests, watches,
 * stored objects, authentication, authorization, audit and admission webhooks are counted.
 */

import { assert, assertEquals, assertMatch } from "./assert.ts";
import { assertConfigError, runPlatform, testServer, tokenFile } from "./harness.ts";
import type { Logger } from "../lib/api/mod.ts";
import {
  answer,
  configMapCreateWebhook,
  startTestWebhook,
} from "../lib/admission/webhook/webhook_testdata.ts";
import { openCrd } from "./open_crd.ts";

/** One sample of the exposition whose labels include `labels`; undefined if none. */
function sample(text: string, name: string, labels: Record<string, string> = {}) {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) got[k] = v;
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

const CM = { group: "", version: "v1", resource: "configmaps", component: "apiserver" };

Deno.test("metrics: requests are counted with kube's verbs, scopes and codes; HELP shows stability", async () => {
  await using ts = await testServer();
  const path = "/api/v1/namespaces/default/configmaps";
  assertEquals((await ts.json("POST", path, { body: { metadata: { name: "a" } } })).status, 201);
  assertEquals((await ts.json("GET", `${path}/a`)).status, 200);
  assertEquals((await ts.json("GET", `${path}/missing`)).status, 404);
  assertEquals((await ts.json("GET", path)).status, 200);
  const apply = await ts.json("PATCH", `${path}/b?fieldManager=test`, {
    body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "b" } }),
    headers: { "Content-Type": "application/apply-patch+yaml" },
  });
  assertEquals(apply.status, 201);
  assertEquals((await ts.json("POST", `${path}?dryRun=All`, { body: {} })).status, 422);

  const res = await ts.request("GET", "/metrics");
  assertEquals(res.status, 200);
  assertEquals(res.headers.get("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  const text = await res.text();
  const total = (labels: Record<string, string>) =>
    sample(text, "apiserver_request_total", { ...CM, ...labels });
  assertEquals(total({ verb: "POST", scope: "resource", code: "201", dry_run: "" }), 1);
  assertEquals(total({ verb: "GET", scope: "resource", code: "200" }), 1);
  assertEquals(total({ verb: "GET", scope: "resource", code: "404" }), 1);
  assertEquals(total({ verb: "LIST", scope: "namespace", code: "200" }), 1);
  assertEquals(total({ verb: "APPLY", scope: "resource", code: "201" }), 1);
  assertEquals(total({ verb: "POST", code: "422", dry_run: "All" }), 1);
  assertMatch(text, /^# HELP apiserver_request_total \[STABLE\] Counter of apiserver requests/m);
  assertMatch(text, /^# TYPE apiserver_request_duration_seconds histogram$/m);
  assertMatch(
    text,
    /^# HELP authentication_attempts \[ALPHA\] Counter of authenticated attempts\.$/m,
  );
  const durations = { ...CM, verb: "POST", scope: "resource", dry_run: "" };
  assertEquals(sample(text, "apiserver_request_duration_seconds_count", durations), 1);
  assertEquals(
    sample(text, "apiserver_request_duration_seconds_bucket", { ...durations, le: "+Inf" }),
    1,
  );
  assert(sample(text, "apiserver_request_duration_seconds_bucket", { le: "0.005" }) !== undefined);
  // Sizes of the answers made (errors leave through the chain's error exit, unmeasured).
  assertEquals(
    sample(text, "apiserver_response_sizes_count", { ...CM, verb: "GET", scope: "resource" }),
    1,
  );
  assert(sample(text, "apiserver_storage_objects", { resource: "configmaps" })! >= 2);
  assert(sample(text, "etcd_request_duration_seconds_count", { operation: "create" })! >= 1);
  assert(sample(text, "process_start_time_seconds")! > 1.7e9);
  assert(sample(text, "process_resident_memory_bytes")! > 0);
  assert(sample(text, "process_open_fds")! > 0);
  assertEquals(sample(text, "kubernetes_build_info", { major: "1", minor: "32" }), 1);
});

Deno.test("metrics: a path that addresses nothing adds no series of its own", async () => {
  await using ts = await testServer();
  assertEquals((await ts.json("GET", "/apis/made.up/v1/things")).status, 404);
  assertEquals((await ts.json("GET", "/nothing/here")).status, 404);
  const text = await (await ts.request("GET", "/metrics")).text();
  assert(!text.includes("made.up") && !text.includes("things") && !text.includes("/nothing"));
  assertEquals(
    sample(text, "apiserver_request_total", { verb: "LIST", resource: "", code: "404" }),
    1,
  );
});

Deno.test("metrics: labels from a path stay bounded whoever sends it: refused requests make no series of their own", async () => {
  await using tokens = await tokenFile({ "bob-token": { name: "bob" } });
  await using ts = await testServer({ tokenAuthFile: tokens.path });
  const cm = "/api/v1/namespaces/default/configmaps";
  for (let i = 0; i < 3; i++) {
    // No credentials, a bad token, a user allowed nothing.
    assertEquals((await ts.json("GET", `/made-up-${i}`, { token: null })).status, 401);
    assertEquals((await ts.json("GET", `${cm}/x/made-up-${i}`, { token: "wrong" })).status, 401);
    assertEquals(
      (await ts.json("GET", `${cm}/x/made-up-${i}`, { token: "bob-token" })).status,
      403,
    );
    assertEquals((await ts.json("GET", `/made-up-${i}`, { token: "bob-token" })).status, 403);
  }
  const csr = "/apis/certificates.platform.io/v1/certificatesigningrequests/x/approval";
  assertEquals((await ts.json("GET", csr, { token: "bob-token" })).status, 403);
  const text = await (await ts.request("GET", "/metrics")).text();
  assert(!text.includes("made-up"), "a made-up path or subresource is a label");
  const refused = { verb: "GET", ...CM, scope: "resource", subresource: "" };
  assertEquals(sample(text, "apiserver_request_total", { ...refused, code: "401" }), 3);
  assertEquals(sample(text, "apiserver_request_total", { ...refused, code: "403" }), 3);
  // A subresource the resource serves keeps its label.
  assertEquals(
    sample(text, "apiserver_request_total", {
      resource: "certificatesigningrequests",
      subresource: "approval",
      code: "403",
    }),
    1,
  );
  assertEquals(
    sample(text, "apiserver_request_total", { subresource: "", component: "", code: "401" }),
    3,
  );
});

Deno.test("metrics: a custom resource's requests carry its labels while served, and none once its CRD is gone", async () => {
  await using ts = await testServer();
  const crds = "/apis/apiextensions.platform.io/v1/customresourcedefinitions";
  const crd = openCrd("metrics.example.com", "widgets", "Widget");

  assertEquals((await ts.json("POST", crds, { body: crd })).status, 201);
  const widgets = "/apis/metrics.example.com/v1/namespaces/default/widgets";
  const until = async (status: number) => {
    for (let i = 0; i < 100; i++) {
      if ((await ts.json("GET", widgets)).status === status) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${widgets} never answered ${status}`);
  };
  await until(200);
  for (let i = 0; i < 3; i++) assertEquals((await ts.json("GET", widgets)).status, 200);
  const labels = {
    verb: "LIST",
    group: "metrics.example.com",
    version: "v1",
    resource: "widgets",
    scope: "namespace",
  };
  let text = await (await ts.request("GET", "/metrics")).text();
  // The three, and the one that found it served.
  assertEquals(sample(text, "apiserver_request_total", { ...labels, code: "200" }), 4);

  assertEquals((await ts.json("DELETE", `${crds}/widgets.metrics.example.com`)).status, 200);
  await until(404);
  const unserved = { verb: "LIST", resource: "", code: "404" };
  text = await (await ts.request("GET", "/metrics")).text();
  const served = sample(text, "apiserver_request_total", { ...labels, code: "200" });
  const before = sample(text, "apiserver_request_total", unserved)!;
  for (let i = 0; i < 2; i++) assertEquals((await ts.json("GET", widgets)).status, 404);
  text = await (await ts.request("GET", "/metrics")).text();
  assertEquals(sample(text, "apiserver_request_total", { ...labels, code: "200" }), served);
  assertEquals(sample(text, "apiserver_request_total", { ...labels, code: "404" }), undefined);
  assertEquals(sample(text, "apiserver_request_total", unserved), before + 2);
});

Deno.test("metrics: watches are registered watchers and long-running requests while open", async () => {
  await using ts = await testServer();
  const watch = await ts.request("GET", "/api/v1/namespaces/default/configmaps?watch=1");
  const reader = watch.body!.getReader();
  await ts.json("POST", "/api/v1/namespaces/default/configmaps", {
    body: { metadata: { name: "w" } },
  });
  // The initial state (kube-root-ca.crt) and the new one.
  let seen = "";
  while (!seen.includes('"w"')) seen += new TextDecoder().decode((await reader.read()).value);
  const gvk = { group: "", version: "v1", kind: "ConfigMap" };
  const running = { ...CM, verb: "WATCH", scope: "namespace" };
  let text = await (await ts.request("GET", "/metrics")).text();
  assertEquals(sample(text, "apiserver_registered_watchers", gvk), 1);
  assertEquals(sample(text, "apiserver_longrunning_requests", running), 1);
  assert(sample(text, "apiserver_watch_events_total", gvk)! >= 1);
  await reader.cancel();
  for (let i = 0; i < 100; i++) {
    text = await (await ts.request("GET", "/metrics")).text();
    if (sample(text, "apiserver_registered_watchers", gvk) === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  assertEquals(sample(text, "apiserver_registered_watchers", gvk), 0);
  assertEquals(sample(text, "apiserver_longrunning_requests", running), 0);
});

Deno.test("metrics: readable by system:monitoring; 403 for other users, 401 without credentials", async () => {
  await using tokens = await tokenFile({
    "monitor-token": { name: "prometheus", groups: ["system:monitoring"] },
    "bob-token": { name: "bob" },
  });
  await using ts = await testServer({ tokenAuthFile: tokens.path });
  const monitor = await ts.request("GET", "/metrics", { token: "monitor-token" });
  assertEquals(monitor.status, 200);
  const text = await monitor.text();
  const bob = await ts.json("GET", "/metrics", { token: "bob-token" });
  assertEquals(bob.status, 403);
  assertEquals(bob.body.message, 'forbidden: User "bob" cannot get path "/metrics"');
  assertEquals((await ts.json("GET", "/metrics", { token: null })).status, 401);
  assertEquals((await ts.json("GET", "/metrics", { token: "wrong" })).status, 401);
  // The monitoring user may also read the health checks.
  assertEquals((await ts.request("GET", "/readyz/ping", { token: "monitor-token" })).status, 200);

  const after = await (await ts.request("GET", "/metrics", { token: "monitor-token" })).text();
  const rbac = { type: "RBAC", name: "rbac" };
  assertEquals(
    sample(after, "apiserver_authorization_decisions_total", { ...rbac, decision: "allowed" })! -
      sample(text, "apiserver_authorization_decisions_total", { ...rbac, decision: "allowed" })!,
    2, // the readyz check and this scrape (the first scrape was counted before it was read)
  );
  assert(sample(after, "authentication_attempts", { result: "failure" })! >= 1);
  assert(sample(after, "authentication_attempts", { result: "success" })! >= 3);
  assertEquals(
    sample(after, "apiserver_request_total", {
      verb: "GET",
      subresource: "/metrics",
      component: "",
      code: "403",
    }),
    1,
  );
});

Deno.test("metrics: audit events, levels and the batch buffer's overflow are counted and logged", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/policy.yaml`,
      "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
    );
    const warnings: string[] = [];
    const logger: Logger = {
      debug() {},
      info() {},
      warn: (m) => void warnings.push(m),
      error() {},
    };
    await using ts = await testServer({
      logger,
      audit: {
        policyFile: `${dir}/policy.yaml`,
        logPath: `${dir}/audit.log`,
        logMode: "batch",
        logBatchBufferSize: 1,
      },
    });
    // Many requests at once: a buffer of one event overflows.
    await Promise.all(
      Array.from(
        { length: 20 },
        () => ts.request("GET", "/api/v1/namespaces").then((r) => r.text()),
      ),
    );
    const text = await (await ts.request("GET", "/metrics")).text();
    assert(sample(text, "apiserver_audit_event_total")! >= 40);
    assert(sample(text, "apiserver_audit_level_total", { level: "Metadata" })! >= 20);
    const dropped = sample(text, "apiserver_audit_error_total", { plugin: "buffered" })!;
    assert(dropped > 0, `dropped ${dropped}`);
    assert(warnings.some((w) => w.includes("the batch buffer (1 events) is full")), `${warnings}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("metrics: admission webhook calls are timed and denials counted", async () => {
  await using hook = await startTestWebhook();
  hook.respond = (review) =>
    answer(review, { allowed: false, status: { code: 403, message: "no" } });
  await using ts = await testServer();
  const made = await ts.json(
    "POST",
    "/apis/admissionregistration.platform.io/v1/validatingwebhookconfigurations",
    {
      body: configMapCreateWebhook("ValidatingWebhookConfiguration", "deny", hook),
    },
  );
  assertEquals(made.status, 201);
  const denied = await ts.json("POST", "/api/v1/namespaces/default/configmaps", {
    body: { metadata: { name: "x" } },
  });
  assertEquals(denied.status, 403);
  const text = await (await ts.request("GET", "/metrics")).text();
  const webhook = { name: "deny.example.com", type: "validate", operation: "CREATE" };
  assertEquals(
    sample(text, "apiserver_admission_webhook_admission_duration_seconds_count", {
      ...webhook,
      rejected: "true",
    }),
    1,
  );
  assertEquals(
    sample(text, "apiserver_admission_webhook_rejection_count", {
      ...webhook,
      error_type: "no_error",
      rejection_code: "403",
    }),
    1,
  );
});

Deno.test("--show-hidden-metrics-for-version takes only the previous minor version (exit 2)", async () => {
  assertConfigError(
    await runPlatform("check-config", "--show-hidden-metrics-for-version=latest"),
    /^platform: --show-hidden-metrics-for-version: "latest" is not a minor version/,
  );
  assertConfigError(
    await runPlatform("check-config", "--show-hidden-metrics-for-version=1.29"),
    /^platform: --show-hidden-metrics-for-version: must be omitted or the previous minor version "1\.31"/,
  );
  const dir = await Deno.makeTempDir();
  try {
    assertConfigError(
      await runPlatform(
        "serve",
        `--data-dir=${dir}`,
        "--secure-port=0",
        "--storage=memory",
        "--show-hidden-metrics-for-version=1.30",
      ),
      /^platform: --show-hidden-metrics-for-version: must be omitted or the previous minor version "1\.31"/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  // The previous minor version is taken (nothing this version declares is hidden yet).
  await using ts = await testServer({ showHiddenMetricsForVersion: "1.31" });
  assertEquals((await ts.request("GET", "/metrics")).status, 200);
});

Deno.test("metrics off (the bench's baseline): nothing is measured and /metrics is not served", async () => {
  await using ts = await testServer({ metrics: false });
  const made = await ts.json("POST", "/api/v1/namespaces/default/configmaps", {
    body: { metadata: { name: "a" } },
  });
  assertEquals(made.status, 201);
  assertEquals((await ts.json("GET", "/metrics")).status, 404);
});

Deno.test("--etcd-count-metric-poll-period: stored objects are counted again once a period has passed; 0 turns the metric off", async () => {
  const count = async (s: Awaited<ReturnType<typeof testServer>>) =>
    sample(await (await s.request("GET", "/metrics")).text(), "apiserver_storage_objects", {
      resource: "configmaps",
    });
  const cm = (s: Awaited<ReturnType<typeof testServer>>, name: string) =>
    s.json("POST", "/api/v1/namespaces/default/configmaps", { body: { metadata: { name } } });
  {
    // Within the period a scrape shows the count taken at the first.
    await using s = await testServer({ storageCountPeriodMs: 3_600_000 });
    const before = (await count(s))!;
    await cm(s, "one");
    assertEquals(await count(s), before);
  }
  {
    // Past it, the objects are counted again.
    await using s = await testServer({ storageCountPeriodMs: 1 });
    const before = (await count(s))!;
    await cm(s, "one");
    await new Promise((r) => setTimeout(r, 5));
    assertEquals(await count(s), before + 1);
  }
  {
    await using s = await testServer({ storageCountPeriodMs: 0 });
    await cm(s, "one");
    assertEquals(await count(s), undefined);
  }
});
