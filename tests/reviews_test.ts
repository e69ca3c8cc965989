// deno-lint-ignore-file no-explicit-any
/**
 * Computed resources: access reviews, rules reviews, self-subject reviews, token reviews and
 * `serviceaccounts/{name}/token`, over HTTP. They answer 201, store nothing, validate as kube
 * does, and answer in the group spelling the client used.
 */

import { assert, assertEquals, assertMatch } from "./assert.ts";
import { testServer } from "./harness.ts";
import { parseRuntimeConfig } from "../lib/config/mod.ts";

const AZ = "/apis/authorization.platform.io/v1";
const AN = "/apis/authentication.platform.io/v1";

Deno.test("SelfSubjectAccessReview: the admin (system:masters) is allowed", async () => {
  await using ts = await testServer();
  const res = await ts.json("POST", `${AZ}/selfsubjectaccessreviews`, {
    body: {
      apiVersion: "authorization.platform.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: { resourceAttributes: { verb: "list", resource: "configmaps", namespace: "default" } },
    },
  });
  assertEquals(res.status, 201);
  assertEquals(res.body.kind, "SelfSubjectAccessReview");
  assertEquals(res.body.apiVersion, "authorization.platform.io/v1");
  assertEquals(res.body.status, { allowed: true });
  assertEquals(res.body.spec.resourceAttributes.verb, "list");
  // Nothing was stored: there is no collection to read.
  assertEquals((await ts.json("GET", `${AZ}/selfsubjectaccessreviews`)).status, 405);
});

Deno.test("SelfSubjectAccessReview: exactly one of resourceAttributes / nonResourceAttributes", async () => {
  await using ts = await testServer();
  const none = await ts.json("POST", `${AZ}/selfsubjectaccessreviews`, {
    body: { kind: "SelfSubjectAccessReview", spec: {} },
  });
  assertEquals(none.status, 422);
  assertEquals(none.body.details.causes[0].field, "spec.resourceAttributes");
  assertMatch(none.body.message, /exactly one of nonResourceAttributes or resourceAttributes/);
  const both = await ts.json("POST", `${AZ}/selfsubjectaccessreviews`, {
    body: {
      kind: "SelfSubjectAccessReview",
      spec: {
        resourceAttributes: { verb: "get" },
        nonResourceAttributes: { path: "/x", verb: "get" },
      },
    },
  });
  assertEquals(both.status, 422);
  assertEquals(both.body.details.causes[0].field, "spec.nonResourceAttributes");
  const named = await ts.json("POST", `${AZ}/selfsubjectaccessreviews`, {
    body: {
      kind: "SelfSubjectAccessReview",
      metadata: { name: "x" },
      spec: { nonResourceAttributes: { path: "/healthz", verb: "get" } },
    },
  });
  assertEquals(named.status, 422);
  assertEquals(named.body.details.causes[0].field, "metadata");
});

Deno.test("SubjectAccessReview and LocalSubjectAccessReview: validation in kube's words", async () => {
  await using ts = await testServer();
  const noUser = await ts.json("POST", `${AZ}/subjectaccessreviews`, {
    body: { kind: "SubjectAccessReview", spec: { resourceAttributes: { verb: "get" } } },
  });
  assertEquals(noUser.status, 422);
  assertMatch(noUser.body.message, /spec.user: Invalid value: "": at least one of user or group/);

  const ok = await ts.json("POST", `${AZ}/subjectaccessreviews`, {
    body: {
      kind: "SubjectAccessReview",
      spec: { user: "alice", resourceAttributes: { verb: "get", resource: "secrets" } },
    },
  });
  assertEquals(ok.status, 201);
  // RBAC grants alice nothing; the privileged group may do anything.
  assertEquals(ok.body.status, { allowed: false });
  const masters = await ts.json("POST", `${AZ}/subjectaccessreviews`, {
    body: {
      kind: "SubjectAccessReview",
      spec: { user: "root", groups: ["system:masters"], resourceAttributes: { verb: "get" } },
    },
  });
  assertEquals(masters.body.status, { allowed: true });

  const local = `/apis/authorization.platform.io/v1/namespaces/ns1/localsubjectaccessreviews`;
  const wrongNs = await ts.json("POST", local, {
    body: {
      kind: "LocalSubjectAccessReview",
      spec: { user: "alice", resourceAttributes: { verb: "get", namespace: "other" } },
    },
  });
  assertEquals(wrongNs.status, 422);
  assertEquals(wrongNs.body.details.causes[0].field, "spec.resourceAttributes.namespace");
  const nonResource = await ts.json("POST", local, {
    body: {
      kind: "LocalSubjectAccessReview",
      spec: { user: "alice", nonResourceAttributes: { verb: "get", path: "/x" } },
    },
  });
  assertEquals(nonResource.status, 422);
  assertMatch(nonResource.body.message, /disallowed on this kind of request/);
  const good = await ts.json("POST", local, {
    body: {
      kind: "LocalSubjectAccessReview",
      spec: { groups: ["g"], resourceAttributes: { verb: "get", namespace: "ns1" } },
    },
  });
  assertEquals(good.status, 201);
  assertEquals(good.body.metadata.namespace, "ns1");
  assertEquals(good.body.status.allowed, false);
});

