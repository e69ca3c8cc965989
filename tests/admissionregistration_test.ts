// deno-lint-ignore-file no-explicit-any
/**
 * `admissionregistration.platform.io/v1` over HTTPS: discovery in both spellings, create, get,
 * list and watch, kube's v1 defaults read back, every validation rule with its field path and
 * message, protobuf, server-side apply, the status subresource of ValidatingAdmissionPolicy;
 * and kubectl `apply -f` and `get` of webhook configurations.
 */

import { assert, assertEquals } from "./assert.ts";
import { createAsAdmin, type TestServer, testServer, WITHOUT_POLICY_STATUS } from "./harness.ts";
import { openWatch } from "./watch_client.ts";
import { kubectlEnv, kubectlInstalled } from "./kubectl.ts";
import { decodeObject } from "../lib/codec/mod.ts";
import { encodePem } from "../lib/api/mod.ts";

const GROUP = "admissionregistration.platform.io";
const BASE = `/apis/${GROUP}/v1`;
const VWC = `${BASE}/validatingwebhookconfigurations`;
const MWC = `${BASE}/mutatingwebhookconfigurations`;
const VAP = `${BASE}/validatingadmissionpolicies`;
const VAPB = `${BASE}/validatingadmissionpolicybindings`;
const K8S_VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";

function hook(overrides: Record<string, unknown> = {}): any {
  return {
    name: "check.example.com",
    clientConfig: { service: { namespace: "default", name: "hook" } },
    rules: [{
      operations: ["CREATE"],
      apiGroups: [""],
      apiVersions: ["v1"],
      resources: ["configmaps"],
    }],
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
    ...overrides,
  };
}

function vwc(name: string, webhooks: any[] = [hook()]): any {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: "ValidatingWebhookConfiguration",
    metadata: { name },
    webhooks,
  };
}

function mwc(name: string, webhooks: any[] = [hook()]): any {
  return { ...vwc(name, webhooks), kind: "MutatingWebhookConfiguration" };
}

function policy(name: string, spec: Record<string, unknown> = {}): any {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: "ValidatingAdmissionPolicy",
    metadata: { name },
    spec: {
      matchConstraints: {
        resourceRules: [{
          operations: ["CREATE", "UPDATE"],
          apiGroups: ["apps"],
          apiVersions: ["v1"],
          resources: ["deployments"],
        }],
      },
      validations: [{ expression: "object.spec.replicas <= 5" }],
      ...spec,
    },
  };
}

function binding(name: string, spec: Record<string, unknown> = {}): any {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name },
    spec: { policyName: "replicas", validationActions: ["Deny"], ...spec },
  };
}

/** The causes of a 422 as `field: message` lines. */
function causes(body: any): string[] {
  return (body?.details?.causes ?? []).map((c: any) => `${c.field}: ${c.message}`);
}

async function expectInvalid(
  ts: TestServer,
  path: string,
  body: any,
  expected: string[],
): Promise<void> {
  const res = await ts.json("POST", path, { body });
  assertEquals(res.status, 422, JSON.stringify(res.body));
  assertEquals(res.body.reason, "Invalid");
  for (const line of expected) {
    assert(
      causes(res.body).some((c) =>
        c === line || (line.endsWith("…") && c.startsWith(line.slice(0, -1)))
      ),
      `missing cause ${JSON.stringify(line)} in ${JSON.stringify(causes(res.body))}`,
    );
  }
}

/** A self-signed certificate in PEM, base64'd as a caBundle. */
async function caBundle(): Promise<string> {
  const x509 = await import("@peculiar/x509");
  await import("reflect-metadata");
  const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
  const keys = await crypto.subtle.generateKey(alg, true, ["sign", "verify"]);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: "CN=hook-ca",
    keys,
    signingAlgorithm: alg,
    notBefore: new Date(),
    notAfter: new Date(Date.now() + 86400_000),
  });
  return btoa(cert.toString("pem"));
}

