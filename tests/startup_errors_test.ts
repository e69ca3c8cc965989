/**
 * Every start-up problem of `platform serve` is the operator's to fix and is said in one line
 * on stderr with exit code 2, never a stack trace: addresses it cannot listen on, files named
 * by flags that are missing, unreadable or malformed, a data directory it cannot create or
 * write, bad values, and feature gates a setting needs.
 */

import { join } from "node:path";
import { assertConfigError, runPlatform } from "./harness.ts";
import { assertEquals } from "./assert.ts";

/** Runs `platform serve` for each case (a few at a time) and checks its one-line error. */
async function expectErrors(cases: [string[], RegExp][]): Promise<void> {
  for (let i = 0; i < cases.length; i += 4) {
    await Promise.all(
      cases.slice(i, i + 4).map(async ([args, re]) => {
        const run = await runPlatform("serve", "--secure-port", "0", ...args);
        try {
          assertConfigError(run, re);
        } catch (err) {
          throw new Error(`${args.join(" ")}: ${(err as Error).message}`);
        }
      }),
    );
  }
}

Deno.test("addresses that cannot be listened on: exit 2, one line naming the flag", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-startup-test-" });
  try {
    await expectErrors([
      // TEST-NET-1: never an address of this machine.
      [
        ["--data-dir", dir, "--bind-address", "192.0.2.1"],
        /^platform: --bind-address: "192\.0\.2\.1" is not an address of this machine$/,
      ],
      // .invalid never resolves (RFC 2606).
      [
        ["--data-dir", dir, "--bind-address", "no-such-host.invalid"],
        /^platform: --bind-address: cannot resolve "no-such-host\.invalid"/,
      ],
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a missing or unreadable file named by any flag: exit 2, one line naming the flag", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-startup-test-" });
  try {
    const data = join(dir, "data");
    const nope = join(dir, "nope");
    // A directory where a file belongs cannot be read as one, whoever runs the test.
    const folder = join(dir, "folder");
    await Deno.mkdir(folder);
    const missing = (flag: string) =>
      new RegExp(`^platform: --${flag}: cannot read ".*nope": No such file or directory$`);
    await expectErrors([
      [["--data-dir", data, "--config", nope], missing("config")],
      [
        ["--data-dir", data, "--config", folder],
        /^platform: --config: cannot read ".*folder": Is a directory$/,
      ],
      [
        ["--data-dir", data, "--tls-cert-file", nope, "--tls-private-key-file", nope],
        missing("tls-cert-file"),
      ],
      [["--data-dir", data, "--token-auth-file", nope], missing("token-auth-file")],
      [
        ["--data-dir", data, "--token-auth-file", folder],
        /^platform: --token-auth-file: ".*folder" is not a file$/,
      ],
      [["--data-dir", data, "--client-ca-file", nope], missing("client-ca-file")],
      [["--data-dir", data, "--authentication-config", nope], missing("authentication-config")],
      [["--data-dir", data, "--authorization-config", nope], missing("authorization-config")],
      [
        ["--data-dir", data, "--encryption-provider-config", nope],
        missing("encryption-provider-config"),
      ],
      [
        ["--data-dir", data, "--encryption-provider-config", folder],
        /^platform: --encryption-provider-config: ".*folder" is not a file$/,
      ],
      [[
        "--data-dir",
        data,
        "--cluster-signing-cert-file",
        nope,
        "--cluster-signing-key-file",
        nope,
      ], missing("cluster-signing-cert-file")],
      [
        [
          "--data-dir",
          data,
          "--cluster-signing-nodeagent-serving-cert-file",
          nope,
          "--cluster-signing-nodeagent-serving-key-file",
          nope,
        ],
        missing("cluster-signing-nodeagent-serving-cert-file"),
      ],
    ]);
    // Nothing was created for any of them.
    await Deno.stat(data).then(() => {
      throw new Error("the data directory was created");
    }, () => {});
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("malformed files (YAML with line and column, the token CSV): exit 2, one line with the place, nothing created", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-startup-test-" });
  try {
    const data = join(dir, "data");
    const bad = join(dir, "bad.yaml");
    await Deno.writeTextFile(bad, "apiVersion: platform.io/v1alpha1\nkind: [ServerConfiguration\n");
    const csv = join(dir, "tokens.csv");
    await Deno.writeTextFile(csv, "only-a-token\n");
    await expectErrors([
      [["--data-dir", data, "--config", bad], /^platform: .*bad\.yaml:\d+:\d+: invalid YAML/],
      [["--data-dir", data, "--authorization-config", bad], /bad\.yaml.*YAML/],
      [["--data-dir", data, "--authentication-config", bad], /bad\.yaml.*YAML/],
      [["--data-dir", data, "--encryption-provider-config", bad], /bad\.yaml.*YAML/],
      [
        ["--data-dir", data, "--token-auth-file", csv],
        /tokens\.csv:1: expected at least 3 columns/,
      ],
    ]);
    // A bad file leaves no trace.
    assertEquals(await Deno.stat(data).then(() => true, () => false), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a data directory that cannot be created or written: exit 2, one line naming --data-dir", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-startup-test-" });
  try {
    const file = join(dir, "file");
    await Deno.writeTextFile(file, "");
    await expectErrors([
      [
        ["--data-dir", join(file, "data")],
        /^platform: --data-dir: cannot use ".*file\/data": Not a directory$/,
      ],
      [["--data-dir", file], /^platform: --data-dir: ".*file" is not a directory$/],
      // sysfs refuses new directories and files to every user, root included.
      [
        ["--data-dir", "/sys/platform-test-data"],
        /^platform: --data-dir: cannot create "\/sys\/platform-test-data": Permission denied$/,
      ],
      [
        ["--data-dir", "/sys/kernel"],
        /^platform: --data-dir: cannot write in "\/sys\/kernel": Permission denied$/,
      ],
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bad values and settings that need an off feature gate: exit 2, one line naming the flag", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-startup-test-" });
  try {
    const data = join(dir, "data");
    const authn = join(dir, "authn.yaml");
    await Deno.writeTextFile(
      authn,
      "apiVersion: apiserver.platform.io/v1beta1\nkind: AuthenticationConfiguration\njwt: []\n",
    );
    await expectErrors([
      [
        ["--data-dir", data, "--secure-port", "70000"],
        /^platform: --secure-port: "70000" is not a port number/,
      ],
      [
        ["--data-dir", data, "--history-retention", "soon"],
        /^platform: --history-retention: "soon" is not a duration/,
      ],
      [["--data-dir", data, "--log-level", "loud"], /^platform: --log-level: "loud" is not one of/],
      [["--data-dir", data, "--storage", "disk"], /^platform: --storage: "disk" is not one of/],
      [
        ["--data-dir", data, "--max-request-body-bytes", "0"],
        /^platform: --max-request-body-bytes: "0" is not a positive number of bytes$/,
      ],
      [
        ["--data-dir", data, "--feature-gates", "Nope=true"],
        /^platform: --feature-gates: unrecognized feature gate: Nope$/,
      ],
      [
        [
          "--data-dir",
          data,
          "--authentication-config",
          authn,
          "--feature-gates",
          "StructuredAuthenticationConfiguration=false",
        ],
        /^platform: --authentication-config: needs the StructuredAuthenticationConfiguration feature gate, which is off$/,
      ],
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
