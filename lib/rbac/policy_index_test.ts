import { assertEquals } from "../../tests/assert.ts";
import { PolicyIndex } from "./policy_index.ts";

const RBAC = "rbac.authorization.platform.io";

function fixture(): PolicyIndex {
  const index = new PolicyIndex();
  index.put("ClusterRole", {
    metadata: { name: "reader" },
    rules: [{ verbs: ["get"], apiGroups: [""], resources: ["configmaps"] }],
  });
  index.put("Role", {
    metadata: { name: "writer", namespace: "ns1" },
    rules: [{ verbs: ["create"], apiGroups: [""], resources: ["configmaps"] }],
  });
  index.put("ClusterRoleBinding", {
    metadata: { name: "staff-read" },
    roleRef: { apiGroup: RBAC, kind: "ClusterRole", name: "reader" },
    subjects: [{ kind: "Group", name: "staff" }],
  });
  index.put("RoleBinding", {
    metadata: { name: "bob-writes", namespace: "ns1" },
    roleRef: { apiGroup: RBAC, kind: "Role", name: "writer" },
    subjects: [{ kind: "User", name: "bob" }, { kind: "ServiceAccount", name: "robot" }],
  });
  return index;
}

const verbs = (index: PolicyIndex, user: { username: string; groups: string[] }, ns: string) =>
  index.rulesFor(user, ns).rules.flatMap((r) => r.verbs).sort();

Deno.test("PolicyIndex: cluster bindings apply everywhere, role bindings in their namespace", () => {
  const index = fixture();
  const bob = { username: "bob", groups: ["staff"] };
  assertEquals(verbs(index, bob, "ns1"), ["create", "get"]);
  assertEquals(verbs(index, bob, "ns2"), ["get"]);
  assertEquals(verbs(index, bob, ""), ["get"]);
  assertEquals(verbs(index, { username: "bob", groups: [] }, "ns2"), []);
});

Deno.test("PolicyIndex: service account subjects default to the binding's namespace", () => {
  const index = fixture();
  const robot = (ns: string) => ({ username: `system:serviceaccount:${ns}:robot`, groups: [] });
  assertEquals(verbs(index, robot("ns1"), "ns1"), ["create"]);
  assertEquals(verbs(index, robot("ns2"), "ns1"), []);
  // In a cluster binding a service account needs its namespace: without one it names nobody.
  index.put("ClusterRoleBinding", {
    metadata: { name: "sa" },
    roleRef: { kind: "ClusterRole", name: "reader" },
    subjects: [
      { kind: "ServiceAccount", name: "robot" },
      { kind: "ServiceAccount", name: "robot", namespace: "ns2" },
    ],
  });
  assertEquals(verbs(index, robot("ns1"), "ns3"), []);
  assertEquals(verbs(index, robot("ns2"), "ns3"), ["get"]);
});

Deno.test("PolicyIndex: a RoleBinding may reference a ClusterRole, only in its namespace", () => {
  const index = fixture();
  index.put("RoleBinding", {
    metadata: { name: "alice-reads", namespace: "ns2" },
    roleRef: { kind: "ClusterRole", name: "reader" },
    subjects: [{ kind: "User", name: "alice" }],
  });
  const alice = { username: "alice", groups: [] };
  assertEquals(verbs(index, alice, "ns2"), ["get"]);
  assertEquals(verbs(index, alice, "ns1"), []);
  assertEquals(verbs(index, alice, ""), []);
});

Deno.test("PolicyIndex: changed and removed objects are changed and removed", () => {
  const index = fixture();
  const bob = { username: "bob", groups: [] };
  index.put("RoleBinding", {
    metadata: { name: "bob-writes", namespace: "ns1" },
    roleRef: { kind: "Role", name: "writer" },
    subjects: [{ kind: "User", name: "carol" }],
  });
  assertEquals(verbs(index, bob, "ns1"), []);
  assertEquals(verbs(index, { username: "carol", groups: [] }, "ns1"), ["create"]);
  index.remove("RoleBinding", "ns1", "bob-writes");
  assertEquals(verbs(index, { username: "carol", groups: [] }, "ns1"), []);
  index.remove("ClusterRole", "", "reader");
  assertEquals(index.rulesFor({ username: "x", groups: ["staff"] }, "ns1"), {
    rules: [],
    errors: [`clusterrole.${RBAC} "reader" not found`],
  });
});

Deno.test("PolicyIndex: a binding naming the user twice is visited once; its source in kube's words", () => {
  const index = fixture();
  index.put("RoleBinding", {
    metadata: { name: "twice", namespace: "ns1" },
    roleRef: { kind: "ClusterRole", name: "reader" },
    subjects: [{ kind: "Group", name: "staff" }, { kind: "User", name: "bob" }],
  });
  const sources: string[] = [];
  index.visitRulesFor({ username: "bob", groups: ["staff"] }, "ns1", (v) => {
    if ("rule" in v) sources.push(v.source());
    return true;
  });
  assertEquals(sources, [
    'ClusterRoleBinding "staff-read" of ClusterRole "reader" to Group "staff"',
    'RoleBinding "bob-writes/ns1" of Role "writer" to User "bob"',
    'RoleBinding "twice/ns1" of ClusterRole "reader" to Group "staff"',
  ]);
  const sa: string[] = [];
  index.visitRulesFor({ username: "system:serviceaccount:ns1:robot", groups: [] }, "ns1", (v) => {
    if ("rule" in v) sa.push(v.source());
    return true;
  });
  assertEquals(sa, ['RoleBinding "bob-writes/ns1" of Role "writer" to ServiceAccount "robot/ns1"']);
});

Deno.test("PolicyIndex: roleRules resolves references or says why not", () => {
  const index = fixture();
  assertEquals(index.roleRules({ kind: "Role", name: "writer" }, "ns1").length, 1);
  assertEquals(
    index.roleRules({ kind: "Role", name: "writer" }, "ns2"),
    `role.${RBAC} "writer" not found`,
  );
  assertEquals(
    index.roleRules({ kind: "Thing", name: "x" }, "ns1"),
    'unsupported role reference kind: "Thing"',
  );
});