Deno.test("admissionregistration: discovery in both spellings lists the four resources", async () => {
  await using ts = await testServer();
  for (const group of [GROUP, "admissionregistration.k8s.io"]) {
    const res = await ts.json("GET", `/apis/${group}/v1`);
    assertEquals(res.status, 200, JSON.stringify(res.body));
    assertEquals(res.body.groupVersion, `${group}/v1`);
    const byName = new Map<string, any>(res.body.resources.map((r: any) => [r.name, r]));
    for (
      const [name, kind] of [
        ["mutatingwebhookconfigurations", "MutatingWebhookConfiguration"],
        ["validatingwebhookconfigurations", "ValidatingWebhookConfiguration"],
        ["validatingadmissionpolicies", "ValidatingAdmissionPolicy"],
        ["validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding"],
      ]
    ) {
      const r = byName.get(name);
      assert(r, `${name} missing from ${[...byName.keys()]}`);
      assertEquals(r.kind, kind);
      assertEquals(r.namespaced, false);
      // The category is on the canonical entry only, so `kubectl get api-extensions` lists
      // each object once.
      assertEquals(r.categories, group === GROUP ? ["api-extensions"] : undefined);
      assertEquals([...r.verbs].sort(), [
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
      ]);
    }
    assert(byName.has("validatingadmissionpolicies/status"));
  }
  const groups = await ts.json("GET", "/apis");
  const names = groups.body.groups.map((g: any) => g.name);
  assert(names.includes(GROUP), names.join());
  // Objects read under the Kubernetes spelling carry it.
  await createAsAdmin(ts, VWC, vwc("spelled"));
  const got = await ts.json(
    "GET",
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/spelled",
  );
  assertEquals(got.body.apiVersion, "admissionregistration.k8s.io/v1");
});

Deno.test("admissionregistration: create, get, list and watch webhook configurations", async () => {
  await using ts = await testServer();
  await using watch = await openWatch(ts, `${VWC}?watch=true`);
  const created = await createAsAdmin(ts, VWC, vwc("one"));
  assertEquals(created.metadata.generation, 1);
  const event = await watch.next();
  assertEquals(event.type, "ADDED");
  assertEquals(event.object.metadata.name, "one");
  const got = await ts.json("GET", `${VWC}/one`);
  assertEquals(got.body.webhooks, created.webhooks);
  await createAsAdmin(ts, VWC, vwc("two"));
  const list = await ts.json("GET", VWC);
  assertEquals(list.body.kind, "ValidatingWebhookConfigurationList");
  assertEquals(list.body.items.map((i: any) => i.metadata.name), ["one", "two"]);
  // An update of the webhooks bumps the generation.
  const update = structuredClone(got.body);
  update.webhooks[0].timeoutSeconds = 5;
  const put = await ts.json("PUT", `${VWC}/one`, { body: update });
  assertEquals(put.status, 200, JSON.stringify(put.body));
  assertEquals(put.body.metadata.generation, 2);
  assertEquals(put.body.webhooks[0].timeoutSeconds, 5);
  const del = await ts.json("DELETE", `${VWC}/two`);
  assertEquals(del.status, 200);
  const types = (await watch.collect(500, 3)).map((e) => e.type);
  assertEquals(types, ["ADDED", "MODIFIED", "DELETED"]);
  // Mutating ones too.
  await createAsAdmin(ts, MWC, mwc("m"));
  assertEquals((await ts.json("GET", MWC)).body.items.length, 1);
});

