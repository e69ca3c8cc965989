/**
 * What the bench's figures share (bench/main.ts, bench/rows.ts): the options (`--quick`), the
 * servers it starts as child processes and their API, the load loops (wrk, or Deno `fetch`),
 * the settling of a server after a burst, the fdatasync baseline and the printed table.
 */

import { fileURLToPath } from "node:url";
import { ROOT_CA_CONFIGMAP } from "../lib/controllers/namespace_defaults.ts";
import type { AuthOptions } from "./auth.ts";
import { haveWrk, wrk, type WrkRequest } from "./wrk.ts";
import { textLines } from "../tests/text_lines.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

export const QUICK = Deno.args.includes("--quick");
/** Scales measurement windows. */
export const T = QUICK ? 0.4 : 1;
export const WARMUP_MS = QUICK ? 200 : 400;

/**
 * `--rounds=N` (1–99): rounds of the figures that alternate between servers started side by
 * side (audit, metrics, tracing, …). @default 5. More rounds narrow their medians on a noisy
 * machine: one 3 s window of the same server here reads from 13,000 to 29,000 GETs/s.
 */
export const ROUNDS = roundsOption(Deno.args);

function roundsOption(args: string[]): number {
  const arg = args.find((a) => a.startsWith("--rounds="));
  if (arg === undefined) return 5;
  const n = Number(arg.slice("--rounds=".length));
  if (!Number.isInteger(n) || n < 1 || n > 99) {
    console.error(`bench: ${arg}: the rounds must be a whole number from 1 to 99`);
    Deno.exit(2);
  }
  return n;
}

/** The median of `xs` (the mean of the middle two for an even count); NaN for none. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

export function fmt(n: number, digits = 0): string {
  if (!Number.isFinite(n)) return "n/a";
  return n.toLocaleString("en-US", {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

export function note(msg: string): void {
  console.error(`[bench] ${msg}`);
}

export interface Child {
  proc: Deno.ChildProcess;
  url: string;
  dataDir: string;
  /** Milliseconds from spawn to the "serving on" line. */
  servingMs: number;
  spawnedAt: number;
  log: string[];
  drained: Promise<unknown>;
}

/** Spawns `deno run --allow-all <args>` in the repository and waits for "serving on <url>". */
export async function spawnServer(
  args: string[],
  dataDir: string,
  env?: Record<string, string>,
): Promise<Child> {
  const spawnedAt = performance.now();
  const proc = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", ...args],
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const log: string[] = [];
  let onUrl!: (url: string) => void;
  const urlSeen = new Promise<string>((r) => onUrl = r);
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const line of textLines(stream)) {
      log.push(line);
      if (log.length > 500) log.shift();
      const m = line.match(/serving on (https:\/\/\S+:\d+)/);
      if (m) onUrl(m[1]);
    }
  };
  const drained = Promise.all([pump(proc.stdout), pump(proc.stderr)]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    urlSeen,
    drained.then(() => new Error("exited before serving")),
    new Promise<Error>((r) =>
      timer = setTimeout(() => r(new Error("no 'serving on' in 30 s")), 30_000)
    ),
  ]);
  clearTimeout(timer);
  const child: Child = {
    proc,
    url: typeof outcome === "string" ? outcome : "",
    dataDir,
    servingMs: performance.now() - spawnedAt,
    spawnedAt,
    log,
    drained,
  };
  if (outcome instanceof Error) {
    await stopServer(child, "SIGKILL");
    throw new Error(`deno run ${args.join(" ")}: ${outcome.message}\n${log.join("\n")}`);
  }
  return child;
}

/** Signals the child and waits for it to exit (SIGKILL after `timeoutMs`); resolves to the
 * milliseconds it took, or undefined when it had to be killed. */
export async function stopServer(
  child: Child,
  signal: Deno.Signal = "SIGTERM",
  label = "server",
  timeoutMs = 10_000,
): Promise<number | undefined> {
  const t0 = performance.now();
  try {
    child.proc.kill(signal);
  } catch { /* gone */ }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const exited = await Promise.race([
    child.proc.status.then(() => true),
    new Promise<boolean>((r) => timer = setTimeout(() => r(false), timeoutMs)),
  ]);
  clearTimeout(timer);
  const took = performance.now() - t0;
  if (!exited) {
    note(
      `${label} did not stop on ${signal} within ${
        timeoutMs / 1000
      } s; killing it. Last log lines:\n  ${child.log.slice(-8).join("\n  ")}`,
    );
    try {
      child.proc.kill("SIGKILL");
    } catch { /* gone */ }
  }
  await child.proc.status;
  await child.drained;
  return exited ? took : undefined;
}

/**
 * The V8 flags `platform` runs with, as the `start` and `compile` tasks of deno.json give them
 * (a test keeps the three the same): V8's memory reducer waits a minute of quiet, not eight
 * seconds, before it shrinks the heap, so that a burst after a short pause does not start on a
 * shrunk heap (README, "Memory after a burst").
 */
export const SERVER_V8_FLAGS = ["--v8-flags=--memory-reducer-delay-ms=60000"];

