import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError } from "./config_error.ts";
import { FLAGS } from "./flag_table.ts";
import { helpText, loadServerConfig } from "./server_config.ts";
import { clusterSigningFiles, DEFAULTS, type ServerConfig } from "./server_config_fields.ts";
import { isControllerEnabled } from "./controller_selection.ts";
import { checkPortFree, describeListenError } from "./listen.ts";
import { fieldPath } from "./schema_issues.ts";
import { ensurePki } from "../certificates/pki.ts";

const TESTDATA = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "testdata", "config");

async function tempDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "server_config_test_" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

async function load(argv: string[], cwd: string): Promise<ServerConfig> {
  const cfg = await loadServerConfig(argv, { cwd });
  assert(!("help" in cfg), "unexpected help");
  return cfg;
}

/** The message of the ConfigError that loading `argv` throws. */
async function errorOf(argv: string[], cwd: string): Promise<string> {
  try {
    await loadServerConfig(argv, { cwd });
  } catch (err) {
    assert(err instanceof ConfigError, `expected ConfigError, got ${err}`);
    assert(!err.message.includes("\n"), `message is one line: ${err.message}`);
    return err.message;
  }
  throw new assert.AssertionError({ message: `loading ${argv.join(" ")} did not fail` });
}

async function writeConfig(dir: string, name: string, body: string): Promise<string> {
  await Deno.writeTextFile(
    join(dir, name),
    `apiVersion: platform.io/v1alpha1\nkind: ServerConfiguration\n${body}`,
  );
  return name;
}

Deno.test("defaults apply without flags or file", async () => {
  await using dir = await tempDir();
  const cfg = await load([], dir.path);
  assert.deepEqual(cfg, {
    dataDir: join(dir.path, "data"),
    bindAddress: "127.0.0.1",
    securePort: 6443,
    kubernetesGroupNames: true,
    tlsSANs: [],
    enableAdmissionPlugins: [],
    etcdCompactionInterval: 300_000,
    etcdPrefix: "/registry",
    etcdServers: [],
    disableAdmissionPlugins: [],
    runtimeConfig: new Map(),
    featureGates: new Map([
      ["AllAlpha", false],
      ["AllBeta", false],
      ["WatchList", false],
      ["APIResponseCompression", true],
      ["StructuredAuthenticationConfiguration", true],
      ["StructuredAuthorizationConfiguration", true],
      ["AnonymousAuthConfigurableEndpoints", true],
    ]),
    storage: "file",
    historyRetention: 300_000,
    controllers: ["*"],
    serviceClusterIPRange: "10.0.0.0/24",
    serviceNodePortRange: "30000-32767",
    clusterSigningDuration: 8760 * 3_600_000,
    shutdownTimeout: 30_000,
    requestTimeout: 60_000,
    minRequestTimeout: 1800,
    maxRequestsInflight: 400,
    maxMutatingRequestsInflight: 200,
    maxConnections: 0,
    maxConnectionsPerClient: 0,
    maxRequestBodyBytes: 3_145_728,
    logLevel: "info",
  });
  assert.equal(DEFAULTS.maxRequestBodyBytes, 3145728);
});

Deno.test("--help and -h return the help text listing every flag with its default", async () => {
  for (const arg of ["--help", "-h"]) {
    const out = await loadServerConfig(["--secure-port=1", arg], { cwd: "/" });
    assert("help" in out);
    assert.equal(out.help, helpText());
  }
  const help = helpText();
  // A flag's entry runs from its line to the next flag's; it ends with its default.
  const entries = help.split("\n\nFeature gates")[0].split(/\n(?= {2}-)/);
  for (const flag of FLAGS) {
    const entry = entries.find((e) => e.startsWith(`  --${flag.name} `));
    assert(entry, `--${flag.name} is listed`);
    assert.match(entry, /\(default: [^)]+\)$/, `--${flag.name} shows its default`);
  }
  for (
    const [flag, def] of [
      ["data-dir", "./data"],
      ["bind-address", "127.0.0.1"],
      ["secure-port", "6443"],
      ["storage", "file"],
      ["history-retention", "5m"],
      ["controllers", "*"],
      ["service-cluster-ip-range", "10.0.0.0/24"],
      ["service-node-port-range", "30000-32767"],
      ["shutdown-timeout", "30s"],
      ["request-timeout", "60s"],
      ["max-request-body-bytes", "3145728"],
      ["log-level", "info"],
      ["tls-cert-file", "none"],
      ["feature-gates", "none"],
      ["client-ca-file", "none"],
      ["cluster-signing-cert-file", "<data-dir>/pki/ca.crt"],
      ["cluster-signing-key-file", "<data-dir>/pki/ca.key"],
      ["cluster-signing-apiserver-client-cert-file", "the cluster CA"],
      ["cluster-signing-duration", "8760h"],
    ]
  ) {
    const entry = entries.find((e) => e.startsWith(`  --${flag} `))!;
    assert(entry.endsWith(`(default: ${def})`), entry);
  }
  assert(help.split("\n").every((l) => l.length <= 100), "lines fit in 100 columns");
  assert.match(help, /\n {2}WatchList +alpha +false +\S/);
  assert.match(help, /-h, --help/);
});