Deno.test("admissionregistration: kube's v1 defaults are filled in and read back", async () => {
  await using ts = await testServer();
  const m = await createAsAdmin(ts, MWC, mwc("defaults"));
  const h = m.webhooks[0];
  assertEquals(h.failurePolicy, "Fail");
  assertEquals(h.matchPolicy, "Equivalent");
  assertEquals(h.timeoutSeconds, 10);
  assertEquals(h.namespaceSelector, {});
  assertEquals(h.objectSelector, {});
  assertEquals(h.reinvocationPolicy, "Never");
  assertEquals(h.rules[0].scope, "*");
  assertEquals(h.clientConfig.service.port, 443);
  const got = (await ts.json("GET", `${MWC}/defaults`)).body.webhooks[0];
  assertEquals(got, h);
  // Validating webhooks have no reinvocationPolicy; set values stay.
  const v = await createAsAdmin(
    ts,
    VWC,
    vwc("set", [
      hook({
        failurePolicy: "Ignore",
        matchPolicy: "Exact",
        timeoutSeconds: 3,
        clientConfig: { url: "https://hook.example.com/v" },
        rules: [{ ...hook().rules[0], scope: "Namespaced" }],
      }),
    ]),
  );
  const vh = v.webhooks[0];
  assertEquals(vh.reinvocationPolicy, undefined);
  assertEquals(
    [vh.failurePolicy, vh.matchPolicy, vh.timeoutSeconds, vh.rules[0].scope],
    ["Ignore", "Exact", 3, "Namespaced"],
  );
  // An update is defaulted too.
  const update = structuredClone(v);
  delete update.webhooks[0].timeoutSeconds;
  delete update.webhooks[0].failurePolicy;
  const put = await ts.json("PUT", `${VWC}/set`, { body: update });
  assertEquals(put.status, 200, JSON.stringify(put.body));
  assertEquals(put.body.webhooks[0].timeoutSeconds, 10);
  assertEquals(put.body.webhooks[0].failurePolicy, "Fail");
  // Policies and bindings.
  const p = await createAsAdmin(ts, VAP, policy("replicas"));
  assertEquals(p.spec.failurePolicy, "Fail");
  assertEquals(p.spec.matchConstraints.matchPolicy, "Equivalent");
  assertEquals(p.spec.matchConstraints.namespaceSelector, {});
  assertEquals(p.spec.matchConstraints.objectSelector, {});
  assertEquals(p.spec.matchConstraints.resourceRules[0].scope, "*");
  assertEquals(p.status, {});
  const b = await createAsAdmin(
    ts,
    VAPB,
    binding("b", {
      paramRef: { name: "limits", namespace: "default" },
      matchResources: { excludeResourceRules: [hook().rules[0]] },
    }),
  );
  assertEquals(b.spec.paramRef.parameterNotFoundAction, "Deny");
  assertEquals(b.spec.matchResources.matchPolicy, "Equivalent");
  assertEquals(b.spec.matchResources.namespaceSelector, {});
  assertEquals(b.spec.matchResources.objectSelector, {});
  assertEquals(b.spec.matchResources.excludeResourceRules[0].scope, "*");
  const plain = await createAsAdmin(ts, VAPB, binding("plain"));
  assertEquals(plain.spec.matchResources, undefined);
  assertEquals(plain.spec.paramRef, undefined);
});

Deno.test("admissionregistration: webhook names, sideEffects, review versions, timeouts", async () => {
  await using ts = await testServer();
  await expectInvalid(ts, VWC, vwc("n", [hook({ name: "two.parts" })]), [
    'webhooks[0].name: Invalid value: "two.parts": should be a domain with at least three segments separated by dots',
  ]);
  await expectInvalid(ts, VWC, vwc("n", [hook({ name: "Not_A.Domain.com" })]), [
    'webhooks[0].name: Invalid value: "Not_A.Domain.com": a lowercase RFC 1123 subdomain…',
  ]);
  await expectInvalid(ts, VWC, vwc("n", [hook({ name: "" })]), [
    "webhooks[0].name: Required value",
  ]);
  await expectInvalid(ts, VWC, vwc("n", [hook(), hook()]), [
    'webhooks[1].name: Duplicate value: "check.example.com"',
  ]);
  const noSideEffects = hook();
  delete noSideEffects.sideEffects;
  await expectInvalid(ts, VWC, vwc("n", [noSideEffects]), [
    "webhooks[0].sideEffects: Required value",
  ]);
  for (const value of ["Unknown", "Some"]) {
    await expectInvalid(ts, MWC, mwc("n", [hook({ sideEffects: value })]), [
      `webhooks[0].sideEffects: Unsupported value: "${value}": supported values: "None", "NoneOnDryRun"`,
    ]);
  }
  await expectInvalid(ts, VWC, vwc("n", [hook({ admissionReviewVersions: [] })]), [
    "webhooks[0].admissionReviewVersions: Required value: must specify one of v1",
  ]);
  await expectInvalid(ts, VWC, vwc("n", [hook({ admissionReviewVersions: ["v1beta1"] })]), [
    'webhooks[0].admissionReviewVersions: Invalid value: ["v1beta1"]: must include at least one of v1',
  ]);
  await expectInvalid(ts, VWC, vwc("n", [hook({ admissionReviewVersions: ["v1", "v1"] })]), [
    'webhooks[0].admissionReviewVersions[1]: Invalid value: "v1": duplicate version',
  ]);
  for (const t of [0, 31]) {
    await expectInvalid(ts, VWC, vwc("n", [hook({ timeoutSeconds: t })]), [
      `webhooks[0].timeoutSeconds: Invalid value: ${t}: the timeout value must be between 1 and 30 seconds`,
    ]);
  }
  await expectInvalid(
    ts,
    MWC,
    mwc("n", [
      hook({ failurePolicy: "Maybe", matchPolicy: "Loose", reinvocationPolicy: "Always" }),
    ]),
    [
      'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"',
      'webhooks[0].matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"',
      'webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"',
    ],
  );
});

