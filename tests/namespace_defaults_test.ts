// deno-lint-ignore-file no-explicit-any
/**
 * Per-namespace defaults (issue 18 item 8), over HTTPS: the `kubernetes.io/metadata.name`
 * label, the `default` ServiceAccount (`serviceaccount` controller) and the `kube-root-ca.crt`
 * ConfigMap (`root-ca-cert-publisher`).
 */

import { join } from "node:path";
import { assert, assertEquals } from "./assert.ts";
import { createAsAdmin, type TestServer, testServer } from "./harness.ts";
import { kubectlFor, kubectlInstalled } from "./kubectl.ts";
import { resourcePrefix } from "../lib/registry/generic.ts";
import { ensurePki } from "../lib/certificates/pki.ts";

const LABEL = "kubernetes.io/metadata.name";
const sa = (ns: string) => `/api/v1/namespaces/${ns}/serviceaccounts/default`;
const cm = (ns: string) => `/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`;

/** Polls `get` (every 50 ms, at most 10 s) until `done` holds for its result. */
async function until<T>(
  what: string,
  get: () => Promise<T>,
  done: (v: T) => boolean,
): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < 200; i++) {
    last = await get();
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
}

/** GET `path` until it answers 200; its body. */
function exists(ts: TestServer, path: string): Promise<any> {
  return until(path, () => ts.json("GET", path), (r) => r.status === 200).then((r) => r.body);
}

async function newNamespace(ts: TestServer, name: string): Promise<any> {
  return await createAsAdmin(ts, "/api/v1/namespaces", { metadata: { name } });
}

Deno.test("a new namespace gets the name label, a default ServiceAccount and kube-root-ca.crt", async () => {
  await using ts = await testServer();
  const ns = await newNamespace(ts, "team-a");
  assertEquals(ns.metadata.labels, { [LABEL]: "team-a" });
  const account = await exists(ts, sa("team-a"));
  assertEquals(account.metadata.namespace, "team-a");
  const config = await exists(ts, cm("team-a"));
  assertEquals(config.data, { "ca.crt": ts.server.caCertPem });
  assert(config.metadata.annotations?.["kubernetes.io/description"]);
  // The namespaces made at the first start have them too.
  for (const name of ["default", "platform-system", "platform-public", "platform-node-lease"]) {
    const got = await ts.json("GET", `/api/v1/namespaces/${name}`);
    assertEquals(got.body.metadata.labels?.[LABEL], name);
    assertEquals((await ts.json("GET", sa(name))).status, 200, name);
    assertEquals((await ts.json("GET", cm(name))).status, 200, name);
  }
  // The label selects the namespace by name.
  const selected = await ts.json("GET", `/api/v1/namespaces?labelSelector=${LABEL}%3Dteam-a`);
  assertEquals(selected.body.items.map((n: any) => n.metadata.name), ["team-a"]);
});

Deno.test("the name label is put back when a client changes or removes it", async () => {
  await using ts = await testServer();
  // On create, a wrong value is replaced; a generated name gets its own label.
  const made = await createAsAdmin(ts, "/api/v1/namespaces", {
    metadata: { name: "labels", labels: { [LABEL]: "other", team: "x" } },
  });
  assertEquals(made.metadata.labels, { [LABEL]: "labels", team: "x" });
  const generated = await createAsAdmin(ts, "/api/v1/namespaces", {
    metadata: { generateName: "gen-" },
  });
  assertEquals(generated.metadata.labels[LABEL], generated.metadata.name);

  // PUT without labels, or with another value: the label stays, other changes are kept.
  const put = await ts.json("PUT", "/api/v1/namespaces/labels", {
    body: { metadata: { name: "labels", labels: { [LABEL]: "changed", team: "y" } } },
  });
  assertEquals(put.status, 200);
  assertEquals(put.body.metadata.labels, { [LABEL]: "labels", team: "y" });
  const bare = await ts.json("PUT", "/api/v1/namespaces/labels", {
    body: { metadata: { name: "labels" } },
  });
  assertEquals(bare.body.metadata.labels, { [LABEL]: "labels" });

  // Merge patch and JSON patch removals.
  const merge = await ts.json("PATCH", "/api/v1/namespaces/labels", {
    body: { metadata: { labels: { [LABEL]: null } } },
    headers: { "Content-Type": "application/merge-patch+json" },
  });
  assertEquals(merge.status, 200);
  assertEquals(merge.body.metadata.labels, { [LABEL]: "labels" });
  const json = await ts.json("PATCH", "/api/v1/namespaces/labels", {
    body: [{ op: "remove", path: "/metadata/labels" }],
    headers: { "Content-Type": "application/json-patch+json" },
  });
  assertEquals(json.status, 200);
  assertEquals(json.body.metadata.labels, { [LABEL]: "labels" });

  // Status and finalize writes keep it too.
  const status = await ts.json("PUT", "/api/v1/namespaces/labels/status", {
    body: { metadata: { name: "labels", labels: {} }, status: { phase: "Active" } },
  });
  assertEquals(status.status, 200);
  assertEquals(status.body.metadata.labels, { [LABEL]: "labels" });
  const finalize = await ts.json("PUT", "/api/v1/namespaces/labels/finalize", {
    body: { metadata: { name: "labels", labels: { [LABEL]: "x" } }, spec: { finalizers: [] } },
  });
  assertEquals(finalize.status, 200);
  assertEquals(finalize.body.metadata.labels, { [LABEL]: "labels" });
});

