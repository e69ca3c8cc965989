/**
 * Tracing figures for `deno task bench` (see bench/README.md): 32-client configmap creates/s
 * and gets/s on a server that traces every request (`samplingRatePerMillion: 1000000`) to an
 * OTLP/gRPC receiver in the bench process, against one without a tracing configuration. Both
 * servers run on the file store at the same time, in processes of their own, in rounds that
 * alternate between them; the rounds are spread over three such pairs of servers
 * (figures_common.ts, `acrossServerSets`), each started in the other order. The figures are
 * medians over all rounds; the ratios, medians over rounds of each round's ratio. The receiver
 * counts what arrives, so that dropped spans show.
 *
 * Each round starts once both servers are quiet (figures_common.ts, `untilIdle`): without the
 * wait a round of creates landed on the other server's object-file writing, and the faster
 * server's larger backlog slowed the slower one most (measured with perf: thousands of renames
 * and fdatasyncs by the idle server during the other's round, README).
 */

import type { AuthOptions } from "./auth.ts";
import { otlpReceiver } from "../tests/otlp_receiver.ts";
import {
  acrossServerSets,
  alternateRoundsCpu,
  RoundRuns,
  seedConfigMaps,
  startEach,
} from "./figures_common.ts";

export interface TracingFigures {
  creates: Record<Mode, number>;
  gets: Record<Mode, number>;
  /** Each server's CPU time per request, µs (user + system, from /proc). */
  createCpuMicros: Record<Mode, number>;
  getCpuMicros: Record<Mode, number>;
  /** Medians over rounds of traced ÷ none (requests/s) and none ÷ traced (CPU per request). */
  ratios: { creates: number; gets: number; createCpu: number; getCpu: number };
  /** Requests the traced server answered in the measured runs, and OTLP bytes received. */
  tracedRequests: number;
  bytesReceived: number;
  problems: string[];
}

type Mode = "none" | "traced";

export async function tracingFigures(o: AuthOptions): Promise<TracingFigures> {
  const problems: string[] = [];
  await Deno.mkdir(o.dir, { recursive: true });
  // Not decoding what it receives: the receiver shares the machine's two cores with the
  // servers measured, and a collector runs elsewhere.
  await using receiver = await otlpReceiver({ keep: false, decode: false });
  const config = `${o.dir}/tracing.yaml`;
  await Deno.writeTextFile(
    config,
    "apiVersion: apiserver.platform.io/v1beta1\nkind: TracingConfiguration\n" +
      `endpoint: ${receiver.endpoint}\nsamplingRatePerMillion: 1000000\n`,
  );
  const gets = new RoundRuns<Mode>();
  const creates = new RoundRuns<Mode>();
  const modes: Mode[] = ["none", "traced"];
  await acrossServerSets(
    o,
    modes,
    (dir, order) =>
      startEach(
        modes,
        order,
        (mode) =>
          o.start(`${dir}/${mode}`, mode === "traced" ? ["--tracing-config-file", config] : []),
      ),
    async (servers, rounds) => {
      const { create, get } = await seedConfigMaps(Object.values(servers));
      const alternate = (label: string, req: typeof get, runs: RoundRuns<Mode>) =>
        alternateRoundsCpu(o, {
          servers,
          req,
          label: (m) => `${label}, ${m === "none" ? "no tracing" : "traced"}`,
          problems,
          rounds,
          runs: runs.perSec,
          cpuRuns: runs.cpu,
        });
      await new Promise((r) => setTimeout(r, 2_000));
      await alternate("configmap gets", get, gets);
      await alternate("configmap creates", create, creates);
      // The last batches leave within a second or two.
      await new Promise((r) => setTimeout(r, 2_500));
    },
  );
  const c = creates.ratios("traced", "none"), g = gets.ratios("traced", "none");
  const traced = [...creates.perSec.get("traced") ?? [], ...gets.perSec.get("traced") ?? []];
  return {
    creates: creates.medians(creates.perSec),
    gets: gets.medians(gets.perSec),
    createCpuMicros: creates.medians(creates.cpu),
    getCpuMicros: gets.medians(gets.cpu),
    ratios: { creates: c.perSec, gets: g.perSec, createCpu: c.cpu, getCpu: g.cpu },
    tracedRequests: Math.round(traced.reduce((a, b) => a + b, 0) * o.ms / 1000),
    bytesReceived: receiver.count(),
    problems,
  };
}
