// deno-lint-ignore-file no-explicit-any
/**
 * Security regressions (issue 17, request parsing) over real HTTPS with real RBAC users:
 * cluster-scoped resources do not exist under a namespace; only kube's methods name verbs
 * (anything else is 405 before authentication); a named path is never a list, a watch of
 * another name or a create of another name; every authorizer sees one spelling of a built-in
 * group; CRDs cannot claim a built-in group; custom groups have one spelling in RBAC; a list
 * selecting one name is authorized on the name it selects.
 */

import { join } from "node:path";
import { stringify } from "yaml";
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { createAsAdmin, type TestServer, testServer, tokenFile } from "../harness.ts";
import { ensurePki } from "../../lib/certificates/pki.ts";
import { silentLogger } from "../../lib/api/log.ts";
import {
  type Json,
  review,
  startWebhook,
  webhookKubeconfig,
} from "../../lib/auth/webhook_testdata.ts";
import { openCrd } from "../open_crd.ts";

const RBAC = "/apis/rbac.authorization.platform.io/v1";
const RBAC_GROUP = "rbac.authorization.platform.io";
const CRDS = "/apis/apiextensions.platform.io/v1/customresourcedefinitions";
const NOT_FOUND = "the server could not find the requested resource";
const NOT_ALLOWED = "the server does not allow this method on the requested resource";

const USERS = {
  "eve-token": { name: "eve" },
  "bob-token": { name: "bob" },
  "alice-token": { name: "alice" },
};

/** A server whose token file has eve, bob and alice, and the namespaces named. */
async function usersServer(namespaces: string[], opts: { authorizationConfigFile?: string } = {}) {
  const tokens = await tokenFile(USERS);
  const ts = await testServer({ tokenAuthFile: tokens.path, ...opts });
  for (const name of namespaces) {
    await createAsAdmin(ts, "/api/v1/namespaces", { metadata: { name } });
  }
  return {
    ...ts,
    async [Symbol.asyncDispose]() {
      await ts[Symbol.asyncDispose]();
      await tokens[Symbol.asyncDispose]();
    },
  };
}

/** Grants `user` the rules through a Role and RoleBinding in `namespace`, or cluster-wide
 * through a ClusterRole and ClusterRoleBinding without one. */
async function grant(ts: TestServer, user: string, name: string, rules: Json[], namespace = "") {
  const base = namespace ? `${RBAC}/namespaces/${namespace}` : RBAC;
  const kind = namespace ? "Role" : "ClusterRole";
  await createAsAdmin(ts, `${base}/${namespace ? "roles" : "clusterroles"}`, {
    metadata: { name },
    rules,
  });
  await bind(ts, user, { kind, name }, namespace);
}

async function bind(
  ts: TestServer,
  user: string,
  roleRef: { kind: string; name: string },
  namespace = "",
) {
  const base = namespace ? `${RBAC}/namespaces/${namespace}` : RBAC;
  await createAsAdmin(ts, `${base}/${namespace ? "rolebindings" : "clusterrolebindings"}`, {
    metadata: { name: `${user}-${roleRef.name}` },
    roleRef: { apiGroup: RBAC_GROUP, ...roleRef },
    subjects: [{ kind: "User", apiGroup: RBAC_GROUP, name: user }],
  });
}

function assertStatus(res: { status: number; body: any }, code: number, reason: string) {
  assertEquals(res.status, code, JSON.stringify(res.body));
  assertEquals(res.body.kind, "Status");
  assertEquals(res.body.reason, reason);
}

