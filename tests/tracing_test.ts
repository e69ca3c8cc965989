/**
 * Tracing end to end: a server with a TracingConfiguration exporting to an OTLP/gRPC receiver
 * the test starts on loopback, an admission webhook the test starts, and the span trees the
 * receiver gets: kube's request span names and attributes, the children (authentication,
 * authorization, the webhook call, storage, serialization), the caller's traceparent
 * continued for a privileged caller and only linked for others, the traceparent the webhook
 * receives. Then a collector that is down, silent or answers garbage (requests are answered
 * all the same), and configuration errors (exit 2 naming the field).
 */

import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { assertConfigError, freePort, runPlatform, testServer, tokenFile } from "./harness.ts";
import { otlpReceiver, type ReceivedSpan } from "./otlp_receiver.ts";
import { startTestWebhook } from "../lib/admission/webhook/webhook_testdata.ts";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";
const CALLER = `00-${TRACE_ID}-${PARENT_ID}-01`;
const CONFIGMAPS = "/api/v1/namespaces/default/configmaps";

async function tracingConfig(dir: string, endpoint: string, rate = 1_000_000): Promise<string> {
  const path = join(dir, "tracing.yaml");
  await Deno.writeTextFile(
    path,
    "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\n" +
      `endpoint: ${endpoint}\nsamplingRatePerMillion: ${rate}\n`,
  );
  return path;
}

function childrenOf(spans: ReceivedSpan[], parent: ReceivedSpan): ReceivedSpan[] {
  return spans.filter((s) => s.traceId === parent.traceId && s.parentSpanId === parent.spanId);
}

function requestSpan(spans: ReceivedSpan[], name: string, status: number) {
  return spans.find((s) => s.name === name && s.attributes["http.response.status_code"] === status);
}

