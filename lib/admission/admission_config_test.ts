import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigError } from "../config/mod.ts";
import { loadAdmissionConfig, loadAdmissionSettings } from "./admission_config.ts";
import type { Webhook } from "./webhook/webhook.ts";

async function tempDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "platform-admission-config-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

const HEAD = "apiVersion: apiserver.config.platform.io/v1\nkind: AdmissionConfiguration\n";
const ERL = "apiVersion: eventratelimit.admission.platform.io/v1alpha1\nkind: Configuration\n";

/** `plugins:` entries with one EventRateLimit configuration given inline. */
function erlInline(body: string): string {
  const indented = (ERL + body).trimEnd().split("\n").map((l) => `      ${l}`).join("\n");
  return `${HEAD}plugins:\n  - name: EventRateLimit\n    configuration:\n${indented}\n`;
}

async function errorOf(dir: string, text: string, name = "admission.yaml"): Promise<string> {
  await Deno.writeTextFile(join(dir, name), text);
  try {
    await loadAdmissionConfig(name, { cwd: dir });
  } catch (err) {
    assert(err instanceof ConfigError, String(err));
    return err.message;
  }
  throw new Error(`no error for:\n${text}`);
}

Deno.test("AdmissionConfiguration: EventRateLimit inline and from a path, defaults", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(
    join(dir.path, "erl.json"),
    JSON.stringify({
      apiVersion: "eventratelimit.admission.k8s.io/v1alpha1",
      kind: "Configuration",
      limits: [{ type: "Server", qps: 5, burst: 10, cacheSize: 7 }, {
        type: "User",
        qps: 1,
        burst: 2,
      }],
    }),
  );
  for (const version of ["apiserver.config.k8s.io/v1", "apiserver.k8s.io/v1alpha1"]) {
    await Deno.writeTextFile(
      join(dir.path, "a.yaml"),
      `apiVersion: ${version}\nkind: AdmissionConfiguration\nplugins:\n` +
        "  - name: EventRateLimit\n    path: erl.json\n",
    );
    const cfg = await loadAdmissionConfig("a.yaml", { cwd: dir.path });
    assert.deepEqual(cfg.plugins, ["EventRateLimit"]);
    assert.deepEqual(cfg.eventRateLimit, {
      limits: [
        { type: "Server", qps: 5, burst: 10, cacheSize: 4096 },
        { type: "User", qps: 1, burst: 2, cacheSize: 4096 },
      ],
    });
  }
  await Deno.writeTextFile(
    join(dir.path, "b.yaml"),
    erlInline("limits:\n- {type: Namespace, qps: 3, burst: 4, cacheSize: 9}\n"),
  );
  const inline = await loadAdmissionConfig(join(dir.path, "b.yaml"));
  assert.deepEqual(inline.eventRateLimit, {
    limits: [{ type: "Namespace", qps: 3, burst: 4, cacheSize: 9 }],
  });
  // No plugins at all is a valid file.
  await Deno.writeTextFile(join(dir.path, "c.yaml"), HEAD);
  assert.deepEqual(await loadAdmissionConfig(join(dir.path, "c.yaml")), {
    plugins: [],
    webhookCredentials: {},
  });
});

