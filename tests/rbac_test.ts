// deno-lint-ignore-file no-explicit-any
/**
 * RBAC over HTTP: token-file users and service accounts are forbidden until a binding grants
 * them something, within the binding's reach (namespace, names, subresources, URLs); nobody
 * grants more than they hold; aggregated roles follow their sources; the default roles are
 * created at start and left alone after.
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { createAsAdmin, type TestServer, testServer, tokenFile } from "./harness.ts";

const RBAC = "/apis/rbac.authorization.platform.io/v1";
const GROUP = "rbac.authorization.platform.io";
const CM = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

/** A server with bob (group staff) and alice in its token file. */
async function rbacServer(): Promise<TestServer & AsyncDisposable> {
  const tokens = await tokenFile({
    "bob-token": { name: "bob", groups: ["staff"] },
    "alice-token": { name: "alice" },
  });
  const ts = await testServer({ tokenAuthFile: tokens.path });
  for (const ns of ["ns1", "ns2"]) {
    assertEquals(
      (await ts.json("POST", "/api/v1/namespaces", { body: { metadata: { name: ns } } })).status,
      201,
    );
  }
  return {
    ...ts,
    async [Symbol.asyncDispose]() {
      await ts[Symbol.asyncDispose]();
      await tokens[Symbol.asyncDispose]();
    },
  };
}

function clusterRole(name: string, rules: unknown[], labels?: Record<string, string>) {
  return { metadata: { name, labels }, rules };
}

function binding(
  name: string,
  roleRef: { kind: string; name: string },
  subjects: Record<string, string>[],
) {
  return { metadata: { name }, roleRef: { apiGroup: GROUP, ...roleRef }, subjects };
}

const user = (name: string) => ({ kind: "User", apiGroup: GROUP, name });

Deno.test("rbac: a token-file user is forbidden until a binding allows it, in kube's words", async () => {
  await using ts = await rbacServer();
  const before = await ts.json("GET", CM("ns1"), { token: "bob-token" });
  assertEquals(before.status, 403);
  assertEquals(before.body.reason, "Forbidden");
  assertEquals(
    before.body.message,
    'configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "ns1"',
  );
  await createAsAdmin(
    ts,
    `${RBAC}/clusterroles`,
    clusterRole("cm-reader", [
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] },
    ]),
  );
  await createAsAdmin(
    ts,
    `${RBAC}/clusterrolebindings`,
    binding("bob-reads", { kind: "ClusterRole", name: "cm-reader" }, [user("bob")]),
  );
  assertEquals((await ts.json("GET", CM("ns1"), { token: "bob-token" })).status, 200);
  assertEquals((await ts.json("GET", CM("ns2"), { token: "bob-token" })).status, 200);
  const write = await ts.json("POST", CM("ns1"), {
    token: "bob-token",
    body: { metadata: { name: "x" } },
  });
  assertEquals(write.status, 403);
  // Groups count: staff gets what bob got.
  assertEquals((await ts.json("GET", CM("ns1"), { token: "alice-token" })).status, 403);
  await ts.json("DELETE", `${RBAC}/clusterrolebindings/bob-reads`);
  assertEquals((await ts.json("GET", CM("ns1"), { token: "bob-token" })).status, 403);
  await createAsAdmin(
    ts,
    `${RBAC}/clusterrolebindings`,
    binding("staff-reads", { kind: "ClusterRole", name: "cm-reader" }, [
      { kind: "Group", apiGroup: GROUP, name: "staff" },
    ]),
  );
  assertEquals((await ts.json("GET", CM("ns1"), { token: "bob-token" })).status, 200);
});