Deno.test("the example file sets every field; paths resolve against its directory", async () => {
  await using dir = await tempDir();
  const cfg = await load(["--config", join(TESTDATA, "full.yaml")], dir.path);
  assert.equal(cfg.configFile, join(TESTDATA, "full.yaml"));
  assert.equal(cfg.dataDir, join(TESTDATA, "state"));
  assert.equal(cfg.bindAddress, "0.0.0.0");
  assert.equal(cfg.securePort, 7443);
  assert.deepEqual(cfg.tlsSANs, ["api.example.com", "10.0.0.5"]);
  assert.equal(cfg.tokenAuthFile, join(TESTDATA, "tokens.csv"));
  assert.equal(cfg.clientCAFile, join(TESTDATA, "signing-ca.crt"));
  assert.equal(cfg.clusterSigningCertFile, join(TESTDATA, "signing-ca.crt"));
  assert.equal(cfg.clusterSigningKeyFile, join(TESTDATA, "signing-ca.key"));
  assert.equal(cfg.clusterSigningDuration, 720 * 3_600_000);
  assert.deepEqual(cfg.runtimeConfig, new Map([["api/beta", true], ["apps/v1beta1", false]]));
  assert.equal(cfg.featureGates.get("WatchList"), true);
  assert.equal(cfg.featureGates.get("APIResponseCompression"), false);
  assert.equal(cfg.featureGates.get("AnonymousAuthConfigurableEndpoints"), true);
  assert.equal(cfg.storage, "memory");
  assert.equal(cfg.historyRetention, 600_000);
  assert.deepEqual(cfg.controllers, ["*", "-csrsigning"]);
  assert.equal(cfg.serviceClusterIPRange, "10.96.0.0/16,fd00:10::/108");
  assert.equal(cfg.serviceNodePortRange, "31000-31999");
  assert.equal(cfg.shutdownTimeout, 5_000);
  assert.equal(cfg.requestTimeout, 120_000);
  assert.equal(cfg.maxRequestBodyBytes, 1_048_576);
  assert.equal(cfg.logLevel, "debug");
});

Deno.test("the documented example config/platform.yaml loads", async () => {
  const example = join(TESTDATA, "..", "..", "config", "platform.yaml");
  await using dir = await tempDir();
  // Its tokenAuthFile is commented out; everything else must validate.
  const cfg = await load(["--config", example], dir.path);
  assert.equal(cfg.configFile, example);
});

Deno.test("flags override the file, the file overrides defaults", async () => {
  await using dir = await tempDir();
  const cfg = await load([
    "--config=" + join(TESTDATA, "full.yaml"),
    "--secure-port=0",
    "--data-dir",
    "rel/data",
    "--feature-gates=WatchList=false",
    "--runtime-config=apps/v1beta1=true",
    "--tls-san=flag.example",
    "--controllers=*",
    "--log-level=warn",
    "--storage=file",
    "--request-timeout=1s",
  ], dir.path);
  assert.equal(cfg.securePort, 0);
  assert.equal(cfg.dataDir, join(dir.path, "rel", "data")); // flags: relative to the CWD
  assert.equal(cfg.featureGates.get("WatchList"), false); // flag wins for this key…
  assert.equal(cfg.featureGates.get("APIResponseCompression"), false); // …file keeps others
  assert.deepEqual(cfg.runtimeConfig, new Map([["api/beta", true], ["apps/v1beta1", true]]));
  assert.deepEqual(cfg.tlsSANs, ["flag.example"]); // lists are replaced whole
  assert.deepEqual(cfg.controllers, ["*"]);
  assert.equal(cfg.logLevel, "warn");
  assert.equal(cfg.storage, "file");
  assert.equal(cfg.requestTimeout, 1000);
  // Untouched by flags: from the file.
  assert.equal(cfg.bindAddress, "0.0.0.0");
  assert.equal(cfg.shutdownTimeout, 5000);
  // Untouched by both: the default … none left in full.yaml, so check with a small file.
  await writeConfig(dir.path, "small.yaml", "securePort: 1234\n");
  const small = await load(["--config", "small.yaml", "--log-level", "error"], dir.path);
  assert.equal(small.securePort, 1234);
  assert.equal(small.logLevel, "error");
  assert.equal(small.shutdownTimeout, DEFAULTS.shutdownTimeout);
  assert.equal(small.dataDir, join(dir.path, "data"));
});

