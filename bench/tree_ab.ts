/**
 * This tree's audit against another checkout's: three servers on the file store, side by side,
 * as `deno task bench --only=audit` runs them: one without audit (this tree), one auditing
 * everything at a level to a batch log (this tree), and the same from the other checkout (a
 * `git worktree` of another commit). 32 wrk clients, rounds alternating between the three, the
 * medians of requests/s and of CPU per request. On this machine two runs minutes apart differ by
 * more than most changes do; within one run the two audited servers meet the same conditions, so
 * their difference is the change's.
 *
 *   git worktree add /tmp/base HEAD~1
 *   deno run -A bench/tree_ab.ts /tmp/base [--level=Metadata|RequestResponse] [--creates]
 *     [--rounds=9]
 *
 * Not part of `deno task bench`: an instrument for deciding between two versions of a change.
 * @module
 */

import { alternateRoundsCpu, seedConfigMaps } from "./figures_common.ts";
import { apiFor, measure, note, SERVER_V8_FLAGS, spawnServer, stopServer } from "./harness.ts";
import type { AuthOptions, AuthServer } from "./auth.ts";

const other = Deno.args.find((a) => !a.startsWith("--"));
const level = Deno.args.find((a) => a.startsWith("--level="))?.slice(8) ?? "Metadata";
const creates = Deno.args.includes("--creates");
if (!other || !["Metadata", "RequestResponse"].includes(level)) {
  console.error(
    "usage: deno run -A bench/tree_ab.ts <other checkout> [--level=Metadata|RequestResponse] " +
      "[--creates] [--rounds=N]",
  );
  Deno.exit(2);
}
try {
  await Deno.stat(`${other}/main.ts`);
} catch {
  console.error(`${other}/main.ts: not found (the other checkout's root, with its main.ts)`);
  Deno.exit(2);
}

const dir = await Deno.makeTempDir({ prefix: "tree-ab-" });
const policy = `${dir}/policy.yaml`;
await Deno.writeTextFile(
  policy,
  `apiVersion: audit.platform.io/v1\nkind: Policy\nrules:\n  - level: ${level}\n`,
);

/** `platform serve` of the checkout whose main.ts is `main`, audited when `log` is given. */
async function start(main: string, name: string, log?: string): Promise<AuthServer> {
  const dataDir = `${dir}/${name}`;
  const audit = log
    ? ["--audit-policy-file", policy, "--audit-log-path", log, "--audit-log-mode", "batch"]
    : [];
  const child = await spawnServer(
    [...SERVER_V8_FLAGS, main, "serve", "--data-dir", dataDir, "--secure-port", "0", ...audit],
    dataDir,
  );
  return {
    api: await apiFor(child, true),
    stop: async () => void await stopServer(child),
    pid: child.proc.pid,
  };
}

const options: AuthOptions = {
  dir,
  start: () => Promise.reject(new Error("not used")),
  measure: (api, concurrency, ms, req) => measure(api, concurrency, ms, req),
  ms: 3000,
  note,
};
const servers = {
  none: await start("main.ts", "none"),
  this: await start("main.ts", "this", `${dir}/this.log`),
  other: await start(`${other}/main.ts`, "other", `${dir}/other.log`),
};
try {
  const seeded = await seedConfigMaps(Object.values(servers));
  await new Promise((r) => setTimeout(r, 2_000));
  const problems: string[] = [];
  const what = creates ? "creates" : "GETs";
  const r = await alternateRoundsCpu(options, {
    servers,
    req: creates ? seeded.create : seeded.get,
    label: (s) => `${what}, ${s}`,
    problems,
  });
  const row = (s: "this" | "other") =>
    `| ${s === "this" ? "this tree" : other} | ${Math.round(r.perSec[s])} | ` +
    `${(r.perSec[s] / r.perSec.none).toFixed(3)} | ${r.cpuMicros[s].toFixed(1)} | ` +
    `${(r.cpuMicros.none / r.cpuMicros[s]).toFixed(3)} |`;
  console.log(
    [
      `${what} at audit level ${level} (batch log), against no audit: ` +
      `${Math.round(r.perSec.none)}/s, ${r.cpuMicros.none.toFixed(1)} µs CPU per request`,
      "",
      `| server | ${what}/s | ÷ no audit | CPU µs per request | no audit ÷ |`,
      "|---|---:|---:|---:|---:|",
      row("this"),
      row("other"),
    ].join("\n"),
  );
  if (problems.length) console.log(`\nproblems:\n${problems.map((p) => `- ${p}`).join("\n")}`);
} finally {
  for (const s of Object.values(servers)) await s.stop();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