Deno.test("SelfSubjectRulesReview lists what the user may do; a namespace is required", async () => {
  await using ts = await testServer();
  const res = await ts.json("POST", `${AZ}/selfsubjectrulesreviews`, {
    body: { kind: "SelfSubjectRulesReview", spec: { namespace: "default" } },
  });
  assertEquals(res.status, 201);
  assertEquals(res.body.status.incomplete, false);
  assertEquals(res.body.status.resourceRules[0].verbs, ["*"]);
  const none = await ts.json("POST", `${AZ}/selfsubjectrulesreviews`, {
    body: { kind: "SelfSubjectRulesReview", spec: {} },
  });
  assertEquals(none.status, 400);
  assertEquals(none.body.message, "no namespace on request");
});

Deno.test("SelfSubjectReview tells who the requester is", async () => {
  await using ts = await testServer();
  const res = await ts.json("POST", `${AN}/selfsubjectreviews`, {
    body: { kind: "SelfSubjectReview" },
  });
  assertEquals(res.status, 201);
  assertEquals(res.body.status.userInfo.username, "platform-admin");
  assertEquals(res.body.status.userInfo.groups, ["system:masters", "system:authenticated"]);
});

Deno.test("SelfSubjectReview is also served in v1beta1 (kubectl 1.27's auth whoami), v1 preferred", async () => {
  // Off by default, as in kube (tests/runtime_config_test.ts).
  await using ts = await testServer({
    runtimeConfig: parseRuntimeConfig("authentication.k8s.io/v1beta1=true"),
  });
  for (const group of ["authentication.k8s.io", "authentication.platform.io"]) {
    const res = await ts.json("POST", `/apis/${group}/v1beta1/selfsubjectreviews`, {
      body: { apiVersion: `${group}/v1beta1`, kind: "SelfSubjectReview" },
    });
    assertEquals(res.status, 201, JSON.stringify(res.body));
    assertEquals(res.body.apiVersion, `${group}/v1beta1`);
    assertEquals(res.body.kind, "SelfSubjectReview");
    assertEquals(res.body.status.userInfo.username, "platform-admin");
  }
  const group = await ts.json("GET", "/apis/authentication.platform.io");
  assertEquals(group.body.versions.map((v: any) => v.version), ["v1", "v1beta1"]);
  assertEquals(group.body.preferredVersion.version, "v1");
  const resources = await ts.json("GET", "/apis/authentication.platform.io/v1beta1");
  assertEquals(resources.body.resources.map((r: any) => [r.name, r.kind, r.verbs]), [
    ["selfsubjectreviews", "SelfSubjectReview", ["create"]],
  ]);
  // Protobuf too (the v1 message: same fields and numbers).
  const pb = await ts.request("POST", "/apis/authentication.k8s.io/v1beta1/selfsubjectreviews", {
    body: { apiVersion: "authentication.k8s.io/v1beta1", kind: "SelfSubjectReview" },
    headers: { Accept: "application/vnd.kubernetes.protobuf" },
  });
  assertEquals(pb.status, 201);
  assertEquals(pb.headers.get("Content-Type"), "application/vnd.kubernetes.protobuf");
  const bytes = await pb.bytes();
  const text = new TextDecoder().decode(bytes);
  assert(text.startsWith("k8s\0"), "a protobuf envelope");
  assert(text.includes("authentication.k8s.io/v1beta1") && text.includes("platform-admin"));
});

