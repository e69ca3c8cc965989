/**
 * End to end with the real kubectl (`/usr/bin/kubectl`, a dispatcher that picks the kubectl
 * matching our /version). Skipped when kubectl is missing, except under CI=true where that is
 * a failure.
 */

import { assert, assertEquals, assertMatch } from "./assert.ts";
import { kubectlEnv, kubectlInstalled, liveOutput } from "./kubectl.ts";
import { ROOT_CA_CONFIGMAP } from "./harness.ts";

Deno.test({
  name: "kubectl drives the server end to end",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  await using env = await kubectlEnv();
  const { kubectl, ok } = env;

  await t.step("get namespaces", async () => {
    const out = await ok(["get", "namespaces"]);
    assertMatch(out, /^NAME\s+STATUS\s+AGE/);
    assertMatch(out, /\ndefault\s+Active\s+\d+s/);
    assertMatch(out, /platform-system/);
  });

  await t.step("create -f a namespace and configmaps", async () => {
    const out = await ok(
      ["create", "-f", "-"],
      `apiVersion: v1
kind: Namespace
metadata:
  name: e2e
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: e2e
  labels: {app: demo}
data:
  greeting: hello
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: other
  namespace: e2e
  labels: {app: else}
`,
    );
    assertMatch(out, /namespace\/e2e created/);
    assertMatch(out, /configmap\/cfg created/);
  });

  await t.step("get -l and -o json", async () => {
    const out = await ok(["get", "configmaps", "-n", "e2e", "-l", "app=demo"]);
    assertMatch(out, /^NAME\s+DATA\s+AGE/);
    assertMatch(out, /\ncfg\s+1\s+/);
    assert(!out.includes("other"));
    const json = JSON.parse(await ok(["get", "cm", "cfg", "-n", "e2e", "-o", "json"]));
    assertEquals(json.data, { greeting: "hello" });
  });

  await t.step("get -o yaml, and create --dry-run=server stores nothing", async () => {
    const yaml = await ok(["get", "configmap", "cfg", "-n", "e2e", "-o", "yaml"]);
    assertMatch(yaml, /^apiVersion: v1\n/);
    assertMatch(yaml, /\n {2}greeting: hello\n/);
    assertMatch(yaml, /\n {2}resourceVersion: "\d+"\n/);
    const out = await ok(
      ["create", "--dry-run=server", "-f", "-", "-o", "name"],
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: rehearsed, namespace: e2e}\n",
    );
    assertMatch(out, /^configmap\/rehearsed\n$/);
    const missing = await kubectl(["get", "configmap", "rehearsed", "-n", "e2e"]);
    assertEquals(missing.code, 1);
    assertMatch(missing.stderr, /configmaps "rehearsed" not found/);
  });

  await t.step("typed create commands (protobuf bodies)", async () => {
    assertMatch(await ok(["create", "namespace", "typed"]), /^namespace\/typed created\n$/);
    assertMatch(
      await ok(["create", "configmap", "lit", "-n", "typed", "--from-literal=a=b"]),
      /^configmap\/lit created\n$/,
    );
    assertMatch(
      await ok(["get", "configmap", "lit", "-n", "typed", "-o", "yaml"]),
      /\n {2}a: b\n/,
    );
    await ok(["delete", "namespace", "typed", "--wait=false"]);
  });

  await t.step("replace -f", async () => {
    const current = JSON.parse(await ok(["get", "cm", "cfg", "-n", "e2e", "-o", "json"]));
    current.data.greeting = "bonjour";
    const out = await ok(["replace", "-f", "-"], JSON.stringify(current));
    assertMatch(out, /configmap\/cfg replaced/);
    const after = JSON.parse(await ok(["get", "cm", "cfg", "-n", "e2e", "-o", "json"]));
    assertEquals(after.data.greeting, "bonjour");
  });

  await t.step("api-resources", async () => {
    const out = await ok(["api-resources"]);
    assertMatch(out, /configmaps\s+cm\s+v1\s+true\s+ConfigMap/);
    assertMatch(
      out,
      /certificatesigningrequests\s+csr\s+certificates\.platform\.io\/v1\s+false\s+CertificateSigningRequest/,
    );
    assertMatch(out, /leases\s+coordination\.platform\.io\/v1\s+true\s+Lease/);
  });

  await t.step("explain configmap", async () => {
    const out = await ok(["explain", "configmap"]);
    assertMatch(out, /KIND:\s+ConfigMap/);
    assertMatch(out, /data\s+<map\[string\]string>/);
  });

  await t.step("error for a missing object", async () => {
    const r = await kubectl(["get", "configmap", "missing", "-n", "e2e"]);
    assertEquals(r.code, 1);
    assertMatch(r.stderr, /Error from server \(NotFound\): configmaps "missing" not found/);
  });

  await t.step("get -w shows configmaps being created and deleted", async () => {
    await using watch = liveOutput(
      env.spawn(["get", "configmaps", "-n", "e2e", "-w", "-o", "name", "--request-timeout=60s"]),
    );
    // The test's own configmaps: the namespace's kube-root-ca.crt is listed too.
    const own = (l: string[]) => l.filter((n) => n !== `configmap/${ROOT_CA_CONFIGMAP}`);
    const printed = (n: number, what: string) => watch.until((l) => own(l).length >= n, what);
    // The list comes first: once it is printed, the watch follows from its resourceVersion.
    await printed(2, "the configmaps that exist");
    assertEquals(own(watch.lines), ["configmap/cfg", "configmap/other"]);
    await ok(
      ["create", "-f", "-"],
      `apiVersion: v1
kind: ConfigMap
metadata:
  name: watched-1
  namespace: e2e
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: watched-2
  namespace: e2e
`,
    );
    const deleted = await ok(["delete", "configmap", "watched-1", "watched-2", "-n", "e2e"]);
    assertMatch(deleted, /configmap "watched-1" deleted/);
    assertMatch(deleted, /configmap "watched-2" deleted/);
    await printed(6, "the two creates and the two deletes");
    assertEquals(own(watch.lines), [
      "configmap/cfg",
      "configmap/other",
      "configmap/watched-1",
      "configmap/watched-2",
      "configmap/watched-1",
      "configmap/watched-2",
    ]);
    assert(watch.running(), `kubectl get -w ended on its own; stderr: ${watch.stderr()}`);
  });

  await t.step("delete configmap and namespace, with cleanup", async () => {
    assertMatch(
      await ok(["delete", "configmap", "other", "-n", "e2e"]),
      /configmap "other" deleted/,
    );
    assertMatch(
      await ok(["delete", "namespace", "e2e", "--timeout=30s"]),
      /namespace "e2e" deleted/,
    );
    const r = await kubectl(["get", "namespace", "e2e"]);
    assertEquals(r.code, 1);
    assertMatch(r.stderr, /namespaces "e2e" not found/);
    const cm = await kubectl(["get", "configmap", "cfg", "-n", "e2e"]);
    assertEquals(cm.code, 1);
  });
});
