import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import { ConfigError } from "../config/flags.ts";
import { ensurePki } from "../certificates/pki.ts";
import {
  type AuthorizationConfig,
  loadAuthorizationConfig,
  type LoadAuthorizationConfigOptions,
} from "./authorization_config.ts";

const KUBECONFIG = {
  apiVersion: "v1",
  kind: "Config",
  clusters: [{ name: "authz", cluster: { server: "https://127.0.0.1:9443/authorize" } }],
  users: [{ name: "apiserver", user: { token: "s3cret" } }],
  contexts: [{ name: "webhook", context: { cluster: "authz", user: "apiserver" } }],
  "current-context": "webhook",
};

type Doc = Record<string, unknown>;

/** A valid webhook entry; `patch` replaces webhook fields (undefined deletes one). */
function webhook(name = "guard", patch: Doc = {}): Doc {
  const fields: Doc = {
    timeout: "3s",
    authorizedTTL: "5m",
    unauthorizedTTL: "30s",
    subjectAccessReviewVersion: "v1",
    matchConditionSubjectAccessReviewVersion: "v1",
    failurePolicy: "Deny",
    connectionInfo: { type: "KubeConfigFile", kubeConfigFile: "webhook.kubeconfig" },
    matchConditions: [{ expression: "request.user != 'system:anonymous'" }],
    ...patch,
  };
  for (const [k, v] of Object.entries(fields)) if (v === undefined) delete fields[k];
  return { type: "Webhook", name, webhook: fields };
}

function config(authorizers: unknown, top: Doc = {}): Doc {
  return {
    apiVersion: "apiserver.platform.io/v1beta1",
    kind: "AuthorizationConfiguration",
    authorizers,
    ...top,
  };
}

