/**
 * kubectl's write flows end to end: client-side apply, server-side apply by two managers and
 * the conflict kubectl prints, --force-conflicts, the move from client-side to server-side
 * apply, `kubectl patch` with each --type, --show-managed-fields and apply --dry-run=server.
 */

import { assert, assertEquals, assertMatch } from "./assert.ts";
import { kubectlEnv, kubectlInstalled } from "./kubectl.ts";

function configMap(data: Record<string, string>, extra = ""): string {
  const lines = Object.entries(data).map(([k, v]) => `  ${k}: "${v}"`).join("\n");
  return `apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: default
${extra}data:
${lines}
`;
}

Deno.test({
  name: "kubectl apply (client- and server-side), conflicts and patch",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  await using env = await kubectlEnv();
  const { kubectl, ok } = env;
  const getCm = async () =>
    JSON.parse(await ok(["get", "cm", "cfg", "-o", "json", "--show-managed-fields"]));

  await t.step("client-side apply creates, then patches", async () => {
    assertMatch(await ok(["apply", "-f", "-"], configMap({ a: "1", b: "2" })), /created/);
    assertMatch(await ok(["apply", "-f", "-"], configMap({ a: "1", c: "3" })), /configured/);
    const cm = await getCm();
    assertEquals(cm.data, { a: "1", c: "3" }, "b was dropped by the three-way merge");
    assert(cm.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]);
  });

  await t.step("server-side apply after client-side apply meets no conflict", async () => {
    const out = await ok(["apply", "--server-side", "-f", "-"], configMap({ a: "1", c: "3" }));
    assertMatch(out, /serverside-applied/);
    const managers = (await getCm()).metadata.managedFields.map((e: { manager: string }) =>
      e.manager
    );
    assert(managers.includes("kubectl"), managers.join(","));
  });

  await t.step("two managers: the second gets kube's conflict message", async () => {
    await ok(
      ["apply", "--server-side", "--field-manager=alice", "-f", "-"],
      configMap({ shared: "alice" }).replace("name: cfg", "name: owned"),
    );
    const r = await kubectl(
      ["apply", "--server-side", "--field-manager=bob", "-f", "-"],
      configMap({ shared: "bob" }).replace("name: cfg", "name: owned"),
    );
    assertEquals(r.code, 1, r.stdout);
    assertMatch(r.stderr, /Apply failed with 1 conflict: conflict with "alice": \.data\.shared/);
    const forced = await ok(
      ["apply", "--server-side", "--force-conflicts", "--field-manager=bob", "-f", "-"],
      configMap({ shared: "bob" }).replace("name: cfg", "name: owned"),
    );
    assertMatch(forced, /serverside-applied/);
    const cm = JSON.parse(await ok(["get", "cm", "owned", "-o", "json", "--show-managed-fields"]));
    assertEquals(cm.data.shared, "bob");
    const owners = cm.metadata.managedFields.map((e: { manager: string }) => e.manager);
    assertEquals(owners, ["bob"], "alice lost her only field");
  });

  await t.step("kubectl patch --type json, merge and strategic", async () => {
    await ok([
      "patch",
      "cm",
      "cfg",
      "--type",
      "json",
      "-p",
      '[{"op":"add","path":"/data/j","value":"J"}]',
    ]);
    await ok(["patch", "cm", "cfg", "--type", "merge", "-p", '{"data":{"m":"M"}}']);
    await ok(["patch", "cm", "cfg", "-p", '{"metadata":{"labels":{"s":"S"}}}']);
    const cm = await getCm();
    assertEquals([cm.data.j, cm.data.m, cm.metadata.labels.s], ["J", "M", "S"]);
    const failing = await kubectl([
      "patch",
      "cm",
      "cfg",
      "--type",
      "json",
      "-p",
      '[{"op":"test","path":"/data/j","value":"other"}]',
    ]);
    assertEquals(failing.code, 1);
    // 422 naming the failed operation; nothing changes.
    assertMatch(failing.stderr, /testing value \/data\/j failed: test failed/);
  });

  await t.step("get --show-managed-fields shows every manager", async () => {
    const yaml = await ok(["get", "cm", "cfg", "-o", "yaml", "--show-managed-fields"]);
    assertMatch(yaml, /managedFields:/);
    assertMatch(yaml, /manager: kubectl-patch/);
    assertMatch(yaml, /operation: Apply/);
    const plain = await ok(["get", "cm", "cfg", "-o", "yaml"]);
    assert(!plain.includes("managedFields"), "hidden without the flag");
  });

  await t.step("apply --dry-run=server changes nothing", async () => {
    const before = await getCm();
    const out = await ok(
      ["apply", "--server-side", "--dry-run=server", "-f", "-", "-o", "json"],
      configMap({ a: "dry" }),
    );
    assertEquals(JSON.parse(out).data.a, "dry");
    const csa = await ok(
      ["apply", "--dry-run=server", "-f", "-", "-o", "json"],
      configMap({ a: "dry2" }),
    );
    assertEquals(JSON.parse(csa).data.a, "dry2");
    const after = await getCm();
    assertEquals(after.metadata.resourceVersion, before.metadata.resourceVersion);
    assertEquals(after.data.a, "1");
  });
});
