/**
 * Metrics figures for `deno task bench` (see bench/README.md): 32-client configmap creates/s
 * and gets/s on a server with metrics on (the default) against one with metrics off (the
 * `metrics: false` start option: a registry that records nothing; `/metrics` is not served).
 * The two run in one process (bench/server_pair.ts), so that only metrics differ between them,
 * in rounds that alternate between them; the rounds are spread over {@link PROCESSES} such
 * processes, which start the two in alternating order. The figures are medians over all rounds;
 * the ratios, medians over rounds of each round's ratio.
 */

import type { AuthOptions, AuthServer } from "./auth.ts";
import { ServerMetrics } from "../lib/metrics/mod.ts";
import { requestInfoOf } from "../lib/server/request_info.ts";
import { SERVES_ALL } from "../lib/server/request_labels.ts";
import { requestMetricsRecorder } from "../lib/server/filters/metrics.ts";
import type { RequestContext } from "../lib/server/context.ts";
import { alternateRoundsCpu, median, seedConfigMaps } from "./figures_common.ts";
import { ROUNDS } from "./harness.ts";

/**
 * Processes the rounds are spread over. One process's rounds share its luck: which server's
 * requests V8 compiled the shared code for first, where each one's objects landed in the heap.
 * Within one process that held for every round: GETs with metrics on read 0.82 of off in one
 * and 1.00 in the next, each over 10–30 rounds (2026-11-29), and the server started first fared
 * worse. Several processes, in alternating order, average that out.
 */
const PROCESSES = 3;

export interface MetricsOptions extends AuthOptions {
  /** Starts the two servers in one process (bench/server_pair.ts), metrics on and off; the
   * one with metrics off first if `offFirst`. */
  startPair(onDir: string, offDir: string, offFirst: boolean): Promise<Record<Mode, AuthServer>>;
}

export interface MetricsFigures {
  creates: Record<Mode, number>;
  gets: Record<Mode, number>;
  /** In process: µs a GET's request metrics cost (labels, counter, two histograms). */
  recordMicros: number;
  /** The servers' process's CPU time per request, µs (user + system, from /proc), over the
   * rounds of each: less exposed than requests/s to what else the machine runs. */
  createCpuMicros: Record<Mode, number>;
  getCpuMicros: Record<Mode, number>;
  /** Medians over rounds of on ÷ off (requests/s) and off ÷ on (CPU per request). */
  ratios: { creates: number; gets: number; createCpu: number; getCpu: number };
  problems: string[];
}

type Mode = "on" | "off";

/** Every run of one kind of request, of all processes, in round order (the k-th run of each
 * server is of the same round). */
class Runs {
  readonly perSec = new Map<Mode, number[]>();
  readonly cpu = new Map<Mode, number[]>();
  medians(runs: Map<Mode, number[]>): Record<Mode, number> {
    return { on: median(runs.get("on") ?? []), off: median(runs.get("off") ?? []) };
  }
  /** The median over rounds of `of(on run, off run)`. The processes run at levels of their own
   * (one's GETs 21,000/s, another's 33,000), so medians pooled over them compare one process's
   * level with another's; a round's two runs are of the same process, minutes apart at most. */
  pairedRatio(runs: Map<Mode, number[]>, of: (on: number, off: number) => number): number {
    const on = runs.get("on") ?? [], off = runs.get("off") ?? [];
    return median(on.map((v, k) => of(v, off[k])));
  }
}

export async function metricsFigures(o: MetricsOptions): Promise<MetricsFigures> {
  const problems: string[] = [];
  const gets = new Runs();
  const creates = new Runs();
  const rounds = Math.ceil(ROUNDS / PROCESSES);
  for (let p = 0; p < PROCESSES; p++) {
    const offFirst = p % 2 === 1;
    o.note(
      `metrics pair ${p + 1} of ${PROCESSES}, metrics ${offFirst ? "off" : "on"} started first`,
    );
    const dir = `${o.dir}/pair-${p}`;
    await Deno.mkdir(dir, { recursive: true });
    const servers = await o.startPair(`${dir}/on`, `${dir}/off`, offFirst);
    try {
      const { create, get } = await seedConfigMaps(Object.values(servers));
      await checkMetricsServed(servers, problems);
      const alternate = (label: string, req: typeof get, runs: Runs) =>
        alternateRoundsCpu(o, {
          servers,
          req,
          label: (m) => `${label}, metrics ${m}`,
          problems,
          rounds,
          runs: runs.perSec,
          cpuRuns: runs.cpu,
        });
      await new Promise((r) => setTimeout(r, 2_000));
      await alternate("configmap gets", get, gets);
      await alternate("configmap creates", create, creates);
    } finally {
      await servers.on.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
  const rate = (on: number, off: number) => on / off;
  const cpu = (on: number, off: number) => off / on;
  return {
    creates: creates.medians(creates.perSec),
    gets: gets.medians(gets.perSec),
    createCpuMicros: creates.medians(creates.cpu),
    getCpuMicros: gets.medians(gets.cpu),
    ratios: {
      creates: creates.pairedRatio(creates.perSec, rate),
      gets: gets.pairedRatio(gets.perSec, rate),
      createCpu: creates.pairedRatio(creates.cpu, cpu),
      getCpu: gets.pairedRatio(gets.cpu, cpu),
    },
    recordMicros: recordingMicros(),
    problems,
  };
}

/** The server with metrics on serves them; the other does not (404). */
async function checkMetricsServed(servers: Record<Mode, AuthServer>, problems: string[]) {
  for (const [mode, expected] of [["on", 200], ["off", 404]] as const) {
    const api = servers[mode].api;
    const res = await fetch(`${api.url}/metrics`, { client: api.client, headers: api.headers });
    await res.arrayBuffer();
    if (res.status !== expected) problems.push(`/metrics, metrics ${mode}: ${res.status}`);
  }
}

/**
 * What metrics add to a GET, in process and in a loop: the request's (two clock reads, its
 * series found by its labels, the request counter, the duration and size histograms),
 * authentication's (timed from the request's arrival: a clock read, a counter, a histogram),
 * and authorization's counter (the file store's reads, from memory, are not timed). Less
 * exposed to the noise of a shared machine than the throughput ratio.
 */
export function recordingMicros(): number {
  const metrics = new ServerMetrics({ version: "1.32" });
  const url = new URL("https://127.0.0.1/api/v1/namespaces/default/configmaps/read-1");
  const req = new Request(url, { method: "GET" });
  const info = requestInfoOf("GET", url);
  const record = requestMetricsRecorder(metrics, SERVES_ALL);
  const res = new Response("x".repeat(250));
  const attempts = metrics.authenticationAttempts.child("success");
  const authnDuration = metrics.authenticationDuration.child("success");
  const decisions = metrics.authorizationDecisions.child("RBAC", "rbac", "allowed");
  const run = (n: number) => {
    const started = performance.now();
    for (let i = 0; i < n; i++) {
      const ctx = { req, url, info, arrived: performance.now() } as RequestContext;
      attempts.inc();
      authnDuration.observe((performance.now() - ctx.arrived!) / 1000);
      decisions.inc();
      record(ctx, res);
    }
    return (performance.now() - started) * 1000 / n;
  };
  run(50_000); // warm up
  return Math.min(run(200_000), run(200_000));
}
