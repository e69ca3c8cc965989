import assert from "node:assert/strict";
import { ConfigError, osReason } from "./config_error.ts";
import { FLAGS } from "./flag_table.ts";
import { tokenizeArgs } from "./flags.ts";
import {
  formatDuration,
  isDnsName,
  normalizeIp,
  parseBool,
  parseDuration,
  parseHost,
  parsePort,
  parseSan,
  splitList,
} from "./value_parsers.ts";

Deno.test("tokenizeArgs accepts --name=value and --name value, keeping repeats", () => {
  const args = tokenizeArgs([
    "--tls-san=a",
    "--tls-san",
    "b,c",
    "-secure-port",
    "0",
    "--runtime-config=",
  ]);
  assert.equal(args.help, false);
  assert.deepEqual(args.values.get("tls-san"), ["a", "b,c"]);
  assert.deepEqual(args.values.get("secure-port"), ["0"]);
  assert.deepEqual(args.values.get("runtime-config"), [""]);
  assert.equal(tokenizeArgs(["-h"]).help, true);
  assert.equal(tokenizeArgs(["--help"]).help, true);
});

Deno.test("tokenizeArgs rejects unknown flags, missing values and positionals", () => {
  for (
    const [argv, message] of [
      [["--bogus"], 'unknown flag "--bogus" (see --help)'],
      [["--bogus=1"], 'unknown flag "--bogus" (see --help)'],
      [["--secure-port"], "--secure-port: missing value"],
      [["--secure-port", "--data-dir=x"], "--secure-port: missing value"],
      [["extra"], 'unexpected argument "extra": serve takes only flags'],
      [["--"], 'unexpected argument "--": serve takes only flags'],
    ] as const
  ) {
    assert.throws(() => tokenizeArgs(argv), new ConfigError(message));
  }
});

Deno.test("every flag but --config has a config-file field and help text", () => {
  for (const f of FLAGS) {
    assert(f.help.length > 10, f.name);
    if (f.name !== "config") assert(f.field, f.name);
  }
  assert.deepEqual(FLAGS.map((f) => f.name), [
    "config",
    "data-dir",
    "bind-address",
    "secure-port",
    "tls-cert-file",
    "tls-private-key-file",
    "tls-san",
    "token-auth-file",
    "basic-auth-file",
    "client-ca-file",
    "authentication-config",
    "kubernetes-group-names",
    "anonymous-auth",
    "authorization-config",
    "enable-admission-plugins",
    "disable-admission-plugins",
    "admission-control-config-file",
    "cluster-signing-cert-file",
    "cluster-signing-key-file",
    "cluster-signing-apiserver-client-cert-file",
    "cluster-signing-apiserver-client-key-file",
    "cluster-signing-apiserver-client-nodeagent-cert-file",
    "cluster-signing-apiserver-client-nodeagent-key-file",
    "cluster-signing-nodeagent-serving-cert-file",
    "cluster-signing-nodeagent-serving-key-file",
    "cluster-signing-duration",
    "runtime-config",
    "feature-gates",
    "storage",
    "etcd-servers",
    "etcd-prefix",
    "etcd-cafile",
    "etcd-certfile",
    "etcd-keyfile",
    "token",
    "etcd-compaction-interval",
    "etcd-count-metric-poll-period",
    "snapshot-interval",
    "snapshot-retention",
    "snapshot-dir",
    "encryption-provider-config",
    "history-retention",
    "controllers",
    "controller-manager-config",
    "leader-elect",
    "leader-elect-lease-duration",
    "leader-elect-renew-deadline",
    "leader-elect-retry-period",
    "leader-elect-resource-name",
    "leader-elect-resource-namespace",
    "service-cluster-ip-range",
    "service-node-port-range",
    "shutdown-timeout",
    "request-timeout",
    "min-request-timeout",
    "max-requests-inflight",
    "workers",
    "worker-max-heap-mb",
    "max-mutating-requests-inflight",
    "max-connections",
    "max-connections-per-client",
    "max-request-body-bytes",
    "log-level",
    "show-hidden-metrics-for-version",
    "audit-policy-file",
    "audit-log-path",
    "audit-log-maxage",
    "audit-log-maxbackup",
    "audit-log-maxsize",
    "audit-log-mode",
    "audit-log-batch-buffer-size",
    "egress-selector-config-file",
    "audit-webhook-config-file",
    "audit-webhook-mode",
    "audit-webhook-batch-buffer-size",
    "audit-webhook-batch-max-size",
    "audit-webhook-batch-max-wait",
    "audit-webhook-initial-backoff",
    "tracing-config-file",
  ]);
});

