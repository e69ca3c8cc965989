/**
 * kubectl's RBAC commands against the server: `create role|clusterrole|rolebinding|
 * clusterrolebinding` (typed clients: protobuf bodies, Kubernetes' group name), `get` with
 * kube's columns, and `auth can-i` answering as the bindings say.
 */

import assert from "node:assert/strict";
import { kubectlEnv, kubectlInstalled } from "./kubectl.ts";
import { tokenFile } from "./harness.ts";

Deno.test({
  name: "kubectl: create roles and bindings, get them, auth can-i follows them",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  await using tokens = await tokenFile({ "bob-token": { name: "bob", groups: ["staff"] } });
  await using env = await kubectlEnv({ tokenAuthFile: tokens.path });
  const { kubectl, ok } = env;
  const bob = (args: string[]) => kubectl(["--token", "bob-token", ...args]);

  await t.step("auth can-i: bob may do nothing yet", async () => {
    const r = await bob(["auth", "can-i", "list", "configmaps"]);
    assert.equal(r.stdout, "no\n");
    assert.equal(r.code, 1);
    assert.equal((await bob(["get", "configmaps"])).code, 1);
  });

  await t.step("create role and rolebinding; can-i says yes where they reach", async () => {
    assert.equal(
      await ok(["create", "role", "cm-reader", "--verb=get,list", "--resource=configmaps"]),
      "role.rbac.authorization.k8s.io/cm-reader created\n",
    );
    assert.equal(
      await ok(["create", "rolebinding", "bob-reads", "--role=cm-reader", "--user=bob"]),
      "rolebinding.rbac.authorization.k8s.io/bob-reads created\n",
    );
    assert.equal((await bob(["auth", "can-i", "list", "configmaps"])).stdout, "yes\n");
    assert.equal((await bob(["auth", "can-i", "delete", "configmaps"])).stdout, "no\n");
    await ok(["create", "namespace", "other"]);
    assert.equal(
      (await bob(["auth", "can-i", "list", "configmaps", "-n", "other"])).stdout,
      "no\n",
    );
    assert.equal((await bob(["get", "configmaps"])).code, 0);
  });

  await t.step("create clusterrole and clusterrolebinding for a group", async () => {
    await ok(["create", "clusterrole", "lease-reader", "--verb=get", "--resource=leases"]);
    await ok([
      "create",
      "clusterrolebinding",
      "staff-leases",
      "--clusterrole=lease-reader",
      "--group=staff",
    ]);
    assert.equal((await bob(["auth", "can-i", "get", "leases", "-n", "other"])).stdout, "yes\n");
  });

  await t.step("get shows kube's columns", async () => {
    assert.match(await ok(["get", "roles"]), /^NAME\s+CREATED AT\ncm-reader\s+\d{4}-\d\d-\d\dT/);
    assert.match(
      await ok(["get", "rolebindings", "-o", "wide"]),
      /^NAME\s+ROLE\s+AGE\s+USERS\s+GROUPS\s+SERVICEACCOUNTS\nbob-reads\s+Role\/cm-reader\s+\S+\s+bob\s*\n/,
    );
    const clusterRoles = await ok(["get", "clusterroles"]);
    for (const name of ["cluster-admin", "admin", "edit", "view", "lease-reader"]) {
      assert.match(clusterRoles, new RegExp(`\\n${name}\\s`));
    }
    assert.match(
      await ok(["get", "clusterrolebindings", "cluster-admin"]),
      /\ncluster-admin\s+ClusterRole\/cluster-admin\s/,
    );
  });

  await t.step("bob may create roles, but not grant more than he holds", async () => {
    await ok(["create", "role", "role-maker", "--verb=create", "--resource=roles"]);
    await ok(["create", "rolebinding", "bob-makes", "--role=role-maker", "--user=bob"]);
    assert.equal(
      (await bob(["create", "role", "mine", "--verb=get", "--resource=configmaps"])).code,
      0,
    );
    const r = await bob(["create", "role", "theirs", "--verb=get", "--resource=secrets"]);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /roles.rbac.authorization.k8s.io "theirs" is forbidden: user "bob" \(groups=\["staff" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get"\]\}/,
    );
  });
});