Deno.test("admissionregistration: clientConfig url, service and caBundle", async () => {
  await using ts = await testServer();
  const form = "; desired format: https://host[/path]";
  const cc = (clientConfig: unknown) => vwc("cc", [hook({ clientConfig })]);
  await expectInvalid(ts, VWC, cc({}), [
    "webhooks[0].clientConfig: Required value: exactly one of url or service is required",
  ]);
  await expectInvalid(
    ts,
    VWC,
    cc({ url: "https://a.example.com", service: { namespace: "a", name: "b" } }),
    ["webhooks[0].clientConfig: Required value: exactly one of url or service is required"],
  );
  await expectInvalid(ts, VWC, cc({ url: "http://a.example.com/x" }), [
    `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme${form}`,
  ]);
  await expectInvalid(ts, VWC, cc({ url: "https://user:pw@a.example.com/x" }), [
    'webhooks[0].clientConfig.url: Invalid value: "user:pw": user information is not permitted in the URL',
  ]);
  await expectInvalid(ts, VWC, cc({ url: "https://a.example.com/x#frag" }), [
    'webhooks[0].clientConfig.url: Invalid value: "frag": fragments are not permitted in the URL',
  ]);
  await expectInvalid(ts, VWC, cc({ url: "https://a.example.com/x?q=1" }), [
    'webhooks[0].clientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL',
  ]);
  await expectInvalid(ts, VWC, cc({ url: "/relative" }), [
    "webhooks[0].clientConfig.url: Required value: url must be a valid URL…",
  ]);
  await expectInvalid(ts, VWC, cc({ service: { namespace: "", name: "" } }), [
    "webhooks[0].clientConfig.service.name: Required value: service name is required",
    "webhooks[0].clientConfig.service.namespace: Required value: service namespace is required",
  ]);
  await expectInvalid(ts, VWC, cc({ service: { namespace: "a", name: "b", port: 70000 } }), [
    "webhooks[0].clientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive",
  ]);
  await expectInvalid(ts, VWC, cc({ service: { namespace: "a", name: "b", path: "validate" } }), [
    `webhooks[0].clientConfig.service.path: Invalid value: "validate": must start with a '/'`,
  ]);
  await expectInvalid(ts, VWC, cc({ service: { namespace: "a", name: "b", path: "/a//b" } }), [
    `webhooks[0].clientConfig.service.path: Invalid value: "/a//b": segment[1] may not be empty`,
  ]);
  const notPem = btoa("not a certificate");
  await expectInvalid(
    ts,
    VWC,
    cc({ service: { namespace: "a", name: "b" }, caBundle: notPem }),
    ['webhooks[0].clientConfig.caBundle: Invalid value: "<bundle>": must be PEM-encoded certificates: no CERTIFICATE block found'],
  );
  const keyOnly = btoa(encodePem("PRIVATE KEY", new Uint8Array([1, 2, 3])));
  await expectInvalid(
    ts,
    VWC,
    cc({ service: { namespace: "a", name: "b" }, caBundle: keyOnly }),
    ['webhooks[0].clientConfig.caBundle: Invalid value: "<bundle>": must be PEM-encoded certificates: no CERTIFICATE block found'],
  );
  const bundle = await caBundle();
  const ok = await createAsAdmin(
    ts,
    VWC,
    cc({ service: { namespace: "a", name: "b", path: "/validate", port: 8443 }, caBundle: bundle }),
  );
  assertEquals(ok.webhooks[0].clientConfig.caBundle, bundle);
  await createAsAdmin(ts, VWC, {
    ...cc({ url: "https://hook.example.com:8443/v" }),
    metadata: { name: "u" },
  });
});

