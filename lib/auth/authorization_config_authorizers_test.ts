/** The authorization configuration's `authorizers[]` and their `webhook` fields. */

import assert from "node:assert/strict";
import { config, errors, fails, load, webhook } from "./authorization_config_testdata.ts";

// ---------------------------------------------------------------------------------------
// authorizers[]

Deno.test("authorizers: required, a list, at least one", async () => {
  await fails(config(undefined), "authz.yaml: authorizers: required field is missing");
  await fails(config({ type: "RBAC" }), "authz.yaml: authorizers: expected a list, got a mapping");
  await fails(config([]), "authz.yaml: authorizers: at least one authorizer is required");
  await fails(config(["RBAC"]), 'authz.yaml: authorizers[0]: expected a mapping, got "RBAC"');
});

Deno.test("authorizers[].type: required, known, Node unsupported, only Webhook repeats", async () => {
  await fails(
    config([{ name: "x" }]),
    "authz.yaml: authorizers[0].type: required field is missing",
  );
  await fails(
    config([{ type: "ABAC", name: "x" }]),
    'authz.yaml: authorizers[0].type: "ABAC" is not one of "RBAC", "Webhook", "AlwaysAllow", ' +
      '"AlwaysDeny"',
  );
  await fails(
    config([{ type: "Node", name: "node" }, { type: "RBAC", name: "rbac" }]),
    'authz.yaml: authorizers[0].type: "Node" is not supported by this server',
  );
  await fails(
    config([{ type: "RBAC", name: "a" }, { type: "RBAC", name: "b" }]),
    'authz.yaml: authorizers[1].type: "RBAC" is already the type of authorizers[0]',
  );
  await fails(
    config([{ type: "AlwaysAllow", name: "a" }, webhook("w"), { type: "AlwaysAllow", name: "b" }]),
    'authz.yaml: authorizers[2].type: "AlwaysAllow" is already the type of authorizers[0]',
  );
  await fails(
    config([{ type: 1, name: "x" }]),
    "authz.yaml: authorizers[0].type: expected a string, got 1",
  );
});

Deno.test("authorizers[].name: required, a DNS-1123 label, unique", async () => {
  await fails(
    config([{ type: "RBAC" }]),
    "authz.yaml: authorizers[0].name: required field is missing",
  );
  await fails(
    config([{ type: "RBAC", name: "" }]),
    "authz.yaml: authorizers[0].name: must not be empty",
  );
  await fails(
    config([{ type: "RBAC", name: "a.b" }]),
    'authz.yaml: authorizers[0].name: "a.b" is not a DNS-1123 label (at most 63 lower-case ' +
      'letters, digits and "-", starting and ending with a letter or digit)',
  );
  const long = "a".repeat(64);
  const [tooLong] = await errors(config([{ type: "RBAC", name: long }]));
  assert.ok(tooLong.startsWith(`authz.yaml: authorizers[0].name: "${long}" is not a DNS-1123`));
  assert.equal(
    (await load(config([{ type: "RBAC", name: "a".repeat(63) }]))).authorizers.length,
    1,
  );
  await fails(
    config([{ type: "RBAC", name: "same" }, webhook("same")]),
    'authz.yaml: authorizers[1].name: "same" is already the name of authorizers[0]',
  );
});

Deno.test("authorizers[].webhook: required iff type is Webhook", async () => {
  await fails(
    config([{ type: "Webhook", name: "w" }]),
    "authz.yaml: authorizers[0].webhook: required with type Webhook",
  );
  await fails(
    config([{ type: "RBAC", name: "rbac", webhook: webhook().webhook }]),
    "authz.yaml: authorizers[0].webhook: only allowed with type Webhook",
  );
  await fails(
    config([{ type: "Webhook", name: "w", webhook: "yes" }]),
    'authz.yaml: authorizers[0].webhook: expected a mapping, got "yes"',
  );
});

// ---------------------------------------------------------------------------------------
// webhook

Deno.test("webhook durations: required, parsable, > 0, timeout <= 30s", async () => {
  const at = "authz.yaml: authorizers[0].webhook";
  for (const field of ["timeout", "authorizedTTL", "unauthorizedTTL"]) {
    await fails(
      config([webhook("w", { [field]: undefined })]),
      `${at}.${field}: required field is missing`,
    );
    await fails(
      config([webhook("w", { [field]: "0s" })]),
      `${at}.${field}: "0s" must be > 0s` +
        (field === "timeout" ? " and <= 30s" : ""),
    );
    await fails(
      config([webhook("w", { [field]: "soon" })]),
      `${at}.${field}: "soon" is not a duration (like "30s", "5m" or "1h30m")`,
    );
    await fails(
      config([webhook("w", { [field]: 5 })]),
      `${at}.${field}: expected a duration such as "30s", got 5`,
    );
  }
  await fails(
    config([webhook("w", { timeout: "30001ms" })]),
    `${at}.timeout: "30001ms" must be > 0s and <= 30s`,
  );
  await fails(
    config([webhook("w", { timeout: "1m" })]),
    `${at}.timeout: "1m" must be > 0s and <= 30s`,
  );
  const cfg = await load(config([webhook("w", { authorizedTTL: "1h", unauthorizedTTL: "1ms" })]));
  assert.ok(cfg.authorizers[0].type === "Webhook");
  assert.equal(cfg.authorizers[0].webhook.authorizedTTL, 3_600_000);
  assert.equal(cfg.authorizers[0].webhook.unauthorizedTTL, 1);
});