Deno.test("rbac: a RoleBinding to a ClusterRole grants only in its namespace; Roles too", async () => {
  await using ts = await rbacServer();
  await createAsAdmin(
    ts,
    `${RBAC}/clusterroles`,
    clusterRole("cm-reader", [
      { apiGroups: [""], resources: ["configmaps"], verbs: ["list"] },
    ]),
  );
  await createAsAdmin(
    ts,
    `${RBAC}/namespaces/ns1/rolebindings`,
    binding("bob-reads", { kind: "ClusterRole", name: "cm-reader" }, [user("bob")]),
  );
  assertEquals((await ts.json("GET", CM("ns1"), { token: "bob-token" })).status, 200);
  assertEquals((await ts.json("GET", CM("ns2"), { token: "bob-token" })).status, 403);
  assertEquals((await ts.json("GET", "/api/v1/configmaps", { token: "bob-token" })).status, 403);

  await createAsAdmin(ts, `${RBAC}/namespaces/ns2/roles`, {
    metadata: { name: "cm-writer" },
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["create"] }],
  });
  await createAsAdmin(
    ts,
    `${RBAC}/namespaces/ns2/rolebindings`,
    binding("bob-writes", { kind: "Role", name: "cm-writer" }, [user("bob")]),
  );
  const body = { metadata: { name: "c" } };
  assertEquals((await ts.json("POST", CM("ns2"), { token: "bob-token", body })).status, 201);
  assertEquals((await ts.json("POST", CM("ns1"), { token: "bob-token", body })).status, 403);
});

Deno.test("rbac: resourceNames allow those objects only; a binding to a missing role says so", async () => {
  await using ts = await rbacServer();
  for (const name of ["a", "b"]) await createAsAdmin(ts, CM("ns1"), { metadata: { name } });
  await createAsAdmin(
    ts,
    `${RBAC}/clusterroles`,
    clusterRole("just-a", [
      { apiGroups: [""], resources: ["configmaps"], resourceNames: ["a"], verbs: ["get", "list"] },
    ]),
  );
  await createAsAdmin(
    ts,
    `${RBAC}/namespaces/ns1/rolebindings`,
    binding("bob-a", { kind: "ClusterRole", name: "just-a" }, [user("bob")]),
  );
  const get = (path: string) => ts.json("GET", path, { token: "bob-token" });
  assertEquals((await get(`${CM("ns1")}/a`)).status, 200);
  assertEquals((await get(`${CM("ns1")}/b`)).status, 403);
  // A list has no name, unless it selects one object by name.
  assertEquals((await get(CM("ns1"))).status, 403);
  const one = await get(`${CM("ns1")}?fieldSelector=metadata.name%3Da`);
  assertEquals(one.status, 200);
  assertEquals(one.body.items.map((i: any) => i.metadata.name), ["a"]);

  await createAsAdmin(
    ts,
    `${RBAC}/clusterrolebindings`,
    binding("dangling", { kind: "ClusterRole", name: "gone" }, [user("bob")]),
  );
  const denied = await get(`${CM("ns1")}/b`);
  assertEquals(
    denied.body.message,
    'configmaps "b" is forbidden: User "bob" cannot get resource "configmaps" in API group "" ' +
      `in the namespace "ns1": RBAC: clusterrole.${GROUP} "gone" not found`,
  );
});

Deno.test("rbac: subresource rules (certificatesigningrequests/approval)", async () => {
  await using ts = await rbacServer();
  const keys = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  );
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name: "CN=alice",
    keys,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
  });
  const CSRS = "/apis/certificates.platform.io/v1/certificatesigningrequests";
  const csr = await createAsAdmin(ts, CSRS, {
    metadata: { name: "c1" },
    spec: {
      request: btoa(request.toString("pem")),
      signerName: "example.com/signer",
      usages: ["client auth"],
    },
  });
  csr.status = { conditions: [{ type: "Approved", status: "True", reason: "ByBob" }] };
  const approve = () =>
    ts.json("PUT", `${CSRS}/c1/approval`, { token: "bob-token", body: structuredClone(csr) });
  assertEquals((await approve()).status, 403);
  await createAsAdmin(
    ts,
    `${RBAC}/clusterroles`,
    clusterRole("approver", [
      {
        apiGroups: ["certificates.platform.io"],
        resources: ["certificatesigningrequests/approval"],
        verbs: ["update"],
      },
      {
        apiGroups: ["certificates.platform.io"],
        resources: ["signers"],
        resourceNames: ["example.com/signer"],
        verbs: ["approve"],
      },
    ]),
  );
  await createAsAdmin(
    ts,
    `${RBAC}/clusterrolebindings`,
    binding("bob-approves", { kind: "ClusterRole", name: "approver" }, [user("bob")]),
  );
  const approved = await approve();
  assertEquals(approved.status, 200, JSON.stringify(approved.body));
  assertEquals(approved.body.status.conditions[0].reason, "ByBob");
  // The subresource rule grants nothing on the resource itself.
  const main = await ts.json("PUT", `${CSRS}/c1`, { token: "bob-token", body: approved.body });
  assertEquals(main.status, 403);
  assertMatch(main.body.message, /cannot update resource "certificatesigningrequests"/);
});