Deno.test("every flag parses its value", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "tokens.csv"), "t,u,1\n");
  const cfg = await load([
    "--data-dir=/srv/platform",
    "--bind-address=::1",
    "--secure-port=8443",
    "--tls-san=a.example,10.0.0.1",
    "--tls-san",
    " B.example , 0:0::2 ,a.example",
    "--token-auth-file=tokens.csv",
    "--runtime-config=api/all=false,v1,api/v1/pods=false",
    "--runtime-config=certificates.platform.io/v1beta1",
    "--feature-gates=AllAlpha=true",
    "--feature-gates",
    "AnonymousAuthConfigurableEndpoints=false",
    "--storage=memory",
    "--history-retention=1h30m",
    "--controllers=*,-csrsigning",
    "--controllers=csrapproving",
    "--service-cluster-ip-range=fd00::5/112",
    "--service-node-port-range= 20000 - 20100 ",
    "--shutdown-timeout=0",
    "--request-timeout=500ms",
    "--max-request-body-bytes=1024",
    "--log-level=debug",
  ], dir.path);
  assert.equal(cfg.dataDir, "/srv/platform");
  assert.equal(cfg.bindAddress, "::1");
  assert.equal(cfg.securePort, 8443);
  assert.deepEqual(cfg.tlsSANs, ["a.example", "10.0.0.1", "b.example", "::2"]);
  assert.equal(cfg.tokenAuthFile, join(dir.path, "tokens.csv"));
  assert.deepEqual(
    cfg.runtimeConfig,
    new Map([
      ["api/all", false],
      ["v1", true],
      ["v1/pods", false],
      ["certificates.platform.io/v1beta1", true],
    ]),
  );
  assert.equal(cfg.featureGates.get("WatchList"), true);
  assert.equal(cfg.featureGates.get("AnonymousAuthConfigurableEndpoints"), false);
  assert.equal(cfg.historyRetention, 5_400_000);
  assert.deepEqual(cfg.controllers, ["*", "-csrsigning", "csrapproving"]);
  assert.equal(cfg.serviceClusterIPRange, "fd00::/112");
  assert.equal(cfg.serviceNodePortRange, "20000-20100");
  assert.equal(cfg.shutdownTimeout, 0);
  assert.equal(cfg.requestTimeout, 500);
  assert.equal(cfg.maxRequestBodyBytes, 1024);
  assert.equal(cfg.storage, "memory");
  assert.equal(cfg.logLevel, "debug");
});

