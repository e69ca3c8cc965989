/**
 * Tracing figures for `deno task bench` (see bench/README.md): 32-client configmap creates/s
 * and gets/s on a server that traces every request (`samplingRatePerMillion: 1000000`) to an
 * OTLP/gRPC receiver in the bench process, against one without a tracing configuration. Both
 * servers run on the file store at the same time; the figures are medians of rounds that
 * alternate between them. The receiver counts what arrives, so that dropped spans show.
 */

import type { AuthOptions } from "./auth.ts";
import type { WrkRequest } from "./wrk.ts";
import { otlpReceiver } from "../tests/otlp_receiver.ts";
import { admin, median } from "./figures_common.ts";

export interface TracingFigures {
  creates: Record<Mode, number>;
  gets: Record<Mode, number>;
  /** Requests the traced server answered in the measured runs, and OTLP bytes received. */
  tracedRequests: number;
  bytesReceived: number;
  problems: string[];
}

type Mode = "none" | "traced";

const CONNECTIONS = 32;
const ROUNDS = 3;
const COLLECTION = "/api/v1/namespaces/default/configmaps";
const OBJECTS = 500;

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
  const modes = Object.keys(servers) as Mode[];
  let tracedRequests = 0;
  try {
    const data = { a: "1", b: "2", c: "3" };
    const paths: string[] = [];
    for (let i = 0; i < OBJECTS; i++) paths.push(`${COLLECTION}/read-${i}`);
    for (const s of Object.values(servers)) {
      for (let i = 0; i < OBJECTS; i++) {
        await admin(s.api, COLLECTION, { metadata: { name: `read-${i}` }, data });
      }
    }
    const create = {
      method: "POST" as const,
      paths: [COLLECTION],
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ metadata: { generateName: "bench-" }, data }),
      expected: 201,
    };
    const get = { method: "GET" as const, paths, headers: {}, expected: 200 };
    const alternate = async (label: string, req: WrkRequest & { expected: number }) => {
      const runs: Record<Mode, number[]> = { none: [], traced: [] };
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 ? [...modes].reverse() : modes;
        for (const mode of order) {
          const r = await o.measure(servers[mode].api, CONNECTIONS, o.ms, req);
          o.note(
            `${label}, ${mode === "none" ? "no tracing" : "traced"}: ${Math.round(r.perSec)}/s`,
          );
          if (r.errors) {
            problems.push(`${label}, ${mode}: ${r.errors} errors, first: ${r.firstError}`);
          }
          if (mode === "traced") tracedRequests += Math.round(r.perSec * o.ms / 1000);
          runs[mode].push(r.perSec);
          await new Promise((r) => setTimeout(r, req.method === "POST" ? 1_500 : 300));
        }
      }
      return Object.fromEntries(modes.map((m) => [m, median(runs[m])])) as Record<Mode, number>;
    };
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