Deno.test("tracing: request span trees with their children, the caller's traceparent continued, the webhook's traceparent", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tracing-test-" });
  await using receiver = await otlpReceiver();
  await using hook = await startTestWebhook();
  await using tokens = await tokenFile({ "bob-token": { name: "bob" } });
  await using ts = await testServer({
    tracingConfigFile: await tracingConfig(dir, receiver.endpoint),
    tokenAuthFile: tokens.path,
  });
  const made = await ts.json(
    "POST",
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    {
      body: {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "MutatingWebhookConfiguration",
        metadata: { name: "inject" },
        webhooks: [{
          name: "inject.example.com",
          clientConfig: { url: `${hook.url}/inject`, caBundle: hook.caBundle },
          rules: [{
            operations: ["CREATE"],
            apiGroups: [""],
            apiVersions: ["v1"],
            resources: ["configmaps"],
          }],
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
        }],
      },
    },
  );
  assertEquals(made.status, 201, JSON.stringify(made.body));
  const ua = { "User-Agent": "tracing-test/1.0" };
  const created = await ts.json("POST", CONFIGMAPS, {
    body: { metadata: { name: "x" }, data: { a: "1" } },
    headers: ua,
  });
  assertEquals(created.status, 201, JSON.stringify(created.body));
  const got = await ts.json("GET", `${CONFIGMAPS}/x`, {
    headers: { ...ua, traceparent: CALLER },
  });
  assertEquals(got.status, 200);
  // Not privileged: the caller's trace is linked to, not continued.
  const bob = await ts.json("GET", `${CONFIGMAPS}/x`, {
    token: "bob-token",
    headers: { traceparent: CALLER },
  });
  assertEquals(bob.status, 403);

  const createName = "POST /api/v1/namespaces/{:namespace}/configmaps";
  const getName = "GET /api/v1/namespaces/{:namespace}/configmaps/{:name}";
  const spans = await receiver.waitFor((spans) => {
    // The request span ends last: its children are exported with or before it.
    const done = (name: string, status: number) => requestSpan(spans, name, status);
    return Boolean(done(createName, 201) && done(getName, 200) && done(getName, 403));
    // A bound, not a speed: the export worker's first start compiles its modules.
  }, 60_000);

  // The create: a root span (no caller's trace), kube's name and attributes.
  const create = requestSpan(spans, createName, 201)!;
  assertEquals(create.parentSpanId, "");
  assertEquals(create.kind, "SPAN_KIND_SERVER");
  assertEquals(create.resource["service.name"], "apiserver");
  assertEquals(create.attributes["http.request.method"], "POST");
  assertEquals(create.attributes["user_agent.original"], "tracing-test/1.0");
  assertEquals(create.attributes.verb, "create");
  assertEquals(create.attributes.resource, "configmaps");
  assertEquals(create.attributes["http.target"], CONFIGMAPS);
  const createChildren = childrenOf(spans, create);
  assertEquals(
    createChildren.map((s) => s.name).sort(),
    [
      "Authenticate",
      "Authorize",
      "Call mutating webhook",
      "Create memory",
      "SerializeObject",
      // Admission reads the namespace (NamespaceLifecycle) and the webhook configurations.
      ...createChildren.filter((s) => s.name.startsWith("Get ") || s.name.startsWith("List "))
        .map((s) => s.name),
    ].sort(),
  );
  const webhook = createChildren.find((s) => s.name === "Call mutating webhook")!;
  assertEquals(webhook.attributes.webhook, "inject.example.com");
  assertEquals(webhook.attributes.configuration, "inject");
  assertEquals(webhook.attributes.operation, "CREATE");
  assertEquals(webhook.attributes.resource, "configmaps");
  // The webhook was sent the traceparent of its call's span.
  const call = hook.received.find((r) => r.path === "/inject")!;
  assertEquals(call.traceparent, `00-${create.traceId}-${webhook.spanId}-01`);
  const stored = createChildren.find((s) => s.name === "Create memory")!;
  assertEquals(stored.attributes.key, "/registry/core/configmaps/default/x");
  assertEquals(childrenOf(spans, createChildren.find((s) => s.name === "Authorize")!), []);
  // Children lie within their parent.
  for (const c of createChildren) {
    assert(
      c.startNs >= create.startNs && c.endNs <= create.endNs,
      `${c.name} within: ${c.startNs - create.startNs} ${create.endNs - c.endNs}`,
    );
  }

  // The get, by system:masters with a traceparent: the caller's trace goes on.
  const get = requestSpan(spans, getName, 200)!;
  assertEquals(get.traceId, TRACE_ID);
  assertEquals(get.parentSpanId, PARENT_ID);
  assertEquals(get.attributes.verb, "get");
  assertEquals(
    childrenOf(spans, get).map((s) => s.name).sort(),
    ["Authenticate", "Authorize", "Get memory", "SerializeObject"],
  );
  const authenticate = childrenOf(spans, get).find((s) => s.name === "Authenticate")!;
  assertEquals(authenticate.endNs >= authenticate.startNs, true);

  // Bob's: a trace of its own, linked to the caller's; the denial is in the span.
  const denied = requestSpan(spans, getName, 403)!;
  assert(denied.traceId !== TRACE_ID);
  assertEquals(denied.parentSpanId, "");
  assertEquals(denied.links, [{ traceId: TRACE_ID, spanId: PARENT_ID }]);
  const authorize = childrenOf(spans, denied).find((s) => s.name === "Authorize")!;
  assertEquals(authorize.attributes.decision, "NoOpinion");
  await Deno.remove(dir, { recursive: true });
});

