/**
 * Metrics figures for `deno task bench` (see bench/README.md): 32-client configmap creates/s
 * and gets/s on a server with metrics on (the default) against one with metrics off (the
 * `metrics: false` start option: a registry that records nothing; `/metrics` is not served).
 * The two run in one process (bench/server_pair.ts), so that only metrics differ between them,
 * in rounds that alternate between them; the rounds are spread over three such processes
 * (server_sets.ts), which start the two in alternating order. The figures
 * are medians over all rounds; the ratios, medians over rounds of each round's ratio.
 */

import type { AuthOptions, AuthServer } from "./auth.ts";
import { ServerMetrics } from "../lib/metrics/mod.ts";
import { requestInfoOf } from "../lib/server/request_info.ts";
import { SERVES_ALL } from "../lib/server/request_labels.ts";
import { requestMetricsRecorder } from "../lib/server/filters/metrics.ts";
import type { RequestContext } from "../lib/server/context.ts";
import { compareServers, type Ratios, type ServerValues } from "./server_sets.ts";

export interface MetricsOptions extends AuthOptions {
  /** Starts the two servers in one process (bench/server_pair.ts), metrics on and off; the
   * one with metrics off first if `offFirst`. */
  startPair(onDir: string, offDir: string, offFirst: boolean): Promise<Record<Mode, AuthServer>>;
}

export interface MetricsFigures extends ServerValues<Mode> {
  /** In process: µs a GET's request metrics cost (labels, counter, two histograms). */
  recordMicros: number;
  /** Medians over rounds of on ÷ off (requests/s) and off ÷ on (CPU per request). */
  ratios: Ratios;
  problems: string[];
}

type Mode = "on" | "off";

export async function metricsFigures(o: MetricsOptions): Promise<MetricsFigures> {
  const problems: string[] = [];
  const c = await compareServers<Mode>(o, {
    modes: ["on", "off"],
    start: (dir, order) => o.startPair(`${dir}/on`, `${dir}/off`, order[0] === "off"),
    name: (m) => `metrics ${m}`,
    problems,
    beforeRounds: (servers) => checkMetricsServed(servers, problems),
  });
  return {
    ...c.values,
    ratios: c.ratios("on", "off"),
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