Deno.test("Kubernetes' group names address computed resources, and are answered in kind", async () => {
  await using ts = await testServer();
  const res = await ts.json("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
    body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
  });
  assertEquals(res.status, 201);
  assertEquals(res.body.apiVersion, "authentication.k8s.io/v1");
  // Stored kinds too (kubectl certificate approve), in that spelling.
  await ts.json("POST", "/api/v1/namespaces/default/configmaps", {
    body: { metadata: { name: "c" } },
  });
  const lease = await ts.json("POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", {
    body: { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name: "l" } },
  });
  assertEquals(lease.status, 201, JSON.stringify(lease.body));
  assertEquals(lease.body.apiVersion, "coordination.k8s.io/v1");
  const got = await ts.json("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/l");
  assertEquals(got.body.apiVersion, "coordination.k8s.io/v1");
  const native = await ts.json(
    "GET",
    "/apis/coordination.platform.io/v1/namespaces/default/leases/l",
  );
  assertEquals(native.body.apiVersion, "coordination.platform.io/v1");
  assertEquals((await ts.json("GET", "/apis/nothing.k8s.io/v1/things")).status, 404);
  // Discovery lists both names (tests/kubernetes_names_test.ts).
  const groups = await ts.json("GET", "/apis");
  const names = groups.body.groups.map((g: any) => g.name);
  assert(names.includes("authorization.platform.io"));
  assert(names.includes("authorization.k8s.io"));
});

Deno.test("TokenRequest: a service account token that authenticates, until the account is deleted", async () => {
  await using ts = await testServer();
  const sa = "/api/v1/namespaces/default/serviceaccounts";
  assertEquals((await ts.json("POST", sa, { body: { metadata: { name: "robot" } } })).status, 201);
  const missing = await ts.json("POST", `${sa}/nobody/token`, {
    body: { kind: "TokenRequest", apiVersion: "authentication.platform.io/v1", spec: {} },
  });
  assertEquals(missing.status, 404);
  assertEquals(missing.body.message, 'serviceaccounts "nobody" not found');

  const short = await ts.json("POST", `${sa}/robot/token`, {
    body: { kind: "TokenRequest", spec: { expirationSeconds: 60 } },
  });
  assertEquals(short.status, 422);
  assertMatch(short.body.message, /may not specify a duration less than 10 minutes/);

  const res = await ts.json("POST", `${sa}/robot/token`, {
    body: { kind: "TokenRequest", apiVersion: "authentication.platform.io/v1", spec: {} },
  });
  assertEquals(res.status, 201);
  assertEquals(res.body.kind, "TokenRequest");
  assertEquals(res.body.apiVersion, "authentication.platform.io/v1");
  const kubeSpelled = await ts.json("POST", `${sa}/robot/token`, {
    body: { kind: "TokenRequest", apiVersion: "authentication.k8s.io/v1", spec: {} },
  });
  assertEquals(kubeSpelled.status, 201);
  assertEquals(kubeSpelled.body.apiVersion, "authentication.k8s.io/v1");
  assertEquals(res.body.spec.expirationSeconds, 3600);
  const token = res.body.status.token as string;
  const expires = Date.parse(res.body.status.expirationTimestamp) - Date.now();
  assert(expires > 3500_000 && expires <= 3600_000, `expires in ${expires} ms`);

  const whoami = await ts.json("POST", `${AN}/selfsubjectreviews`, {
    body: { kind: "SelfSubjectReview" },
    token,
  });
  assertEquals(whoami.status, 201);
  assertEquals(whoami.body.status.userInfo.username, "system:serviceaccount:default:robot");
  assertEquals(whoami.body.status.userInfo.groups, [
    "system:serviceaccounts",
    "system:serviceaccounts:default",
    "system:authenticated",
  ]);

  const review = await ts.json("POST", `${AN}/tokenreviews`, {
    body: { kind: "TokenReview", spec: { token } },
  });
  assertEquals(review.status, 201);
  assertEquals(review.body.status.authenticated, true);
  assertEquals(review.body.status.user.username, "system:serviceaccount:default:robot");

  assertEquals((await ts.json("DELETE", `${sa}/robot`)).status, 200);
  const after = await ts.json("GET", "/api/v1/namespaces", { token });
  assertEquals(after.status, 401);
  const reviewAfter = await ts.json("POST", `${AN}/tokenreviews`, {
    body: { kind: "TokenReview", spec: { token } },
  });
  assertEquals(reviewAfter.body.status.authenticated, false);
});

Deno.test("serviceaccounts/token is in discovery as a TokenRequest subresource", async () => {
  await using ts = await testServer();
  const list = await ts.json("GET", "/api/v1");
  const token = list.body.resources.find((r: any) => r.name === "serviceaccounts/token");
  assertEquals(token, {
    name: "serviceaccounts/token",
    singularName: "",
    namespaced: true,
    group: "authentication.platform.io",
    version: "v1",
    kind: "TokenRequest",
    verbs: ["create"],
  });
});