/** A loopback TCP server that accepts and then never answers, or answers garbage. */
function fakeCollector(mode: "silent" | "garbage") {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      if (mode === "garbage") {
        conn.write(new TextEncoder().encode("HTTP/1.1 200 OK\r\n\r\nthis is not gRPC\r\n"))
          .catch(() => {}).finally(() => conn.close());
      }
    }
  })().catch(() => {});
  return {
    endpoint: `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* already closed */ }
      }
    },
  };
}

Deno.test("tracing: a collector that is down, silent or answers garbage neither blocks nor fails requests", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tracing-test-" });
  const silent = fakeCollector("silent");
  const garbage = fakeCollector("garbage");
  try {
    const collectors = {
      down: `127.0.0.1:${freePort()}`,
      silent: silent.endpoint,
      garbage: garbage.endpoint,
    };
    for (const [what, endpoint] of Object.entries(collectors)) {
      const sub = join(dir, what);
      await Deno.mkdir(sub);
      await using ts = await testServer({ tracingConfigFile: await tracingConfig(sub, endpoint) });
      // Enough spans to fill export batches, each request answered as without tracing.
      for (let i = 0; i < 300; i++) {
        const created = await ts.json("POST", CONFIGMAPS, {
          body: { metadata: { name: `c${i}` } },
        });
        assertEquals(created.status, 201, `${what}: ${JSON.stringify(created.body)}`);
        const got = await ts.json("GET", `${CONFIGMAPS}/c${i}`);
        assertEquals(got.status, 200, what);
      }
    }
  } finally {
    silent.close();
    garbage.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tracing: a configuration that cannot work is refused at start, naming the field", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tracing-test-" });
  const write = async (name: string, text: string) => {
    const path = join(dir, name);
    await Deno.writeTextFile(path, text);
    return path;
  };
  const head = "apiVersion: apiserver.platform.io/v1beta1\nkind: TracingConfiguration\n";
  const cases: [string, string, RegExp][] = [
    [
      "rate.yaml",
      head + "samplingRatePerMillion: 2000000\n",
      /rate\.yaml: samplingRatePerMillion: Invalid value: 2000000: sampling rate per million must be less than or equal to one million$/,
    ],
    [
      "negative.yaml",
      head + "samplingRatePerMillion: -1\n",
      /negative\.yaml: samplingRatePerMillion: Invalid value: -1: sampling rate must be positive$/,
    ],
    [
      "scheme.yaml",
      head + "endpoint: http://collector:4317\n",
      /scheme\.yaml: endpoint: Invalid value: "http:\/\/collector:4317": unsupported scheme: http/,
    ],
    [
      "typo.yaml",
      head + "samplingRate: 10\n",
      /typo\.yaml: samplingRate: unknown field$/,
    ],
    [
      "type.yaml",
      head + "samplingRatePerMillion: lots\n",
      /type\.yaml: samplingRatePerMillion: expected a number, got "lots"$/,
    ],
    [
      "kind.yaml",
      "apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfig\n",
      /kind\.yaml: kind: expected "TracingConfiguration", got "TracingConfig"$/,
    ],
  ];
  const runs = await Promise.all(cases.map(async ([name, text]) => {
    const path = await write(name, text);
    return await runPlatform(
      "check-config",
      "--data-dir",
      join(dir, "data"),
      "--tracing-config-file",
      path,
    );
  }));
  for (const [i, run] of runs.entries()) assertConfigError(run, cases[i][2]);
  // serve refuses the same way, and a missing file names the flag.
  const [serve, missing] = await Promise.all([
    runPlatform(
      "serve",
      "--secure-port",
      "0",
      "--data-dir",
      join(dir, "data"),
      "--tracing-config-file",
      join(dir, "rate.yaml"),
    ),
    runPlatform("check-config", "--tracing-config-file", join(dir, "none.yaml")),
  ]);
  assertConfigError(serve, cases[0][2]);
  assertConfigError(missing, /--tracing-config-file/);
  // A good file passes.
  const ok = await runPlatform(
    "check-config",
    "--data-dir",
    join(dir, "data"),
    "--tracing-config-file",
    await write("ok.yaml", head + "endpoint: localhost:4317\nsamplingRatePerMillion: 100\n"),
  );
  assertEquals(ok.code, 0, ok.stderr);
  assertMatch(ok.stdout, /configuration is valid/);
  await Deno.remove(dir, { recursive: true });
});