Deno.test("rbac: nonResourceURLs, exact and by prefix", async () => {
  await using ts = await rbacServer();
  // system:public-info-viewer and system:discovery: every signed-in user.
  assertEquals((await ts.json("GET", "/healthz", { token: "bob-token" })).status, 200);
  assertEquals((await ts.json("GET", "/apis", { token: "bob-token" })).status, 200);
  const check = await ts.json("GET", "/healthz/ping", { token: "bob-token" });
  assertEquals(check.status, 403);
  assertEquals(check.body.message, 'forbidden: User "bob" cannot get path "/healthz/ping"');
  await createAsAdmin(
    ts,
    `${RBAC}/clusterroles`,
    clusterRole("health-checks", [
      { nonResourceURLs: ["/healthz/*", "/readyz/storage"], verbs: ["get"] },
    ]),
  );
  await createAsAdmin(
    ts,
    `${RBAC}/clusterrolebindings`,
    binding("bob-checks", { kind: "ClusterRole", name: "health-checks" }, [user("bob")]),
  );
  assertEquals((await ts.json("GET", "/healthz/ping", { token: "bob-token" })).status, 200);
  assertEquals((await ts.json("GET", "/readyz/storage", { token: "bob-token" })).status, 200);
  assertEquals((await ts.json("GET", "/readyz/ping", { token: "bob-token" })).status, 403);
});

Deno.test("rbac: service accounts as subjects, signed in with their tokens", async () => {
  await using ts = await rbacServer();
  await createAsAdmin(ts, "/api/v1/namespaces/ns1/serviceaccounts", {
    metadata: { name: "robot" },
  });
  const token = (await createAsAdmin(ts, "/api/v1/namespaces/ns1/serviceaccounts/robot/token", {
    kind: "TokenRequest",
    spec: {},
  })).status.token;
  assertEquals((await ts.json("GET", CM("ns1"), { token })).status, 403);
  await createAsAdmin(
    ts,
    `${RBAC}/clusterroles`,
    clusterRole("cm-reader", [
      { apiGroups: [""], resources: ["configmaps"], verbs: ["list"] },
    ]),
  );
  // A subject without a namespace is the binding's namespace's service account.
  await createAsAdmin(
    ts,
    `${RBAC}/namespaces/ns1/rolebindings`,
    binding("robot-reads", { kind: "ClusterRole", name: "cm-reader" }, [
      { kind: "ServiceAccount", name: "robot" },
    ]),
  );
  assertEquals((await ts.json("GET", CM("ns1"), { token })).status, 200);
  assertEquals((await ts.json("GET", CM("ns2"), { token })).status, 403);
  // Every service account is in system:serviceaccounts.
  await createAsAdmin(
    ts,
    `${RBAC}/namespaces/ns2/rolebindings`,
    binding("all-sas", { kind: "ClusterRole", name: "cm-reader" }, [
      { kind: "Group", apiGroup: GROUP, name: "system:serviceaccounts" },
    ]),
  );
  assertEquals((await ts.json("GET", CM("ns2"), { token })).status, 200);
  // A ClusterRoleBinding must name the account's namespace.
  const noNamespace = await ts.json("POST", `${RBAC}/clusterrolebindings`, {
    body: binding("x", { kind: "ClusterRole", name: "cm-reader" }, [
      { kind: "ServiceAccount", name: "robot" },
    ]),
  });
  assertEquals(noNamespace.status, 422);
  assertMatch(noNamespace.body.message, /subjects\[0\]\.namespace: Required value/);
});

