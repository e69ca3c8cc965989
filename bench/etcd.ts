/**
 * etcd figures for `deno task bench --backend etcd` (see bench/README.md), on one etcd member
 * whose data directory is on the same disk as the file store's:
 *
 *   - 32-client configmap creates/s through `platform` on etcd, against 32 concurrent
 *     create-if-absent transactions straight into the same etcd through the same gRPC client
 *     the backend uses (`lib/storage/etcd/client.ts`), from this process, and against the
 *     same 32-client POSTs to the thinnest HTTPS server that makes those transactions
 *     (bench/etcd_relay.ts, the peer): three rounds of each, alternating, medians;
 *   - 32-client gets/s and the latency of a list of 10,000 configmaps on etcd (lists
 *     alternating between the stores), against the same on the file store, both with
 *     resourceVersion=0 (served from memory: the watch-fed copy, the
 *     file store's cache); and consistent gets on etcd (each confirms etcd's revision first);
 *   - delivery lag (p99) of 1,000 watchers spread over 3 replicas under a 200 writes/s writer,
 *     against 1,000 watchers on one replica: rounds three, one, one, three with all three
 *     replicas running, medians.
 */

import type { AuthOptions, AuthServer } from "./auth.ts";
import { createNamespace, fill, listRevision } from "./namespace_fill.ts";
import { measureLag, WatchFleet } from "./watch_fleet.ts";
import type { Api } from "./harness.ts";
import { startEtcdMember } from "../lib/storage/testing/etcd_member.ts";
import { EtcdClient } from "../lib/storage/etcd/client.ts";
import { admin, median, untilIdle } from "./figures_common.ts";

export interface EtcdOptions extends AuthOptions {
  /** Starts bench/etcd_relay.ts on `etcdUrl`. */
  startRelay(dataDir: string, etcdUrl: string): Promise<AuthServer>;
}

export interface EtcdFigures {
  /** Create-if-absent transactions/s into etcd, 32 concurrent, through the backend's client. */
  etcdPutsPerSec: number;
  /** The same POSTs as the creates, 32 clients, to the relay: one transaction each. */
  relayPerSec: number;
  createsEtcd: number;
  /** The same creates on the file store (for context; it also evens out what each holds). */
  createsFile: number;
  getsEtcd: number;
  getsFile: number;
  /** Gets without resourceVersion: each confirms etcd's revision first. */
  getsEtcdConsistent: number;
  /** Median ms of a full list of LIST_SIZE configmaps. */
  listEtcdMs: number;
  listFileMs: number;
  /** p99 ms of watch delivery: 1,000 watchers on one replica, and spread over three. */
  lagOneReplicaP99: number;
  lagThreeReplicasP99: number;
  problems: string[];
}

const CONNECTIONS = 32;
const COLLECTION = "/api/v1/namespaces/default/configmaps";
const OBJECTS = 500;
const LIST_NS = "bench-list";
const LIST_SIZE = 10_000;
/** Rounds of puts straight into etcd and creates through the server, alternating. */
const CREATE_ROUNDS = 3;
/** Lists of each store, alternating (the figure is their median). */
const LIST_ROUNDS = 7;
const WATCH_NS = "bench-watch";
const WATCHERS = 1_000;
const TOKEN = "bench replicas";