Deno.test("a deleted default ServiceAccount or kube-root-ca.crt comes back", async () => {
  await using ts = await testServer();
  await newNamespace(ts, "again");
  const account = await exists(ts, sa("again"));
  const config = await exists(ts, cm("again"));
  assertEquals((await ts.json("DELETE", sa("again"))).status, 200);
  assertEquals((await ts.json("DELETE", cm("again"))).status, 200);
  const newAccount = await until(
    "a new default ServiceAccount",
    () => ts.json("GET", sa("again")),
    (r) => r.status === 200 && r.body.metadata.uid !== account.metadata.uid,
  );
  assertEquals(newAccount.body.metadata.name, "default");
  const newConfig = await until(
    "a new kube-root-ca.crt",
    () => ts.json("GET", cm("again")),
    (r) => r.status === 200 && r.body.metadata.uid !== config.metadata.uid,
  );
  assertEquals(newConfig.body.data, { "ca.crt": ts.server.caCertPem });
});

Deno.test("edits to kube-root-ca.crt are undone; the default ServiceAccount is the user's", async () => {
  await using ts = await testServer();
  await newNamespace(ts, "edits");
  // The ServiceAccount is only ever created: what a user puts in it stays.
  const account = await exists(ts, sa("edits"));
  account.automountServiceAccountToken = false;
  assertEquals((await ts.json("PUT", sa("edits"), { body: account })).status, 200);

  const config = await exists(ts, cm("edits"));
  const edited = structuredClone(config);
  edited.data = { "ca.crt": "not a certificate", extra: "x" };
  edited.metadata.annotations = { mine: "yes" };
  edited.metadata.labels = { team: "a" };
  const put = await ts.json("PUT", cm("edits"), { body: edited });
  assertEquals(put.status, 200);
  const repaired = await until(
    "the data put back",
    () => ts.json("GET", cm("edits")),
    (r) => r.body.data?.["ca.crt"] === ts.server.caCertPem,
  );
  // Data and the description are kube's; the rest of the user's edit stays.
  assertEquals(repaired.body.data, { "ca.crt": ts.server.caCertPem });
  assert(repaired.body.metadata.annotations["kubernetes.io/description"]);
  assertEquals(repaired.body.metadata.annotations.mine, "yes");
  assertEquals(repaired.body.metadata.labels, { team: "a" });
  // Removing only the description brings it back too.
  const undescribed = structuredClone(repaired.body);
  delete undescribed.metadata.annotations["kubernetes.io/description"];
  assertEquals((await ts.json("PUT", cm("edits"), { body: undescribed })).status, 200);
  await until(
    "the description put back",
    () => ts.json("GET", cm("edits")),
    (r) => Boolean(r.body.metadata.annotations?.["kubernetes.io/description"]),
  );
  assertEquals((await ts.json("GET", sa("edits"))).body.automountServiceAccountToken, false);
});

for (
  const [off, missing, present] of [
    ["serviceaccount", sa, cm],
    ["root-ca-cert-publisher", cm, sa],
  ] as const
) {
  Deno.test(`--controllers=*,-${off} turns that controller off`, async () => {
    await using ts = await testServer({ controllers: ["*", `-${off}`] });
    await newNamespace(ts, "off");
    // The other controller has run on the namespace: the disabled one would have by now too.
    await exists(ts, present("off"));
    assertEquals((await ts.json("GET", missing("off"))).status, 404);
    for (const name of ["default", "platform-system"]) {
      assertEquals((await ts.json("GET", missing(name))).status, 404, name);
    }
    // Still off after the other one's object is deleted and recreated.
    const before = (await ts.json("GET", present("off"))).body.metadata.uid;
    await ts.json("DELETE", present("off"));
    await until(
      "the other controller's object back",
      () => ts.json("GET", present("off")),
      (r) => r.status === 200 && r.body.metadata.uid !== before,
    );
    assertEquals((await ts.json("GET", missing("off"))).status, 404);
  });
}

