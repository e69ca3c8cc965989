/**
 * `--workers` figures for `deno task bench --only=workers` (see bench/README.md): 32-client
 * configmap creates/s and gets/s of `platform serve --workers=N` on the file store for N = 1, 2
 * and 4, each against N = 1 of the same run, and a Deno.serve hello-world over HTTPS with the
 * same thread count (SO_REUSEPORT), the ceiling of what the machine serves. Every server runs
 * for the whole measurement (an idle one costs next to nothing); the figures are medians of
 * rounds that alternate the order between them, so that a busy moment of the shared machine
 * does not fall on one server alone.
 */

import type { AuthOptions, AuthServer } from "./auth.ts";
import { alternateRounds, seedConfigMaps } from "./figures_common.ts";

export interface WorkersOptions extends AuthOptions {
  /** Starts the hello-world server with `threads` threads. */
  startHello(dataDir: string, threads: number): Promise<AuthServer>;
}

/** Median requests/s per thread count. */
export interface WorkersFigures {
  counts: number[];
  creates: Record<string, number>;
  gets: Record<string, number>;
  hello: Record<string, number>;
  problems: string[];
}

const COUNTS = [1, 2, 4];

export async function workersFigures(o: WorkersOptions): Promise<WorkersFigures> {
  const problems: string[] = [];
  await Deno.mkdir(o.dir, { recursive: true });
  const servers: Record<string, AuthServer> = {};
  const hellos: Record<string, AuthServer> = {};
  try {
    for (const n of COUNTS) {
      servers[n] = await o.start(`${o.dir}/n${n}`, [`--workers=${n}`]);
      hellos[n] = await o.startHello(`${o.dir}/hello${n}`, n);
    }
    const { create, get } = await seedConfigMaps(Object.values(servers));
    await new Promise((r) => setTimeout(r, 2_000));
    const gets = await alternateRounds(o, {
      servers,
      req: get,
      label: (n) => `configmap gets, --workers=${n}`,
      problems,
    });
    const hello = await alternateRounds(o, {
      servers: hellos,
      req: { method: "GET", paths: ["/"], headers: {}, expected: 200 },
      label: (n) => `hello-world, ${n} threads`,
      problems,
    });
    const creates = await alternateRounds(o, {
      servers,
      req: create,
      label: (n) => `configmap creates, --workers=${n}`,
      problems,
    });
    return { counts: COUNTS, creates, gets, hello, problems };
  } finally {
    for (const s of [...Object.values(servers), ...Object.values(hellos)]) await s.stop();
  }
}
