/** Loading the server configuration: defaults, help, the example files, flags over the file. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { FLAGS } from "./flag_table.ts";
import { helpText, loadServerConfig } from "./server_config.ts";
import { DEFAULTS } from "./server_config_fields.ts";
import { isControllerEnabled } from "./controller_selection.ts";
import { fieldPath } from "./schema_issues.ts";
import { errorOf, load, tempDir, TESTDATA, writeConfig } from "./server_config_testdata.ts";

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
    etcdCountMetricPollPeriod: 60_000,
    snapshotInterval: 0,
    snapshotRetention: 5,
    etcdPrefix: "/registry",
    etcdServers: [],
    disableAdmissionPlugins: [],
    runtimeConfig: new Map(),
    featureGates: new Map(),
    storage: "file",
    historyRetention: 300_000,
    controllers: ["*"],
    leaderElect: true,
    leaderElectLeaseDuration: 15_000,
    leaderElectRenewDeadline: 10_000,
    leaderElectRetryPeriod: 2_000,
    leaderElectResourceName: "platform-controllers",
    leaderElectResourceNamespace: "platform-system",
    serviceClusterIPRange: "10.0.0.0/24",
    serviceNodePortRange: "30000-32767",
    clusterSigningDuration: 8760 * 3_600_000,
    shutdownTimeout: 30_000,
    requestTimeout: 60_000,
    minRequestTimeout: 1800,
    maxRequestsInflight: 400,
    workers: 1,
    workerMaxHeapMb: 0,
    maxMutatingRequestsInflight: 200,
    maxConnections: 0,
    maxConnectionsPerClient: 0,
    maxRequestBodyBytes: 3_145_728,
    logLevel: "info",
    auditLogMaxage: 0,
    auditLogMaxbackup: 0,
    auditLogMaxsize: 0,
    auditLogMode: "blocking",
    auditLogBatchBufferSize: 10_000,
    auditWebhookMode: "batch",
    auditWebhookBatchBufferSize: 10_000,
    auditWebhookBatchMaxSize: 400,
    auditWebhookBatchMaxWait: 30_000,
    auditWebhookInitialBackoff: 10_000,
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
  assert.match(help, /\n {2}WatchList=true\|false \(BETA - default=true\)\n +\S/);
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
  assert.deepEqual(
    cfg.featureGates,
    new Map([["WatchList", true], ["APIResponseCompression", false]]),
  );
  assert.equal(cfg.storage, "memory");
  assert.equal(cfg.historyRetention, 600_000);
  assert.deepEqual(cfg.controllers, ["*", "-csrsigning"]);
  assert.equal(cfg.leaderElect, false);
  assert.equal(cfg.leaderElectLeaseDuration, 30_000);
  assert.equal(cfg.leaderElectRenewDeadline, 20_000);
  assert.equal(cfg.leaderElectRetryPeriod, 4_000);
  assert.equal(cfg.leaderElectResourceName, "controllers.example.com");
  assert.equal(cfg.leaderElectResourceNamespace, "ops");
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
  assert.deepEqual(
    cfg.featureGates,
    new Map([["AllAlpha", true], ["AnonymousAuthConfigurableEndpoints", false]]),
  );
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

Deno.test("audit settings: flags and file fields with kube's names; - is standard output", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "policy.yaml"), "rules: []\n");
  await writeConfig(
    dir.path,
    "c.yaml",
    "auditPolicyFile: policy.yaml\nauditLogPath: logs/audit.log\nauditLogMaxsize: 5\n" +
      "auditLogMaxbackup: 3\nauditLogMaxage: 7\nauditLogMode: batch\n" +
      "auditLogBatchBufferSize: 50\n",
  );
  const file = await load(["--config", "c.yaml"], dir.path);
  assert.equal(file.auditPolicyFile, join(dir.path, "policy.yaml"));
  assert.equal(file.auditLogPath, join(dir.path, "logs", "audit.log"));
  assert.deepEqual(
    [file.auditLogMaxsize, file.auditLogMaxbackup, file.auditLogMaxage, file.auditLogMode],
    [5, 3, 7, "batch"],
  );
  assert.equal(file.auditLogBatchBufferSize, 50);
  const flags = await load(
    ["--config", "c.yaml", "--audit-log-path=-", "--audit-log-mode", "blocking-strict"],
    dir.path,
  );
  assert.equal(flags.auditLogPath, "-");
  assert.equal(flags.auditLogMode, "blocking-strict");
  assert.match(await errorOf(["--audit-log-mode", "fast"], dir.path), /^--audit-log-mode: /);
  assert.match(
    await errorOf(["--audit-log-batch-buffer-size", "0"], dir.path),
    /^--audit-log-batch-buffer-size: "0" must be at least 1/,
  );
  assert.match(
    await errorOf(["--audit-policy-file", "missing.yaml"], dir.path),
    /--audit-policy-file/,
  );
});

Deno.test("audit webhook settings: flags and file fields; durations as Go durations", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "hook.kubeconfig"), "clusters: []\n");
  await writeConfig(
    dir.path,
    "c.yaml",
    "auditWebhookConfigFile: hook.kubeconfig\nauditWebhookMode: blocking\n" +
      "auditWebhookBatchBufferSize: 50\nauditWebhookBatchMaxSize: 7\n" +
      "auditWebhookBatchMaxWait: 2s\nauditWebhookInitialBackoff: 100ms\n",
  );
  const file = await load(["--config", "c.yaml"], dir.path);
  assert.equal(file.auditWebhookConfigFile, join(dir.path, "hook.kubeconfig"));
  assert.deepEqual(
    [
      file.auditWebhookMode,
      file.auditWebhookBatchBufferSize,
      file.auditWebhookBatchMaxSize,
      file.auditWebhookBatchMaxWait,
      file.auditWebhookInitialBackoff,
    ],
    ["blocking", 50, 7, 2000, 100],
  );
  const flags = await load(
    ["--config", "c.yaml", "--audit-webhook-mode=batch", "--audit-webhook-batch-max-wait", "1m"],
    dir.path,
  );
  assert.equal(flags.auditWebhookMode, "batch");
  assert.equal(flags.auditWebhookBatchMaxWait, 60_000);
  assert.match(
    await errorOf(["--audit-webhook-batch-max-size", "0"], dir.path),
    /^--audit-webhook-batch-max-size: "0" must be at least 1/,
  );
  assert.match(
    await errorOf(["--audit-webhook-config-file", "missing.kubeconfig"], dir.path),
    /--audit-webhook-config-file/,
  );
});

Deno.test("snapshot settings: flags and file fields; the directory resolves like other paths", async () => {
  await using dir = await tempDir();
  await writeConfig(
    dir.path,
    "c.yaml",
    "snapshotInterval: 1h\nsnapshotRetention: 24\nsnapshotDir: backups\n",
  );
  const file = await load(["--config", "c.yaml"], dir.path);
  assert.deepEqual(
    [file.snapshotInterval, file.snapshotRetention, file.snapshotDir],
    [3_600_000, 24, join(dir.path, "backups")],
  );
  const flags = await load(["--config", "c.yaml", "--snapshot-interval", "90s"], dir.path);
  assert.equal(flags.snapshotInterval, 90_000);
  assert.match(
    await errorOf(["--snapshot-retention", "0"], dir.path),
    /^--snapshot-retention: "0" must be at least 1/,
  );
  assert.match(await errorOf(["--snapshot-interval", "often"], dir.path), /^--snapshot-interval: /);
});

Deno.test("--storage-backend is kube's name for --storage", async () => {
  await using dir = await tempDir();
  const cfg = await load(
    ["--storage-backend=etcd3", "--etcd-servers", "http://127.0.0.1:2379"],
    dir.path,
  );
  assert.equal(cfg.storage, "etcd3");
});
