/**
 * Tracing figures for `deno task bench` (see bench/README.md): 32-client configmap creates/s
 * and gets/s on a server that traces every request (`samplingRatePerMillion: 1000000`) to an
 * OTLP/gRPC receiver in the bench process, against one without a tracing configuration. Both
 * servers run on the file store at the same time, in processes of their own, in rounds that
 * alternate between them; the rounds are spread over three such pairs of servers
 * (server_sets.ts), each started in the other order. The figures are
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
import { compareServers, type Ratios, type ServerValues, startEach } from "./server_sets.ts";

export interface TracingFigures extends ServerValues<Mode> {
  /** Medians over rounds of traced ÷ none (requests/s) and none ÷ traced (CPU per request). */
  ratios: Ratios;
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
  const modes: Mode[] = ["none", "traced"];
  const c = await compareServers(o, {
    modes,
    start: (dir, order) =>
      startEach(
        modes,
        order,
        (mode) =>
          o.start(`${dir}/${mode}`, mode === "traced" ? ["--tracing-config-file", config] : []),
      ),
    name: (m) => m === "none" ? "no tracing" : "traced",
    problems,
    // The last batches leave within a second or two.
    afterRounds: () => new Promise((r) => setTimeout(r, 2_500)),
  });
  const traced = c.perSec("traced").reduce((a, b) => a + b, 0);
  return {
    ...c.values,
    ratios: c.ratios("traced", "none"),
    tracedRequests: Math.round(traced * o.ms / 1000),
    bytesReceived: receiver.count(),
    problems,
  };
}