Deno.test("rbac: nobody grants what they do not hold, without escalate or bind", async () => {
  await using ts = await rbacServer();
  await createAsAdmin(
    ts,
    `${RBAC}/clusterroles`,
    clusterRole("role-maker", [
      { apiGroups: [GROUP], resources: ["roles", "rolebindings"], verbs: ["create"] },
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
    ]),
  );
  await createAsAdmin(
    ts,
    `${RBAC}/namespaces/ns1/rolebindings`,
    binding("bob-makes", { kind: "ClusterRole", name: "role-maker" }, [user("bob")]),
  );
  const role = (name: string, resources: string[]) => ({
    metadata: { name },
    rules: [{ apiGroups: [""], resources, verbs: ["get"] }],
  });
  const roles = `${RBAC}/namespaces/ns1/roles`;
  assertEquals(
    (await ts.json("POST", roles, { token: "bob-token", body: role("cm", ["configmaps"]) })).status,
    201,
  );
  const secrets = await ts.json("POST", roles, {
    token: "bob-token",
    body: role("secrets", ["secrets", "configmaps"]),
  });
  assertEquals(secrets.status, 403);
  assertEquals(
    secrets.body.message,
    `roles.${GROUP} "secrets" is forbidden: user "bob" (groups=["staff" "system:authenticated"]) ` +
      "is attempting to grant RBAC permissions not currently held:\n" +
      '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
  );
  assertEquals(secrets.body.details, { name: "secrets", group: GROUP, kind: "roles" });

  // Bindings: holding the role's rules is enough; the secrets role needs `bind` on it.
  const bindings = `${RBAC}/namespaces/ns1/rolebindings`;
  const bind = (name: string, role: string) => ({
    token: "bob-token",
    body: binding(name, { kind: "Role", name: role }, [user("alice")]),
  });
  assertEquals((await ts.json("POST", bindings, bind("alice-cm", "cm"))).status, 201);
  await createAsAdmin(ts, roles, role("secrets", ["secrets"]));
  const refused = await ts.json("POST", bindings, bind("alice-secrets", "secrets"));
  assertEquals(refused.status, 403);
  assertMatch(
    refused.body.message,
    /^rolebindings\.rbac\.authorization\.platform\.io "alice-secrets" is forbidden: user "bob" .* not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get"\]\}$/,
  );

  await createAsAdmin(
    ts,
    `${RBAC}/clusterroles`,
    clusterRole("escalator", [
      { apiGroups: [GROUP], resources: ["roles"], verbs: ["escalate"] },
      { apiGroups: [GROUP], resources: ["roles"], resourceNames: ["secrets"], verbs: ["bind"] },
    ]),
  );
  await createAsAdmin(
    ts,
    `${RBAC}/namespaces/ns1/rolebindings`,
    binding("bob-escalates", { kind: "ClusterRole", name: "escalator" }, [user("bob")]),
  );
  assertEquals(
    (await ts.json("POST", roles, { token: "bob-token", body: role("more", ["secrets"]) })).status,
    201,
  );
  assertEquals((await ts.json("POST", bindings, bind("alice-secrets", "secrets"))).status, 201);
  // bind is per role name: another role still needs its rules held.
  assertEquals((await ts.json("POST", bindings, bind("alice-more", "more"))).status, 403);
});