/** Creates a CRD and waits until its resource is served at `path`. */
async function serveCrd(ts: TestServer, body: Json, path: string): Promise<void> {
  await createAsAdmin(ts, CRDS, body);
  for (let i = 0; i < 200; i++) {
    if ((await ts.json("GET", path)).status === 200) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${path} was never served`);
}

// ---------------------------------------------------------------------------------------
// Cluster-scoped resources under a namespace segment

Deno.test("request parsing: a Role in one's namespace reaches no cluster-scoped object (404)", async () => {
  await using ts = await usersServer(["eve-ns", "team-a", "victim-ns"]);
  await bind(ts, "eve", { kind: "ClusterRole", name: "edit" }, "eve-ns");
  await grant(ts, "eve", "cluster-things", [
    { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "delete"] },
    { apiGroups: [RBAC_GROUP], resources: ["clusterroles"], verbs: ["get", "delete"] },
    {
      apiGroups: ["certificates.platform.io", "apiextensions.platform.io"],
      resources: ["certificatesigningrequests", "customresourcedefinitions"],
      verbs: ["get", "list"],
    },
  ], "eve-ns");
  const eve = { token: "eve-token" };

  // Asked directly, another namespace is forbidden; under eve-ns it does not exist.
  assertStatus(await ts.json("GET", "/api/v1/namespaces/team-a", eve), 403, "Forbidden");
  const read = await ts.json("GET", "/api/v1/namespaces/eve-ns/namespaces/team-a", eve);
  assertStatus(read, 404, "NotFound");
  assertEquals(read.body.message, NOT_FOUND);
  assertStatus(await ts.json("GET", "/api/v1/namespaces/eve-ns/namespaces", eve), 404, "NotFound");

  const del = await ts.json("DELETE", "/api/v1/namespaces/eve-ns/namespaces/victim-ns", eve);
  assertStatus(del, 404, "NotFound");
  const victim = await ts.json("GET", "/api/v1/namespaces/victim-ns");
  assertEquals(victim.status, 200);
  assertEquals(victim.body.metadata.deletionTimestamp, undefined);
  assertEquals(victim.body.status.phase, "Active");

  // Every cluster-scoped resource, for anyone (the admin too).
  for (const token of ["eve-token", undefined]) {
    for (
      const path of [
        `${RBAC}/namespaces/eve-ns/clusterroles/admin`,
        "/apis/certificates.platform.io/v1/namespaces/eve-ns/certificatesigningrequests",
        "/apis/apiextensions.platform.io/v1/namespaces/eve-ns/customresourcedefinitions",
      ]
    ) {
      assertStatus(await ts.json("GET", path, { token }), 404, "NotFound");
    }
  }
  const status = "/api/v1/namespaces/eve-ns/namespaces/victim-ns/status";
  assertStatus(await ts.json("GET", status), 404, "NotFound");
  const delRole = await ts.json("DELETE", `${RBAC}/namespaces/eve-ns/clusterroles/admin`, eve);
  assertStatus(delRole, 404, "NotFound");
  assertEquals((await ts.json("GET", `${RBAC}/clusterroles/admin`)).status, 200);

  // What eve may see of her own namespace is unchanged.
  assertEquals((await ts.json("GET", "/api/v1/namespaces/eve-ns", eve)).status, 200);
});

Deno.test("request parsing: a cluster-scoped custom resource under a namespace is 404", async () => {
  await using ts = await usersServer(["ns1"]);
  await serveCrd(
    ts,
    openCrd("ops.example.com", "gadgets", "Gadget", "Cluster"),
    "/apis/ops.example.com/v1/gadgets",
  );
  await createAsAdmin(ts, "/apis/ops.example.com/v1/gadgets", {
    apiVersion: "ops.example.com/v1",
    kind: "Gadget",
    metadata: { name: "g1" },
  });
  assertEquals((await ts.json("GET", "/apis/ops.example.com/v1/gadgets/g1")).status, 200);
  for (const method of ["GET", "DELETE"]) {
    const res = await ts.json(method, "/apis/ops.example.com/v1/namespaces/ns1/gadgets/g1");
    assertStatus(res, 404, "NotFound");
  }
  assertEquals((await ts.json("GET", "/apis/ops.example.com/v1/gadgets/g1")).status, 200);
});

Deno.test("request parsing: a namespaced object is named only in its namespace", async () => {
  await using ts = await usersServer(["ns1"]);
  await createAsAdmin(ts, "/api/v1/namespaces/ns1/configmaps", { metadata: { name: "c" } });
  assertStatus(await ts.json("GET", "/api/v1/configmaps/c"), 404, "NotFound");
  assertStatus(await ts.json("DELETE", "/api/v1/configmaps/c"), 404, "NotFound");
  assertStatus(
    await ts.json("POST", "/api/v1/configmaps", { body: { metadata: { name: "d" } } }),
    405,
    "MethodNotAllowed",
  );
  // Across namespaces, lists and watches are served (selecting a name too).
  const all = await ts.json("GET", "/api/v1/configmaps?fieldSelector=metadata.name%3Dc");
  assertEquals(all.status, 200);
  assertEquals(all.body.items.map((i: any) => i.metadata.namespace), ["ns1"]);
});

// ---------------------------------------------------------------------------------------
// Methods

/** One HTTP/1.1 request over a raw TLS connection (fetch refuses TRACE and uppercases
 * `get`); the status line and the body. */
async function rawRequest(
  ts: TestServer,
  requestLine: string,
  token?: string,
): Promise<{ statusLine: string; body: string }> {
  const url = new URL(ts.server.url);
  const conn = await Deno.connectTls({
    hostname: url.hostname,
    port: Number(url.port),
    caCerts: [ts.server.caCertPem],
  });
  const head = [
    requestLine,
    `Host: ${url.host}`,
    ...(token ? [`Authorization: Bearer ${token}`] : []),
    "Connection: close",
    "",
    "",
  ].join("\r\n");
  await conn.write(new TextEncoder().encode(head));
  const text = await new Response(conn.readable).text();
  const [headers, ...body] = text.split("\r\n\r\n");
  return { statusLine: headers.split("\r\n")[0], body: body.join("\r\n\r\n") };
}

Deno.test("request parsing: a method that names no verb is 405, before authentication", async () => {
  await using ts = await usersServer(["vault"]);
  for (const name of ["allowed-secret", "other-secret"]) {
    await createAsAdmin(ts, "/api/v1/namespaces/vault/secrets", {
      metadata: { name },
      stringData: { password: `${name}-value` },
    });
  }
  await grant(ts, "bob", "narrow", [
    {
      apiGroups: [""],
      resources: ["secrets"],
      resourceNames: ["allowed-secret"],
      verbs: ["list", "deletecollection"],
    },
    { apiGroups: [""], resources: ["configmaps"], resourceNames: ["only-this"], verbs: ["create"] },
  ], "vault");
  const bob = { token: "bob-token" };
  const secret = "/api/v1/namespaces/vault/secrets/allowed-secret";

  const listed = await ts.json("LIST", secret, bob);
  assertStatus(listed, 405, "MethodNotAllowed");
  assertEquals(listed.body.message, NOT_ALLOWED);
  assert(!JSON.stringify(listed.body).includes("other-secret"), "no other secret is listed");

  assertStatus(await ts.json("DELETECOLLECTION", secret, bob), 405, "MethodNotAllowed");
  for (const name of ["allowed-secret", "other-secret"]) {
    const kept = await ts.json("GET", `/api/v1/namespaces/vault/secrets/${name}`);
    assertEquals(kept.status, 200, `${name} still exists`);
  }

  const made = await ts.json("CREATE", "/api/v1/namespaces/vault/configmaps/only-this", {
    ...bob,
    body: { metadata: { name: "another" } },
  });
  assertStatus(made, 405, "MethodNotAllowed");
  assertEquals((await ts.json("GET", "/api/v1/namespaces/vault/configmaps/another")).status, 404);

  // Without credentials: 405, not 401 (no one is authenticated for such a method).
  assertStatus(await ts.json("LIST", secret, { token: null }), 405, "MethodNotAllowed");
  assertStatus(await ts.json("PROPFIND", "/healthz", { token: null }), 405, "MethodNotAllowed");
  // OPTIONS is a method kube knows: it is authenticated as any other.
  assertStatus(await ts.json("OPTIONS", secret, { token: null }), 401, "Unauthorized");

  for (const line of [`TRACE ${secret} HTTP/1.1`, `get ${secret} HTTP/1.1`]) {
    const res = await rawRequest(ts, line, "bob-token");
    assertMatch(res.statusLine, /^HTTP\/1\.1 405 /, line);
    assertEquals(JSON.parse(res.body).reason, "MethodNotAllowed", line);
  }
});

Deno.test("request parsing: a named path is never a collection, or a create of another name", async () => {
  await using ts = await usersServer(["vault"]);
  for (const name of ["watched", "other"]) {
    await createAsAdmin(ts, "/api/v1/namespaces/vault/configmaps", { metadata: { name } });
  }
  await grant(ts, "bob", "narrow", [
    { apiGroups: [""], resources: ["configmaps"], resourceNames: ["watched"], verbs: ["watch"] },
    { apiGroups: [""], resources: ["configmaps"], resourceNames: ["only-this"], verbs: ["create"] },
  ], "vault");
  const bob = { token: "bob-token" };
  const cm = (name: string) => `/api/v1/namespaces/vault/configmaps/${name}`;

  // A named GET is a get, `watch` or not (kube reads `watch` only on collections).
  assertStatus(
    await ts.json("GET", `${cm("watched")}?watch=1&timeoutSeconds=1`, bob),
    403,
    "Forbidden",
  );

  // POST to a named path creates nothing: no such route (405), whatever the body names.
  const posted = await ts.json("POST", cm("only-this"), {
    ...bob,
    body: { metadata: { name: "another" } },
  });
  assertStatus(posted, 405, "MethodNotAllowed");
  assertEquals((await ts.json("GET", cm("another"))).status, 404);

  // The legacy named watch is a watch of that one object.
  const legacy = `/api/v1/watch/namespaces/vault/configmaps/watched`;
  const res = await ts.request("GET", `${legacy}?timeoutSeconds=1`, bob);
  assertEquals(res.status, 200);
  const events = (await res.text()).trim().split("\n").map((l) => JSON.parse(l));
  assertEquals(events.map((e) => e.object.metadata.name), ["watched"]);
  // … and a field selector cannot point it at another name.
  const elsewhere = await ts.json("GET", `${legacy}?fieldSelector=metadata.name%3Dother`, bob);
  assertStatus(elsewhere, 400, "BadRequest");
  assertEquals(elsewhere.body.message, "fieldSelector metadata.name doesn't match requested name");
});

// ---------------------------------------------------------------------------------------
// Group spellings

Deno.test("request parsing: a webhook sees one spelling of a built-in group", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-parsing-test-" });
  try {
    const pki = await ensurePki({
      dataDir: join(dir, "webhook-pki"),
      sans: [],
      bindAddress: "127.0.0.1",
      logger: silentLogger,
    });
    await using hook = startWebhook(pki);
    // The webhook denies what its match condition lets through: certificates.platform.io.
    hook.respond = () => review({ allowed: false, denied: true, reason: "no certificates" });
    await Deno.writeTextFile(
      join(dir, "webhook.kubeconfig"),
      webhookKubeconfig(hook.url, pki.caCertPem, { token: "to-webhook" }),
    );
    const config = join(dir, "authorization.yaml");
    await Deno.writeTextFile(
      config,
      stringify({
        apiVersion: "apiserver.platform.io/v1beta1",
        kind: "AuthorizationConfiguration",
        authorizers: [{
          type: "Webhook",
          name: "certificates-policy",
          webhook: {
            timeout: "3s",
            authorizedTTL: "1s",
            unauthorizedTTL: "1s",
            subjectAccessReviewVersion: "v1",
            matchConditionSubjectAccessReviewVersion: "v1",
            failurePolicy: "NoOpinion",
            connectionInfo: { type: "KubeConfigFile", kubeConfigFile: "webhook.kubeconfig" },
            matchConditions: [{
              expression: "has(request.resourceAttributes) && " +
                "request.resourceAttributes.group == 'certificates.platform.io'",
            }],
          },
        }, { type: "RBAC", name: "rbac" }],
      }),
    );
    await using ts = await usersServer([], { authorizationConfigFile: config });
    // RBAC alone would allow alice (the rule in kube's spelling: the same group).
    await grant(ts, "alice", "csr-reader", [{
      apiGroups: ["certificates.k8s.io"],
      resources: ["certificatesigningrequests"],
      verbs: ["get", "list"],
    }]);
    const alice = { token: "alice-token" };

    for (const group of ["certificates.platform.io", "certificates.k8s.io"]) {
      const res = await ts.json("GET", `/apis/${group}/v1/certificatesigningrequests`, alice);
      assertStatus(res, 403, "Forbidden");
      // The webhook judged the canonical group ("no certificates" is its answer); the message
      // names the group as the client spelled it, as kube's does.
      assertMatch(res.body.message, new RegExp(`in API group "${group}".*no certificates`));
      // An access review about either spelling gets the same answer.
      const sar = await ts.json("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
        ...alice,
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SelfSubjectAccessReview",
          spec: {
            resourceAttributes: { group, resource: "certificatesigningrequests", verb: "list" },
          },
        },
      });
      assertEquals(sar.status, 201, JSON.stringify(sar.body));
      assertEquals([sar.body.status.allowed, sar.body.status.denied], [false, true], group);
    }
    // Asked (answers are cached: both spellings are one question), always in one spelling.
    assert(hook.received.length > 0);
    for (const r of hook.received) {
      const attributes = (r.body.spec as Json).resourceAttributes as Json;
      assertEquals(attributes.group, "certificates.platform.io");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("request parsing: a CRD cannot claim a built-in group in either spelling", async () => {
  await using ts = await usersServer([]);
  const cases: [string, string, string][] = [
    ["rbac.authorization.k8s.io", "clusterrolebindings", "ClusterRoleBinding"],
    ["rbac.authorization.platform.io", "widgets", "Widget"],
    ["certificates.k8s.io", "widgets", "Widget"],
  ];
  for (const [group, plural, kind] of cases) {
    const res = await ts.json("POST", CRDS, { body: openCrd(group, plural, kind, "Cluster") });
    assertStatus(res, 422, "Invalid");
    assertMatch(res.body.message, new RegExp(`spec\\.group: Invalid value: "${group}": `));
    assertEquals(res.body.details.causes.map((c: any) => [c.field, c.reason]), [
      ["spec.group", "FieldValueInvalid"],
    ]);
  }
  assertEquals(
    (await ts.json("GET", `${CRDS}/clusterrolebindings.rbac.authorization.k8s.io`))
      .status,
    404,
  );

  // kube's spelling still reaches the built-in resource, which is still enforced.
  const path = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
  const made = await ts.json("POST", path, {
    body: {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "bob-view" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
      subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "bob" }],
    },
  });
  assertEquals(made.status, 201, JSON.stringify(made.body));
  assertEquals(made.body.apiVersion, "rbac.authorization.k8s.io/v1");
  assertEquals((await ts.json("GET", `${RBAC}/clusterrolebindings/bob-view`)).status, 200);
  const invalid = await ts.json("POST", path, { body: { metadata: { name: "no-role" } } });
  assertStatus(invalid, 422, "Invalid");
});

Deno.test("request parsing: RBAC gives a custom group one spelling", async () => {
  await using ts = await usersServer(["ns1"]);
  const gadgets = "/apis/tools.k8s.io/v1/namespaces/ns1/gadgets";
  await serveCrd(ts, openCrd("tools.k8s.io", "gadgets", "Gadget", "Namespaced"), gadgets);
  await grant(ts, "bob", "gadgets-elsewhere", [
    { apiGroups: ["tools.platform.io"], resources: ["gadgets"], verbs: ["list"] },
  ]);
  const bob = { token: "bob-token" };
  assertStatus(await ts.json("GET", gadgets, bob), 403, "Forbidden");

  await grant(ts, "bob", "gadgets", [
    { apiGroups: ["tools.k8s.io"], resources: ["gadgets"], verbs: ["list"] },
  ]);
  assertEquals((await ts.json("GET", gadgets, bob)).status, 200);
  // Built-in groups keep both spellings.
  await grant(ts, "bob", "leases", [
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["list"] },
  ]);
  const leases = "/apis/coordination.platform.io/v1/namespaces/ns1/leases";
  assertEquals((await ts.json("GET", leases, bob)).status, 200);
});

// ---------------------------------------------------------------------------------------
// Field selectors

Deno.test("request parsing: a list is authorized on the name its selector selects", async () => {
  await using ts = await usersServer(["team"]);
  const roles = `${RBAC}/namespaces/team/roles`;
  for (const name of ["team-role", "team-role "]) {
    await createAsAdmin(ts, roles, { metadata: { name }, rules: [] });
  }
  await grant(ts, "bob", "one-role", [
    {
      apiGroups: [RBAC_GROUP],
      resources: ["roles"],
      resourceNames: ["team-role"],
      verbs: ["list"],
    },
  ], "team");
  const bob = { token: "bob-token" };

  const exact = await ts.json("GET", `${roles}?fieldSelector=metadata.name%3Dteam-role`, bob);
  assertEquals(exact.status, 200);
  assertEquals(exact.body.items.map((i: any) => i.metadata.name), ["team-role"]);

  for (const selector of ["metadata.name%3Dteam-role%20", "%20metadata.name%3Dteam-role"]) {
    const res = await ts.json("GET", `${roles}?fieldSelector=${selector}`, bob);
    assertStatus(res, 403, "Forbidden");
    assertEquals(res.body.items, undefined);
  }
});