Deno.test("admissionregistration: rules", async () => {
  await using ts = await testServer();
  const rule = (r: Record<string, unknown>) =>
    vwc("r", [hook({ rules: [{ ...hook().rules[0], ...r }] })]);
  await expectInvalid(ts, VWC, rule({ operations: [] }), [
    "webhooks[0].rules[0].operations: Required value",
  ]);
  await expectInvalid(ts, VWC, rule({ operations: ["*", "CREATE"] }), [
    `webhooks[0].rules[0].operations: Invalid value: ["*","CREATE"]: if '*' is present, must not specify other operations`,
  ]);
  await expectInvalid(ts, VWC, rule({ operations: ["PATCH"] }), [
    'webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
  ]);
  await expectInvalid(ts, VWC, rule({ apiGroups: [], apiVersions: [], resources: [] }), [
    "webhooks[0].rules[0].apiGroups: Required value",
    "webhooks[0].rules[0].apiVersions: Required value",
    "webhooks[0].rules[0].resources: Required value",
  ]);
  await expectInvalid(ts, VWC, rule({ apiGroups: ["*", "apps"], apiVersions: ["*", "v1"] }), [
    `webhooks[0].rules[0].apiGroups: Invalid value: ["*","apps"]: if '*' is present, must not specify other API groups`,
    `webhooks[0].rules[0].apiVersions: Invalid value: ["*","v1"]: if '*' is present, must not specify other API versions`,
  ]);
  await expectInvalid(ts, VWC, rule({ resources: ["*/*", "pods"] }), [
    `webhooks[0].rules[0].resources: Invalid value: ["*/*","pods"]: if '*/*' is present, must not specify other resources`,
  ]);
  await expectInvalid(ts, VWC, rule({ resources: ["*", "pods"] }), [
    `webhooks[0].rules[0].resources: Invalid value: ["*","pods"]: if '*' is present, must not specify other resources without subresources`,
  ]);
  await expectInvalid(ts, VWC, rule({ resources: ["pods/*", "pods/log"] }), [
    `webhooks[0].rules[0].resources[1]: Invalid value: "pods/log": if 'pods/*' is present, must not specify pods/log`,
  ]);
  await expectInvalid(ts, VWC, rule({ resources: ["*/status", "pods/status"] }), [
    `webhooks[0].rules[0].resources[1]: Invalid value: "pods/status": if '*/status' is present, must not specify pods/status`,
  ]);
  await expectInvalid(ts, VWC, rule({ scope: "Global" }), [
    'webhooks[0].rules[0].scope: Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"',
  ]);
  // Every allowed form.
  for (
    const resources of [["*"], ["*/*"], ["pods"], ["pods/log"], ["*/status"], ["pods/*"], [
      "*",
      "pods/log",
    ]]
  ) {
    const name = `ok-${resources.join("-").replaceAll("*", "x").replaceAll("/", "-")}`;
    await createAsAdmin(ts, VWC, { ...rule({ resources, operations: ["*"] }), metadata: { name } });
  }
});

Deno.test("admissionregistration: selectors and match conditions", async () => {
  await using ts = await testServer();
  await expectInvalid(
    ts,
    VWC,
    vwc("s", [hook({
      namespaceSelector: { matchExpressions: [{ key: "env", operator: "In", values: [] }] },
      objectSelector: { matchLabels: { "bad key": "x" } },
    })]),
    [
      "webhooks[0].namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      'webhooks[0].objectSelector.matchLabels: Invalid value: "bad key": name part must consist of alphanumeric characters…',
    ],
  );
  await expectInvalid(
    ts,
    VWC,
    vwc("s", [hook({ objectSelector: { matchExpressions: [{ key: "a", operator: "Near" }] } })]),
    ['webhooks[0].objectSelector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator'],
  );
  const mc = (matchConditions: unknown) => vwc("mc", [hook({ matchConditions })]);
  await expectInvalid(
    ts,
    VWC,
    mc([{ name: "a", expression: "true" }, { name: "a", expression: "true" }]),
    ['webhooks[0].matchConditions[1].name: Duplicate value: "a"'],
  );
  await expectInvalid(ts, VWC, mc([{ name: "not a name", expression: "true" }]), [
    'webhooks[0].matchConditions[0].name: Invalid value: "not a name": name part must consist of alphanumeric characters…',
  ]);
  await expectInvalid(ts, VWC, mc([{ name: "a", expression: "" }]), [
    "webhooks[0].matchConditions[0].expression: Required value",
  ]);
  await expectInvalid(ts, VWC, mc([{ name: "a", expression: "foo == 1" }]), [
    `webhooks[0].matchConditions[0].expression: Invalid value: "foo == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo'`,
  ]);
  await expectInvalid(ts, VWC, mc([{ name: "a", expression: "1 +" }]), [
    `webhooks[0].matchConditions[0].expression: Invalid value: "1 +": compilation failed: …`,
  ]);
  // params are a policy's, not a webhook's
  await expectInvalid(ts, VWC, mc([{ name: "a", expression: "params.x == 1" }]), [
    `webhooks[0].matchConditions[0].expression: Invalid value: "params.x == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params'`,
  ]);
  const many = Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: "true" }));
  await expectInvalid(ts, VWC, mc(many), [
    "webhooks[0].matchConditions: Too many: must have at most 64 items",
  ]);
  // Every variable compiles.
  await createAsAdmin(
    ts,
    VWC,
    mc([{
      name: "all-vars",
      expression: "object != null && oldObject == null && request.operation == 'CREATE' && " +
        "namespaceObject.metadata.name != 'kube-system' && " +
        "authorizer.group('').resource('pods').check('get').allowed()",
    }]),
  );
});

