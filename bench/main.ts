/**
 * Benchmarks (`deno task bench`, `deno task bench --quick`): the server's throughput and
 * latency next to the baselines that bound them on this machine, printed as a Markdown table.
 *
 *   A   fdatasync'd 200-byte appends/s on the data directory's filesystem (durable writes
 *       cannot beat this per client; group commit lets concurrent clients share a sync)
 *   B   requests/s of a Deno.serve hello-world over HTTPS, same TLS setup, same client
 *   creates/s (1 and 32 clients) on the file store, vs A
 *   gets/s (1 and 32 clients), vs B
 *   list latency of 10,000 configmaps (median of several full GETs)
 *   gets/s and lists/s of 1,000 configmaps as JSON, YAML and protobuf, and their sizes
 *   (encodings.ts), vs JSON
 *   cold start: spawn → first /readyz 200 on an empty data directory; in-process startServer()
 *   on a second server (watch.ts): delivery lag of 1,000 watchers of one namespace under a
 *   200 writes/s writer (vs 1 watcher), the server's RSS with them, 32-client creates/s with
 *   and without them, paging through 10,000 and 100,000 configmaps
 *
 * Servers run as child processes (`deno run --allow-all main.ts serve`, and bench/hello_world.ts
 * for B), so the client and the server each have their own thread.
 *
 * See bench/README.md.
 */

import { fileURLToPath } from "node:url";
import { ROOT_CA_CONFIGMAP } from "../lib/controllers/namespace_defaults.ts";
import { applyFigures } from "./apply.ts";
import { encodingFigures, encodingRows } from "./encodings.ts";
import { pagingFigures, watchFigures } from "./watch.ts";
import { haveWrk } from "./wrk.ts";
import { admissionRows, authRows, encryptionRows } from "./rows.ts";
import { auditRows, metricsRows, tracingRows } from "./rows_operate.ts";
import { chosenRun, type Rows } from "./run_choice.ts";
import {
  type Api,
  apiFor,
  type Child,
  describeLoad,
  fmt,
  fsyncBaseline,
  listNames,
  loggedErrors,
  measure,
  median,
  note,
  platformServer,
  printTable,
  QUICK,
  request,
  type Row,
  settle,
  spawnServer,
  stopServer,
  T,
} from "./harness.ts";

/** The hello-world server of baseline B (and of the workers figures). */
const HELLO = fileURLToPath(new URL("./hello_world.ts", import.meta.url));
const CM = "/api/v1/namespaces/default/configmaps";
const LIST_NS = "bench-list";
const LIST_SIZE = 10_000;
const WATCHERS = 1_000;
const WATCH_WRITES_PER_SEC = 200;
const PAGE_SIZES = [10_000, 100_000];
const PAGE_LIMIT = 500;
const ENCODING_NS = "bench-encodings";
const ENCODING_SIZE = 1_000;

