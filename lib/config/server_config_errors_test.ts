/** The server configuration's errors: each names the flag and value, or the file and field. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { errorOf, tempDir, TESTDATA, writeConfig } from "./server_config_testdata.ts";

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
      '--feature-gates: invalid value of WatchList=yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
    ],
    [
      ["--feature-gates=WatchList"],
      "--feature-gates: missing bool value for WatchList",
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
      ["--leader-elect-renew-deadline=15s"],
      "--leader-elect-renew-deadline: 15s must be shorter than --leader-elect-lease-duration (15s)",
    ],
    [
      ["--leader-elect-lease-duration=5s"],
      "--leader-elect-renew-deadline: 10s must be shorter than --leader-elect-lease-duration (5s)",
    ],
    [
      ["--leader-elect-retry-period=9s"],
      "--leader-elect-retry-period: 9s is too long: 1.2 times it (client-go's jitter) must be " +
      "shorter than --leader-elect-renew-deadline (10s)",
    ],
    [
      ["--leader-elect-lease-duration=0"],
      '--leader-elect-lease-duration: "0" must be longer than 0',
    ],
    [["--leader-elect=maybe"], '--leader-elect: "maybe" is not a boolean (true or false)'],
    [
      ["--leader-elect-resource-namespace=Kube_System"],
      '--leader-elect-resource-namespace: "Kube_System": a lowercase RFC 1123 label must ' +
      "consist of lower case alphanumeric characters or '-', and must start and end with an " +
      "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is " +
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ],
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
    /^--feature-gates: unrecognized feature gate: Nope$/,
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
    ["featureGates:\n  Nope: true\n", "c.yaml: featureGates.Nope: unrecognized feature gate: Nope"],
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