Deno.test("admissionregistration: policy validation", async () => {
  await using ts = await testServer();
  await expectInvalid(ts, VAP, policy("p", { validations: [], auditAnnotations: [] }), [
    "spec.validations: Required value: validations or auditAnnotations must contain at least one item",
    "spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item",
  ]);
  await expectInvalid(ts, VAP, policy("p", { matchConstraints: undefined }), [
    "spec.matchConstraints: Required value",
  ]);
  await expectInvalid(ts, VAP, policy("p", { matchConstraints: { resourceRules: [] } }), [
    "spec.matchConstraints.resourceRules: Required value",
  ]);
  await expectInvalid(
    ts,
    VAP,
    policy("p", { validations: [{ expression: "object.x ==" }, { expression: " " }] }),
    [
      'spec.validations[0].expression: Invalid value: "object.x ==": compilation failed: …',
      "spec.validations[1].expression: Required value: expression is not specified",
    ],
  );
  await expectInvalid(
    ts,
    VAP,
    policy("p", { validations: [{ expression: "true", reason: "Teapot" }] }),
    [
      'spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"',
    ],
  );
  await expectInvalid(
    ts,
    VAP,
    policy("p", {
      variables: [{ name: "a", expression: "1" }, { name: "a", expression: "2" }, {
        name: "1x",
        expression: "3",
      }],
    }),
    [
      'spec.variables[1].name: Duplicate value: "a"',
      'spec.variables[2].name: Invalid value: "1x": name is not a valid CEL identifier',
    ],
  );
  await expectInvalid(ts, VAP, policy("p", { failurePolicy: "Sometimes" }), [
    'spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"',
  ]);
  await expectInvalid(
    ts,
    VAP,
    policy("p", { validations: [{ expression: "nope > 1" }] }),
    [`spec.validations[0].expression: Invalid value: "nope > 1": compilation failed: ERROR: <input>:1:1: undeclared reference to 'nope'`],
  );
  // Every variable of a policy compiles; audit annotations alone are enough.
  await createAsAdmin(
    ts,
    VAP,
    policy("full", {
      paramKind: { apiVersion: "v1", kind: "ConfigMap" },
      variables: [{ name: "limit", expression: "int(params.data.max)" }],
      validations: [{
        expression: "object.spec.replicas <= variables.limit && oldObject == null && " +
          "request.operation == 'CREATE' && namespaceObject != null && " +
          "authorizer.group('').resource('pods').check('get').allowed()",
        messageExpression: "'too many: ' + string(object.spec.replicas)",
        reason: "Forbidden",
      }],
      matchConditions: [{ name: "not-system", expression: "request.namespace != 'kube-system'" }],
    }),
  );
  await createAsAdmin(
    ts,
    VAP,
    policy("audit-only", {
      validations: undefined,
      auditAnnotations: [{ key: "replicas", valueExpression: "string(object.spec.replicas)" }],
    }),
  );
});

Deno.test("admissionregistration: binding validation", async () => {
  await using ts = await testServer();
  await expectInvalid(ts, VAPB, binding("b", { policyName: "" }), [
    "spec.policyName: Required value",
  ]);
  await expectInvalid(ts, VAPB, binding("b", { validationActions: [] }), [
    "spec.validationActions: Required value: at least one validation action is required",
  ]);
  await expectInvalid(ts, VAPB, binding("b", { validationActions: ["Deny", "Deny", "Log"] }), [
    'spec.validationActions[1]: Duplicate value: "Deny"',
    'spec.validationActions[2]: Unsupported value: "Log": supported values: "Audit", "Deny", "Warn"',
  ]);
  await expectInvalid(ts, VAPB, binding("b", { validationActions: ["Deny", "Warn"] }), [
    'spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
  ]);
  await expectInvalid(ts, VAPB, binding("b", { paramRef: { name: "a", selector: {} } }), [
    "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
    "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
  ]);
  await expectInvalid(ts, VAPB, binding("b", { paramRef: { namespace: "default" } }), [
    "spec.paramRef: Required value: one of name or selector must be specified",
  ]);
  await expectInvalid(
    ts,
    VAPB,
    binding("b", { paramRef: { name: "a", parameterNotFoundAction: "Ignore" } }),
    ['spec.paramRef.parameterNotFoundAction: Unsupported value: "Ignore": supported values: "Allow", "Deny"'],
  );
  const b = await createAsAdmin(
    ts,
    VAPB,
    binding("ok", {
      paramRef: { selector: { matchLabels: { app: "x" } }, parameterNotFoundAction: "Allow" },
      validationActions: ["Warn", "Audit"],
    }),
  );
  assertEquals(b.spec.paramRef.parameterNotFoundAction, "Allow");
});