/** `deno run` arguments of `platform serve` on a free port, data in `dataDir`. */
function serveArgs(dataDir: string, flags: string[]): string[] {
  return [...SERVER_V8_FLAGS, "main.ts", "serve", "--data-dir", dataDir, "--secure-port", "0"]
    .concat(flags);
}

export function platformServer(dataDir: string): Promise<Child> {
  return spawnServer(serveArgs(dataDir, ["--log-level", "info"]), dataDir);
}

/** Server-side errors logged by a child, for the report. */
export function loggedErrors(child: Child): string[] {
  return child.log.filter((l) => / (ERROR|WARN) |panicked|Uncaught/.test(l));
}

export interface Api {
  url: string;
  client: Deno.HttpClient;
  headers: Record<string, string>;
}

export async function apiFor(child: Child, withToken: boolean): Promise<Api> {
  const caPem = await Deno.readTextFile(`${child.dataDir}/pki/ca.crt`);
  const headers: Record<string, string> = {};
  if (withToken) {
    const token = (await Deno.readTextFile(`${child.dataDir}/pki/admin.token`)).trim();
    headers["Authorization"] = `Bearer ${token}`;
  }
  return { url: child.url, client: Deno.createHttpClient({ caCerts: [caPem] }), headers };
}

/** One request; resolves to an error description, or undefined on the expected status. */
export async function request(
  api: Api,
  method: string,
  path: string,
  expected: number,
  body?: string,
): Promise<string | undefined> {
  const res = await fetch(api.url + path, {
    method,
    client: api.client,
    headers: body === undefined
      ? api.headers
      : { ...api.headers, "Content-Type": "application/json" },
    body,
  });
  if (res.status === expected) {
    await res.arrayBuffer();
    return undefined;
  }
  return `${method} ${path} → ${res.status}: ${(await res.text()).slice(0, 300)}`;
}

/** The paths of the first `limit` objects of a collection, and how many there are; the
 * namespace's kube-root-ca.crt (the server's, not the bench's) is left out of both. */
export async function listNames(
  api: Api,
  collection: string,
  limit: number,
): Promise<{ paths: string[]; total: number }> {
  const res = await fetch(`${api.url}${collection}?limit=${limit}`, {
    client: api.client,
    headers: api.headers,
  });
  const list = await res.json();
  if (res.status !== 200) throw new Error(`list ${collection} → ${res.status}`);
  const all = list.items.map((o: { metadata: { name: string } }) => o.metadata.name);
  const paths = all.filter((n: string) => n !== ROOT_CA_CONFIGMAP).map((n: string) =>
    `${collection}/${n}`
  );
  if (!paths.length) throw new Error(`${collection} is empty`);
  let total = all.length + (list.metadata.remainingItemCount ?? 0);
  const published = await fetch(`${api.url}${collection}/${ROOT_CA_CONFIGMAP}`, {
    client: api.client,
    headers: api.headers,
  });
  await published.body?.cancel();
  if (published.status === 200) total--;
  return { paths, total };
}

export interface LoadResult {
  ops: number;
  /** Successful writes over warm-up and measurement (creates: objects that must exist). */
  acknowledged?: number;
  /** Requests answered over warm-up and measurement. */
  served?: number;
  errors: number;
  perSec: number;
  p50: number;
  p99: number;
  firstError?: string;
}

/** `concurrency` loops calling `op` back to back for `ms` (after a warm-up). */
export async function load(
  concurrency: number,
  ms: number,
  op: (worker: number) => Promise<string | undefined>,
  warmupMs = WARMUP_MS,
): Promise<LoadResult> {
  const run = async (duration: number, record: boolean) => {
    const latencies: number[] = [];
    let errors = 0;
    let firstError: string | undefined;
    const start = performance.now();
    const deadline = start + duration;
    await Promise.all(Array.from({ length: concurrency }, async (_, w) => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        let err: string | undefined;
        try {
          err = await op(w);
        } catch (e) {
          err = String((e as Error)?.message ?? e);
        }
        if (err) {
          errors++;
          firstError ??= err;
        } else if (record) latencies.push(performance.now() - t0);
      }
    }));
    const seconds = (performance.now() - start) / 1000;
    latencies.sort((a, b) => a - b);
    return {
      ops: latencies.length,
      errors,
      perSec: latencies.length / seconds,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      firstError,
    };
  };
  if (warmupMs > 0) await run(warmupMs, false);
  return await run(ms, true);
}

/**
 * One load figure: with wrk when installed (see wrk.ts), else with `concurrency` fetch loops.
 * Both run a warm-up first that is not recorded.
 */