Deno.test("flag errors name the flag and the value", async () => {
  await using dir = await tempDir();
  const cases: [string[], string][] = [
    [["--secure-port", "abc"], '--secure-port: "abc" is not a port number (0-65535)'],
    [["--secure-port=65536"], '--secure-port: "65536" is not a port number (0-65535)'],
    [["--nope=1"], 'unknown flag "--nope" (see --help)'],
    [
      ["--service-cluster-ip-range=10.0.0.0/33"],
      '--service-cluster-ip-range: "10.0.0.0/33" is not a CIDR (e.g. 10.0.0.0/24 or fd00::/108)',
    ],
    [
      ["--service-cluster-ip-range=10.0.0.0/8"],
      "--service-cluster-ip-range: 10.0.0.0/8 is too large; for 32-bit addresses, the mask must be >= 12",
    ],
    [
      ["--service-node-port-range=32767-30000"],
      '--service-node-port-range: "32767-30000" is not a port range (e.g. 30000-32767)',
    ],
    [["--insecure-port", "8080"], 'unknown flag "--insecure-port" (see --help)'],
    [["--data-dir"], "--data-dir: missing value"],
    [["--data-dir", "--secure-port=1"], "--data-dir: missing value"],
    [["serve"], 'unexpected argument "serve": serve takes only flags'],
    [["--data-dir="], "--data-dir: must not be empty"],
    [
      ["--bind-address=not an address"],
      '--bind-address: "not an address" is not an IP address or DNS name',
    ],
    [["--tls-san=ok.example,bad_name"], '--tls-san: "bad_name" is not an IP address or DNS name'],
    [["--storage=disk"], '--storage: "disk" is not one of "file", "memory", "etcd3"'],
    [["--storage=etcd3"], "--storage: etcd3 needs --etcd-servers (etcd client URLs)"],
    [
      ["--etcd-servers=ftp://x:1"],
      '--etcd-servers: "ftp://x:1": etcd servers are http:// or https:// URLs',
    ],
    [["--etcd-prefix=registry"], '--etcd-prefix: "registry" must start with "/"'],
    [["--log-level=trace"], '--log-level: "trace" is not one of "debug", "info", "warn", "error"'],
    [
      ["--history-retention=5 minutes"],
      '--history-retention: "5 minutes" is not a duration (like "30s", "5m" or "1h30m")',
    ],
    [["--request-timeout=0s"], '--request-timeout: "0s" must be longer than 0'],
    [
      ["--shutdown-timeout=-1s"],
      '--shutdown-timeout: "-1s" is not a duration (like "30s", "5m" or "1h30m")',
    ],
    [
      ["--max-request-body-bytes=3MB"],
      '--max-request-body-bytes: "3MB" is not a positive number of bytes',
    ],
    [
      ["--max-request-body-bytes=0"],
      '--max-request-body-bytes: "0" is not a positive number of bytes',
    ],
    [
      ["--controllers=*,CSR_signing"],
      '--controllers: "CSR_signing" is not a controller selector ("*", "name" or "-name"); ' +
      "the controllers are clusterrole-aggregation, csrapproving, csrsigning, " +
      "root-ca-cert-publisher, serviceaccount, validatingadmissionpolicy-status-controller",
    ],
    [
      ["--controllers=-csrcleaner"],
      '--controllers: "-csrcleaner" is not a controller selector ("*", "name" or "-name"); ' +
      "the controllers are clusterrole-aggregation, csrapproving, csrsigning, " +
      "root-ca-cert-publisher, serviceaccount, validatingadmissionpolicy-status-controller",
    ],
    [
      ["--feature-gates=WatchList=yes"],
      '--feature-gates: WatchList: "yes" is not a boolean (true or false)',
    ],
    [
      ["--feature-gates=WatchList"],
      '--feature-gates: missing bool value for "WatchList" (expected WatchList=true)',
    ],
    [
      ["--runtime-config=apps/v1=maybe"],
      '--runtime-config: apps/v1: "maybe" is not a boolean (true or false)',
    ],
    [["--config="], "--config: must not be empty"],
    [["--config", "x.yaml"], '--config: cannot read "x.yaml": No such file or directory'],
    [["--config", "."], '--config: cannot read ".": Is a directory'],
    [
      ["--token-auth-file=none.csv"],
      '--token-auth-file: cannot read "none.csv": No such file or directory',
    ],
    [["--cluster-signing-duration=0"], '--cluster-signing-duration: "0" must be longer than 0'],
    [
      ["--cluster-signing-duration=1y"],
      '--cluster-signing-duration: "1y" is not a duration (like "30s", "5m" or "1h30m")',
    ],
  ];
  for (const [argv, message] of cases) {
    assert.equal(await errorOf(argv, dir.path), message, argv.join(" "));
  }
  assert.match(
    await errorOf(["--feature-gates=Nope=true"], dir.path),
    /^--feature-gates: unknown feature gate "Nope" \(known: .*AllAlpha, AllBeta, .*WatchList\)$/,
  );
  assert.match(
    await errorOf(["--runtime-config=apps"], dir.path),
    /^--runtime-config: apps: "apps" is not a runtime-config key/,
  );
});