Deno.test("a namespace with its defaults is still deleted", async () => {
  await using ts = await testServer();
  await newNamespace(ts, "doomed");
  await exists(ts, sa("doomed"));
  await exists(ts, cm("doomed"));
  await createAsAdmin(ts, "/api/v1/namespaces/doomed/configmaps", {
    metadata: { name: "mine" },
    data: { a: "b" },
  });
  assertEquals((await ts.json("DELETE", "/api/v1/namespaces/doomed")).status, 200);
  await until(
    "the namespace gone",
    () => ts.json("GET", "/api/v1/namespaces/doomed"),
    (r) => r.status === 404,
  );
  // Nothing was recreated behind the deletion.
  assertEquals((await ts.json("GET", "/api/v1/namespaces/doomed/serviceaccounts")).body.items, []);
  assertEquals((await ts.json("GET", "/api/v1/namespaces/doomed/configmaps")).body.items, []);
  // A namespace of the same name later gets fresh defaults.
  await newNamespace(ts, "doomed");
  await exists(ts, sa("doomed"));
  await exists(ts, cm("doomed"));
});

Deno.test("a namespace stored without the name label gets it after a restart", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "platform-nsdefaults-" });
  try {
    {
      await using ts = await testServer({ dataDir, storage: "file" });
      await newNamespace(ts, "old");
      // What an earlier version stored: the namespace without the label.
      const key = resourcePrefix("", "namespaces") + "old";
      const kv = await ts.server.store.get(key);
      const stored = JSON.parse(kv!.value);
      delete stored.metadata.labels;
      await ts.server.store.update(key, JSON.stringify(stored), kv!.modRevision);
      const got = await ts.json("GET", "/api/v1/namespaces/old");
      assertEquals(got.body.metadata.labels, undefined, "the test's stored value is unlabelled");
    }
    await using ts = await testServer({ dataDir, storage: "file" });
    const got = await ts.json("GET", "/api/v1/namespaces/old");
    assertEquals(got.body.metadata.labels, { [LABEL]: "old" });
    const selected = await ts.json("GET", `/api/v1/namespaces?labelSelector=${LABEL}%3Dold`);
    assertEquals(selected.body.items.map((n: any) => n.metadata.name), ["old"]);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

/** Whether a client trusting only `caPem` completes a request to the server. */
async function verifies(ts: TestServer, caPem: string): Promise<boolean> {
  const client = Deno.createHttpClient({ caCerts: [caPem] });
  try {
    const res = await fetch(`${ts.server.url}/api`, {
      headers: { Authorization: `Bearer ${ts.server.adminToken}` },
      client,
    });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  } finally {
    client.close();
  }
}

Deno.test("kube-root-ca.crt's ca.crt verifies the server's TLS", async () => {
  await using ts = await testServer();
  const config = await exists(ts, cm("default"));
  assert(await verifies(ts, config.data["ca.crt"]), "the published CA verifies the server");
  // And the check can fail: another CA does not.
  const dir = await Deno.makeTempDir({ prefix: "platform-otherca-" });
  try {
    const other = await ensurePki({ dataDir: dir, sans: [], bindAddress: "127.0.0.1" });
    assertEquals(await verifies(ts, other.caCertPem), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("when the CA changes, every kube-root-ca.crt follows", async () => {
  await using ts = await testServer({ certificateCheckIntervalMs: 100 });
  await newNamespace(ts, "follow");
  const before = (await exists(ts, cm("follow"))).data["ca.crt"];
  // A new CA: the PKI generates one (and a serving certificate it signs) at the next check.
  const pki = join(ts.server.dataDir, "pki");
  await Deno.remove(join(pki, "ca.crt"));
  await Deno.remove(join(pki, "ca.key"));
  for (const ns of ["follow", "default"]) {
    await until(
      `${ns}'s kube-root-ca.crt to change`,
      () => ts.json("GET", cm(ns)),
      (r) => r.body.data?.["ca.crt"] !== before,
    );
  }
  const now = await Deno.readTextFile(join(pki, "ca.crt"));
  const after = (await ts.json("GET", cm("follow"))).body.data["ca.crt"];
  assertEquals(after, now);
  await until("the new CA to verify the server", () => verifies(ts, after), (ok) => ok);
  assertEquals(await verifies(ts, before), false, "the old CA no longer verifies it");
});

Deno.test({
  name: "kubectl: a created namespace has the default ServiceAccount",
  ignore: !kubectlInstalled,
  async fn() {
    await using ts = await testServer();
    await using k = await kubectlFor(ts.server);
    await k.ok(["create", "namespace", "x"]);
    const out = await until(
      "kubectl get sa to show default",
      () => k.ok(["get", "sa", "-n", "x", "-o", "name"]),
      (o) => o.trim() !== "",
    );
    assertEquals(out.trim(), "serviceaccount/default");
    const labels = await k.ok(["get", "namespace", "x", "-o", "jsonpath={.metadata.labels}"]);
    assertEquals(JSON.parse(labels), { [LABEL]: "x" });
  },
});