/** Writes `authz.yaml` (a document or raw text) and a kubeconfig beside it in a temp dir. */
async function setup(content: Doc | string, kubeconfig: Doc | string = KUBECONFIG) {
  const dir = await Deno.makeTempDir({ prefix: "authz-config-test-" });
  await Deno.writeTextFile(
    join(dir, "authz.yaml"),
    typeof content === "string" ? content : stringify(content),
  );
  await Deno.writeTextFile(
    join(dir, "webhook.kubeconfig"),
    typeof kubeconfig === "string" ? kubeconfig : stringify(kubeconfig),
  );
  return {
    dir,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

async function load(
  content: Doc | string,
  opts: { kubeconfig?: Doc | string } & LoadAuthorizationConfigOptions = {},
): Promise<AuthorizationConfig> {
  await using tmp = await setup(content, opts.kubeconfig);
  return await loadAuthorizationConfig("authz.yaml", { cwd: tmp.dir, ...opts });
}

/** Every line of the ConfigError that loading throws. */
async function errors(
  content: Doc | string,
  opts: { kubeconfig?: Doc | string } & LoadAuthorizationConfigOptions = {},
): Promise<string[]> {
  try {
    await load(content, opts);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${err}`);
    return err.message.split("\n");
  }
  throw new Error("expected loading to fail");
}

async function fails(content: Doc | string, ...expected: string[]) {
  assert.deepStrictEqual(await errors(content), expected);
}

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

async function makeCa(dir: string): Promise<string> {
  const pki = await ensurePki({
    dataDir: join(dir, "data"),
    sans: [],
    bindAddress: "127.0.0.1",
    logger: { info: () => {} },
  });
  return pki.caCertPem;
}

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

// ---------------------------------------------------------------------------------------
// The kubeconfig a webhook names

Deno.test("kubeconfig: context selection, server and credentials are checked", async () => {
  const at = "authz.yaml: authorizers[0].webhook.connectionInfo.kubeConfigFile";
  const kubeconfigErrors = async (kubeconfig: Doc | string) => {
    const lines = await errors(config([webhook()]), { kubeconfig });
    assert.equal(lines.length, 1);
    const m = lines[0].match(/^([^"]*)"[^"]*\/webhook\.kubeconfig": (.*)$/);
    assert.ok(m, lines[0]);
    assert.equal(m[1], `${at}: `);
    return m[2];
  };
  const withCluster = (cluster: Doc) => ({
    ...KUBECONFIG,
    clusters: [{ name: "authz", cluster }],
  });
  const withUser = (user: Doc) => ({ ...KUBECONFIG, users: [{ name: "apiserver", user }] });

  assert.equal(await kubeconfigErrors("a: [\n"), "invalid YAML at line 2, column 1");
  assert.equal(
    await kubeconfigErrors({ ...KUBECONFIG, "current-context": "other" }),
    'current-context: "other" is not the name of an entry of contexts',
  );
  assert.equal(
    await kubeconfigErrors({ ...KUBECONFIG, "current-context": undefined, contexts: [] }),
    "current-context: required when there is not exactly one context",
  );
  assert.equal(
    await kubeconfigErrors({ ...KUBECONFIG, clusters: [] }),
    'contexts[0].context.cluster: "authz" is not the name of an entry of clusters',
  );
  assert.equal(
    await kubeconfigErrors(withCluster({})),
    "clusters[0].cluster.server: required field is missing",
  );
  assert.equal(
    await kubeconfigErrors(withCluster({ server: "ftp://x" })),
    'clusters[0].cluster.server: "ftp://x" must be an https or http URL',
  );
  assert.equal(
    await kubeconfigErrors(withCluster({ server: "https://a:b@x" })),
    "clusters[0].cluster.server: must not carry credentials",
  );
  assert.equal(
    await kubeconfigErrors(withCluster({ server: "https://x", "insecure-skip-tls-verify": true })),
    "clusters[0].cluster.insecure-skip-tls-verify: is not supported; give the webhook's CA",
  );
  assert.equal(
    await kubeconfigErrors(
      withCluster({ server: "https://x", "certificate-authority-data": "%%" }),
    ),
    "clusters[0].cluster.certificate-authority-data: is not valid base64",
  );
  assert.equal(
    await kubeconfigErrors(
      withCluster({ server: "https://x", "certificate-authority-data": btoa("not a cert") }),
    ),
    "clusters[0].cluster.certificate-authority-data: has no PEM CERTIFICATE block",
  );
  assert.equal(
    await kubeconfigErrors(withCluster({ server: "https://x", "certificate-authority": "ca.pem" })),
    'clusters[0].cluster.certificate-authority: cannot read "ca.pem": No such file or directory',
  );
  assert.equal(
    await kubeconfigErrors(withUser({ "client-certificate": "c.pem" })),
    'users[0].user.client-certificate: cannot read "c.pem": No such file or directory',
  );
  assert.equal(
    await kubeconfigErrors(withUser({ "client-key-data": btoa("x") })),
    "users[0].user: client-key needs client-certificate",
  );
  assert.equal(
    await kubeconfigErrors(withUser({ exec: { command: "get-token" } })),
    "users[0].user.exec: is not supported",
  );
  assert.equal(
    await kubeconfigErrors(withUser({ token: "t", username: "u", password: "p" })),
    "users[0].user: give a token or a username and password, not both",
  );
});

Deno.test("kubeconfig: files resolve against its directory; token files and passwords", async () => {
  await using tmp = await setup(config([webhook()]));
  const caPem = await makeCa(tmp.dir);
  await Deno.mkdir(join(tmp.dir, "creds"));
  await Deno.writeTextFile(join(tmp.dir, "creds", "ca.pem"), caPem);
  await Deno.writeTextFile(join(tmp.dir, "creds", "token"), "from-file\n");
  const write = (user: Doc) =>
    Deno.writeTextFile(
      join(tmp.dir, "webhook.kubeconfig"),
      stringify({
        ...KUBECONFIG,
        clusters: [{
          name: "authz",
          cluster: { server: "127.0.0.1:9443", "certificate-authority": "creds/ca.pem" },
        }],
        users: [{ name: "apiserver", user }],
      }),
    );
  const connection = async () => {
    const cfg = await loadAuthorizationConfig("authz.yaml", { cwd: tmp.dir });
    assert.ok(cfg.authorizers[0].type === "Webhook");
    return cfg.authorizers[0].webhook.connection;
  };

  await write({ tokenFile: "creds/token" });
  const byFile = await connection();
  assert.equal(byFile.url, "https://127.0.0.1:9443/");
  assert.deepStrictEqual(byFile.caCerts, [caPem]);
  assert.equal(await byFile.authorization?.(), "Bearer from-file");

  await write({ username: "api", password: "pässword" });
  const basic = await connection();
  const encoded = btoa(String.fromCharCode(...new TextEncoder().encode("api:pässword")));
  assert.equal(await basic.authorization?.(), `Basic ${encoded}`);

  await write({});
  assert.equal((await connection()).authorization, undefined);
});

Deno.test("kubeconfig: errors never show credentials", async () => {
  const lines = await errors(config([webhook()]), {
    kubeconfig: {
      ...KUBECONFIG,
      users: [{ name: "apiserver", user: { token: "s3cret", exec: {} } }],
    },
  });
  assert.ok(lines.every((l) => !l.includes("s3cret")));
});