Deno.test("rbac: bindings keep their roleRef; kube's spelling of the group is accepted", async () => {
  await using ts = await rbacServer();
  const created = await createAsAdmin(ts, `${RBAC}/namespaces/ns1/rolebindings`, {
    metadata: { name: "b" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
    subjects: [{ kind: "User", name: "bob" }],
  });
  assertEquals(created.roleRef.apiGroup, "rbac.authorization.k8s.io");
  assertEquals(created.subjects[0].apiGroup, GROUP);
  created.roleRef.name = "edit";
  const changed = await ts.json("PUT", `${RBAC}/namespaces/ns1/rolebindings/b`, { body: created });
  assertEquals(changed.status, 422);
  assertMatch(changed.body.message, /roleRef: Invalid value: .*: cannot change roleRef/);
  const bad = await ts.json("POST", `${RBAC}/clusterrolebindings`, {
    body: binding("b", { kind: "Role", name: "r" }, [user("bob")]),
  });
  assertEquals(bad.status, 422);
  assertMatch(
    bad.body.message,
    /roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"/,
  );
});

Deno.test("rbac: a ClusterRole labelled aggregate-to-view shows up in view, edit and admin", async () => {
  await using ts = await rbacServer();
  const rule = { apiGroups: ["coordination.platform.io"], resources: ["leases"], verbs: ["get"] };
  await createAsAdmin(
    ts,
    `${RBAC}/clusterroles`,
    clusterRole("lease-viewer", [rule], {
      "rbac.authorization.platform.io/aggregate-to-view": "true",
    }),
  );
  const rulesOf = async (name: string) =>
    (await ts.json("GET", `${RBAC}/clusterroles/${name}`)).body.rules ?? [];
  const has = (rules: any[]) => rules.some((r) => JSON.stringify(r) === JSON.stringify(rule));
  for (const name of ["view", "edit", "admin"]) {
    let rules: any[] = [];
    for (let i = 0; i < 100 && !has(rules); i++) {
      rules = await rulesOf(name);
      if (!has(rules)) await new Promise((r) => setTimeout(r, 20));
    }
    assert(has(rules), `${name}: ${JSON.stringify(rules)}`);
  }
  // view keeps kube's own rules for what this server serves.
  assert((await rulesOf("view")).some((r: any) => r.resources.includes("configmaps")));
  await ts.json("DELETE", `${RBAC}/clusterroles/lease-viewer`);
  for (let i = 0; i < 100 && has(await rulesOf("view")); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert(!has(await rulesOf("view")));
});

Deno.test("rbac: the default roles exist, and a restart leaves changed ones alone", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "platform-rbac-" });
  try {
    {
      await using ts = await testServer({ dataDir, storage: "file" });
      const roles = (await ts.json("GET", `${RBAC}/clusterroles`)).body.items.map((
        r: any,
      ) => r.metadata.name);
      for (const name of ["cluster-admin", "admin", "edit", "view", "system:basic-user"]) {
        assert(roles.includes(name), name);
      }
      const basic = (await ts.json("GET", `${RBAC}/clusterroles/system:basic-user`)).body;
      assertEquals(basic.metadata.labels, { "platform.io/bootstrapping": "rbac-defaults" });
      assertEquals(basic.metadata.annotations, {
        "rbac.authorization.platform.io/autoupdate": "true",
      });
      const bindings = (await ts.json("GET", `${RBAC}/clusterrolebindings/cluster-admin`)).body;
      assertEquals(bindings.subjects, [{ kind: "Group", apiGroup: GROUP, name: "system:masters" }]);
      basic.rules = [{ verbs: ["get"], nonResourceURLs: ["/nothing"] }];
      assertEquals(
        (await ts.json("PUT", `${RBAC}/clusterroles/system:basic-user`, { body: basic })).status,
        200,
      );
      assertEquals((await ts.json("DELETE", `${RBAC}/clusterroles/system:discovery`)).status, 200);
    }
    await using ts = await testServer({ dataDir, storage: "file" });
    const basic = (await ts.json("GET", `${RBAC}/clusterroles/system:basic-user`)).body;
    assertEquals(basic.rules, [{ verbs: ["get"], nonResourceURLs: ["/nothing"] }]);
    // A missing one is created again.
    assertEquals((await ts.json("GET", `${RBAC}/clusterroles/system:discovery`)).status, 200);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("rbac: SelfSubjectRulesReview lists what RBAC grants", async () => {
  await using ts = await rbacServer();
  const rules = await ts.json(
    "POST",
    "/apis/authorization.platform.io/v1/selfsubjectrulesreviews",
    {
      token: "alice-token",
      body: { kind: "SelfSubjectRulesReview", spec: { namespace: "ns1" } },
    },
  );
  assertEquals(rules.status, 201);
  assertEquals(rules.body.status.incomplete, false);
  assertEquals(
    rules.body.status.resourceRules.flatMap((r: any) => r.resources).sort(),
    ["selfsubjectaccessreviews", "selfsubjectreviews", "selfsubjectrulesreviews"],
  );
  assert(
    rules.body.status.nonResourceRules.some((r: any) => r.nonResourceURLs.includes("/apis/*")),
  );
});