Deno.test("admissionregistration: a policy's status is written only through /status", async () => {
  await using ts = await testServer({ controllers: WITHOUT_POLICY_STATUS });
  const created = await createAsAdmin(ts, VAP, {
    ...policy("st"),
    status: { observedGeneration: 9 },
  });
  assertEquals(created.status, {});
  const status = { observedGeneration: 1, typeChecking: { expressionWarnings: [] } };
  const put = await ts.json("PUT", `${VAP}/st/status`, {
    body: { ...created, spec: { ...created.spec, failurePolicy: "Ignore" }, status },
  });
  assertEquals(put.status, 200, JSON.stringify(put.body));
  assertEquals(put.body.status, status);
  assertEquals(put.body.spec.failurePolicy, "Fail", "a status write keeps the spec");
  assertEquals(put.body.metadata.generation, 1);
  // The main resource keeps the stored status and bumps the generation on a spec change.
  const main = await ts.json("PUT", `${VAP}/st`, {
    body: { ...put.body, spec: { ...put.body.spec, failurePolicy: "Ignore" }, status: {} },
  });
  assertEquals(main.status, 200, JSON.stringify(main.body));
  assertEquals(main.body.status, status);
  assertEquals(main.body.spec.failurePolicy, "Ignore");
  assertEquals(main.body.metadata.generation, 2);
  const patched = await ts.json("PATCH", `${VAP}/st/status`, {
    body: { status: { observedGeneration: 2 } },
    headers: { "Content-Type": "application/merge-patch+json" },
  });
  assertEquals(patched.status, 200, JSON.stringify(patched.body));
  assertEquals(patched.body.status.observedGeneration, 2);
  const bad = await ts.json("PATCH", `${VAP}/st/status`, {
    body: { status: { typeChecking: { expressionWarnings: [{ fieldRef: "", warning: "w" }] } } },
    headers: { "Content-Type": "application/merge-patch+json" },
  });
  assertEquals(bad.status, 422, JSON.stringify(bad.body));
  assert(
    causes(bad.body).includes("status.typeChecking.expressionWarnings[0].fieldRef: Required value"),
    JSON.stringify(causes(bad.body)),
  );
});

Deno.test("admissionregistration: protobuf GET of a webhook configuration", async () => {
  await using ts = await testServer();
  await createAsAdmin(ts, MWC, mwc("pb"));
  for (
    const accept of ["application/vnd.kubernetes.protobuf", "application/vnd.platform.protobuf"]
  ) {
    const res = await ts.request("GET", `${MWC}/pb`, { headers: { Accept: accept } });
    assertEquals(res.status, 200);
    const obj = decodeObject(new Uint8Array(await res.arrayBuffer())) as any;
    const json = (await ts.json("GET", `${MWC}/pb`)).body;
    assertEquals(obj.kind, "MutatingWebhookConfiguration");
    assertEquals(obj.webhooks, json.webhooks);
  }
});

