/**
 * The `platform` command as a user runs it: exit codes, the one-line errors for bad
 * configuration, readiness messages and a clean stop on SIGTERM.
 */

import { assertConfigError, runPlatform } from "./harness.ts";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { FLAGS } from "../lib/config/mod.ts";
import { startServer } from "../mod.ts";
import { silentLogger } from "../lib/api/log.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const TESTDATA = new URL("../testdata/config/", import.meta.url).pathname;

Deno.test("--help lists every flag with its default and exits 0", async () => {
  const run = await runPlatform("--help");
  assertEquals(run.code, 0);
  for (const flag of FLAGS) assertMatch(run.stdout, new RegExp(`--${flag.name}\\b`));
  assertMatch(run.stdout, /default/i);
});

Deno.test("an unknown flag exits 2 naming it", async () => {
  assertConfigError(await runPlatform("--no-such-flag"), /--no-such-flag/);
});

Deno.test("a bad flag value exits 2 naming the flag and the value", async () => {
  assertConfigError(await runPlatform("--secure-port", "http"), /--secure-port.*http/);
});

Deno.test("an unknown field in the config file exits 2 naming the file and the field", async () => {
  const file = `${TESTDATA}unknown_field.yaml`;
  assertConfigError(await runPlatform("--config", file), /unknown_field\.yaml.*data-dir/);
});

Deno.test("a missing config file exits 2 naming it", async () => {
  assertConfigError(await runPlatform("--config", "/nonexistent/platform.yaml"), /nonexistent/);
});

Deno.test("a certificate file without PEM exits 2 naming the flag", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/tls.crt`, "not a certificate\n");
    await Deno.writeTextFile(`${dir}/tls.key`, "not a key\n");
    const run = await runPlatform(
      "--data-dir",
      `${dir}/data`,
      "--tls-cert-file",
      `${dir}/tls.crt`,
      "--tls-private-key-file",
      `${dir}/tls.key`,
    );
    assertConfigError(run, /--tls-cert-file|--tls-private-key-file/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a port in use exits 2 naming the port and the flag, serving nothing", async () => {
  const dir = await Deno.makeTempDir();
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (taken.addr as Deno.NetAddr).port;
    const run = await runPlatform("--data-dir", dir, "--secure-port", String(port));
    assertConfigError(run, new RegExp(`${port}.*--secure-port|--secure-port.*${port}`));
  } finally {
    taken.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a second server on a data dir in use exits 2 in one line, no stack trace", async () => {
  const dir = await Deno.makeTempDir();
  const first = await startServer({ dataDir: dir, logger: silentLogger });
  try {
    const run = await runPlatform("--data-dir", dir, "--secure-port", "0");
    assertConfigError(run, /--data-dir: .* is in use by another platform server/);
    // The first one goes on serving.
    const client = Deno.createHttpClient({ caCerts: [first.caCertPem] });
    const res = await fetch(`${first.url}/readyz`, { client });
    assertEquals(res.status, 200);
    await res.body?.cancel();
    client.close();
  } finally {
    await first.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("check-config validates and exits 0", async () => {
  const run = await runPlatform("check-config", "--secure-port", "7443", "--storage", "memory");
  assertEquals(run.code, 0, run.stderr);
  assertMatch(run.stdout, /configuration is valid/);
});

Deno.test("serve says where it listens, answers /readyz, and exits 0 on SIGTERM", async () => {
  const dir = await Deno.makeTempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, "--data-dir", dir, "--secure-port", "0"],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = child.stdout.text();
  let log = "";
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let url: string | undefined;
    while (!url) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`exited before serving:\n${log}`);
      log += value;
      url = /serving on (https:\/\/\S+)/.exec(log)?.[1];
    }
    const client = Deno.createHttpClient({
      caCerts: [await Deno.readTextFile(`${dir}/pki/ca.crt`)],
    });
    const res = await fetch(`${url}/readyz`, { client });
    assertEquals([res.status, await res.text()], [200, "ok"]);
    client.close();
    child.kill("SIGTERM");
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      log += value;
    }
    const status = await child.status;
    assertEquals(status.code, 0, log);
    assertMatch(log, /admin kubeconfig: .*admin\.kubeconfig/);
    assertMatch(log, /received SIGTERM: shutting down/);
    assertMatch(log, /stopped/);
    assert((await stdout) !== undefined);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the README's flag table has every flag, its field and its --help default", async () => {
  const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  const rows = new Map<string, string[]>();
  for (const line of readme.split("\n")) {
    if (!line.startsWith("| `--")) continue;
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim().replace(/^`|`$/g, ""));
    rows.set(cells[0], cells);
  }
  const seen = new Set<string>();
  for (const flag of FLAGS) {
    // The per-signer flags share one row per kind: --cluster-signing-<signer>-cert-file.
    const name = `--${flag.name}`.replace(
      /^--cluster-signing-(apiserver-client-nodeagent|apiserver-client|nodeagent-serving)-/,
      "--cluster-signing-<signer>-",
    );
    const row = rows.get(name);
    assert(row, `no README row for --${flag.name}`);
    seen.add(name);
    assertEquals(row[2], flag.defaultText ?? "", `default of --${flag.name}`);
    if (name === `--${flag.name}`) assertEquals(row[1], flag.field ?? "", `field of ${name}`);
  }
  assertEquals([...rows.keys()].filter((r) => !seen.has(r)), [], "rows naming no flag");
});

Deno.test("config/platform.yaml, the commented example, is a valid configuration", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = new URL("../config/platform.yaml", import.meta.url).pathname;
    const run = await runPlatform("check-config", "--config", file, "--data-dir", dir);
    assertEquals(run.code, 0, run.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
