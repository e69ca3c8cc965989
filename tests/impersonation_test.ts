/**
 * Impersonation: `Impersonate-User`, `-Group`, `-Uid` and `-Extra-*` headers, each part
 * authorized with the `impersonate` verb, over real HTTPS with RBAC deciding.
 */

import { assertEquals, assertMatch } from "./assert.ts";
import { type TestServer, testServer, tokenFile } from "./harness.ts";
import { kubectlFor, kubectlInstalled } from "./kubectl.ts";

const RBAC = "/apis/rbac.authorization.platform.io/v1";
const WHOAMI = "/apis/authentication.platform.io/v1/selfsubjectreviews";

/** bob may impersonate what `rules` allow; alice is a plain user. */
async function serverWithImpersonator(rules: unknown[]): Promise<TestServer & AsyncDisposable> {
  const tokens = await tokenFile({
    "bob-token": { name: "bob", groups: ["staff"] },
    "alice-token": { name: "alice" },
  });
  const ts = await testServer({ tokenAuthFile: tokens.path });
  const created = await ts.json("POST", `${RBAC}/clusterroles`, {
    body: { metadata: { name: "impersonator" }, rules },
  });
  assertEquals(created.status, 201, JSON.stringify(created.body));
  const bound = await ts.json("POST", `${RBAC}/clusterrolebindings`, {
    body: {
      metadata: { name: "bob-impersonates" },
      roleRef: {
        apiGroup: "rbac.authorization.platform.io",
        kind: "ClusterRole",
        name: "impersonator",
      },
      subjects: [{ kind: "User", apiGroup: "rbac.authorization.platform.io", name: "bob" }],
    },
  });
  assertEquals(bound.status, 201, JSON.stringify(bound.body));
  return {
    ...ts,
    async [Symbol.asyncDispose]() {
      await ts[Symbol.asyncDispose]();
      await tokens[Symbol.asyncDispose]();
    },
  };
}

function whoami(ts: TestServer, token: string, headers: Record<string, string>) {
  return ts.json("POST", WHOAMI, {
    token,
    headers,
    body: { apiVersion: "authentication.platform.io/v1", kind: "SelfSubjectReview" },
  });
}

Deno.test("impersonation: an allowed user is served as the impersonated user, groups and extras", async () => {
  await using ts = await serverWithImpersonator([
    { apiGroups: [""], resources: ["users", "groups"], verbs: ["impersonate"] },
    {
      apiGroups: ["authentication.platform.io"],
      resources: ["userextras/scopes", "uids"],
      verbs: ["impersonate"],
    },
  ]);
  const res = await whoami(ts, "bob-token", {
    "Impersonate-User": "jane",
    "Impersonate-Group": "devs",
    "Impersonate-Uid": "1234",
    "Impersonate-Extra-Scopes": "view",
  });
  assertEquals(res.status, 201, JSON.stringify(res.body));
  assertEquals(res.body.status.userInfo, {
    username: "jane",
    uid: "1234",
    groups: ["devs", "system:authenticated"],
    extra: { scopes: ["view"] },
  });
});

Deno.test("impersonation: each part needs its own permission, with kube's 403 message", async () => {
  await using ts = await serverWithImpersonator([
    { apiGroups: [""], resources: ["users"], verbs: ["impersonate"], resourceNames: ["jane"] },
  ]);
  const jane = await whoami(ts, "bob-token", { "Impersonate-User": "jane" });
  assertEquals(jane.status, 201);
  assertEquals(jane.body.status.userInfo.username, "jane");

  const other = await whoami(ts, "bob-token", { "Impersonate-User": "root" });
  assertEquals(other.status, 403);
  assertEquals(other.body.reason, "Forbidden");
  assertEquals(
    other.body.message,
    'users "root" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope',
  );

  const group = await whoami(ts, "bob-token", {
    "Impersonate-User": "jane",
    "Impersonate-Group": "system:masters",
  });
  assertEquals(group.status, 403);
  assertMatch(
    group.body.message,
    /^groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups"/,
  );

  const extra = await whoami(ts, "bob-token", {
    "Impersonate-User": "jane",
    "Impersonate-Extra-Scopes": "admin",
  });
  assertEquals(extra.status, 403);
  assertMatch(
    extra.body.message,
    /cannot impersonate resource "userextras\/scopes" in API group "authentication.platform.io"/,
  );

  const alice = await whoami(ts, "alice-token", { "Impersonate-User": "jane" });
  assertEquals(alice.status, 403);
  assertMatch(alice.body.message, /User "alice" cannot impersonate/);
});

Deno.test("impersonation: the impersonated user is what authorization judges", async () => {
  await using ts = await serverWithImpersonator([
    { apiGroups: [""], resources: ["users", "groups"], verbs: ["impersonate"] },
  ]);
  // bob cannot list configmaps; as a member of system:masters he can.
  const denied = await ts.json("GET", "/api/v1/namespaces/default/configmaps", {
    token: "bob-token",
    headers: { "Impersonate-User": "jane" },
  });
  assertEquals(denied.status, 403);
  assertMatch(denied.body.message, /User "jane" cannot list resource "configmaps"/);
  const allowed = await ts.json("GET", "/api/v1/namespaces/default/configmaps", {
    token: "bob-token",
    headers: { "Impersonate-User": "jane", "Impersonate-Group": "system:masters" },
  });
  assertEquals(allowed.status, 200);
});

Deno.test("impersonation: service accounts are authorized on serviceaccounts and get their groups", async () => {
  await using ts = await serverWithImpersonator([
    { apiGroups: [""], resources: ["serviceaccounts"], verbs: ["impersonate"] },
  ]);
  const res = await whoami(ts, "bob-token", {
    "Impersonate-User": "system:serviceaccount:default:builder",
  });
  assertEquals(res.status, 201, JSON.stringify(res.body));
  assertEquals(res.body.status.userInfo.groups, [
    "system:serviceaccounts",
    "system:serviceaccounts:default",
    "system:authenticated",
  ]);
  const user = await whoami(ts, "bob-token", { "Impersonate-User": "jane" });
  assertEquals(user.status, 403);
});

Deno.test("impersonation: groups without a user are a bad request; no header is no impersonation", async () => {
  await using ts = await serverWithImpersonator([]);
  const res = await whoami(ts, "bob-token", { "Impersonate-Group": "devs" });
  assertEquals(res.status, 400);
  assertMatch(res.body.message, /without impersonating a user/);
  const plain = await whoami(ts, "bob-token", {});
  assertEquals(plain.status, 201);
  assertEquals(plain.body.status.userInfo.username, "bob");
});

Deno.test({
  name: "impersonation: kubectl --as and --as-group, judged as the impersonated user",
  ignore: !kubectlInstalled,
  async fn() {
    await using ts = await serverWithImpersonator([]);
    await using k = await kubectlFor(ts.server);
    // The admin (system:masters) may impersonate anyone.
    const who = await k.ok(["auth", "whoami", "--as", "jane", "--as-group", "devs"]);
    assertMatch(who, /Username\s+jane/);
    assertMatch(who, /Groups\s+\[devs system:authenticated\]/);
    const denied = await k.kubectl(["get", "configmaps", "--as", "jane"]);
    assertEquals(denied.code, 1);
    assertEquals(
      denied.stderr.trim(),
      "Error from server (Forbidden): configmaps is forbidden: " +
        'User "jane" cannot list resource "configmaps" in API group "" in the namespace "default"',
    );
    const canI = await k.kubectl(["auth", "can-i", "list", "configmaps", "--as", "jane"]);
    assertEquals([canI.code, canI.stdout.trim()], [1, "no"]);
  },
});
