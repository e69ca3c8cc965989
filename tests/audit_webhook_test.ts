// deno-lint-ignore-file no-explicit-any
/**
 * The audit webhook end to end: a server with a policy file and `--audit-webhook-config-file`
 * (a kubeconfig naming an HTTPS receiver started here, with a certificate of a test CA and a
 * token) POSTs `EventList` batches of the events of its requests; a receiver that first answers
 * 500 gets the batch again; the log and the webhook both get every event; a kubeconfig that
 * cannot be read stops the start with exit 2, naming the flag.
 */

import { assert, assertEquals } from "./assert.ts";
import { assertConfigError, runPlatform, testServer } from "./harness.ts";
import { ensurePki } from "../lib/certificates/mod.ts";

const CONFIGMAPS = "/api/v1/namespaces/default/configmaps";
const POLICY = `
apiVersion: audit.platform.io/v1
kind: Policy
rules:
  - level: None
    nonResourceURLs: ["/readyz", "/livez*"]
  - level: Metadata
`;

interface Receiver extends AsyncDisposable {
  /** Every POST: its path, Authorization header and EventList, with the status answered. */
  posts: { path: string; authorization: string | null; list: any; status: number }[];
  kubeconfig: string;
  dir: string;
}

/** An HTTPS receiver answering `status(n)` to the n-th POST, and a kubeconfig naming it. */
async function startReceiver(status: (n: number) => number = () => 200): Promise<Receiver> {
  const dir = await Deno.makeTempDir({ prefix: "platform-audit-webhook-" });
  const pki = await ensurePki({
    dataDir: `${dir}/hook`,
    sans: [],
    bindAddress: "127.0.0.1",
    logger: { info: () => {} },
  });
  const posts: Receiver["posts"] = [];
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: pki.servingCertPem,
    key: pki.servingKeyPem,
    onListen: () => {},
  }, async (req) => {
    const list = await req.json();
    const answer = status(posts.length);
    posts.push({
      path: new URL(req.url).pathname,
      authorization: req.headers.get("authorization"),
      list,
      status: answer,
    });
    return new Response(answer === 200 ? "{}" : "not json at all", { status: answer });
  });
  await Deno.writeTextFile(`${dir}/ca.crt`, pki.caCertPem);
  const kubeconfig = `${dir}/webhook.kubeconfig`;
  await Deno.writeTextFile(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters:
  - name: hook
    cluster:
      server: https://127.0.0.1:${server.addr.port}/audit
      certificate-authority: ca.crt
users:
  - name: apiserver
    user:
      token: audit-secret
contexts:
  - name: default
    context: { cluster: hook, user: apiserver }
current-context: default
`,
  );
  await Deno.writeTextFile(`${dir}/policy.yaml`, POLICY);
  return {
    posts,
    kubeconfig,
    dir,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

Deno.test("audit webhook: EventList batches of the requests' events reach the receiver, a 500 is retried", async () => {
  // The first POST is answered 500 (with a body that is no JSON); the batch comes again.
  await using hook = await startReceiver((n) => (n === 0 ? 500 : 200));
  const log = `${hook.dir}/audit.log`;
  const ts = await testServer({
    audit: {
      policyFile: `${hook.dir}/policy.yaml`,
      logPath: log,
      webhookConfigFile: hook.kubeconfig,
      webhookBatchMaxWaitMs: 100,
      webhookInitialBackoffMs: 100,
    },
  });
  const ids: string[] = [];
  try {
    for (const name of ["one", "two"]) {
      const res = await ts.request("POST", CONFIGMAPS, { body: { metadata: { name } } });
      assertEquals(res.status, 201);
      await res.body?.cancel();
      ids.push(res.headers.get("Audit-ID")!);
    }
    const got = await ts.request("GET", `${CONFIGMAPS}/one`);
    await got.body?.cancel();
    ids.push(got.headers.get("Audit-ID")!);

    const accepted = () =>
      hook.posts.filter((p) => p.status === 200).flatMap((p) => p.list.items) as any[];
    await until(() => ids.every((id) => accepted().filter((e) => e.auditID === id).length === 2));
  } finally {
    await ts[Symbol.asyncDispose]();
  }
  const first = hook.posts[0];
  assertEquals(first.status, 500);
  assertEquals(first.path, "/audit");
  assertEquals(first.authorization, "Bearer audit-secret");
  assertEquals(first.list.kind, "EventList");
  assertEquals(first.list.apiVersion, "audit.platform.io/v1");
  // The failed batch came again, the same events.
  assertEquals(hook.posts[1].status, 200);
  assertEquals(
    hook.posts[1].list.items.map((e: any) => e.auditID + e.stage),
    first.list.items.map((e: any) => e.auditID + e.stage),
  );
  const items = hook.posts.filter((p) => p.status === 200).flatMap((p) => p.list.items);
  for (const id of ids) {
    const events = items.filter((e: any) => e.auditID === id);
    assertEquals(events.map((e: any) => e.stage), ["RequestReceived", "ResponseComplete"]);
    assertEquals(events[0].kind, "Event");
    assertEquals(events[0].level, "Metadata");
  }
  // The log got every event too.
  const logged = (await Deno.readTextFile(log)).split("\n").filter((l) => l).map((l) =>
    JSON.parse(l)
  );
  for (const id of ids) {
    assertEquals(logged.filter((e) => e.auditID === id).length, 2);
  }
});

Deno.test("audit webhook: blocking-strict fails a request whose event cannot be sent; shutdown flushes batches", async () => {
  await using hook = await startReceiver((n) => (n === 0 ? 200 : 503));
  const ts = await testServer({
    audit: {
      policyFile: `${hook.dir}/policy.yaml`,
      webhookConfigFile: hook.kubeconfig,
      webhookMode: "blocking-strict",
    },
  });
  try {
    // The first event is accepted, then the webhook fails: the next request fails with 500.
    const ok = await ts.request("GET", `${CONFIGMAPS}`);
    await ok.body?.cancel();
    const failed = await ts.request("GET", `${CONFIGMAPS}`);
    await failed.body?.cancel();
    assertEquals(failed.status, 500);
  } finally {
    await ts[Symbol.asyncDispose]();
  }
  assertEquals(hook.posts[0].list.items.length, 1);

  // Batch mode with a long max wait: the events are sent when the server stops.
  await using later = await startReceiver();
  const ts2 = await testServer({
    audit: {
      policyFile: `${later.dir}/policy.yaml`,
      webhookConfigFile: later.kubeconfig,
      webhookBatchMaxWaitMs: 60_000,
    },
  });
  const res = await ts2.request("GET", CONFIGMAPS);
  await res.body?.cancel();
  const id = res.headers.get("Audit-ID");
  assertEquals(later.posts.length, 0);
  await ts2[Symbol.asyncDispose]();
  const items = later.posts.flatMap((p) => p.list.items);
  assert(items.some((e: any) => e.auditID === id), "flushed at shutdown");
});

Deno.test("audit webhook: a kubeconfig that cannot be read or used stops check-config and serve with exit 2 naming the flag", async () => {
  await using hook = await startReceiver();
  const args = (command: string, kubeconfig: string) => [
    command,
    "--data-dir",
    `${hook.dir}/data`,
    "--secure-port",
    "0",
    "--storage",
    "memory",
    "--audit-policy-file",
    `${hook.dir}/policy.yaml`,
    "--audit-webhook-config-file",
    kubeconfig,
  ];
  await Deno.writeTextFile(`${hook.dir}/bad.kubeconfig`, "apiVersion: v1\nkind: Config\n");
  for (const command of ["check-config", "serve"]) {
    assertConfigError(
      await runPlatform(...args(command, `${hook.dir}/missing.kubeconfig`)),
      /--audit-webhook-config-file.*missing\.kubeconfig/,
    );
    assertConfigError(
      await runPlatform(...args(command, `${hook.dir}/bad.kubeconfig`)),
      /--audit-webhook-config-file: .*bad\.kubeconfig/,
    );
  }
  const ok = await runPlatform(...args("check-config", hook.kubeconfig));
  assertEquals(ok.code, 0, ok.stderr);
});
