/** Loading the authorization configuration: valid files, and the file as a whole. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import { ConfigError } from "../config/mod.ts";
import { loadAuthorizationConfig } from "./authorization_config.ts";
import {
  config,
  type Doc,
  errors,
  fails,
  load,
  makeCa,
  setup,
  webhook,
} from "./authorization_config_testdata.ts";

// ---------------------------------------------------------------------------------------
// Valid files

Deno.test("a valid file gives the authorizers in order with durations in milliseconds", async () => {
  const cfg = await load(
    config([{ type: "RBAC", name: "rbac" }, webhook("guard"), { type: "AlwaysAllow", name: "a" }]),
  );
  assert.deepStrictEqual(cfg.authorizers.map((a) => [a.type, a.name]), [
    ["RBAC", "rbac"],
    ["Webhook", "guard"],
    ["AlwaysAllow", "a"],
  ]);
  const hook = cfg.authorizers[1];
  assert.ok(hook.type === "Webhook");
  const { connection, matchConditions, ...rest } = hook.webhook;
  assert.deepStrictEqual(rest, {
    timeout: 3000,
    authorizedTTL: 300_000,
    unauthorizedTTL: 30_000,
    subjectAccessReviewVersion: "v1",
    failurePolicy: "Deny",
  });
  assert.equal(connection.url, "https://127.0.0.1:9443/authorize");
  assert.deepStrictEqual(connection.caCerts, []);
  assert.equal(await connection.authorization?.(), "Bearer s3cret");
  assert.deepStrictEqual(matchConditions.map((c) => c.expression), [
    "request.user != 'system:anonymous'",
  ]);
});

Deno.test("the platform and kube apiVersions, v1beta1 and v1, are accepted", async () => {
  for (
    const apiVersion of [
      "apiserver.platform.io/v1beta1",
      "apiserver.platform.io/v1",
      "apiserver.config.k8s.io/v1beta1",
      "apiserver.config.k8s.io/v1",
    ]
  ) {
    const cfg = await load(config([{ type: "AlwaysDeny", name: "deny" }], { apiVersion }));
    assert.deepStrictEqual(cfg.authorizers, [{ type: "AlwaysDeny", name: "deny" }]);
  }
});

Deno.test("a JSON file is read as well", async () => {
  const cfg = await load(JSON.stringify(config([webhook("json")])));
  assert.equal(cfg.authorizers[0].name, "json");
});

Deno.test("optional webhook fields may be left out", async () => {
  // No match conditions: matchConditionSubjectAccessReviewVersion is not needed (as kube).
  const cfg = await load(config([
    webhook("a", {
      matchConditions: undefined,
      matchConditionSubjectAccessReviewVersion: undefined,
    }),
    webhook("b", { matchConditions: [], subjectAccessReviewVersion: "v1beta1" }),
  ]));
  for (const a of cfg.authorizers) {
    assert.ok(a.type === "Webhook" && a.webhook.matchConditions.length === 0);
  }
  assert.ok(cfg.authorizers[1].type === "Webhook");
  assert.equal(cfg.authorizers[1].webhook.subjectAccessReviewVersion, "v1beta1");
});

Deno.test("Webhook authorizers may repeat; timeout may be 30s; failurePolicy NoOpinion", async () => {
  const cfg = await load(config([
    webhook("one", { timeout: "30s", failurePolicy: "NoOpinion" }),
    webhook("two"),
  ]));
  assert.equal(cfg.authorizers.length, 2);
  assert.ok(cfg.authorizers[0].type === "Webhook");
  assert.equal(cfg.authorizers[0].webhook.timeout, 30_000);
  assert.equal(cfg.authorizers[0].webhook.failurePolicy, "NoOpinion");
});

Deno.test("a relative kubeConfigFile resolves against the file's directory", async () => {
  await using tmp = await setup(config([webhook()]));
  const cfg = await loadAuthorizationConfig(join(tmp.dir, "authz.yaml"), { cwd: "/" });
  assert.equal(cfg.authorizers.length, 1);
  const absolute = config([webhook("abs", {
    connectionInfo: { type: "KubeConfigFile", kubeConfigFile: join(tmp.dir, "webhook.kubeconfig") },
  })]);
  await Deno.writeTextFile(join(tmp.dir, "abs.yaml"), stringify(absolute));
  assert.equal((await loadAuthorizationConfig("abs.yaml", { cwd: tmp.dir })).authorizers.length, 1);
});

Deno.test("InClusterConfig uses the service account's settings", async () => {
  await using tmp = await setup("");
  const caPem = await makeCa(tmp.dir);
  await Deno.writeTextFile(join(tmp.dir, "ca.crt"), caPem);
  await Deno.writeTextFile(join(tmp.dir, "token"), "sa-token\n");
  const env = (name: string) =>
    ({ KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" })[name];
  const doc = config([webhook("pod", { connectionInfo: { type: "InClusterConfig" } })]);
  const cfg = await load(doc, { inCluster: { env, dir: tmp.dir } });
  const hook = cfg.authorizers[0];
  assert.ok(hook.type === "Webhook");
  assert.equal(hook.webhook.connection.url, "https://10.0.0.1/");
  assert.deepStrictEqual(hook.webhook.connection.caCerts, [caPem]);
  assert.equal(await hook.webhook.connection.authorization?.(), "Bearer sa-token");

  assert.deepStrictEqual(await errors(doc, { inCluster: { env: () => undefined } }), [
    "authz.yaml: authorizers[0].webhook.connectionInfo.type: InClusterConfig: not running in a " +
    "cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set",
  ]);
  const missingDir = join(tmp.dir, "nope");
  assert.deepStrictEqual(await errors(doc, { inCluster: { env, dir: missingDir } }), [
    `authz.yaml: authorizers[0].webhook.connectionInfo.type: InClusterConfig: cannot read ` +
    `${JSON.stringify(join(missingDir, "ca.crt"))}: No such file or directory`,
  ]);
});

Deno.test("the example in config/ is valid but for its kubeconfig, which is not here", async () => {
  const example = new URL("../../config/authorization-config.yaml", import.meta.url).pathname;
  await assert.rejects(
    loadAuthorizationConfig(example),
    new ConfigError(
      `${example}: authorizers[0].webhook.connectionInfo.kubeConfigFile: ` +
        '"/etc/platform/policy-webhook.kubeconfig": cannot read the file: No such file or directory',
    ),
  );
});

// ---------------------------------------------------------------------------------------
// The file as a whole

Deno.test("unreadable, empty, non-mapping and malformed files", async () => {
  await assert.rejects(
    loadAuthorizationConfig("missing.yaml", { cwd: "/nonexistent" }),
    new ConfigError(
      '--authorization-config: cannot read "missing.yaml": No such file or directory',
    ),
  );
  await fails(
    "",
    "authz.yaml: the file is empty; expected apiVersion: apiserver.platform.io/v1beta1 and " +
      "kind: AuthorizationConfiguration",
  );
  await fails("- a\n- b\n", "authz.yaml: expected a mapping, got a list");
  const [bad] = await errors("authorizers: [\n");
  assert.match(bad, /^authz\.yaml:\d+:\d+: invalid YAML: /);
});

Deno.test("apiVersion and kind", async () => {
  await fails(
    config([{ type: "RBAC", name: "rbac" }], { apiVersion: "apiserver.platform.io/v1alpha1" }),
    'authz.yaml: apiVersion: "apiserver.platform.io/v1alpha1" is not one of ' +
      '"apiserver.platform.io/v1beta1", "apiserver.platform.io/v1", ' +
      '"apiserver.config.k8s.io/v1beta1", "apiserver.config.k8s.io/v1"',
  );
  await fails(
    config([{ type: "RBAC", name: "rbac" }], { kind: "AuthenticationConfiguration" }),
    'authz.yaml: kind: expected "AuthorizationConfiguration", got "AuthenticationConfiguration"',
  );
  await fails(
    { authorizers: [{ type: "RBAC", name: "rbac" }] },
    "authz.yaml: apiVersion: required field is missing",
    "authz.yaml: kind: required field is missing",
  );
});

Deno.test("unknown fields are errors, with a hint for near misses", async () => {
  await fails(
    config([{ type: "RBAC", name: "rbac", mode: "x" }], { Authorizers: [] }),
    "authz.yaml: authorizers[0].mode: unknown field",
    'authz.yaml: Authorizers: unknown field (did you mean "authorizers"?)',
  );
  const hook = webhook("w", { authorizedTtl: "1m", extra: 1 });
  (hook.webhook as Doc).connectionInfo = {
    type: "KubeConfigFile",
    kubeconfigFile: "webhook.kubeconfig",
  };
  (hook.webhook as Doc).matchConditions = [{ expression: "true", name: "x" }];
  await fails(
    config([hook]),
    "authz.yaml: authorizers[0].webhook.connectionInfo.kubeconfigFile: unknown field " +
      '(did you mean "kubeConfigFile"?)',
    "authz.yaml: authorizers[0].webhook.matchConditions[0].name: unknown field",
    'authz.yaml: authorizers[0].webhook.authorizedTtl: unknown field (did you mean "authorizedTTL"?)',
    "authz.yaml: authorizers[0].webhook.extra: unknown field",
    "authz.yaml: authorizers[0].webhook.connectionInfo.kubeConfigFile: required with type " +
      "KubeConfigFile",
  );
});

Deno.test("every problem is reported, each with the file and the field path", async () => {
  await fails(
    config([
      webhook("a", { timeout: "45s" }),
      { type: "RBAC", name: "Bad_Name" },
      webhook("c", { failurePolicy: "Ignore", subjectAccessReviewVersion: "v2" }),
    ]),
    'authz.yaml: authorizers[0].webhook.timeout: "45s" must be > 0s and <= 30s',
    'authz.yaml: authorizers[1].name: "Bad_Name" is not a DNS-1123 label (at most 63 ' +
      'lower-case letters, digits and "-", starting and ending with a letter or digit)',
    'authz.yaml: authorizers[2].webhook.subjectAccessReviewVersion: "v2" is not one of "v1", ' +
      '"v1beta1"',
    'authz.yaml: authorizers[2].webhook.failurePolicy: "Ignore" is not one of "NoOpinion", "Deny"',
  );
});