Deno.test("AdmissionConfiguration: the file's own rules, with field paths", async () => {
  await using dir = await tempDir();
  const f = "admission.yaml";
  const cases: [string, string][] = [
    [
      "",
      `${f}: the file is empty; expected apiVersion: apiserver.config.platform.io/v1 and ` +
      "kind: AdmissionConfiguration",
    ],
    ["- a\n", `${f}: expected a mapping, got a list`],
    [
      "apiVersion: v1\nkind: AdmissionConfiguration\n",
      `${f}: apiVersion: Unsupported value: "v1": supported values: ` +
      '"apiserver.config.platform.io/v1", "apiserver.config.k8s.io/v1", ' +
      '"apiserver.k8s.io/v1alpha1"',
    ],
    [
      "apiVersion: apiserver.config.platform.io/v1\nkind: Admission\n",
      `${f}: kind: Unsupported value: "Admission": supported values: "AdmissionConfiguration"`,
    ],
    [`${HEAD}plugin: []\n`, `${f}: plugin: unknown field`],
    [`${HEAD}plugins: {}\n`, `${f}: plugins: Invalid value: "<mapping>": must be a list`],
    [`${HEAD}plugins:\n- path: x.yaml\n`, `${f}: plugins[0].name: Required value`],
    [
      `${HEAD}plugins:\n- name: PodSecurity\n  path: x.yaml\n`,
      `${f}: plugins[0].name: Unsupported value: "PodSecurity": supported values: ` +
      '"NamespaceLifecycle", "EventRateLimit", "CertificateApproval", "CertificateSigning", ' +
      '"MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook"',
    ],
    [
      erlInline("limits: [{type: Server, qps: 1, burst: 1}]\n") +
      "  - name: EventRateLimit\n    path: x.yaml\n",
      `${f}: plugins[1].name: Duplicate value: "EventRateLimit"`,
    ],
    [
      `${HEAD}plugins:\n- name: EventRateLimit\n`,
      `${f}: plugins[0]: Required value: configuration or path`,
    ],
    [
      `${HEAD}plugins:\n- name: EventRateLimit\n  path: x.yaml\n  configuration: {}\n`,
      `${f}: plugins[0]: Invalid value: "EventRateLimit": give configuration or path, not both`,
    ],
    [
      `${HEAD}plugins:\n- name: NamespaceLifecycle\n  configuration: {}\n`,
      `${f}: plugins[0].name: Invalid value: "NamespaceLifecycle": this plugin takes no ` +
      "configuration",
    ],
    [
      `${HEAD}plugins:\n- name: EventRateLimit\n  configuration: 5\n`,
      `${f}: plugins[0].configuration: Invalid value: 5: must be a mapping`,
    ],
    [
      `${HEAD}plugins:\n- name: EventRateLimit\n  path: nope.yaml\n`,
      `${f}: plugins[0].path: "nope.yaml": cannot read: No such file or directory`,
    ],
  ];
  for (const [text, message] of cases) assert.equal(await errorOf(dir.path, text), message);
});