export async function etcdFigures(o: EtcdOptions): Promise<EtcdFigures> {
  const problems: string[] = [];
  await Deno.mkdir(o.dir, { recursive: true });
  await using member = await startEtcdMember({ name: "bench", baseDir: o.dir });
  const onEtcd = ["--storage", "etcd3", "--etcd-servers", member.clientUrl, "--token", TOKEN];
  const servers: AuthServer[] = [];
  const start = async (name: string, flags: string[]) => {
    const s = await o.start(`${o.dir}/${name}`, flags);
    servers.push(s);
    return s;
  };
  try {
    const file = await start("file", []);
    const etcd = await start("etcd-a", onEtcd);

    const data = { a: "1", b: "2", c: "3" };
    const create = {
      method: "POST" as const,
      paths: [COLLECTION],
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ metadata: { generateName: "bench-" }, data }),
      expected: 201,
    };
    const measured = async (label: string, api: Api, req: typeof create) => {
      const r = await o.measure(api, CONNECTIONS, o.ms, req);
      o.note(`${label}: ${Math.round(r.perSec)}/s`);
      if (r.errors) problems.push(`${label}: ${r.errors} errors, first: ${r.firstError}`);
      return r.perSec;
    };
    // Straight into etcd (what a create costs there at most) and through the server, in
    // alternating rounds: the figures are medians (a single window of each swung the ratio by
    // ±0.1 on the shared machine).
    const puts = await etcdPuts(member.clientUrl);
    const relay = await o.startRelay(`${o.dir}/relay`, member.clientUrl);
    const putRounds: number[] = [];
    const relayRounds: number[] = [];
    const createRounds: number[] = [];
    try {
      for (let round = 0; round < CREATE_ROUNDS; round++) {
        const perSec = await puts.run(o.ms);
        o.note(`etcd create-if-absent txns/s, ${CONNECTIONS} concurrent: ${Math.round(perSec)}`);
        putRounds.push(perSec);
        relayRounds.push(await measured("relay POSTs/s on etcd", relay.api, create));
        createRounds.push(await measured("creates/s on etcd", etcd.api, create));
      }
    } finally {
      puts.close();
      await relay.stop();
    }
    const etcdPutsPerSec = median(putRounds);
    const relayPerSec = median(relayRounds);
    const createsEtcd = median(createRounds);
    // The same load on the file store: both servers then hold as many objects for the gets.
    const createsFile = await measured("creates/s on the file store", file.api, create);

    // From the watch cache (resourceVersion=0) on both; consistent gets on etcd cost a round trip.
    const paths = Array.from({ length: OBJECTS }, (_, i) => `${COLLECTION}/read-${i}`);
    const cachedPaths = paths.map((p) => `${p}?resourceVersion=0`);
    for (const s of [file, etcd]) {
      for (let i = 0; i < OBJECTS; i++) {
        await admin(s.api, COLLECTION, { metadata: { name: `read-${i}` }, data });
      }
    }
    const get = { method: "GET" as const, paths: cachedPaths, headers: {}, expected: 200 };
    // Rounds alternate between the servers; the figures are medians.
    const rounds: Record<"file" | "etcd" | "consistent", number[]> = {
      file: [],
      etcd: [],
      consistent: [],
    };
    for (let round = 0; round < 3; round++) {
      rounds.file.push(await measured("gets/s on the file store", file.api, get as never));
      rounds.etcd.push(await measured("gets/s on etcd", etcd.api, get as never));
      rounds.consistent.push(
        await measured("consistent gets/s on etcd", etcd.api, { ...get, paths } as never),
      );
    }
    const getsFile = median(rounds.file);
    const getsEtcd = median(rounds.etcd);
    const getsEtcdConsistent = median(rounds.consistent);

    // Both filled first, then lists alternating between them (one list takes 100–400 ms here
    // and single lists swing 2–4× on the shared machine: rounds one after the other on each
    // server read 0.63–1.52 as a ratio; alternating, it stays within noise of 1).
    const listPath = `/api/v1/namespaces/${LIST_NS}/configmaps?resourceVersion=0`;
    const lists = [["file", file], ["etcd", etcd]] as const;
    for (const [label, s] of lists) {
      await createNamespace(s.api, LIST_NS);
      const filled = await fill(s.api, LIST_NS, LIST_SIZE);
      if (filled.errors) problems.push(`filling ${label}: ${filled.errors}: ${filled.firstError}`);
    }
    const listTimes: Record<string, number[]> = { file: [], etcd: [] };
    for (const [, s] of lists) await listOnce(s.api, listPath); // warm-up: encodings cached
    for (let round = 0; round < LIST_ROUNDS; round++) {
      for (const [label, s] of lists) listTimes[label].push(await listOnce(s.api, listPath));
    }
    const listMs: Record<string, number> = {};
    for (const [label] of lists) {
      listMs[label] = median(listTimes[label]);
      o.note(`list of ${LIST_SIZE} on ${label}: ${listMs[label].toFixed(0)} ms (median)`);
    }

    // Watchers: 1,000 on one replica and 1,000 over three, in rounds three, one, one, three
    // (medians), with all three replicas up and quiet first: measured once each, the
    // three-replica run came right after two replicas started, on code V8 had not optimized yet.
    // The first round warms the new replicas, and it counts against three.
    const caPem = await Deno.readTextFile(`${o.dir}/etcd-a/pki/ca.crt`);
    await createNamespace(etcd.api, WATCH_NS);
    const collection = `/api/v1/namespaces/${WATCH_NS}/configmaps`;
    const lag = async (apis: Api[], prefix: string) => {
      const fleet = await WatchFleet.open({
        api: etcd.api,
        apis,
        caPem,
        collection,
        resourceVersion: await listRevision(etcd.api, collection),
        count: WATCHERS,
      });
      try {
        const r = await measureLag(etcd.api, fleet, {
          collection,
          perSec: 200,
          ms: 4000 * (o.ms / 3000),
          names: 100,
          prefix,
          serverPid: Deno.pid,
          drainTimeoutMs: 10_000,
        });
        if (r.missed) problems.push(`${prefix}: ${r.missed} deliveries missed`);
        if (r.duplicates) problems.push(`${prefix}: ${r.duplicates} duplicates`);
        o.note(
          `watch lag over ${apis.length} replica(s): p50 ${r.p50.toFixed(1)} ms, p99 ${
            r.p99.toFixed(1)
          } ms`,
        );
        return r.p99;
      } finally {
        await fleet.close();
      }
    };
    const b = await start("etcd-b", onEtcd);
    const c = await start("etcd-c", onEtcd);
    // The new replicas' start-up (bootstrap, caches, leader election) must not land in a round.
    if (!await untilIdle([etcd.pid, b.pid, c.pid])) o.note("replicas still busy after 30 s");
    const lags: Record<"one" | "three", number[]> = { one: [], three: [] };
    for (const [round, mode] of (["three", "one", "one", "three"] as const).entries()) {
      const apis = mode === "one" ? [etcd.api] : [etcd.api, b.api, c.api];
      lags[mode].push(await lag(apis, `${mode}-${round}-`));
    }
    const lagOneReplicaP99 = median(lags.one);
    const lagThreeReplicasP99 = median(lags.three);

    return {
      etcdPutsPerSec,
      relayPerSec,
      createsEtcd,
      createsFile,
      getsEtcd,
      getsFile,
      getsEtcdConsistent,
      listEtcdMs: listMs.etcd,
      listFileMs: listMs.file,
      lagOneReplicaP99,
      lagThreeReplicasP99,
      problems,
    };
  } finally {
    for (const s of servers) await s.stop();
  }
}

