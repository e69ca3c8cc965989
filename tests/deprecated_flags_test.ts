/**
 * Deprecated flag names as an operator meets them with the real binary: `--help` says so, and
 * using one logs kube's one warning line (`Flag --x has been deprecated, <message>`) while the
 * value still counts as the flag's.
 */

import { runPlatform } from "./harness.ts";
import { assertEquals, assertMatch } from "./assert.ts";
import { FLAGS } from "../lib/config/mod.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const WARNING = "Flag --audit-webhook-batch-initial-backoff has been deprecated, " +
  "Deprecated, use --audit-webhook-initial-backoff instead.";

Deno.test("--help names every deprecated flag with its version and message", async () => {
  const run = await runPlatform("--help");
  assertEquals(run.code, 0);
  const help = run.stdout.replace(/\s+/g, " ");
  const deprecated = FLAGS.flatMap((f) => f.deprecatedAliases ?? []);
  assertEquals(deprecated.length > 0, true, "no deprecated flag in the table");
  for (const d of deprecated) {
    assertMatch(
      help,
      new RegExp(`Also --${d.name}, deprecated since ${d.since.replace(".", "\\.")}: `),
    );
    assertEquals(help.includes(d.message), true, `--help lacks: ${d.message}`);
  }
});

Deno.test("check-config with a deprecated flag warns once and takes its value", async () => {
  const ok = await runPlatform(
    "check-config",
    "--storage=memory",
    "--audit-webhook-batch-initial-backoff=5s",
  );
  assertEquals(ok.code, 0, ok.stderr);
  assertEquals(ok.stderr.trimEnd().split("\n"), [`platform: ${WARNING}`]);
  // The value is the flag's: a bad one is refused under the flag's name.
  const bad = await runPlatform("check-config", "--audit-webhook-batch-initial-backoff=soon");
  assertEquals(bad.code, 2);
  assertMatch(bad.stderr, /--audit-webhook-initial-backoff.*soon/);
});

Deno.test("serve logs one warning line for a deprecated flag and serves", async () => {
  const dir = await Deno.makeTempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      MAIN,
      "--data-dir",
      dir,
      "--secure-port",
      "0",
      "--audit-webhook-batch-initial-backoff",
      "5s",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let log = "";
  try {
    while (!/serving on https:/.test(log)) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`exited before serving:\n${log}`);
      log += value;
    }
    child.kill("SIGTERM");
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      log += value;
    }
    assertEquals((await child.status).code, 0, log);
    const lines = log.split("\n").filter((l) => l.includes("has been deprecated"));
    assertEquals(lines.length, 1, log);
    assertEquals(lines[0].endsWith(WARNING), true, lines[0]);
    assertMatch(lines[0], /warn/i);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    await Deno.remove(dir, { recursive: true });
  }
});
