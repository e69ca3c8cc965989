/**
 * Settings that had no test of their effect (see README, "Configuration", for the flag → test
 * table): each test shows the server behave differently because of one setting.
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { createAsAdmin, testServer, tokenFile } from "./harness.ts";
import { ConfigError } from "../lib/config/mod.ts";
import { startServer } from "../mod.ts";
import { silentLogger } from "../lib/api/log.ts";
import { openWatch } from "./watch_client.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const MAIN = new URL("../main.ts", import.meta.url).pathname;

async function tempDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "platform-settings-test-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

Deno.test("--bind-address: the server listens there and nowhere else", async () => {
  // All of 127.0.0.0/8 is loopback on Linux; 127.0.0.2 is not 127.0.0.1.
  await using ts = await testServer({ bindAddress: "127.0.0.2" });
  assertEquals(ts.server.url, `https://127.0.0.2:${ts.server.port}`);
  assertEquals((await ts.request("GET", "/readyz")).status, 200);
  let refused = false;
  try {
    (await Deno.connect({ hostname: "127.0.0.1", port: ts.server.port })).close();
  } catch (err) {
    refused = err instanceof Deno.errors.ConnectionRefused;
  }
  assert(refused, "127.0.0.1 answered");
});

Deno.test("--tls-san: the generated serving certificate carries the extra names", async () => {
  await using dir = await tempDir();
  await using _ts = await testServer({
    dataDir: dir.path,
    tlsSANs: ["api.example.test", "10.9.8.7"],
  });
  const cert = new x509.X509Certificate(
    await Deno.readTextFile(join(dir.path, "pki", "serving.crt")),
  );
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension)!;
  const names = san.names.items.map((n) => `${n.type}:${n.value}`);
  assert(names.includes("dns:api.example.test"), names.join());
  assert(names.includes("ip:10.9.8.7"), names.join());
});

Deno.test("--storage: memory forgets everything on restart, file keeps it", async () => {
  await using dir = await tempDir();
  for (const storage of ["memory", "file"] as const) {
    const dataDir = join(dir.path, storage);
    {
      await using ts = await testServer({ dataDir, storage });
      await createAsAdmin(ts, CM, { metadata: { name: "kept" } });
    }
    await using again = await testServer({ dataDir, storage });
    const status = (await again.json("GET", `${CM}/kept`)).status;
    assertEquals(status, storage === "memory" ? 404 : 200, storage);
  }
});

Deno.test("--max-request-body-bytes: a larger body is refused with 413", async () => {
  await using ts = await testServer({ maxRequestBodyBytes: 1024 });
  const small = await ts.json("POST", CM, {
    body: { metadata: { name: "small" }, data: { a: "x".repeat(500) } },
  });
  assertEquals(small.status, 201);
  const big = await ts.json("POST", CM, {
    body: { metadata: { name: "big" }, data: { a: "x".repeat(2000) } },
  });
  assertEquals(big.status, 413);
  assertEquals(big.body.reason, "RequestEntityTooLarge");
});

Deno.test("--max-mutating-requests-inflight: mutations past a user's share get 429, reads do not", async () => {
  await using tokens = await tokenFile({ "alice-token": { name: "alice" } });
  await using ts = await testServer({ tokenAuthFile: tokens.path, maxMutatingRequestsInflight: 2 });
  await createAsAdmin(ts, "/apis/rbac.authorization.platform.io/v1/clusterrolebindings", {
    metadata: { name: "alice-admin" },
    roleRef: {
      apiGroup: "rbac.authorization.platform.io",
      kind: "ClusterRole",
      name: "cluster-admin",
    },
    subjects: [{ kind: "User", name: "alice", apiGroup: "rbac.authorization.platform.io" }],
  });
  // A create whose body never ends holds a mutating seat: alice's share of 2 is 1.
  const client = Deno.createHttpClient({ caCerts: [ts.server.caCertPem] });
  let hold!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (hold = c) });
  hold.enqueue(new TextEncoder().encode('{"metadata":'));
  const slow = fetch(ts.server.url + CM, {
    method: "POST",
    headers: { Authorization: "Bearer alice-token", "Content-Type": "application/json" },
    body,
    client,
  });
  try {
    let refused = 0;
    for (let i = 0; i < 50 && refused !== 429; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const res = await ts.json("POST", CM, {
        token: "alice-token",
        body: { metadata: { name: `c${i}` } },
      });
      refused = res.status;
      if (res.status === 429) assertEquals(res.headers.get("Retry-After"), "1");
    }
    assertEquals(refused, 429);
    // Reads use the other pool.
    assertEquals((await ts.json("GET", CM, { token: "alice-token" })).status, 200);
  } finally {
    hold.enqueue(new TextEncoder().encode('{"name":"slow"}}'));
    hold.close();
    await (await slow).body?.cancel();
    client.close();
  }
});

Deno.test("--max-connections: connections past the limit are closed at once", async () => {
  await using ts = await testServer({
    connectionLimits: { maxConnections: 3, maxConnectionsPerClient: 10 },
  });
  const opts = { hostname: "127.0.0.1", port: ts.server.port, caCerts: [ts.server.caCertPem] };
  const held: Deno.TlsConn[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const c = await Deno.connectTls(opts);
      await c.handshake();
      held.push(c);
    }
    const fourth = await Deno.connect({ hostname: "127.0.0.1", port: ts.server.port });
    const start = Date.now();
    const n = await Promise.race([
      fourth.read(new Uint8Array(16)),
      new Promise<"open">((r) => setTimeout(() => r("open"), 3000)),
    ]);
    fourth.close();
    assertEquals(n, null, `the fourth connection stayed open ${Date.now() - start} ms`);
  } finally {
    for (const c of held) c.close();
  }
});

Deno.test("--feature-gates: WatchList (beta, on) streams lists; AllBeta=false turns it off", async () => {
  const path =
    `${CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`;
  {
    await using ts = await testServer();
    await createAsAdmin(ts, CM, { metadata: { name: "a" } });
    await using w = await openWatch(ts, path);
    const first = await w.next();
    assertEquals(`${first.type} ${first.object.metadata.name}`, "ADDED a");
  }
  await using ts = await testServer({ featureGates: new Map([["AllBeta", false]]) });
  const res = await ts.json("GET", path);
  assertEquals(res.status, 422, JSON.stringify(res.body));
  assertMatch(res.body.message, /unless the WatchList feature gate is enabled/);
});

Deno.test("--feature-gates: the access configuration gates refuse their files when off", async () => {
  await using dir = await tempDir();
  const authz = join(dir.path, "authz.yaml");
  await Deno.writeTextFile(
    authz,
    "apiVersion: apiserver.platform.io/v1\nkind: AuthorizationConfiguration\n" +
      "authorizers:\n- type: RBAC\n  name: rbac\n",
  );
  const authn = join(dir.path, "authn.yaml");
  await Deno.writeTextFile(
    authn,
    "apiVersion: apiserver.platform.io/v1beta1\nkind: AuthenticationConfiguration\n" +
      "anonymous:\n  enabled: true\n  conditions:\n  - path: /livez\n",
  );
  const cases: [Parameters<typeof startServer>[0], RegExp][] = [
    [
      {
        authorizationConfigFile: authz,
        featureGates: new Map([["StructuredAuthorizationConfiguration", false]]),
      },
      // GA in kube 1.32: locked on.
      /^--feature-gates: cannot set feature gate StructuredAuthorizationConfiguration to false, feature is locked to true$/,
    ],
    [
      {
        authenticationConfigFile: authn,
        featureGates: new Map([["StructuredAuthenticationConfiguration", false]]),
      },
      /^--authentication-config: needs the StructuredAuthenticationConfiguration feature gate/,
    ],
    [
      {
        authenticationConfigFile: authn,
        featureGates: new Map([["AnonymousAuthConfigurableEndpoints", false]]),
      },
      /anonymous\.conditions: needs the AnonymousAuthConfigurableEndpoints feature gate/,
    ],
  ];
  for (const [opts, re] of cases) {
    const err = await startServer({ storage: "memory", logger: silentLogger, ...opts }).then(
      async (s) => {
        await s.close();
        return undefined;
      },
      (e) => e,
    );
    assert(err instanceof ConfigError, String(err));
    assertMatch(err.message, re);
  }
  // With the gates on (their default) the same files are accepted.
  await using ts = await testServer({
    authorizationConfigFile: authz,
    authenticationConfigFile: authn,
  });
  assertEquals((await ts.request("GET", "/livez", { token: null })).status, 200);
});

Deno.test("--log-level=warn: a normal start and stop write no info lines", async () => {
  await using dir = await tempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, "--data-dir", dir.path, "--secure-port", "0"]
      .concat(["--log-level", "warn"]),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = child.output();
  try {
    // The kubeconfig is written once the server listens.
    const kubeconfig = join(dir.path, "admin.kubeconfig");
    for (let i = 0; i < 300; i++) {
      if (await Deno.stat(kubeconfig).then(() => true, () => false)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill("SIGTERM");
    const { code, stderr } = await out;
    const log = new TextDecoder().decode(stderr);
    assertEquals(code, 0, log);
    assert(await Deno.stat(kubeconfig).then(() => true, () => false), `never served: ${log}`);
    assertEquals(log.match(/ INFO /g), null, log);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
  }
});

Deno.test("--controllers: -clusterrole-aggregation leaves aggregated ClusterRoles alone", async () => {
  const ROLES = "/apis/rbac.authorization.platform.io/v1/clusterroles";
  for (const controllers of [["*"], ["*", "-clusterrole-aggregation"]]) {
    await using ts = await testServer({ controllers });
    await createAsAdmin(ts, ROLES, {
      metadata: { name: "part", labels: { "example.test/aggregate": "true" } },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
    });
    await createAsAdmin(ts, ROLES, {
      metadata: { name: "whole" },
      aggregationRule: {
        clusterRoleSelectors: [{ matchLabels: { "example.test/aggregate": "true" } }],
      },
    });
    let rules: unknown[] = [];
    for (let i = 0; i < 20 && rules.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      rules = (await ts.json("GET", `${ROLES}/whole`)).body.rules ?? [];
    }
    assertEquals(rules.length, controllers.length === 1 ? 1 : 0, controllers.join());
  }
});