// --- options ---------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = performance.now();
  const tmp = await Deno.makeTempDir({ prefix: "platform-bench-" });
  const children: Child[] = [];
  const clients: Deno.HttpClient[] = [];
  const rows: Row[] = [];
  const problems: string[] = [];
  const track = (c: Child) => (children.push(c), c);
  const trackApi = (a: Api) => (clients.push(a.client), a);
  try {
    note(
      `Deno ${Deno.version.deno} on ${Deno.build.os}/${Deno.build.arch}, ${navigator.hardwareConcurrency} CPUs, data in ${tmp}${
        QUICK ? " (quick)" : ""
      }`,
    );

    note(
      await haveWrk()
        ? "client: wrk (1 thread) for every load figure"
        : "client: Deno fetch (wrk is not installed: `apt-get install wrk` for a client that " +
          "does not compete with the server for the CPU)",
    );

    // A: fdatasync baseline
    const fsyncPerSec = await fsyncBaseline(tmp, 2000 * T);
    note(`A: fdatasync'd 200-byte appends: ${fmt(fsyncPerSec)}/s`);

    // B: hello-world over HTTPS (child process)
    const helloDir = `${tmp}/hello`;
    const hello = track(await spawnServer([HELLO, helloDir], helloDir));
    const helloApi = trackApi(await apiFor(hello, false));
    const helloReq = { method: "GET", paths: ["/"], headers: {}, expected: 200 } as const;
    const hello1 = await measure(helloApi, 1, 2000 * T, helloReq);
    describeLoad("B: hello-world, 1 client", hello1);
    const hello32 = await measure(helloApi, 32, 3000 * T, helloReq);
    describeLoad("B: hello-world, 32 clients", hello32);
    await stopServer(hello, "SIGTERM", "hello-world server");

    // The real server on the file store.
    const serverDir = `${tmp}/server`;
    const server = track(await platformServer(serverDir));
    const api = trackApi(await apiFor(server, true));
    const payload = "x".repeat(120);
    // generateName: every request is the same, so wrk can send it.
    const createReq = {
      method: "POST",
      paths: [CM],
      headers: { "Content-Type": "application/json" },
      body:
        `{"metadata":{"generateName":"bench-","labels":{"app":"bench"}},"data":{"payload":"${payload}"}}`,
      expected: 201,
    } as const;
    const creates1 = await measure(api, 1, 2000 * T, createReq);
    describeLoad("creates, 1 client", creates1);
    // Gets before the big burst of creates: after it the store writes tens of thousands of
    // object files in the background for a while, which is a figure of its own (settle).
    const names = await listNames(api, CM, 1000);
    // Wait for the background object-file writes to finish (single GETs under 2 ms again).
    await settle(api, names.paths[0], `after ${names.total} creates`, 2);
    const getReq = { method: "GET", paths: names.paths, headers: {}, expected: 200 } as const;
    const gets1 = await measure(api, 1, 2000 * T, getReq);
    describeLoad("gets, 1 client", gets1);
    const gets32 = await measure(api, 32, 3000 * T, getReq);
    describeLoad("gets, 32 clients", gets32);

    const creates32 = await measure(api, 32, 3000 * T, createReq);
    describeLoad("creates, 32 clients", creates32);
    const acknowledged = (creates1.acknowledged ?? 0) + (creates32.acknowledged ?? 0);
    const created = (await listNames(api, CM, 1)).total;
    if (created < acknowledged) {
      problems.push(`${acknowledged} creates were acknowledged but only ${created} objects exist`);
    }
    const settledAfter = created;
    const settleCreates = await settle(api, names.paths[0], `after ${created} creates`);

    // List 10,000 configmaps in their own namespace.
    const nsErr = await request(
      api,
      "POST",
      "/api/v1/namespaces",
      201,
      `{"metadata":{"name":"${LIST_NS}"}}`,
    );
    if (nsErr) throw new Error(nsErr);
    const fillStart = performance.now();
    let next = 0;
    let fillErrors = 0;
    await Promise.all(Array.from({ length: 64 }, async () => {
      while (next < LIST_SIZE) {
        const i = next++;
        const err = await request(
          api,
          "POST",
          `/api/v1/namespaces/${LIST_NS}/configmaps`,
          201,
          `{"metadata":{"name":"cm-${
            String(i).padStart(5, "0")
          }","labels":{"app":"bench","i":"${i}"}},"data":{"payload":"${payload}"}}`,
        ).catch((e) => String(e));
        if (err) {
          if (fillErrors++ === 0) problems.push(`filling the list namespace: ${err}`);
        }
      }
    }));
    const fillSec = (performance.now() - fillStart) / 1000;
    note(
      `created ${LIST_SIZE} configmaps with 64 clients in ${fmt(fillSec, 1)} s (${
        fmt(LIST_SIZE / fillSec)
      }/s${fillErrors ? `, ${fillErrors} ERRORS` : ""})`,
    );
    const settleFill = await settle(
      api,
      `/api/v1/namespaces/${LIST_NS}/configmaps/cm-00000`,
      `after ${LIST_SIZE} more creates`,
    );
    for (const [what, st] of [["creates", settleCreates], ["the list fill", settleFill]] as const) {
      if (!st.settled) problems.push(`GETs still slow 20 s after ${what}`);
    }
    const listTimes: number[] = [];
    let listCount = -1;
    let listBytes = 0;
    const runs = QUICK ? 4 : 8;
    for (let i = 0; i <= runs; i++) {
      const t0 = performance.now();
      const res = await fetch(`${api.url}/api/v1/namespaces/${LIST_NS}/configmaps`, {
        client: api.client,
        headers: api.headers,
      });
      const text = await res.text();
      const ms = performance.now() - t0;
      if (res.status !== 200) throw new Error(`list → ${res.status}: ${text.slice(0, 300)}`);
      if (i === 0) {
        // The first (warm-up) run is not timed. The namespace's kube-root-ca.crt is not ours.
        listCount = JSON.parse(text).items.filter((i: { metadata: { name: string } }) =>
          i.metadata.name !== ROOT_CA_CONFIGMAP
        ).length;
        listBytes = text.length;
        continue;
      }
      listTimes.push(ms);
    }
    if (listCount !== LIST_SIZE) {
      problems.push(`the list returned ${listCount} items, not ${LIST_SIZE}`);
    }
    const listMs = median(listTimes);
    note(
      `list of ${listCount} configmaps (${fmt(listBytes / 1e6, 1)} MB): median ${
        fmt(listMs, 1)
      } ms, ` +
        `runs ${listTimes.map((t) => fmt(t)).join(", ")} ms`,
    );
    // Gets and lists of 1,000 configmaps as JSON, YAML and protobuf (bench/encodings.ts).
    const encodings = await encodingFigures({
      api,
      namespace: ENCODING_NS,
      count: ENCODING_SIZE,
      ms: 3000 * T,
      measure: (concurrency, ms, req) => measure(api, concurrency, ms, req),
      // as before the gets above: until the background object-file writes are done
      settle: (path, label) => settle(api, path, label, 2),
      note,
    });
    problems.push(...encodings.problems);
    // Server-side apply vs PUT of a 50-field configmap (bench/apply.ts).
    const applied = await applyFigures({
      api,
      caPem: await Deno.readTextFile(`${server.dataDir}/pki/ca.crt`),
      namespace: "bench-apply",
      ms: 3000 * T,
      note,
    });
    problems.push(...applied.problems);
    problems.push(...loggedErrors(server).slice(0, 10).map((l) => `server log: ${l}`));
    const objects = created + LIST_SIZE + ENCODING_SIZE + 16;
    const stopMs = await stopServer(server, "SIGTERM", "the loaded server", 30_000);
    note(
      `clean stop (SIGTERM → exit) with ${objects} objects: ${
        stopMs === undefined ? "over 30 s, killed" : `${fmt(stopMs)} ms`
      }`,
    );
    if (stopMs === undefined || stopMs > 10_000) {
      problems.push(
        `SIGTERM → exit of the server holding ${objects} objects took ${
          stopMs === undefined ? "over 30 s (killed)" : `${fmt(stopMs / 1000, 1)} s`
        }`,
      );
    }

    // Cold start: spawn → first /readyz 200, empty data directory each time.
    const coldRuns = QUICK ? 2 : 3;
    const cold: number[] = [];
    const coldServing: number[] = [];
    for (let i = 0; i < coldRuns; i++) {
      const dir = `${tmp}/cold-${i}`;
      const child = track(await platformServer(dir));
      const probe = await apiFor(child, false);
      try {
        let ready = false;
        const deadline = performance.now() + 30_000;
        while (!ready && performance.now() < deadline) {
          const res = await fetch(`${child.url}/readyz`, { client: probe.client }).catch(() =>
            null
          );
          if (res) {
            await res.arrayBuffer();
            ready = res.status === 200;
          }
          if (!ready) await new Promise((r) => setTimeout(r, 2));
        }
        if (!ready) throw new Error("/readyz never returned 200");
        cold.push(performance.now() - child.spawnedAt);
        coldServing.push(child.servingMs);
      } finally {
        probe.client.close();
        const stopped = await stopServer(child, "SIGTERM", `cold-start server ${i + 1}`, 3_000);
        if (stopped === undefined) {
          problems.push(`cold-start server ${i + 1}: no exit within 3 s of SIGTERM (killed)`);
        }
      }
    }
    const coldMs = median(cold);
    note(
      `cold start (spawn → /readyz 200): ${cold.map((t) => fmt(t)).join(", ")} ms; ` +
        `spawn → "serving on": ${coldServing.map((t) => fmt(t)).join(", ")} ms`,
    );

    // In-process startServer(), after the modules are loaded.
    const { startServer } = await import("../mod.ts");
    const { silentLogger } = await import("../lib/api/mod.ts");
    const inproc: number[] = [];
    for (let i = 0; i < coldRuns; i++) {
      const t0 = performance.now();
      const s = await startServer({
        storage: "file",
        dataDir: `${tmp}/inproc-${i}`,
        logger: silentLogger,
      });
      inproc.push(performance.now() - t0);
      await s.close();
    }
    const inprocMs = median(inproc);
    note(
      `in-process startServer() on an empty data dir: ${inproc.map((t) => fmt(t)).join(", ")} ms`,
    );

    // Watches and paging, on a server of their own, so that the figures above keep meaning
    // what they did (and the clean stop above holds the objects it did).
    const wServer = track(await platformServer(`${tmp}/watch-server`));
    const wApi = trackApi(await apiFor(wServer, true));
    const createsInto = async (ns: string) => {
      const path = `/api/v1/namespaces/${ns}/configmaps`;
      const r = await measure(wApi, 32, 3000 * T, { ...createReq, paths: [path] });
      describeLoad(`creates into ${ns}, 32 clients`, r);
      if (r.errors) problems.push(`creates into ${ns}: ${r.errors} errors, first: ${r.firstError}`);
      return r;
    };
    const watch = await watchFigures({
      api: wApi,
      caPem: await Deno.readTextFile(`${wServer.dataDir}/pki/ca.crt`),
      serverPid: wServer.proc.pid,
      namespace: "bench-watch",
      otherNamespace: "bench-unwatched",
      watchers: WATCHERS,
      perSec: WATCH_WRITES_PER_SEC,
      ms: 10_000 * T,
      baselineMs: 3000 * T,
      drainTimeoutMs: 10_000 * T,
      creates: createsInto,
      settle: (path, label) => settle(wApi, path, label),
      note,
    });
    const paging = await pagingFigures({
      api: wApi,
      counts: PAGE_SIZES,
      limit: PAGE_LIMIT,
      runs: QUICK ? 1 : 3,
      settle: (path, label) => settle(wApi, path, label),
      note,
    });
    problems.push(...watch.problems, ...paging.problems);
    problems.push(...loggedErrors(wServer).slice(0, 10).map((l) => `watch server log: ${l}`));
    await stopServer(wServer, "SIGKILL");
    // RBAC vs AlwaysAllow, JWT vs static token, on servers of their own.
    const access = await authRows(tmp, track, trackApi, problems);
    // aesgcm vs identity for Secrets, on servers of their own.
    const atRest = await encryptionRows(tmp, track, trackApi, problems);
    // No admission configuration vs two webhooks vs one policy, on a server of its own.
    const admission = await admissionRows(tmp, track, trackApi, problems);
    // No audit vs Metadata vs RequestResponse, on servers of their own.
    const audit = await auditRows(tmp, track, trackApi, problems);
    // Metrics on vs off, on servers of their own.
    const metrics = await metricsRows(tmp, track, trackApi, problems);
    // No tracing vs every request traced to a receiver, on servers of their own.
    const tracing = await tracingRows(tmp, track, trackApi, problems);

    // The table.
    const ratio = (v: number, b: number, pct = false) =>
      pct ? `${fmt((v / b) * 100)} %` : `${fmt(v / b, 2)}×`;
    const yes = (ok: boolean) => ok ? "yes" : "**no**";
    rows.push(
      {
        figure: "A: fdatasync'd 200-byte appends/s",
        value: fmt(fsyncPerSec),
        baseline: "—",
        ratio: "—",
        target: "—",
        met: "—",
      },
      {
        figure: "B: HTTPS hello-world req/s, 1 client",
        value: fmt(hello1.perSec),
        baseline: "—",
        ratio: "—",
        target: "—",
        met: "—",
      },
      {
        figure: "B: HTTPS hello-world req/s, 32 clients",
        value: fmt(hello32.perSec),
        baseline: "—",
        ratio: "—",
        target: "—",
        met: "—",
      },
      {
        figure: "durable creates/s, 1 client",
        value: fmt(creates1.perSec),
        baseline: `A ${fmt(fsyncPerSec)}`,
        ratio: ratio(creates1.perSec, fsyncPerSec),
        target: "—",
        met: "—",
      },
      {
        figure: "durable creates/s, 32 clients",
        value: fmt(creates32.perSec),
        baseline: `A ${fmt(fsyncPerSec)}`,
        ratio: ratio(creates32.perSec, fsyncPerSec),
        target: "≥ 3× A",
        met: yes(creates32.perSec >= 3 * fsyncPerSec && creates32.errors === 0),
      },
      {
        figure: "gets/s, 1 client",
        value: fmt(gets1.perSec),
        baseline: `B1 ${fmt(hello1.perSec)}`,
        ratio: ratio(gets1.perSec, hello1.perSec, true),
        target: "—",
        met: "—",
      },
      {
        figure: "gets/s, 32 clients",
        value: fmt(gets32.perSec),
        baseline: `B32 ${fmt(hello32.perSec)}`,
        ratio: ratio(gets32.perSec, hello32.perSec, true),
        target: "≥ 40 % of B32",
        met: yes(gets32.perSec >= 0.4 * hello32.perSec && gets32.errors === 0),
      },
      {
        figure: `list ${fmt(LIST_SIZE)} configmaps, median`,
        value: `${fmt(listMs)} ms`,
        baseline: "—",
        ratio: "—",
        target: "≤ 150 ms",
        met: yes(listMs <= 150 && listCount === LIST_SIZE),
      },
      {
        figure: "cold start, spawn → /readyz 200 (median)",
        value: `${fmt(coldMs)} ms`,
        baseline: "—",
        ratio: "—",
        target: "≤ 1000 ms",
        met: yes(coldMs <= 1000),
      },
      {
        figure: "in-process startServer(), empty data dir (median)",
        value: `${fmt(inprocMs)} ms`,
        baseline: "—",
        ratio: "—",
        target: "—",
        met: "—",
      },
      {
        figure: `settle after ${fmt(settledAfter)} creates: time until GETs < 20 ms again`,
        value: `${fmt(settleCreates.ms)} ms`,
        baseline: "—",
        ratio: "—",
        target: "—",
        met: "—",
      },
      {
        figure: "slowest single GET while settling (after either burst)",
        value: `${fmt(Math.max(settleCreates.maxMs, settleFill.maxMs))} ms`,
        baseline: "—",
        ratio: "—",
        target: "—",
        met: "—",
      },
      {
        figure: `clean stop (SIGTERM → exit) holding ${fmt(objects)} objects`,
        value: stopMs === undefined ? "> 30 s" : `${fmt(stopMs)} ms`,
        baseline: "—",
        ratio: "—",
        target: "—",
        met: "—",
      },
    );
    rows.push(...encodingRows(encodings, ENCODING_SIZE, fmt));
    for (const r of applied.rows) {
      rows.push({
        figure: `server-side applies/s, 50-field configmap, ${r.clients} client(s)`,
        value: fmt(r.applyPerSec),
        baseline: `PUT ${fmt(r.putPerSec)}`,
        ratio: ratio(r.applyPerSec, r.putPerSec),
        target: "≥ 0.5× PUT",
        met: yes(r.applyPerSec >= 0.5 * r.putPerSec && applied.problems.length === 0),
      });
    }
    const lag = watch.fleet;
    const lagOk = lag.missed === 0 && lag.writeErrors === 0 && lag.sent === lag.scheduled;
    const mib = (bytes: number) => `${fmt(bytes / 2 ** 20)} MiB`;
    const [page10k, page100k] = paging.sizes;
    const pagingOk = paging.problems.length === 0;
    const perItemRatio = page100k.msPerItem / page10k.msPerItem;
    const pageValue = (p: typeof page10k) => `${fmt(p.ms)} ms (${fmt(p.msPerPage, 1)} ms/page)`;
    rows.push(
      {
        figure: `watch lag p50, ${fmt(WATCHERS)} watchers, ${WATCH_WRITES_PER_SEC} writes/s`,
        value: `${fmt(lag.p50, 1)} ms`,
        baseline: `1 watcher ${fmt(watch.single.p50, 1)} ms`,
        ratio: ratio(lag.p50, watch.single.p50),
        target: "—",
        met: "—",
      },
      {
        figure: `watch lag p99, ${fmt(WATCHERS)} watchers, ${WATCH_WRITES_PER_SEC} writes/s`,
        value: `${fmt(lag.p99, 1)} ms`,
        baseline: `1 watcher ${fmt(watch.single.p99, 1)} ms`,
        ratio: ratio(lag.p99, watch.single.p99),
        target: "≤ 100 ms",
        met: yes(lag.p99 <= 100 && lagOk),
      },
      {
        figure: `writes/s the ${WATCH_WRITES_PER_SEC}/s writer reached, ${fmt(WATCHERS)} watchers`,
        value: fmt(lag.writesPerSec),
        baseline: `1 watcher ${fmt(watch.single.writesPerSec)}`,
        ratio: ratio(lag.writesPerSec, watch.single.writesPerSec, true),
        target: "—",
        met: "—",
      },
      {
        figure: "watch events delivered / acknowledged writes × watchers",
        value: fmt(lag.samples),
        baseline: fmt(lag.acknowledged * lag.watchers),
        ratio: ratio(lag.samples, lag.acknowledged * lag.watchers, true),
        target: "all",
        met: yes(lag.missed === 0 && lag.duplicates === 0),
      },
      {
        figure: `server RSS with ${fmt(WATCHERS)} watchers connected`,
        value: mib(watch.rssWith),
        baseline: `before ${mib(watch.rssBefore)}`,
        ratio: ratio(watch.rssWith, watch.rssBefore),
        target: "—",
        met: "—",
      },
      {
        figure: `creates/s, 32 clients, ${fmt(WATCHERS)} watchers on that namespace`,
        value: fmt(watch.withWatched.perSec),
        baseline: `no watchers ${fmt(watch.without.perSec)}`,
        ratio: ratio(watch.withWatched.perSec, watch.without.perSec, true),
        target: "≥ 70 %",
        met: yes(
          watch.withWatched.perSec >= 0.7 * watch.without.perSec &&
            watch.withWatched.errors === 0 && watch.ended === 0,
        ),
      },
      {
        figure: `creates/s, 32 clients, ${fmt(WATCHERS)} watchers on another namespace`,
        value: fmt(watch.withOther.perSec),
        baseline: `no watchers ${fmt(watch.without.perSec)}`,
        ratio: ratio(watch.withOther.perSec, watch.without.perSec, true),
        target: "—",
        met: "—",
      },
      {
        figure: `page through ${fmt(page10k.count)} configmaps, ${PAGE_LIMIT}/page`,
        value: pageValue(page10k),
        baseline: `one list ${fmt(listMs)} ms`,
        ratio: ratio(page10k.ms, listMs),
        target: "—",
        met: "—",
      },
      {
        figure: `page through ${fmt(page100k.count)} configmaps, ${PAGE_LIMIT}/page`,
        value: pageValue(page100k),
        baseline: `${fmt(page10k.count)}: ${fmt(page10k.msPerItem * 1000, 1)} µs/item`,
        ratio: `${fmt(perItemRatio, 2)}× per item`,
        target: "≤ 2× per item",
        met: yes(perItemRatio <= 2 && pagingOk),
      },
    );
    rows.push(...access, ...atRest, ...admission, ...audit, ...metrics, ...tracing);
    for (
      const [label, r] of [
        ["creates 1", creates1],
        ["creates 32", creates32],
        [
          "gets 1",
          gets1,
        ],
        ["gets 32", gets32],
        ["hello 1", hello1],
        ["hello 32", hello32],
      ] as const
    ) {
      if (r.errors) problems.push(`${label}: ${r.errors} errors, first: ${r.firstError}`);
    }
  } finally {
    for (const c of clients) c.close();
    for (const c of children) await stopServer(c, "SIGKILL").catch(() => {});
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }

  await printTable(rows, problems);
  note(`total ${fmt((performance.now() - started) / 1000, 1)} s`);
}

/** Runs the figures of `rowsOf` alone. */
async function onlyMain(rowsOf: Rows): Promise<void> {
  const tmp = await Deno.makeTempDir({ prefix: "platform-bench-" });
  const children: Child[] = [];
  const clients: Deno.HttpClient[] = [];
  const problems: string[] = [];
  try {
    const rows = await rowsOf(
      tmp,
      (c) => (children.push(c), c),
      (a) => (clients.push(a.client), a),
      problems,
    );
    await printTable(rows, problems);
  } finally {
    for (const c of clients) c.close();
    for (const c of children) await stopServer(c, "SIGKILL").catch(() => {});
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const run = chosenRun(Deno.args);
  await (run === "all" ? main() : onlyMain(run));
}
