import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigError } from "./config_error.ts";
import { loadServerConfig } from "./server_config.ts";
import type { ServerConfig } from "./server_config_fields.ts";
import {
  ADMISSION_PLUGIN_NAMES,
  checkAdmissionPluginName,
  enabledAdmissionPlugins,
} from "./admission_plugins.ts";

const KNOWN = "known plugins: NamespaceLifecycle, EventRateLimit, CertificateApproval, " +
  "CertificateSigning, MutatingAdmissionWebhook, ValidatingAdmissionPolicy, " +
  "ValidatingAdmissionWebhook";

async function tempDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "platform-admission-flags-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

async function load(argv: string[], cwd: string): Promise<ServerConfig> {
  const cfg = await loadServerConfig(argv, { cwd });
  if ("help" in cfg) throw new Error("unexpected help");
  return cfg;
}

async function errorOf(argv: string[], cwd: string): Promise<string> {
  try {
    await loadServerConfig(argv, { cwd });
  } catch (err) {
    assert(err instanceof ConfigError, String(err));
    return err.message;
  }
  throw new Error(`no error for ${argv.join(" ")}`);
}

async function writeConfig(dir: string, body: string): Promise<string> {
  await Deno.writeTextFile(
    join(dir, "platform.yaml"),
    `apiVersion: platform.io/v1alpha1\nkind: ServerConfiguration\n${body}`,
  );
  return "platform.yaml";
}

Deno.test("the plugins run in kube's order; EventRateLimit is off unless enabled", () => {
  assert.deepEqual(enabledAdmissionPlugins(), [
    "NamespaceLifecycle",
    "CertificateApproval",
    "CertificateSigning",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
  ]);
  assert.deepEqual(
    enabledAdmissionPlugins(["ValidatingAdmissionWebhook", "EventRateLimit"], [
      "NamespaceLifecycle",
      "CertificateSigning",
    ]),
    [
      "EventRateLimit",
      "CertificateApproval",
      "MutatingAdmissionWebhook",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionWebhook",
    ],
  );
  assert.equal(checkAdmissionPluginName("EventRateLimit"), "EventRateLimit");
  assert.throws(
    () => checkAdmissionPluginName("PodSecurity"),
    new Error(`plugin "PodSecurity" is unknown (${KNOWN})`),
  );
  assert.equal(ADMISSION_PLUGIN_NAMES.length, 7);
});

Deno.test("--enable-admission-plugins and --disable-admission-plugins: comma lists, repeatable", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "admission.yaml"), "x: 1\n");
  const cfg = await load([
    "--enable-admission-plugins=EventRateLimit, ValidatingAdmissionWebhook",
    "--enable-admission-plugins",
    "EventRateLimit",
    "--disable-admission-plugins=NamespaceLifecycle,CertificateApproval",
    "--admission-control-config-file=admission.yaml",
  ], dir.path);
  assert.deepEqual(cfg.enableAdmissionPlugins, ["EventRateLimit", "ValidatingAdmissionWebhook"]);
  assert.deepEqual(cfg.disableAdmissionPlugins, ["NamespaceLifecycle", "CertificateApproval"]);
  // Only read here; its contents are checked at start and by check-config (lib/admission).
  assert.equal(cfg.admissionControlConfigFile, join(dir.path, "admission.yaml"));
});

Deno.test("the admission fields of the configuration file; flags override them", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "admission.yaml"), "x: 1\n");
  const file = await writeConfig(
    dir.path,
    "enableAdmissionPlugins: [EventRateLimit]\ndisableAdmissionPlugins: [CertificateSigning]\n" +
      "admissionControlConfigFile: admission.yaml\n",
  );
  const cfg = await load(["--config", file], dir.path);
  assert.deepEqual(cfg.enableAdmissionPlugins, ["EventRateLimit"]);
  assert.deepEqual(cfg.disableAdmissionPlugins, ["CertificateSigning"]);
  assert.equal(cfg.admissionControlConfigFile, join(dir.path, "admission.yaml"));
  const over = await load(
    ["--config", file, "--disable-admission-plugins=NamespaceLifecycle"],
    dir.path,
  );
  assert.deepEqual(over.disableAdmissionPlugins, ["NamespaceLifecycle"]);
  assert.deepEqual(over.enableAdmissionPlugins, ["EventRateLimit"]);
});

Deno.test("unknown plugins, a plugin both enabled and disabled, an unreadable file: refused", async () => {
  await using dir = await tempDir();
  const cases: [string[], string][] = [
    [
      ["--enable-admission-plugins=EventRateLimit,AlwaysPullImages"],
      `--enable-admission-plugins: plugin "AlwaysPullImages" is unknown (${KNOWN})`,
    ],
    [
      ["--disable-admission-plugins=namespacelifecycle"],
      `--disable-admission-plugins: plugin "namespacelifecycle" is unknown (${KNOWN})`,
    ],
    [
      [
        "--enable-admission-plugins=EventRateLimit,MutatingAdmissionWebhook",
        "--disable-admission-plugins=MutatingAdmissionWebhook",
      ],
      '--disable-admission-plugins: "MutatingAdmissionWebhook" is also in ' +
      "--enable-admission-plugins (a plugin is enabled or disabled, not both)",
    ],
    [
      ["--admission-control-config-file=nope.yaml"],
      '--admission-control-config-file: cannot read "nope.yaml": No such file or directory',
    ],
  ];
  for (const [argv, message] of cases) assert.equal(await errorOf(argv, dir.path), message);

  const file = await writeConfig(
    dir.path,
    "enableAdmissionPlugins: [EventRateLimit, Foo]\n",
  );
  assert.equal(
    await errorOf(["--config", file], dir.path),
    `platform.yaml: enableAdmissionPlugins[1]: plugin "Foo" is unknown (${KNOWN})`,
  );
  await writeConfig(dir.path, "disableAdmissionPlugins: EventRateLimit\n");
  assert.equal(
    await errorOf(["--config", file], dir.path),
    'platform.yaml: disableAdmissionPlugins: expected a list, got "EventRateLimit"',
  );
  await writeConfig(dir.path, "disableAdmissionPlugins: [EventRateLimit]\n");
  assert.equal(
    await errorOf(["--config", file, "--enable-admission-plugins=EventRateLimit"], dir.path),
    'platform.yaml: disableAdmissionPlugins: "EventRateLimit" is also in ' +
      "--enable-admission-plugins (a plugin is enabled or disabled, not both)",
  );
});
