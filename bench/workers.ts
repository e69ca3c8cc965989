/**
 * `--workers` figures for `deno task bench --only=workers` (see bench/README.md): 32-client
 * configmap creates/s and gets/s of `platform serve --workers=N` on the file store for N = 1, 2
 * and 4, each against N = 1 of the same run, and a Deno.serve hello-world over HTTPS with the
 * same thread count (SO_REUSEPORT), the ceiling of what the machine serves; the delivery lag of
 * 1,000 watchers (bench/watch.ts) at N = 2 against N = 1; and etcd 3.4's puts through its JSON
 * gateway with wrk (bench/etcd_gateway.ts, its data directory on the same disk), each round
 * right after a round of N = 2 creates. Every server runs for the whole measurement (an idle
 * one costs next to nothing); the figures are medians of rounds that alternate the order
 * between them, so that a busy moment of the shared machine does not fall on one server alone.
 */

import type { AuthOptions, AuthServer } from "./auth.ts";
import { alternateRounds, median, seedConfigMaps } from "./figures_common.ts";
import { etcdGatewayPuts } from "./etcd_gateway.ts";
import { createNamespace, listRevision } from "./namespace_fill.ts";
import { measureLag, WatchFleet } from "./watch_fleet.ts";
import { haveWrk } from "./wrk.ts";
import { etcdInstalled, startEtcdMember } from "../lib/storage/testing/etcd_member.ts";

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
  /** p50 and p99 ms of watch delivery to 1,000 watchers, for N = 1 and 2 (medians of rounds). */
  lagP50: Record<string, number>;
  lagP99: Record<string, number>;
  /** etcd puts/s through its JSON gateway with wrk, 32 connections (undefined: not measured). */
  etcdPuts?: number;
  problems: string[];
}

const COUNTS = [1, 2, 4];
/** The thread counts whose watch lag is measured, and the count etcd is compared with. */
const LAG_COUNTS = [1, 2];
const ETCD_AGAINST = 2;
const CONNECTIONS = 32;
const WATCHERS = 1_000;
const WATCH_NS = "bench-watch";
const LAG_ROUNDS = 2;

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
    // etcd's puts right after each round of N = 2's creates: the same moment of the machine.
    const etcd = await startEtcd(o, problems);
    const etcdRuns: number[] = [];
    let creates: Record<string, number>;
    try {
      creates = await alternateRounds(o, {
        servers,
        req: create,
        label: (n) => `configmap creates, --workers=${n}`,
        problems,
        run: async (n, measure) => {
          const r = await measure();
          if (etcd && Number(n) === ETCD_AGAINST) {
            const e = await etcdGatewayPuts(etcd.clientUrl, CONNECTIONS, o.ms, etcdRuns.length);
            o.note(`etcd puts through the JSON gateway: ${Math.round(e.perSec)}/s`);
            if (e.errors) problems.push(`etcd puts: ${e.errors} errors of ${e.requests}`);
            etcdRuns.push(e.perSec);
          }
          return r;
        },
      });
    } finally {
      await etcd?.[Symbol.asyncDispose]();
    }
    const lag = await watchLag(o, servers, problems);
    return {
      counts: COUNTS,
      creates,
      gets,
      hello,
      ...lag,
      etcdPuts: etcdRuns.length ? median(etcdRuns) : undefined,
      problems,
    };
  } finally {
    for (const s of [...Object.values(servers), ...Object.values(hellos)]) await s.stop();
  }
}

/** An etcd member with its data directory beside the servers' (the same disk); undefined,
 * with a problem, when etcd or wrk is not installed. */
async function startEtcd(o: WorkersOptions, problems: string[]) {
  if (!etcdInstalled || !(await haveWrk())) {
    problems.push("etcd puts not measured: needs etcd and wrk installed");
    return undefined;
  }
  return await startEtcdMember({ name: "bench-workers", baseDir: o.dir });
}

/**
 * p50 and p99 of 1,000 watchers' delivery lag under a 200 writes/s writer, for each count of
 * LAG_COUNTS, in rounds that alternate the order; each round opens a fleet (every watcher on
 * its own connection: the kernel spreads them over the threads) and closes it after.
 */
async function watchLag(
  o: WorkersOptions,
  servers: Record<string, AuthServer>,
  problems: string[],
): Promise<Pick<WorkersFigures, "lagP50" | "lagP99">> {
  const collection = `/api/v1/namespaces/${WATCH_NS}/configmaps`;
  const p50s = new Map<number, number[]>(LAG_COUNTS.map((n) => [n, []]));
  const p99s = new Map<number, number[]>(LAG_COUNTS.map((n) => [n, []]));
  for (const n of LAG_COUNTS) await createNamespace(servers[n].api, WATCH_NS);
  for (let round = 0; round < LAG_ROUNDS; round++) {
    for (const n of round % 2 ? [...LAG_COUNTS].reverse() : LAG_COUNTS) {
      const s = servers[n];
      const fleet = await WatchFleet.open({
        api: s.api,
        caPem: await Deno.readTextFile(`${o.dir}/n${n}/pki/ca.crt`),
        collection,
        resourceVersion: await listRevision(s.api, collection),
        count: WATCHERS,
      });
      try {
        const r = await measureLag(s.api, fleet, {
          collection,
          perSec: 200,
          ms: 4000 * (o.ms / 3000),
          names: 100,
          prefix: `r${round}-`,
          serverPid: s.pid ?? Deno.pid,
          drainTimeoutMs: 10_000,
        });
        const label = `watch lag, ${WATCHERS} watchers, --workers=${n}`;
        o.note(`${label}: p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms`);
        if (r.missed) problems.push(`${label}: ${r.missed} deliveries missed`);
        if (r.duplicates) problems.push(`${label}: ${r.duplicates} duplicates`);
        if (r.writeErrors) problems.push(`${label}: ${r.writeErrors} write errors`);
        p50s.get(n)!.push(r.p50);
        p99s.get(n)!.push(r.p99);
      } finally {
        await fleet.close();
      }
    }
  }
  const medians = (m: Map<number, number[]>) =>
    Object.fromEntries([...m].map(([n, xs]) => [n, median(xs)]));
  return { lagP50: medians(p50s), lagP99: medians(p99s) };
}