Deno.test("parseDuration reads Go durations", () => {
  const cases: [string, number][] = [
    ["0", 0],
    ["0s", 0],
    ["300ms", 300],
    ["30s", 30_000],
    ["5m", 300_000],
    ["1h30m", 5_400_000],
    ["1.5h", 5_400_000],
    ["2m30.5s", 150_500],
    ["1500us", 2],
    [" 10s ", 10_000],
  ];
  for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
  for (const bad of ["", "5", "5 m", "-5s", "5d", "1h 30m", "s", "abc"]) {
    assert.throws(() => parseDuration(bad), /is not a duration/, bad);
  }
  assert.equal(formatDuration(5_400_000), "1h30m");
  assert.equal(formatDuration(1_500), "1.5s");
  assert.equal(formatDuration(0), "0s");
});

Deno.test("parsePort accepts 0-65535", () => {
  assert.equal(parsePort("0"), 0);
  assert.equal(parsePort("6443"), 6443);
  assert.equal(parsePort(65535), 65535);
  for (const bad of ["-1", "65536", "abc", "1e3", "", "80.0"]) {
    assert.throws(() => parsePort(bad), { message: `"${bad}" is not a port number (0-65535)` });
  }
  assert.throws(() => parsePort(1.5), { message: "1.5 is not a port number (0-65535)" });
});

Deno.test("addresses and names", () => {
  assert.equal(normalizeIp("127.0.0.1"), "127.0.0.1");
  assert.equal(normalizeIp("0:0:0:0:0:0:0:1"), "::1");
  assert.equal(normalizeIp("FD00::A"), "fd00::a");
  assert.equal(normalizeIp("256.0.0.1"), undefined);
  assert.equal(normalizeIp("127.1"), undefined);
  assert.equal(normalizeIp("example.com"), undefined);
  assert.equal(normalizeIp("fe80::1%eth0"), undefined);
  assert(isDnsName("a-b.example.com"));
  assert(!isDnsName("-a.example"));
  assert(!isDnsName("*.example.com"));
  assert(isDnsName("*.example.com", { wildcard: true }));
  assert.equal(parseHost("Example.COM"), "example.com");
  assert.equal(parseHost("::"), "::");
  assert.throws(() => parseHost("*.example.com"), /not an IP address or DNS name/);
  assert.equal(parseSan("*.Example.com"), "*.example.com");
  assert.throws(() => parseSan("a b"), { message: '"a b" is not an IP address or DNS name' });
});

Deno.test("small parsers", () => {
  assert.deepEqual(splitList(" a, ,b ,"), ["a", "b"]);
  assert.equal(parseBool("TRUE"), true);
  assert.equal(parseBool("false"), false);
  assert.throws(() => parseBool("1"), { message: '"1" is not a boolean (true or false)' });
  assert.equal(osReason(new Deno.errors.NotFound("x")), "No such file or directory");
  assert.equal(osReason(new Error("Boom (os error 5): open 'x'")), "Boom");
  const err = ConfigError.at("--x", new Error("bad"));
  assert.equal(err.message, "--x: bad");
  assert.equal(err.name, "ConfigError");
});

Deno.test("a deprecated flag name sets its flag and gives kube's warning once", () => {
  const args = tokenizeArgs([
    "--audit-webhook-batch-initial-backoff=5s",
    "--audit-webhook-batch-initial-backoff",
    "7s",
  ]);
  assert.deepEqual(args.values.get("audit-webhook-initial-backoff"), ["5s", "7s"]);
  assert.deepEqual(args.warnings, [
    "Flag --audit-webhook-batch-initial-backoff has been deprecated, " +
    "Deprecated, use --audit-webhook-initial-backoff instead.",
  ]);
  // The flag's own name warns about nothing.
  assert.deepEqual(tokenizeArgs(["--audit-webhook-initial-backoff=5s"]).warnings, []);
});