Deno.test("file errors name the file and the field path", async () => {
  await using dir = await tempDir();
  const cases: [string, string][] = [
    [
      "featureGates:\n  WatchList: yes\n",
      'c.yaml: featureGates.WatchList: expected boolean, got "yes"',
    ],
    ["featureGates:\n  Nope: true\n", 'c.yaml: featureGates.Nope: unknown feature gate "Nope"'],
    ["featureGates: [WatchList]\n", "c.yaml: featureGates: expected a mapping, got a list"],
    ["securePort: abc\n", 'c.yaml: securePort: expected number, got "abc"'],
    ["securePort: 70000\n", "c.yaml: securePort: 70000 is not a port number (0-65535)"],
    ["securePort: 1.5\n", "c.yaml: securePort: 1.5 is not a port number (0-65535)"],
    ["data-dir: /x\n", 'c.yaml: data-dir: unknown field (did you mean "dataDir"?)'],
    ["bogus: 1\n", "c.yaml: bogus: unknown field"],
    [
      "storage: disk\n",
      'c.yaml: storage: expected one of "file", "memory", "etcd3", got "disk"',
    ],
    ["logLevel: 3\n", 'c.yaml: logLevel: expected one of "debug", "info", "warn", "error", got 3'],
    ["tlsSANs: a.example\n", 'c.yaml: tlsSANs: expected a list, got "a.example"'],
    [
      "tlsSANs: [a.example, 'no way']\n",
      'c.yaml: tlsSANs[1]: "no way" is not an IP address or DNS name',
    ],
    ["tlsSANs: [a.example, 5]\n", "c.yaml: tlsSANs[1]: expected string, got 5"],
    [
      "controllers: ['*', '-Bad']\n",
      'c.yaml: controllers[1]: "-Bad" is not a controller selector ("*", "name" or "-name")',
    ],
    ["historyRetention: 5\n", "c.yaml: historyRetention: expected string, got 5"],
    [
      "historyRetention: 5 min\n",
      'c.yaml: historyRetention: "5 min" is not a duration (like "30s", "5m" or "1h30m")',
    ],
    [
      "runtimeConfig:\n  apps/v1: yes\n",
      'c.yaml: runtimeConfig["apps/v1"]: expected boolean, got "yes"',
    ],
    [
      "runtimeConfig:\n  apps: true\n",
      'c.yaml: runtimeConfig.apps: "apps" is not a runtime-config key',
    ],
    [
      "runtimeConfig: 'apps/v1=nah'\n",
      'c.yaml: runtimeConfig: apps/v1: "nah" is not a boolean (true or false)',
    ],
    [
      "runtimeConfig: 5\n",
      "c.yaml: runtimeConfig: expected a string or a mapping of keys to booleans, got 5",
    ],
    ["dataDir: ''\n", "c.yaml: dataDir: must not be empty"],
    ["dataDir: null\n", "c.yaml: dataDir: expected string, got null"],
    [
      "maxRequestBodyBytes: -5\n",
      "c.yaml: maxRequestBodyBytes: -5 is not a positive number of bytes",
    ],
    [
      "tokenAuthFile: missing.csv\n",
      'c.yaml: tokenAuthFile: cannot read "missing.csv": No such file or directory',
    ],
    ["tlsCertFile: a.pem\n", "c.yaml: tlsCertFile: tlsPrivateKeyFile must be given too"],
  ];
  for (const [body, message] of cases) {
    await writeConfig(dir.path, "c.yaml", body);
    const got = await errorOf(["--config", "c.yaml"], dir.path);
    assert(got.startsWith(message), `${JSON.stringify(body)}:\n got ${got}\nwant ${message}`);
  }

  const raw: [string, string][] = [
    [
      "",
      "c.yaml: the file is empty; expected apiVersion: platform.io/v1alpha1 and kind: ServerConfiguration",
    ],
    ["- a\n- b\n", "c.yaml: expected a mapping, got a list"],
    [
      "kind: ServerConfiguration\n",
      'c.yaml: apiVersion: required field is missing (expected "platform.io/v1alpha1")',
    ],
    [
      "apiVersion: v1\nkind: ServerConfiguration\n",
      'c.yaml: apiVersion: expected "platform.io/v1alpha1", got "v1"',
    ],
    [
      "apiVersion: platform.io/v1alpha1\nkind: Config\n",
      'c.yaml: kind: expected "ServerConfiguration", got "Config"',
    ],
    [
      "apiVersion: platform.io/v1alpha1\nkind: ServerConfiguration\nsecurePort: 1\nsecurePort: 2\n",
      "c.yaml:4:1: invalid YAML: Map keys must be unique",
    ],
    ["a: b: c\n", "c.yaml:1:4: invalid YAML: Nested mappings are not allowed in compact mappings"],
  ];
  for (const [text, message] of raw) {
    await Deno.writeTextFile(join(dir.path, "c.yaml"), text);
    assert.equal(await errorOf(["--config", "c.yaml"], dir.path), message, JSON.stringify(text));
  }

  // The sample files in testdata/.
  assert.equal(
    await errorOf(["--config", "bad_gate.yaml"], TESTDATA),
    'bad_gate.yaml: featureGates.WatchList: expected boolean, got "yes"',
  );
  assert.equal(
    await errorOf(["--config", "unknown_field.yaml"], TESTDATA),
    'unknown_field.yaml: data-dir: unknown field (did you mean "dataDir"?)',
  );
});

