/**
 * Tracing figures for `deno task bench` (see bench/README.md): 32-client configmap creates/s
 * and gets/s on a server that traces every request (`samplingRatePerMillion: 1000000`) to an
 * OTLP/gRPC receiver in the bench process, against one without a tracing configuration. Both
 * servers run on the file store at the same time; the figures are medians of rounds that
 * alternate between them. The receiver counts what arrives, so that dropped spans show.
 *
 * Each round starts once both servers are quiet (figures_common.ts, `untilIdle`): without the
 * wait a round of creates landed on the other server's object-file writing, and the faster
 * server's larger backlog slowed the slower one most (measured with perf: thousands of renames
 * and fdatasyncs by the idle server during the other's round, README).
 */

import type { AuthOptions } from "./auth.ts";
import { otlpReceiver } from "../tests/otlp_receiver.ts";
import { alternateRounds, seedConfigMaps } from "./figures_common.ts";

export interface TracingFigures {
  creates: Record<Mode, number>;
  gets: Record<Mode, number>;
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
  const servers = {
    none: await o.start(`${o.dir}/none`, []),
    traced: await o.start(`${o.dir}/traced`, ["--tracing-config-file", config]),
  };
  let tracedRequests = 0;
  try {
    const { create, get } = await seedConfigMaps(Object.values(servers));
    const alternate = (label: string, req: typeof get) =>
      alternateRounds(o, {
        servers,
        req,
        label: (m) => `${label}, ${m === "none" ? "no tracing" : "traced"}`,
        problems,
        run: async (mode, measure) => {
          const r = await measure();
          if (mode === "traced") tracedRequests += Math.round(r.perSec * o.ms / 1000);
          return r;
        },
      });
    await new Promise((r) => setTimeout(r, 2_000));
    const gets = await alternate("configmap gets", get);
    const creates = await alternate("configmap creates", create);
    // The last batches leave within a second or two.
    await new Promise((r) => setTimeout(r, 2_500));
    return { creates, gets, tracedRequests, bytesReceived: receiver.count(), problems };
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
}