Deno.test("admissionregistration: server-side apply of a webhook configuration", async () => {
  await using ts = await testServer();
  const yaml = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: applied
webhooks:
- name: applied.example.com
  clientConfig:
    url: https://hook.example.com/validate
  rules:
  - operations: ["CREATE", "UPDATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["configmaps"]
  sideEffects: None
  admissionReviewVersions: ["v1"]
`;
  const apply = (body: string, manager: string) =>
    ts.json("PATCH", `${K8S_VWC}/applied?fieldManager=${manager}`, {
      body,
      headers: { "Content-Type": "application/apply-patch+yaml" },
    });
  const first = await apply(yaml, "tool");
  assertEquals(first.status, 201, JSON.stringify(first.body));
  assertEquals(first.body.webhooks[0].timeoutSeconds, 10);
  assertEquals(first.body.webhooks[0].rules[0].scope, "*");
  assertEquals(first.body.metadata.managedFields[0].manager, "tool");
  const second = await apply(
    yaml.replace("sideEffects: None", "sideEffects: None\n  timeoutSeconds: 7"),
    "tool",
  );
  assertEquals(second.status, 200, JSON.stringify(second.body));
  assertEquals(second.body.webhooks[0].timeoutSeconds, 7);
  assertEquals(second.body.metadata.generation, 2);
  // Another manager changing the same field conflicts.
  const other = await apply(
    yaml.replace("sideEffects: None", "sideEffects: None\n  timeoutSeconds: 3"),
    "other",
  );
  assertEquals(other.status, 409, JSON.stringify(other.body));
  const invalid = await apply(yaml.replace("sideEffects: None", "sideEffects: Some"), "tool");
  assertEquals(invalid.status, 422, JSON.stringify(invalid.body));
});

const VWC_YAML = (apiVersion: string, name: string) =>
  `apiVersion: ${apiVersion}
kind: ValidatingWebhookConfiguration
metadata:
  name: ${name}
webhooks:
- name: ${name}.hooks.example.com
  clientConfig:
    service:
      namespace: default
      name: hooks
      path: /validate
  rules:
  - operations: ["CREATE"]
    apiGroups: ["apps"]
    apiVersions: ["v1"]
    resources: ["deployments"]
  sideEffects: None
  admissionReviewVersions: ["v1"]
`;

Deno.test({
  name: "kubectl: apply -f a ValidatingWebhookConfiguration, get validatingwebhookconfigurations",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using env = await kubectlEnv();
  const { ok } = env;
  assertEquals(
    await ok(["apply", "-f", "-"], VWC_YAML("admissionregistration.platform.io/v1", "deploys")),
    "validatingwebhookconfiguration.admissionregistration.platform.io/deploys created\n",
  );
  // The Kubernetes spelling, as manifests written for kube have it.
  const k8s = await ok(["apply", "-f", "-"], VWC_YAML("admissionregistration.k8s.io/v1", "kube"));
  assert(
    /validatingwebhookconfiguration\.admissionregistration\.k8s\.io\/kube created/.test(k8s),
    k8s,
  );
  // Applied again: kubectl resends the atomic `rules` list (the stored one has the defaulted
  // scope), which defaults to what is stored: the object is the same.
  assert(
    /deploys (unchanged|configured)\n$/.test(
      await ok(["apply", "-f", "-"], VWC_YAML("admissionregistration.platform.io/v1", "deploys")),
    ),
  );
  assertEquals(
    await ok([
      "get",
      "validatingwebhookconfiguration",
      "deploys",
      "-o",
      "jsonpath={.metadata.generation}",
    ]),
    "1",
  );
  const table = await ok(["get", "validatingwebhookconfigurations"]);
  const lines = table.trimEnd().split("\n");
  assert(/^NAME\s+WEBHOOKS\s+AGE$/.test(lines[0]), table);
  assert(lines.some((l) => /^deploys\s+1\s+\S+$/.test(l)), table);
  assert(lines.some((l) => /^kube\s+1\s+\S+$/.test(l)), table);
  const yaml = await ok(["get", "validatingwebhookconfiguration", "deploys", "-o", "yaml"]);
  assert(yaml.includes("timeoutSeconds: 10"), yaml);
  assert(yaml.includes("port: 443"), yaml);
  assertEquals(
    await ok(["api-resources", "--api-group=admissionregistration.k8s.io", "-o", "name"]),
    [
      "mutatingwebhookconfigurations",
      "validatingadmissionpolicies",
      "validatingadmissionpolicybindings",
      "validatingwebhookconfigurations",
    ].map((r) => `${r}.admissionregistration.k8s.io\n`).join(""),
  );
  const byCategory = await ok(["get", "api-extensions", "-o", "name"]);
  assert(byCategory.includes("validatingwebhookconfiguration.admissionregistration"), byCategory);
  const refused = await env.kubectl(
    ["apply", "-f", "-"],
    VWC_YAML("admissionregistration.platform.io/v1", "bad").replace(
      "sideEffects: None",
      "sideEffects: Some",
    ),
  );
  assert(refused.code !== 0);
  assert(
    refused.stderr.includes('webhooks[0].sideEffects: Unsupported value: "Some"'),
    refused.stderr,
  );
});