Deno.test("runtimeConfig accepts the flag's string form in the file", async () => {
  await using dir = await tempDir();
  await writeConfig(dir.path, "c.yaml", "runtimeConfig: 'api/alpha,apps/v1=false'\n");
  const cfg = await load(["--config", "c.yaml"], dir.path);
  assert.deepEqual(cfg.runtimeConfig, new Map([["api/alpha", true], ["apps/v1", false]]));
});

Deno.test("file paths resolve against the file, flag paths against the CWD", async () => {
  await using dir = await tempDir();
  await Deno.mkdir(join(dir.path, "etc"));
  await Deno.writeTextFile(join(dir.path, "etc", "tokens.csv"), "t,u,1\n");
  await Deno.writeTextFile(join(dir.path, "tokens.csv"), "t,u,1\n");
  await writeConfig(
    join(dir.path, "etc"),
    "c.yaml",
    "dataDir: ../var\ntokenAuthFile: tokens.csv\n",
  );
  const fromFile = await load(["--config", "etc/c.yaml"], dir.path);
  assert.equal(fromFile.dataDir, join(dir.path, "var"));
  assert.equal(fromFile.tokenAuthFile, join(dir.path, "etc", "tokens.csv"));
  const fromFlag = await load(
    ["--config", "etc/c.yaml", "--token-auth-file", "tokens.csv", "--data-dir", "d"],
    dir.path,
  );
  assert.equal(fromFlag.tokenAuthFile, join(dir.path, "tokens.csv"));
  assert.equal(fromFlag.dataDir, join(dir.path, "d"));
});

Deno.test("data dir must be a directory when it exists", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "file"), "");
  assert.equal(
    await errorOf(["--data-dir", "file"], dir.path),
    '--data-dir: "file" is not a directory',
  );
});

Deno.test("TLS files are checked with the flag or field that named them", async () => {
  await using dir = await tempDir();
  const pki = await ensurePki({
    dataDir: join(dir.path, "other"),
    sans: [],
    bindAddress: "127.0.0.1",
    logger: { info: () => {} },
  });
  await Deno.writeTextFile(join(dir.path, "good.crt"), pki.servingCertPem);
  await Deno.writeTextFile(join(dir.path, "good.key"), pki.servingKeyPem);
  await Deno.writeTextFile(join(dir.path, "x.pem"), "hello\n");

  const ok = await load(["--tls-cert-file=good.crt", "--tls-private-key-file=good.key"], dir.path);
  assert.equal(ok.tlsCertFile, join(dir.path, "good.crt"));
  assert.equal(ok.tlsPrivateKeyFile, join(dir.path, "good.key"));

  assert.equal(
    await errorOf(["--tls-cert-file=x.pem", "--tls-private-key-file=good.key"], dir.path),
    '--tls-cert-file: "x.pem" has no valid PEM CERTIFICATE block',
  );
  assert.equal(
    await errorOf(["--tls-private-key-file=good.key"], dir.path),
    "--tls-private-key-file: --tls-cert-file must be given too",
  );
  await writeConfig(dir.path, "c.yaml", "tlsCertFile: x.pem\ntlsPrivateKeyFile: good.key\n");
  assert.equal(
    await errorOf(["--config", "c.yaml"], dir.path),
    'c.yaml: tlsCertFile: "x.pem" has no valid PEM CERTIFICATE block',
  );
  // A flag replacing the bad file value fixes it.
  const fixed = await load(["--config", "c.yaml", "--tls-cert-file", "good.crt"], dir.path);
  assert.equal(fixed.tlsCertFile, join(dir.path, "good.crt"));
  await writeConfig(dir.path, "c.yaml", "tlsCertFile: good.crt\ntlsPrivateKeyFile: x.pem\n");
  assert.match(
    await errorOf(["--config", "c.yaml"], dir.path),
    /^c\.yaml: tlsPrivateKeyFile: "x\.pem" has no valid PEM PRIVATE KEY block/,
  );
});