/**
 * 32 loops of create-if-absent transactions of ~300-byte values on fresh keys, through one
 * client (warmed up once): `run(ms)` gives the transactions/s of one window.
 */
async function etcdPuts(
  clientUrl: string,
): Promise<{ run(ms: number): Promise<number>; close(): void }> {
  const client = await EtcdClient.connect([clientUrl]);
  const enc = new TextEncoder();
  const value = enc.encode(JSON.stringify({ data: { payload: "x".repeat(240) } }));
  let n = 0;
  const run = async (duration: number, prefix = "") => {
    let done = 0;
    const deadline = performance.now() + duration;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        const key = enc.encode(`/bench-puts/${prefix}${n++}`);
        await client.txn({
          compare: [{ key, target: "CREATE", result: "EQUAL", create_revision: 0 }],
          success: [{ request_put: { key, value } }],
          failure: [],
        });
        done++;
      }
    }));
    return done / ((performance.now() - t0) / 1000);
  };
  try {
    await run(400, "warm-");
  } catch (err) {
    client.close();
    throw err;
  }
  return { run, close: () => client.close() };
}

/** Milliseconds of one full list of `collection` (body read whole). */
async function listOnce(api: Api, collection: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(api.url + collection, { client: api.client, headers: api.headers });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`GET ${collection} → ${res.status}`);
  return performance.now() - t0;
}
