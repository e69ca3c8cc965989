/**
 * Admission from flags and the AdmissionConfiguration file: EventRateLimit refusing events over
 * its burst, a default plugin turned off, and bad files refused at start and by check-config.
 */

import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { assertConfigError, createAsAdmin, runPlatform, testServer } from "./harness.ts";

const EVENTS = "/api/v1/namespaces/default/events";

async function tempDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "platform-admission-test-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

/** An AdmissionConfiguration with EventRateLimit's limits in a file beside it. */
async function admissionFiles(dir: string, limits: string): Promise<string> {
  await Deno.writeTextFile(
    join(dir, "eventratelimit.yaml"),
    "apiVersion: eventratelimit.admission.platform.io/v1alpha1\nkind: Configuration\n" +
      `limits:\n${limits}`,
  );
  const file = join(dir, "admission.yaml");
  await Deno.writeTextFile(
    file,
    "apiVersion: apiserver.config.platform.io/v1\nkind: AdmissionConfiguration\nplugins:\n" +
      "- name: EventRateLimit\n  path: eventratelimit.yaml\n",
  );
  return file;
}

function event(name: string, namespace = "default") {
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name, namespace },
    involvedObject: { kind: "Pod", namespace, name: "web", apiVersion: "v1" },
    reason: "Started",
    message: "started",
    source: { component: "kubelet", host: "node-1" },
    type: "Normal",
  };
}

Deno.test("EventRateLimit: events over the burst get 429 and are not stored", async () => {
  await using dir = await tempDir();
  const file = await admissionFiles(dir.path, "- {type: Namespace, qps: 1, burst: 3}\n");
  // Time stands still: the bucket does not refill during the test.
  const now = new Date();
  await using ts = await testServer({
    enableAdmissionPlugins: ["EventRateLimit"],
    admissionControlConfigFile: file,
    clock: () => now,
  });
  for (let i = 0; i < 3; i++) {
    const res = await ts.json("POST", EVENTS, { body: event(`e${i}`) });
    assertEquals(res.status, 201, JSON.stringify(res.body));
  }
  // A dry run is not counted, and passes.
  const dry = await ts.json("POST", `${EVENTS}?dryRun=All`, { body: event("dry") });
  assertEquals(dry.status, 201, JSON.stringify(dry.body));
  const over = await ts.json("POST", EVENTS, { body: event("e3") });
  assertEquals(over.status, 429, JSON.stringify(over.body));
  assertEquals(over.body.kind, "Status");
  assertEquals(over.body.reason, "TooManyRequests");
  assertEquals(
    over.body.message,
    "Too many requests: limit reached on type Namespace for key default",
  );
  assertEquals((await ts.json("GET", `${EVENTS}/e3`)).status, 404);
  // Another namespace has its own bucket; other kinds are not limited.
  await createAsAdmin(ts, "/api/v1/namespaces", { metadata: { name: "other" } });
  const other = await ts.json("POST", "/api/v1/namespaces/other/events", {
    body: event("e3", "other"),
  });
  assertEquals(other.status, 201, JSON.stringify(other.body));
  const cm = await ts.json("POST", "/api/v1/namespaces/default/configmaps", {
    body: { metadata: { name: "c" } },
  });
  assertEquals(cm.status, 201);
});