Deno.test("EventRateLimit configuration: every rule, kube's words", async () => {
  await using dir = await tempDir();
  const at = "admission.yaml: plugins[0].configuration";
  const cases: [string, string][] = [
    ["", `${at}.limits: Required value`],
    ["limits: []\n", `${at}.limits: Invalid value: []: must not be empty`],
    ["limits: [{qps: 1, burst: 1}]\n", `${at}.limits[0].type: Required value`],
    [
      "limits: [{type: Pod, qps: 1, burst: 1}]\n",
      `${at}.limits[0].type: Unsupported value: "Pod": supported values: "Server", ` +
      '"Namespace", "User", "SourceAndObject"',
    ],
    ["limits: [{type: User, burst: 1}]\n", `${at}.limits[0].qps: Required value`],
    [
      "limits: [{type: User, qps: 0, burst: 1}]\n",
      `${at}.limits[0].qps: Invalid value: 0: must be positive`,
    ],
    [
      "limits: [{type: User, qps: 1.5, burst: 1}]\n",
      `${at}.limits[0].qps: Invalid value: 1.5: must be an integer`,
    ],
    [
      "limits: [{type: User, qps: 1, burst: 2147483648}]\n",
      `${at}.limits[0].burst: Invalid value: 2147483648: must not be greater than 2147483647`,
    ],
    ["limits: [{type: User, qps: 1}]\n", `${at}.limits[0].burst: Required value`],
    [
      "limits: [{type: User, qps: 1, burst: -1}]\n",
      `${at}.limits[0].burst: Invalid value: -1: must be positive`,
    ],
    [
      "limits: [{type: User, qps: 1, burst: 1, cacheSize: -1}]\n",
      `${at}.limits[0].cacheSize: Invalid value: -1: must not be negative`,
    ],
    [
      'limits: [{type: User, qps: "1", burst: 1}]\n',
      `${at}.limits[0].qps: Invalid value: "1": must be a number`,
    ],
    [
      "limits: [{type: User, qps: 1, burst: 1, size: 1}]\n",
      `${at}.limits[0].size: unknown field`,
    ],
  ];
  for (const [body, message] of cases) {
    assert.equal(await errorOf(dir.path, erlInline(body)), message, body);
  }
  // cacheSize is not checked for Server (kube ignores it there).
  await Deno.writeTextFile(
    join(dir.path, "ok.yaml"),
    erlInline("limits: [{type: Server, qps: 1, burst: 1, cacheSize: -1}]\n"),
  );
  assert.ok((await loadAdmissionConfig(join(dir.path, "ok.yaml"))).eventRateLimit);
  // apiVersion and kind of the plugin's configuration.
  assert.equal(
    await errorOf(
      dir.path,
      `${HEAD}plugins:\n- name: EventRateLimit\n  configuration: {kind: Config, limits: ` +
        "[{type: Server, qps: 1, burst: 1}]}\n",
    ),
    `${at}.apiVersion: Required value: supported values: ` +
      '"eventratelimit.admission.platform.io/v1alpha1", "eventratelimit.admission.k8s.io/v1alpha1"' +
      `\n${at}.kind: Unsupported value: "Config": supported values: "Configuration"`,
  );
  // Several problems are all reported, one per line; from a path, the file is named.
  await Deno.writeTextFile(
    join(dir.path, "erl.yaml"),
    ERL + "limits: [{type: User, qps: 0, burst: 0}]\n",
  );
  assert.equal(
    await errorOf(dir.path, `${HEAD}plugins:\n- name: EventRateLimit\n  path: erl.yaml\n`),
    'admission.yaml: plugins[0].path: "erl.yaml": limits[0].qps: Invalid value: 0: must be ' +
      'positive\nadmission.yaml: plugins[0].path: "erl.yaml": limits[0].burst: Invalid value: ' +
      "0: must be positive",
  );
});

Deno.test("WebhookAdmissionConfiguration: kubeConfigFile, absolute, read and matched", async () => {
  await using dir = await tempDir();
  const kubeconfig = join(dir.path, "webhooks.kubeconfig");
  await Deno.writeTextFile(join(dir.path, "token"), "from-file\n");
  await Deno.writeTextFile(
    kubeconfig,
    "users:\n- name: hook.example.com:8443\n  user: {tokenFile: token}\n" +
      "- name: '*'\n  user: {token: default}\n",
  );
  const webhook = (url: string, type: "mutating" | "validating" = "validating") =>
    ({ type, clientConfig: { url, caBundle: "", serverName: "" } }) as unknown as Webhook;
  const plugin = (name: string, file: string, kind = "WebhookAdmissionConfiguration") =>
    `- name: ${name}\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n` +
    `    kind: ${kind}\n    kubeConfigFile: ${file}\n`;
  await Deno.writeTextFile(
    join(dir.path, "a.yaml"),
    `${HEAD}plugins:\n${plugin("ValidatingAdmissionWebhook", kubeconfig)}`,
  );
  const cfg = await loadAdmissionConfig(join(dir.path, "a.yaml"));
  const validating = cfg.webhookCredentials.validating!;
  assert.equal(cfg.webhookCredentials.mutating, undefined);
  assert.deepEqual(validating(webhook("https://hook.example.com:8443/x")), { token: "from-file" });
  assert.deepEqual(validating(webhook("https://other.example.com/x")), { token: "default" });

  const at = "admission.yaml: plugins[0].configuration";
  assert.equal(
    await errorOf(dir.path, `${HEAD}plugins:\n${plugin("MutatingAdmissionWebhook", "rel.yaml")}`),
    `${at}.kubeConfigFile: Invalid value: "rel.yaml": must be an absolute file path`,
  );
  assert.equal(
    await errorOf(
      dir.path,
      `${HEAD}plugins:\n- name: MutatingAdmissionWebhook\n  configuration:\n` +
        "    apiVersion: apiserver.config.platform.io/v1\n    kind: WebhookAdmissionConfiguration\n",
    ),
    `${at}.kubeConfigFile: Required value`,
  );
  const missing = join(dir.path, "missing");
  assert.equal(
    await errorOf(dir.path, `${HEAD}plugins:\n${plugin("MutatingAdmissionWebhook", missing)}`),
    `${at}.kubeConfigFile: ${JSON.stringify(missing)}: cannot read the file: No such file or ` +
      "directory",
  );
  await Deno.writeTextFile(kubeconfig, "users:\n- name: x\n  user: {client-certificate: c}\n");
  await Deno.writeTextFile(join(dir.path, "c"), "cert");
  assert.equal(
    await errorOf(dir.path, `${HEAD}plugins:\n${plugin("MutatingAdmissionWebhook", kubeconfig)}`),
    `${at}.kubeConfigFile: ${JSON.stringify(kubeconfig)}: users[0].user.client-key: required ` +
      "with client-certificate",
  );
  // kube's v1alpha1 kind is accepted.
  await Deno.writeTextFile(kubeconfig, "users: []\n");
  await Deno.writeTextFile(
    join(dir.path, "b.yaml"),
    `${HEAD}plugins:\n${plugin("MutatingAdmissionWebhook", kubeconfig, "WebhookAdmission")}`,
  );
  assert.ok((await loadAdmissionConfig(join(dir.path, "b.yaml"))).webhookCredentials.mutating);
});