Deno.test("webhook versions and failurePolicy", async () => {
  const at = "authz.yaml: authorizers[0].webhook";
  await fails(
    config([webhook("w", { subjectAccessReviewVersion: undefined })]),
    `${at}.subjectAccessReviewVersion: required field is missing`,
  );
  await fails(
    config([webhook("w", { subjectAccessReviewVersion: "" })]),
    `${at}.subjectAccessReviewVersion: must not be empty (one of "v1", "v1beta1")`,
  );
  await fails(
    config([webhook("w", { matchConditionSubjectAccessReviewVersion: "v1beta1" })]),
    `${at}.matchConditionSubjectAccessReviewVersion: "v1beta1" is not one of "v1"`,
  );
  await fails(
    config([webhook("w", { matchConditionSubjectAccessReviewVersion: undefined })]),
    `${at}.matchConditionSubjectAccessReviewVersion: required when matchConditions are given`,
  );
  await fails(
    config([webhook("w", { failurePolicy: undefined })]),
    `${at}.failurePolicy: required field is missing`,
  );
  await fails(
    config([webhook("w", { failurePolicy: "deny" })]),
    `${at}.failurePolicy: "deny" is not one of "NoOpinion", "Deny"`,
  );
});

Deno.test("webhook.connectionInfo: type and kubeConfigFile", async () => {
  const at = "authz.yaml: authorizers[0].webhook.connectionInfo";
  await fails(
    config([webhook("w", { connectionInfo: undefined })]),
    "authz.yaml: authorizers[0].webhook.connectionInfo: required field is missing",
  );
  await fails(
    config([webhook("w", { connectionInfo: { kubeConfigFile: "webhook.kubeconfig" } })]),
    `${at}.type: required field is missing`,
  );
  await fails(
    config([webhook("w", { connectionInfo: { type: "Kubeconfig", kubeConfigFile: "x" } })]),
    `${at}.type: "Kubeconfig" is not one of "KubeConfigFile", "KubeConfig", "InClusterConfig"`,
  );
  // The specification's spelling names a file just as kube's does.
  await fails(
    config([webhook("w", { connectionInfo: { type: "KubeConfig", kubeConfigFile: "" } })]),
    `${at}.kubeConfigFile: required with type KubeConfigFile`,
  );
  await fails(
    config([webhook("w", { connectionInfo: { type: "KubeConfigFile", kubeConfigFile: "" } })]),
    `${at}.kubeConfigFile: required with type KubeConfigFile`,
  );
  await fails(
    config([webhook("w", {
      connectionInfo: { type: "InClusterConfig", kubeConfigFile: "webhook.kubeconfig" },
    })]),
    `${at}.kubeConfigFile: only allowed with type KubeConfigFile`,
  );
  const [missing] = await errors(
    config([
      webhook("w", { connectionInfo: { type: "KubeConfigFile", kubeConfigFile: "nope.yaml" } }),
    ]),
  );
  assert.match(
    missing,
    /^authz\.yaml: authorizers\[0\]\.webhook\.connectionInfo\.kubeConfigFile: ".*\/nope\.yaml": cannot read the file: No such file or directory$/,
  );
});

Deno.test("webhook.matchConditions: at most 64, non-empty, unique, compiling to a bool", async () => {
  const at = "authz.yaml: authorizers[0].webhook.matchConditions";
  const many = Array.from({ length: 65 }, (_, i) => ({ expression: `request.user != 'u${i}'` }));
  await fails(
    config([webhook("w", { matchConditions: many })]),
    `${at}: 65 conditions; at most 64 are allowed`,
  );
  const cfg = await load(config([webhook("w", { matchConditions: many.slice(0, 64) })]));
  assert.ok(cfg.authorizers[0].type === "Webhook");
  assert.equal(cfg.authorizers[0].webhook.matchConditions.length, 64);

  await fails(
    config([webhook("w", { matchConditions: [{ expression: "  " }, {}] })]),
    `${at}[1].expression: required field is missing`,
    `${at}[0].expression: must not be empty`,
  );
  await fails(
    config([webhook("w", { matchConditions: [{ expression: "true" }, { expression: "true" }] })]),
    `${at}[1].expression: duplicates ${at.slice("authz.yaml: ".length)}[0].expression`,
  );
  const [syntax] = await errors(
    config([
      webhook("w", {
        matchConditions: [{ expression: "true" }, { expression: "request.user ==" }],
      }),
    ]),
  );
  assert.match(
    syntax,
    /^authz\.yaml: authorizers\[0\]\.webhook\.matchConditions\[1\]\.expression: does not compile \(line 1, column \d+\): ./,
  );
  const [notBool] = await errors(
    config([webhook("w", { matchConditions: [{ expression: "request.user" }] })]),
  );
  assert.match(
    notBool,
    /^authz\.yaml: authorizers\[0\]\.webhook\.matchConditions\[0\]\.expression: does not compile/,
  );
  const [unknownVar] = await errors(
    config([webhook("w", { matchConditions: [{ expression: "claims.sub == 'x'" }] })]),
  );
  assert.match(unknownVar, /matchConditions\[0\]\.expression: does not compile/);
});
