import { assertEquals, assertMatch } from "../../tests/assert.ts";
import { StatusError } from "../api/errors.ts";
import type { StrategyContext } from "../registry/definition.ts";
import { checkBindingWrite, checkRoleWrite, escalationError } from "./escalation.ts";
import { PolicyIndex } from "./policy_index.ts";

const bob = { username: "bob", groups: ["system:authenticated"] };

function policy(): PolicyIndex {
  const index = new PolicyIndex();
  index.put("ClusterRole", {
    metadata: { name: "cm-reader" },
    rules: [{ verbs: ["get", "list"], apiGroups: [""], resources: ["configmaps"] }],
  });
  index.put("ClusterRole", {
    metadata: { name: "secret-admin" },
    rules: [{ verbs: ["*"], apiGroups: [""], resources: ["secrets"] }],
  });
  index.put("RoleBinding", {
    metadata: { name: "bob", namespace: "ns1" },
    roleRef: { kind: "ClusterRole", name: "cm-reader" },
    subjects: [{ kind: "User", name: "bob" }],
  });
  return index;
}

/** A strategy context whose authorizer allows exactly `allowed` (verb resource/name). */
function ctx(user = bob, allowed: string[] = []): StrategyContext {
  return {
    user,
    authorize: (a) => Promise.resolve(allowed.includes(`${a.verb} ${a.resource}/${a.name ?? ""}`)),
  };
}

async function forbidden(p: Promise<void>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof StatusError && err.code === 403) return err.message;
    throw err;
  }
  throw new Error("expected 403 Forbidden");
}

const role = (rules: unknown[]) => ({ metadata: { name: "r", namespace: "ns1" }, rules });

Deno.test("escalationError: kube's message, missing rules compacted and sorted", () => {
  const message = escalationError(policy(), bob, "ns1", [
    { verbs: ["get", "delete"], apiGroups: [""], resources: ["secrets", "configmaps"] },
  ]);
  assertEquals(
    message,
    'user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not ' +
      "currently held:\n" +
      '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}\n' +
      '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}',
  );
  assertEquals(
    escalationError(policy(), bob, "ns1", [{
      verbs: ["get"],
      apiGroups: [""],
      resources: ["configmaps"],
    }]),
    undefined,
  );
  // The binding is in ns1: elsewhere bob holds nothing.
  assertMatch(
    escalationError(policy(), bob, "ns2", [
      { verbs: ["get"], apiGroups: [""], resources: ["configmaps"] },
    ])!,
    /not currently held/,
  );
});

Deno.test("escalationError: unresolvable bindings are named", () => {
  const index = policy();
  index.put("RoleBinding", {
    metadata: { name: "dangling", namespace: "ns1" },
    roleRef: { kind: "Role", name: "gone" },
    subjects: [{ kind: "User", name: "bob" }],
  });
  assertMatch(
    escalationError(index, bob, "ns1", [{ verbs: ["get"], apiGroups: ["x"], resources: ["y"] }])!,
    /; resolution errors: \[role\.rbac\.authorization\.platform\.io "gone" not found\]$/,
  );
});

Deno.test("checkRoleWrite: held rules, escalate, system:masters pass; the rest is 403", async () => {
  const index = policy();
  const held = role([{ verbs: ["get"], apiGroups: [""], resources: ["configmaps"] }]);
  const more = role([{ verbs: ["get"], apiGroups: [""], resources: ["secrets"] }]);
  await checkRoleWrite(index, "roles", held, undefined, ctx());
  assertMatch(
    await forbidden(checkRoleWrite(index, "roles", more, undefined, ctx())),
    /^roles\.rbac\.authorization\.platform\.io "r" is forbidden: user "bob" .* not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get"\]\}$/,
  );
  // `escalate` is asked as kube asks it: no name on a create, the role's on an update.
  await checkRoleWrite(index, "roles", more, undefined, ctx(bob, ["escalate roles/"]));
  await checkRoleWrite(index, "roles", more, more, ctx(bob, ["escalate roles/r"]));
  await checkRoleWrite(
    index,
    "roles",
    more,
    undefined,
    ctx({ username: "root", groups: ["system:masters"] }),
  );
  // Without an authorizer (a server that checks nothing) escalate counts as allowed.
  await checkRoleWrite(index, "roles", more, undefined, { user: bob });
});

Deno.test("checkRoleWrite: updates touching only garbage-collection fields pass", async () => {
  const index = policy();
  const old = role([{ verbs: ["get"], apiGroups: [""], resources: ["secrets"] }]);
  const next: { metadata: Record<string, unknown> } = structuredClone(old);
  next.metadata.finalizers = ["x/y"];
  await checkRoleWrite(index, "roles", next, old, ctx());
  next.metadata.labels = { a: "b" };
  await forbidden(checkRoleWrite(index, "roles", next, old, ctx()));
});

Deno.test("checkRoleWrite: an aggregationRule needs full authority", async () => {
  const index = policy();
  index.put("ClusterRoleBinding", {
    metadata: { name: "bob-secrets" },
    roleRef: { kind: "ClusterRole", name: "secret-admin" },
    subjects: [{ kind: "User", name: "bob" }],
  });
  const aggregated = {
    metadata: { name: "agg" },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: "b" } }] },
  };
  assertMatch(
    await forbidden(checkRoleWrite(index, "clusterroles", aggregated, undefined, ctx())),
    /clusterroles\.rbac\.authorization\.platform\.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule$/,
  );
  // Dropping one is checked too.
  await forbidden(
    checkRoleWrite(index, "clusterroles", { metadata: { name: "agg" } }, aggregated, ctx()),
  );
});

Deno.test("checkBindingWrite: bind on the role, or holding its rules", async () => {
  const index = policy();
  const binding = (kind: string, name: string) => ({
    metadata: { name: "b", namespace: "ns1" },
    roleRef: { apiGroup: "rbac.authorization.platform.io", kind, name },
    subjects: [{ kind: "User", name: "alice" }],
  });
  await checkBindingWrite(
    index,
    "rolebindings",
    binding("ClusterRole", "cm-reader"),
    undefined,
    ctx(),
  );
  assertMatch(
    await forbidden(
      checkBindingWrite(
        index,
        "rolebindings",
        binding("ClusterRole", "secret-admin"),
        undefined,
        ctx(),
      ),
    ),
    /^rolebindings\.rbac\.authorization\.platform\.io "b" is forbidden: user "bob" .*\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["\*"\]\}$/,
  );
  await checkBindingWrite(
    index,
    "rolebindings",
    binding("ClusterRole", "secret-admin"),
    undefined,
    ctx(bob, ["bind clusterroles/secret-admin"]),
  );
  assertMatch(
    await forbidden(
      checkBindingWrite(index, "rolebindings", binding("Role", "missing"), undefined, ctx()),
    ),
    /is forbidden: role\.rbac\.authorization\.platform\.io "missing" not found$/,
  );
});