Deno.test("admission settings: enabled plugins, EventRateLimit needs a configuration", async () => {
  await using dir = await tempDir();
  const defaults = await loadAdmissionSettings({});
  assert.deepEqual(defaults.enabled, [
    "NamespaceLifecycle",
    "CertificateApproval",
    "CertificateSigning",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
  ]);
  const refused = async (opts: Parameters<typeof loadAdmissionSettings>[0], message: string) => {
    await assert.rejects(() => loadAdmissionSettings(opts), new ConfigError(message));
  };
  await refused(
    { enable: ["EventRateLimit"] },
    "--enable-admission-plugins: EventRateLimit needs a configuration: give " +
      "--admission-control-config-file with a plugins entry for it",
  );
  const empty = join(dir.path, "empty.yaml");
  await Deno.writeTextFile(empty, HEAD);
  await refused(
    { enable: ["EventRateLimit"], configFile: empty },
    `${empty}: plugins: EventRateLimit is enabled and needs an entry here`,
  );
  await refused(
    { disable: ["Nope"] },
    '--disable-admission-plugins: plugin "Nope" is unknown (known plugins: NamespaceLifecycle, ' +
      "EventRateLimit, CertificateApproval, CertificateSigning, MutatingAdmissionWebhook, " +
      "ValidatingAdmissionPolicy, ValidatingAdmissionWebhook)",
  );
  await refused(
    { enable: ["EventRateLimit"], disable: ["EventRateLimit"] },
    '--disable-admission-plugins: "EventRateLimit" is also in --enable-admission-plugins ' +
      "(a plugin is enabled or disabled, not both)",
  );
  const file = join(dir.path, "erl.yaml");
  await Deno.writeTextFile(file, erlInline("limits: [{type: Server, qps: 1, burst: 1}]\n"));
  const on = await loadAdmissionSettings({
    enable: ["EventRateLimit"],
    disable: ["NamespaceLifecycle"],
    configFile: file,
  });
  assert.deepEqual(on.enabled.slice(0, 2), ["EventRateLimit", "CertificateApproval"]);
  // A configuration for a plugin that is off is checked, and unused.
  const off = await loadAdmissionSettings({ configFile: file });
  assert.equal(off.enabled.includes("EventRateLimit"), false);
});