Deno.test("the client CA file must hold certificates, or be the cluster CA to be", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "x.pem"), "hello\n");
  await Deno.copyFile(join(TESTDATA, "signing-ca.crt"), join(dir.path, "ca.crt"));
  const ok = await load(["--client-ca-file", "ca.crt"], dir.path);
  assert.equal(ok.clientCAFile, join(dir.path, "ca.crt"));
  // The cluster CA does not exist before the first start; naming it is fine.
  const cluster = await load(["--client-ca-file", "data/pki/ca.crt"], dir.path);
  assert.equal(cluster.clientCAFile, join(dir.path, "data", "pki", "ca.crt"));
  assert.equal(
    await errorOf(["--client-ca-file", "none.crt"], dir.path),
    '--client-ca-file: cannot read "none.crt": No such file or directory',
  );
  assert.equal(
    await errorOf(["--client-ca-file=x.pem"], dir.path),
    '--client-ca-file: "x.pem" has no valid PEM CERTIFICATE block',
  );
  await writeConfig(dir.path, "c.yaml", "clientCAFile: x.pem\n");
  assert.equal(
    await errorOf(["--config", "c.yaml"], dir.path),
    'c.yaml: clientCAFile: "x.pem" has no valid PEM CERTIFICATE block',
  );
});

Deno.test("signing CA files: pairs, one CA or one per signer, checked keys", async () => {
  await using dir = await tempDir();
  for (const name of ["signing-ca.crt", "signing-ca.key"]) {
    await Deno.copyFile(join(TESTDATA, name), join(dir.path, name));
  }
  const pki = await ensurePki({
    dataDir: join(dir.path, "other"),
    sans: [],
    bindAddress: "127.0.0.1",
    logger: { info: () => {} },
  });
  await Deno.writeTextFile(join(dir.path, "other.key"), pki.caKeyPem);
  const all = [
    "--cluster-signing-cert-file=signing-ca.crt",
    "--cluster-signing-key-file",
    "signing-ca.key",
  ];
  const one = await load(all, dir.path);
  assert.deepEqual(clusterSigningFiles(one), {
    clusterSigning: {
      certFile: join(dir.path, "signing-ca.crt"),
      keyFile: join(dir.path, "signing-ca.key"),
    },
  });
  const perSigner = await load([
    "--cluster-signing-nodeagent-serving-cert-file=signing-ca.crt",
    "--cluster-signing-nodeagent-serving-key-file=signing-ca.key",
    "--cluster-signing-apiserver-client-cert-file=other/pki/ca.crt",
    "--cluster-signing-apiserver-client-key-file=other.key",
  ], dir.path);
  assert.deepEqual(clusterSigningFiles(perSigner), {
    clusterSigningPerSigner: {
      "platform.io/nodeagent-serving": {
        certFile: join(dir.path, "signing-ca.crt"),
        keyFile: join(dir.path, "signing-ca.key"),
      },
      "platform.io/apiserver-client": {
        certFile: join(dir.path, "other", "pki", "ca.crt"),
        keyFile: join(dir.path, "other.key"),
      },
    },
  });
  assert.deepEqual(clusterSigningFiles(await load([], dir.path)), {});

  const cases: [string[], string][] = [
    [
      ["--cluster-signing-cert-file=signing-ca.crt"],
      "--cluster-signing-cert-file: --cluster-signing-key-file must be given too",
    ],
    [
      ["--cluster-signing-apiserver-client-nodeagent-key-file=signing-ca.key"],
      "--cluster-signing-apiserver-client-nodeagent-key-file: " +
      "--cluster-signing-apiserver-client-nodeagent-cert-file must be given too",
    ],
    [
      [...all, "--cluster-signing-apiserver-client-cert-file=signing-ca.crt"],
      "--cluster-signing-apiserver-client-cert-file: cannot be combined with " +
      "--cluster-signing-cert-file and --cluster-signing-key-file " +
      "(give one CA for every signer, or one per signer)",
    ],
    [
      ["--cluster-signing-cert-file=signing-ca.crt", "--cluster-signing-key-file=other.key"],
      '--cluster-signing-key-file: "other.key" does not match the certificate in "signing-ca.crt"',
    ],
    [
      [
        "--cluster-signing-nodeagent-serving-cert-file=none.crt",
        "--cluster-signing-nodeagent-serving-key-file=signing-ca.key",
      ],
      '--cluster-signing-nodeagent-serving-cert-file: cannot read "none.crt": ' +
      "No such file or directory",
    ],
  ];
  for (const [argv, message] of cases) {
    assert.equal(await errorOf(argv, dir.path), message, argv.join(" "));
  }
  await writeConfig(
    dir.path,
    "c.yaml",
    "clusterSigningCertFile: signing-ca.crt\nclusterSigningKeyFile: signing-ca.key\n" +
      "clusterSigningApiserverClientKeyFile: signing-ca.key\n" +
      "clusterSigningApiserverClientCertFile: signing-ca.crt\n",
  );
  assert.equal(
    await errorOf(["--config", "c.yaml"], dir.path),
    "c.yaml: clusterSigningApiserverClientCertFile: cannot be combined with " +
      "clusterSigningCertFile and clusterSigningKeyFile " +
      "(give one CA for every signer, or one per signer)",
  );
  // A flag naming the other: each is named where it came from.
  await writeConfig(dir.path, "c.yaml", "clusterSigningNodeagentServingCertFile: signing-ca.crt\n");
  assert.equal(
    await errorOf(["--config", "c.yaml", ...all], dir.path),
    "c.yaml: clusterSigningNodeagentServingCertFile: cannot be combined with " +
      "--cluster-signing-cert-file and --cluster-signing-key-file " +
      "(give one CA for every signer, or one per signer)",
  );
});