Deno.test("platform serve --enable-admission-plugins=EventRateLimit --admission-control-config-file", async () => {
  await using dir = await tempDir();
  const file = await admissionFiles(dir.path, "- {type: Server, qps: 1, burst: 3}\n");
  const data = join(dir.path, "data");
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL("../main.ts", import.meta.url).pathname, "serve"]
      .concat(["--data-dir", data, "--secure-port", "0", "--storage", "memory"])
      .concat(["--enable-admission-plugins=EventRateLimit"])
      .concat(["--admission-control-config-file", file]),
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const out = child.output();
  try {
    // The kubeconfig is written once the server listens.
    const kubeconfig = join(data, "admin.kubeconfig");
    for (let i = 0; i < 300; i++) {
      if (await exists(kubeconfig)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // deno-lint-ignore no-explicit-any
    const kc = parseYaml(await Deno.readTextFile(kubeconfig)) as any;
    const server = kc.clusters[0].cluster.server;
    const client = Deno.createHttpClient({
      caCerts: [atob(kc.clusters[0].cluster["certificate-authority-data"])],
    });
    try {
      // Eight at once: with a burst of 3 and 1 a second, some are refused however slow.
      const statuses = await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const res = await fetch(`${server}${EVENTS}`, {
            method: "POST",
            client,
            headers: {
              Authorization: `Bearer ${kc.users[0].user.token}`,
              "Content-Type": "application/json",
            },
            body: JSON.stringify(event(`e${i}`)),
          });
          const body = await res.json();
          if (res.status === 429) {
            assertEquals(body.message, "Too many requests: limit reached on type Server for key ");
          }
          return res.status;
        }),
      );
      assert(statuses.filter((s) => s === 201).length >= 3, String(statuses));
      assert(statuses.includes(429), String(statuses));
      assertEquals(statuses.filter((s) => s !== 201 && s !== 429), []);
    } finally {
      client.close();
    }
  } finally {
    child.kill("SIGTERM");
    const { stderr } = await out;
    void stderr;
  }
});

Deno.test("--disable-admission-plugins=NamespaceLifecycle: creates in a missing namespace go through", async () => {
  const body = { metadata: { name: "c" } };
  const path = "/api/v1/namespaces/no-such-namespace/configmaps";
  {
    await using ts = await testServer();
    assertEquals((await ts.json("POST", path, { body })).status, 404);
  }
  await using ts = await testServer({ disableAdmissionPlugins: ["NamespaceLifecycle"] });
  const res = await ts.json("POST", path, { body });
  assertEquals(res.status, 201, JSON.stringify(res.body));
});

Deno.test("a bad admission configuration: serve exits 2 naming the field, check-config says so", async () => {
  await using dir = await tempDir();
  const file = await admissionFiles(dir.path, "- {type: Namespace, qps: 0, burst: 3}\n");
  const flags = [
    "--data-dir",
    join(dir.path, "data"),
    "--enable-admission-plugins=EventRateLimit",
    `--admission-control-config-file=${file}`,
  ];
  const message = new RegExp(
    `^platform: ${file}: plugins\\[0\\]\\.path: "eventratelimit\\.yaml": limits\\[0\\]\\.qps: ` +
      "Invalid value: 0: must be positive$",
  );
  const [serve, check] = await Promise.all([
    runPlatform("serve", "--secure-port", "0", ...flags),
    runPlatform("check-config", ...flags),
  ]);
  assertConfigError(serve, message);
  assertConfigError(check, message);
  // Nothing was created.
  assertEquals(await exists(join(dir.path, "data")), false);

  // Flags: an unknown plugin; EventRateLimit without a configuration.
  const [unknown, bare] = await Promise.all([
    runPlatform("check-config", "--enable-admission-plugins=EventRateLimit,PodSecurity"),
    runPlatform("serve", "--secure-port", "0", "--enable-admission-plugins=EventRateLimit"),
  ]);
  assertConfigError(
    unknown,
    /^platform: --enable-admission-plugins: plugin "PodSecurity" is unknown \(known plugins: NamespaceLifecycle, EventRateLimit, .*ValidatingAdmissionWebhook\)$/,
  );
  assertConfigError(
    bare,
    /^platform: --enable-admission-plugins: EventRateLimit needs a configuration/,
  );

  // A good file passes check-config.
  await admissionFiles(dir.path, "- {type: Server, qps: 10, burst: 20}\n");
  const ok = await runPlatform("check-config", ...flags);
  assertEquals(ok.code, 0, ok.stderr);
  assertMatch(ok.stdout, /configuration is valid/);
  assert(!(await exists(join(dir.path, "data"))));
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
