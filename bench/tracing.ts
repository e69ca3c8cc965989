/**
 * Tracing figures for `deno task bench` (see bench/README.md): 32-client configmap creates/s
 * and gets/s on a server that traces every request (`samplingRatePerMillion: 1000000`) to an
 * OTLP/gRPC receiver in the bench process, against one without a tracing configuration. Both
 * servers run on the file store at the same time; the figures are medians of rounds that
 * alternate between them. The receiver counts what arrives, so that dropped spans show.
 *
 * Each round starts once both servers are quiet: a file-store server writes the object files
 * of its creates in the background as soon as its traffic stops (some 1 ms of CPU and disk a
 * file here), so without the wait a round of creates landed on the other server's writing
 * and the faster server's larger backlog slowed the slower one most (measured with perf:
 * thousands of renames and fdatasyncs by the idle server during the other's round, README).
 */

import type { AuthOptions } from "./auth.ts";
import { otlpReceiver } from "../tests/otlp_receiver.ts";
import { alternateRounds, seedConfigMaps } from "./figures_common.ts";
import { cpuMs } from "./watch.ts";

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
          if (!await quiet(Object.values(servers))) {
            o.note(`${label}: a server was still busy after ${QUIET_LIMIT_MS / 1000} s`);
          }
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

/** How long a round waits at most for the servers to be quiet. */
const QUIET_LIMIT_MS = 30_000;
const QUIET_WINDOW_MS = 250;

/** What a server has done so far: CPU ms, write system calls and bytes written to files (its
 * object files' writes use the disk more than the CPU). */
async function activity(pid: number): Promise<{ cpu: number; writes: number; bytes: number }> {
  const io = await Deno.readTextFile(`/proc/${pid}/io`).catch(() => "");
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)`, "m").exec(io)?.[1] ?? 0);
  return { cpu: await cpuMs(pid), writes: field("syscw"), bytes: field("write_bytes") };
}

/** Write system calls an idle server makes in a window (its timers wake threads: some 12/s). */
const IDLE_WRITES = 10;

/** Waits until every server used under a tenth of a core, wrote no file and made no more
 * write calls than an idle one, two windows in a row; false when it did not come to that
 * within {@link QUIET_LIMIT_MS}. */
async function quiet(servers: { pid?: number }[]): Promise<boolean> {
  const pids = servers.flatMap((s) => s.pid === undefined ? [] : [s.pid]);
  const deadline = performance.now() + QUIET_LIMIT_MS;
  let calm = 0;
  let before = await Promise.all(pids.map(activity));
  while (performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, QUIET_WINDOW_MS));
    const now = await Promise.all(pids.map(activity));
    const busy = now.some((a, i) =>
      a.cpu - before[i].cpu > QUIET_WINDOW_MS / 10 || a.bytes > before[i].bytes ||
      a.writes - before[i].writes > IDLE_WRITES
    );
    before = now;
    calm = busy ? 0 : calm + 1;
    if (calm >= 2) return true;
  }
  return false;
}