export async function measure(
  api: Api,
  concurrency: number,
  ms: number,
  req: WrkRequest & { expected: number },
): Promise<LoadResult> {
  if (await haveWrk()) {
    const headers = { ...api.headers, ...req.headers };
    const spec = { ...req, headers };
    const warm = await wrk(api.url, spec, concurrency, Math.max(1000, WARMUP_MS));
    const r = await wrk(api.url, spec, concurrency, ms);
    const ok = r.requests - r.errors;
    return {
      ops: ok,
      acknowledged: warm.requests - warm.errors + ok,
      served: warm.requests + r.requests,
      errors: r.errors + warm.errors,
      perSec: r.perSec * (ok / Math.max(1, r.requests)),
      p50: r.p50,
      p99: r.p99,
      firstError: r.errors + warm.errors
        ? `${r.errors + warm.errors} responses were not ${req.expected}`
        : r.socketErrors,
    };
  }
  let i = 0;
  let acknowledged = 0;
  const op = async () => {
    const path = req.paths[i++ % req.paths.length];
    const err = await request(api, req.method, path, req.expected, req.body);
    if (!err) acknowledged++;
    return err;
  };
  const r = await load(concurrency, ms, op);
  return { ...r, acknowledged, served: acknowledged + r.errors };
}

export function describeLoad(label: string, r: LoadResult): void {
  note(
    `${label}: ${fmt(r.perSec)}/s (${r.ops} ops, p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms${
      r.errors ? `, ${r.errors} ERRORS, first: ${r.firstError}` : ""
    })`,
  );
}

export interface Settle {
  ms: number;
  maxMs: number;
  slow: number;
  settled: boolean;
}

/**
 * After a burst of writes the server keeps working in the background (writing object files);
 * requests can stall meanwhile. Sends one GET at a time until 100 in a row take < `fastMs` (or
 * 20 s pass), so that the next figure measures the steady state; the stall is reported.
 */
export async function settle(
  api: Api,
  path: string,
  label: string,
  fastMs = 20,
): Promise<Settle> {
  const start = performance.now();
  let streak = 0;
  let maxMs = 0;
  let slow = 0;
  while (streak < 100 && performance.now() - start < 20_000) {
    const t0 = performance.now();
    const err = await request(api, "GET", path, 200);
    const ms = performance.now() - t0;
    if (err) throw new Error(`settling: ${err}`);
    maxMs = Math.max(maxMs, ms);
    if (ms < fastMs) streak++;
    else {
      streak = 0;
      slow++;
    }
  }
  const r = { ms: performance.now() - start, maxMs, slow, settled: streak >= 100 };
  note(
    `${label}: ${r.settled ? "settled" : "NOT settled"} after ${fmt(r.ms)} ms; ` +
      `${r.slow} single GETs took ≥ ${fastMs} ms meanwhile, the slowest ${fmt(r.maxMs)} ms`,
  );
  return r;
}

/** Baseline A: write(200 bytes) + fdatasync in a loop. */
export async function fsyncBaseline(dir: string, ms: number): Promise<number> {
  const path = `${dir}/fsync-baseline.log`;
  using file = await Deno.open(path, { write: true, create: true, append: true });
  const record = new Uint8Array(200).fill(0x61);
  // Warm-up: allocate the first blocks.
  for (let i = 0; i < 20; i++) {
    await file.write(record);
    await file.syncData();
  }
  let n = 0;
  const start = performance.now();
  const deadline = start + ms;
  while (performance.now() < deadline) {
    let off = 0;
    while (off < record.length) off += await file.write(record.subarray(off));
    await file.syncData();
    n++;
  }
  return n / ((performance.now() - start) / 1000);
}

export interface Row {
  figure: string;
  value: string;
  baseline: string;
  ratio: string;
  target: string;
  met: string;
}

export async function printTable(rows: Row[], problems: string[]): Promise<void> {
  const header: (keyof Row)[] = ["figure", "value", "baseline", "ratio", "target", "met"];
  const titles = ["figure", "value", "baseline", "ratio", "target", "met?"];
  const lines = [
    `| ${titles.join(" | ")} |`,
    `|${header.map((h) => h === "figure" ? "---" : "---:").join("|")}|`,
    ...rows.map((r) => `| ${header.map((h) => r[h]).join(" | ")} |`),
  ];
  console.log(
    `\nplatform bench — Deno ${Deno.version.deno}, ${Deno.build.os}/${Deno.build.arch}, ` +
      `${navigator.hardwareConcurrency} CPUs, client ${await haveWrk() ? "wrk" : "Deno fetch"}${
        QUICK ? ", --quick" : ""
      }${ROUNDS !== 5 ? `, --rounds=${ROUNDS}` : ""}\n`,
  );
  console.log(lines.join("\n"));
  if (problems.length) console.log(`\nproblems:\n${problems.map((p) => `- ${p}`).join("\n")}`);
}

/** What bench/auth.ts and bench/limits.ts need: servers started with extra flags, wrk. */
export function serverPairOptions(
  dir: string,
  label: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  env?: Record<string, string>,
): AuthOptions {
  return {
    dir,
    start: async (dataDir, flags) => {
      const child = track(await spawnServer(serveArgs(dataDir, flags), dataDir, env));
      const api = trackApi(await apiFor(child, true));
      return {
        api,
        stop: async () => void await stopServer(child, "SIGTERM", label),
        pid: child.proc.pid,
      };
    },
    measure: (api, concurrency, ms, req) => measure(api, concurrency, ms, req),
    ms: 3000 * T,
    note,
  };
}