Deno.test("checkPortFree and describeListenError name the flag", () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = listener.addr.port;
    assert.throws(() => checkPortFree("127.0.0.1", port), (err: unknown) => {
      assert(err instanceof ConfigError);
      assert.equal(err.message, `--secure-port: 127.0.0.1:${port} is already in use`);
      return true;
    });
  } finally {
    listener.close();
  }
  checkPortFree("127.0.0.1", 0);
  assert.equal(
    describeListenError(new Deno.errors.AddrInUse("x"), "::1", 6443),
    "--secure-port: [::1]:6443 is already in use",
  );
  assert.equal(
    describeListenError(new Deno.errors.AddrNotAvailable("x"), "10.9.9.9", 6443),
    '--bind-address: "10.9.9.9" is not an address of this machine',
  );
  assert.equal(
    describeListenError(new Deno.errors.PermissionDenied("x"), "0.0.0.0", 443),
    "--secure-port: permission denied to listen on 0.0.0.0:443",
  );
});

Deno.test("Deno.serve's own listen error maps the same way", () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = listener.addr.port;
    let message = "";
    try {
      Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, () => new Response());
    } catch (err) {
      message = describeListenError(err, "127.0.0.1", port);
    }
    assert.equal(message, `--secure-port: 127.0.0.1:${port} is already in use`);
  } finally {
    listener.close();
  }
});

Deno.test("isControllerEnabled follows kube's selection rules", () => {
  assert.equal(isControllerEnabled(["*"], "csrsigning"), true);
  assert.equal(isControllerEnabled(["*", "-csrsigning"], "csrsigning"), false);
  assert.equal(isControllerEnabled(["*", "-csrsigning"], "csrapproving"), true);
  assert.equal(isControllerEnabled(["csrapproving"], "csrsigning"), false);
  assert.equal(isControllerEnabled(["csrapproving"], "csrapproving"), true);
  assert.equal(isControllerEnabled([], "csrsigning"), false);
  const opts = { disabledByDefault: ["bootstrapsigner"] };
  assert.equal(isControllerEnabled(["*"], "bootstrapsigner", opts), false);
  assert.equal(isControllerEnabled(["*", "bootstrapsigner"], "bootstrapsigner", opts), true);
});

Deno.test("fieldPath quotes keys that are not identifiers", () => {
  assert.equal(fieldPath(["featureGates", "WatchList"]), "featureGates.WatchList");
  assert.equal(fieldPath(["runtimeConfig", "apps/v1"]), 'runtimeConfig["apps/v1"]');
  assert.equal(fieldPath(["tlsSANs", 2]), "tlsSANs[2]");
});
