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
 * Servers run as child processes (`deno run --allow-all main.ts serve`, and this file with
 * `--hello-world` for B), so the client and the server each have their own thread.
 *
 * See bench/README.md.
 */

import { fileURLToPath } from "node:url";
import { ensurePki } from "../lib/certificates/pki.ts";
import { ROOT_CA_CONFIGMAP } from "../lib/controllers/namespace_defaults.ts";
import { applyFigures } from "./apply.ts";
import { encodingFigures, encodingRows } from "./encodings.ts";
import { pagingFigures, watchFigures } from "./watch.ts";
import { haveWrk, wrk, type WrkRequest } from "./wrk.ts";
import { limitsFigures } from "./limits.ts";
import { authFigures, type AuthOptions } from "./auth.ts";
import { encryptionFigures } from "./encryption.ts";
import { admissionFigures } from "./admission.ts";
import { auditFigures } from "./audit.ts";
import { metricsFigures } from "./metrics.ts";
import { tracingFigures } from "./tracing.ts";
import { crdRulesFigures } from "./crd_rules.ts";
import { etcdFigures } from "./etcd.ts";
import { crdVersionsFigures } from "./crd_versions.ts";
import { workersFigures } from "./workers.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const CM = "/api/v1/namespaces/default/configmaps";
const LIST_NS = "bench-list";
const LIST_SIZE = 10_000;
const WATCHERS = 1_000;
const WATCH_WRITES_PER_SEC = 200;
const PAGE_SIZES = [10_000, 100_000];
const PAGE_LIMIT = 500;
const ENCODING_NS = "bench-encodings";
const ENCODING_SIZE = 1_000;

// --- hello-world child mode ------------------------------------------------------------------

if (import.meta.main && Deno.args[0] === "--hello-world") {
  const dataDir = Deno.args[1];
  const pki = await ensurePki({
    dataDir,
    sans: [],
    bindAddress: "127.0.0.1",
    logger: { info: () => {} },
  });
  const body = new TextEncoder().encode("Hello, world!\n");
  // With a thread count (`--only=workers`): that many threads on one port (SO_REUSEPORT).
  const threads = Number(Deno.args[2] ?? 1);
  const ready = Promise.withResolvers<number>();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: pki.servingCertPem,
    key: pki.servingKeyPem,
    ...(threads > 1 ? { reusePort: true } : {}),
    onListen: ({ port }) => ready.resolve(port),
  }, () => new Response(body, { headers: { "content-type": "text/plain" } }));
  const port = await ready.promise;
  for (let i = 1; i < threads; i++) {
    const w = new Worker(new URL("./hello_worker.ts", import.meta.url), { type: "module" });
    const started = new Promise((r) => w.onmessage = r);
    w.postMessage({ port, cert: pki.servingCertPem, key: pki.servingKeyPem });
    await started;
  }
  console.error(`serving on https://127.0.0.1:${port}`);
  Deno.addSignalListener("SIGTERM", () => server.shutdown());
  await server.finished;
  Deno.exit(0);
}

// --- options ---------------------------------------------------------------------------------

const QUICK = Deno.args.includes("--quick");
/** Scales measurement windows. */
const T = QUICK ? 0.4 : 1;
const WARMUP_MS = QUICK ? 200 : 400;

// --- helpers ---------------------------------------------------------------------------------

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

function fmt(n: number, digits = 0): string {
  if (!Number.isFinite(n)) return "n/a";
  return n.toLocaleString("en-US", {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

function note(msg: string): void {
  console.error(`[bench] ${msg}`);
}

interface Child {
  proc: Deno.ChildProcess;
  url: string;
  dataDir: string;
  /** Milliseconds from spawn to the "serving on" line. */
  servingMs: number;
  spawnedAt: number;
  log: string[];
  drained: Promise<unknown>;
}

/** Spawns `deno run --allow-all <args>` in the repository and waits for "serving on <url>". */
async function spawnServer(
  args: string[],
  dataDir: string,
  env?: Record<string, string>,
): Promise<Child> {
  const spawnedAt = performance.now();
  const proc = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", ...args],
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const log: string[] = [];
  let onUrl!: (url: string) => void;
  const urlSeen = new Promise<string>((r) => onUrl = r);
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    let buf = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        log.push(line);
        if (log.length > 500) log.shift();
        const m = line.match(/serving on (https:\/\/\S+:\d+)/);
        if (m) onUrl(m[1]);
      }
    }
  };
  const drained = Promise.all([pump(proc.stdout), pump(proc.stderr)]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    urlSeen,
    drained.then(() => new Error("exited before serving")),
    new Promise<Error>((r) =>
      timer = setTimeout(() => r(new Error("no 'serving on' in 30 s")), 30_000)
    ),
  ]);
  clearTimeout(timer);
  const child: Child = {
    proc,
    url: typeof outcome === "string" ? outcome : "",
    dataDir,
    servingMs: performance.now() - spawnedAt,
    spawnedAt,
    log,
    drained,
  };
  if (outcome instanceof Error) {
    await stopServer(child, "SIGKILL");
    throw new Error(`deno run ${args.join(" ")}: ${outcome.message}\n${log.join("\n")}`);
  }
  return child;
}

/** Signals the child and waits for it to exit (SIGKILL after `timeoutMs`); resolves to the
 * milliseconds it took, or undefined when it had to be killed. */
async function stopServer(
  child: Child,
  signal: Deno.Signal = "SIGTERM",
  label = "server",
  timeoutMs = 10_000,
): Promise<number | undefined> {
  const t0 = performance.now();
  try {
    child.proc.kill(signal);
  } catch { /* gone */ }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const exited = await Promise.race([
    child.proc.status.then(() => true),
    new Promise<boolean>((r) => timer = setTimeout(() => r(false), timeoutMs)),
  ]);
  clearTimeout(timer);
  const took = performance.now() - t0;
  if (!exited) {
    note(
      `${label} did not stop on ${signal} within ${
        timeoutMs / 1000
      } s; killing it. Last log lines:\n  ${child.log.slice(-8).join("\n  ")}`,
    );
    try {
      child.proc.kill("SIGKILL");
    } catch { /* gone */ }
  }
  await child.proc.status;
  await child.drained;
  return exited ? took : undefined;
}

function platformServer(dataDir: string): Promise<Child> {
  return spawnServer(
    ["main.ts", "serve", "--data-dir", dataDir, "--secure-port", "0", "--log-level", "info"],
    dataDir,
  );
}

/** Server-side errors logged by a child, for the report. */
function loggedErrors(child: Child): string[] {
  return child.log.filter((l) => / (ERROR|WARN) |panicked|Uncaught/.test(l));
}

interface Api {
  url: string;
  client: Deno.HttpClient;
  headers: Record<string, string>;
}

async function apiFor(child: Child, withToken: boolean): Promise<Api> {
  const caPem = await Deno.readTextFile(`${child.dataDir}/pki/ca.crt`);
  const headers: Record<string, string> = {};
  if (withToken) {
    const token = (await Deno.readTextFile(`${child.dataDir}/pki/admin.token`)).trim();
    headers["Authorization"] = `Bearer ${token}`;
  }
  return { url: child.url, client: Deno.createHttpClient({ caCerts: [caPem] }), headers };
}

/** One request; resolves to an error description, or undefined on the expected status. */
async function request(
  api: Api,
  method: string,
  path: string,
  expected: number,
  body?: string,
): Promise<string | undefined> {
  const res = await fetch(api.url + path, {
    method,
    client: api.client,
    headers: body === undefined
      ? api.headers
      : { ...api.headers, "Content-Type": "application/json" },
    body,
  });
  if (res.status === expected) {
    await res.arrayBuffer();
    return undefined;
  }
  return `${method} ${path} → ${res.status}: ${(await res.text()).slice(0, 300)}`;
}

/** The paths of the first `limit` objects of a collection, and how many there are; the
 * namespace's kube-root-ca.crt (the server's, not the bench's) is left out of both. */
async function listNames(
  api: Api,
  collection: string,
  limit: number,
): Promise<{ paths: string[]; total: number }> {
  const res = await fetch(`${api.url}${collection}?limit=${limit}`, {
    client: api.client,
    headers: api.headers,
  });
  const list = await res.json();
  if (res.status !== 200) throw new Error(`list ${collection} → ${res.status}`);
  const all = list.items.map((o: { metadata: { name: string } }) => o.metadata.name);
  const paths = all.filter((n: string) => n !== ROOT_CA_CONFIGMAP).map((n: string) =>
    `${collection}/${n}`
  );
  if (!paths.length) throw new Error(`${collection} is empty`);
  let total = all.length + (list.metadata.remainingItemCount ?? 0);
  const published = await fetch(`${api.url}${collection}/${ROOT_CA_CONFIGMAP}`, {
    client: api.client,
    headers: api.headers,
  });
  await published.body?.cancel();
  if (published.status === 200) total--;
  return { paths, total };
}

interface LoadResult {
  ops: number;
  /** Successful writes over warm-up and measurement (creates: objects that must exist). */
  acknowledged?: number;
  /** Requests answered over warm-up and measurement. */
  served?: number;
  errors: number;
  perSec: number;
  p50: number;
  p99: number;
  firstError?: string;
}

/** `concurrency` loops calling `op` back to back for `ms` (after a warm-up). */
async function load(
  concurrency: number,
  ms: number,
  op: (worker: number) => Promise<string | undefined>,
  warmupMs = WARMUP_MS,
): Promise<LoadResult> {
  const run = async (duration: number, record: boolean) => {
    const latencies: number[] = [];
    let errors = 0;
    let firstError: string | undefined;
    const start = performance.now();
    const deadline = start + duration;
    await Promise.all(Array.from({ length: concurrency }, async (_, w) => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        let err: string | undefined;
        try {
          err = await op(w);
        } catch (e) {
          err = String((e as Error)?.message ?? e);
        }
        if (err) {
          errors++;
          firstError ??= err;
        } else if (record) latencies.push(performance.now() - t0);
      }
    }));
    const seconds = (performance.now() - start) / 1000;
    latencies.sort((a, b) => a - b);
    return {
      ops: latencies.length,
      errors,
      perSec: latencies.length / seconds,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      firstError,
    };
  };
  if (warmupMs > 0) await run(warmupMs, false);
  return await run(ms, true);
}

/**
 * One load figure: with wrk when installed (see wrk.ts), else with `concurrency` fetch loops.
 * Both run a warm-up first that is not recorded.
 */
async function measure(
  api: Api,
  concurrency: number,
  ms: number,
  req: WrkRequest & { expected: number },
): Promise<LoadResult> {
  if (await haveWrk()) {
    const headers = { ...api.headers, ...req.headers };
    const spec = { ...req, headers };
    const warm = await wrk(api.url, spec, concurrency, Math.max(1000, WARMUP_MS));
    const r = await wrk(api.url, spec, concurrency, ms);
    const ok = r.requests - r.errors;
    return {
      ops: ok,
      acknowledged: warm.requests - warm.errors + ok,
      served: warm.requests + r.requests,
      errors: r.errors + warm.errors,
      perSec: r.perSec * (ok / Math.max(1, r.requests)),
      p50: r.p50,
      p99: r.p99,
      firstError: r.errors + warm.errors
        ? `${r.errors + warm.errors} responses were not ${req.expected}`
        : r.socketErrors,
    };
  }
  let i = 0;
  let acknowledged = 0;
  const op = async () => {
    const path = req.paths[i++ % req.paths.length];
    const err = await request(api, req.method, path, req.expected, req.body);
    if (!err) acknowledged++;
    return err;
  };
  const r = await load(concurrency, ms, op);
  return { ...r, acknowledged, served: acknowledged + r.errors };
}

function describeLoad(label: string, r: LoadResult): void {
  note(
    `${label}: ${fmt(r.perSec)}/s (${r.ops} ops, p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms${
      r.errors ? `, ${r.errors} ERRORS, first: ${r.firstError}` : ""
    })`,
  );
}

interface Settle {
  ms: number;
  maxMs: number;
  slow: number;
  settled: boolean;
}

/**
 * After a burst of writes the server keeps working in the background (writing object files);
 * requests can stall meanwhile. Sends one GET at a time until 100 in a row take < `fastMs` (or
 * 20 s pass), so that the next figure measures the steady state; the stall is reported.
 */
async function settle(
  api: Api,
  path: string,
  label: string,
  fastMs = 20,
): Promise<Settle> {
  const start = performance.now();
  let streak = 0;
  let maxMs = 0;
  let slow = 0;
  while (streak < 100 && performance.now() - start < 20_000) {
    const t0 = performance.now();
    const err = await request(api, "GET", path, 200);
    const ms = performance.now() - t0;
    if (err) throw new Error(`settling: ${err}`);
    maxMs = Math.max(maxMs, ms);
    if (ms < fastMs) streak++;
    else {
      streak = 0;
      slow++;
    }
  }
  const r = { ms: performance.now() - start, maxMs, slow, settled: streak >= 100 };
  note(
    `${label}: ${r.settled ? "settled" : "NOT settled"} after ${fmt(r.ms)} ms; ` +
      `${r.slow} single GETs took ≥ ${fastMs} ms meanwhile, the slowest ${fmt(r.maxMs)} ms`,
  );
  return r;
}

// --- the measurements ------------------------------------------------------------------------

/** Baseline A: write(200 bytes) + fdatasync in a loop. */
async function fsyncBaseline(dir: string, ms: number): Promise<number> {
  const path = `${dir}/fsync-baseline.log`;
  using file = await Deno.open(path, { write: true, create: true, append: true });
  const record = new Uint8Array(200).fill(0x61);
  // Warm-up: allocate the first blocks.
  for (let i = 0; i < 20; i++) {
    await file.write(record);
    await file.syncData();
  }
  let n = 0;
  const start = performance.now();
  const deadline = start + ms;
  while (performance.now() < deadline) {
    let off = 0;
    while (off < record.length) off += await file.write(record.subarray(off));
    await file.syncData();
    n++;
  }
  return n / ((performance.now() - start) / 1000);
}

interface Row {
  figure: string;
  value: string;
  baseline: string;
  ratio: string;
  target: string;
  met: string;
}

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
    const hello = track(await spawnServer([SELF, "--hello-world", helloDir], helloDir));
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

async function printTable(rows: Row[], problems: string[]): Promise<void> {
  const header: (keyof Row)[] = ["figure", "value", "baseline", "ratio", "target", "met"];
  const titles = ["figure", "value", "baseline", "ratio", "target", "met?"];
  const lines = [
    `| ${titles.join(" | ")} |`,
    `|${header.map((h) => h === "figure" ? "---" : "---:").join("|")}|`,
    ...rows.map((r) => `| ${header.map((h) => r[h]).join(" | ")} |`),
  ];
  console.log(
    `\nplatform bench — Deno ${Deno.version.deno}, ${Deno.build.os}/${Deno.build.arch}, ` +
      `${navigator.hardwareConcurrency} CPUs, client ${await haveWrk() ? "wrk" : "Deno fetch"}${
        QUICK ? ", --quick" : ""
      }\n`,
  );
  console.log(lines.join("\n"));
  if (problems.length) console.log(`\nproblems:\n${problems.map((p) => `- ${p}`).join("\n")}`);
}

/** What bench/auth.ts and bench/limits.ts need: servers started with extra flags, wrk. */
function serverPairOptions(
  dir: string,
  label: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  env?: Record<string, string>,
): AuthOptions {
  return {
    dir,
    start: async (dataDir, flags) => {
      const args = ["main.ts", "serve", "--data-dir", dataDir, "--secure-port", "0", ...flags];
      const child = track(await spawnServer(args, dataDir, env));
      const api = trackApi(await apiFor(child, true));
      return {
        api,
        stop: async () => void await stopServer(child, "SIGTERM", label),
        pid: child.proc.pid,
      };
    },
    measure: (api, concurrency, ms, req) => measure(api, concurrency, ms, req),
    ms: 3000 * T,
    note,
  };
}

/** RBAC vs AlwaysAllow and JWT vs static token (bench/auth.ts), as table rows. */
async function authRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const auth = await authFigures(serverPairOptions(`${tmp}/auth`, "auth server", track, trackApi));
  problems.push(...auth.problems);
  const ok = auth.problems.length === 0;
  const rbacCost = 1 - auth.rbacPerSec / auth.allowPerSec;
  const jwtMicros = (1 / auth.jwtPerSec - 1 / auth.staticPerSec) * 1e6;
  return [
    {
      figure: "GETs/s, 32 clients, RBAC (user bound to view, 500 other bindings)",
      value: fmt(auth.rbacPerSec),
      baseline: `AlwaysAllow ${fmt(auth.allowPerSec)}`,
      ratio: `${fmt((auth.rbacPerSec / auth.allowPerSec) * 100)} % (cost ${
        fmt(rbacCost * 100, 1)
      } %)`,
      target: "cost ≤ 10 %",
      met: ok ? (rbacCost <= 0.1 ? "yes" : "**no**") : "**no**",
    },
    {
      figure: "GETs/s, 32 clients, RBAC, JWT bearer (warm keys)",
      value: fmt(auth.jwtPerSec),
      baseline: `static token ${fmt(auth.staticPerSec)}`,
      ratio: `${fmt((auth.jwtPerSec / auth.staticPerSec) * 100)} % (+${fmt(jwtMicros)} µs/req)`,
      target: "—",
      met: "—",
    },
    {
      figure: "JWT authentication in process, warm keys, µs",
      value: fmt(auth.jwtMicros, 1),
      baseline: `static token ${fmt(auth.staticMicros, 2)}`,
      ratio: `${fmt(auth.jwtMicros / auth.staticMicros)}×`,
      target: "—",
      met: "—",
    },
  ];
}

/** The rows of the request-limit figures (bench/limits.ts). */
async function limitsRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const f = await limitsFigures(
    serverPairOptions(`${tmp}/limits`, "limits server", track, trackApi),
  );
  problems.push(...f.problems);
  const row = (figure: string, value: number, baseline: number): Row => ({
    figure,
    value: fmt(value),
    baseline: `limits off ${fmt(baseline)}`,
    ratio: `${fmt(value / baseline, 2)}×`,
    target: "—",
    met: "—",
  });
  return [
    row("GETs/s, 32 clients, in-flight limits on", f.getsLimited, f.getsUnlimited),
    row("durable creates/s, 32 clients, in-flight limits on", f.createsLimited, f.createsUnlimited),
  ];
}

/** Secrets with aesgcm vs identity (bench/encryption.ts), as table rows. */
async function encryptionRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const enc = await encryptionFigures(
    serverPairOptions(`${tmp}/encryption`, "encryption server", track, trackApi),
  );
  problems.push(...enc.problems);
  const ok = enc.problems.length === 0;
  const row = (figure: string, value: number, baseline: number): Row => ({
    figure,
    value: fmt(value),
    baseline: `identity ${fmt(baseline)}`,
    ratio: fmt(value / baseline, 2),
    target: "≥ 0.8",
    met: ok && value / baseline >= 0.8 ? "yes" : "**no**",
  });
  return [
    row("Secret creates/s, 32 clients, aesgcm at rest", enc.createsAesgcm, enc.createsIdentity),
    row("Secret gets/s, 32 clients, aesgcm at rest", enc.getsAesgcm, enc.getsIdentity),
    {
      figure: "aesgcm encryption of one stored Secret (~400 B) in process, µs",
      value: fmt(enc.encryptMicros, 1),
      baseline: `decryption ${fmt(enc.decryptMicros, 1)}`,
      ratio: "—",
      target: "—",
      met: "—",
    },
  ];
}

/** Creates with webhooks and with a policy vs none (bench/admission.ts), as table rows. */
async function admissionRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const adm = await admissionFigures(
    serverPairOptions(`${tmp}/admission`, "admission server", track, trackApi),
  );
  problems.push(...adm.problems);
  const ok = adm.problems.length === 0;
  const row = (figure: string, value: number, target: number): Row => ({
    figure,
    value: fmt(value),
    baseline: `none ${fmt(adm.createsNone)}`,
    ratio: fmt(value / adm.createsNone, 2),
    target: `≥ ${target}`,
    met: ok && value / adm.createsNone >= target ? "yes" : "**no**",
  });
  return [
    row(
      "configmap creates/s, 32 clients, 1 mutating + 1 validating webhook",
      adm.createsWebhooks,
      0.5,
    ),
    row(
      "configmap creates/s, 32 clients, 1 ValidatingAdmissionPolicy (3 validations)",
      adm.createsPolicy,
      0.85,
    ),
    {
      figure: "create latency added by the two webhook round trips, 1 client, p50 / p99 ms",
      value: `${fmt(adm.p50Webhooks - adm.p50None, 2)} / ${fmt(adm.p99Webhooks - adm.p99None, 2)}`,
      baseline: `none ${fmt(adm.p50None, 2)} / ${fmt(adm.p99None, 2)}`,
      ratio: "—",
      target: "—",
      met: "—",
    },
  ];
}

/** Creates and gets with the audit log at Metadata and RequestResponse vs none (bench/audit.ts),
 * as table rows. */
async function auditRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const a = await auditFigures(serverPairOptions(`${tmp}/audit`, "audit server", track, trackApi));
  problems.push(...a.problems);
  const ok = a.problems.length === 0;
  const row = (figure: string, value: number, baseline: number, target: number): Row => ({
    figure,
    value: fmt(value),
    baseline: `no audit ${fmt(baseline)}`,
    ratio: fmt(value / baseline, 2),
    target: `≥ ${target}`,
    met: ok && value / baseline >= target ? "yes" : "**no**",
  });
  // The server's CPU per request, none ÷ audited: what requests/s audited ÷ none would be on a
  // machine that runs nothing else.
  const cpuRow = (
    figure: string,
    micros: Record<"none" | "Metadata" | "RequestResponse", number>,
    level: "Metadata" | "RequestResponse",
  ): Row => {
    const target = level === "Metadata" ? 0.85 : 0.7;
    const r = micros.none / micros[level];
    return {
      figure,
      value: fmt(micros[level], 1),
      baseline: `no audit ${fmt(micros.none, 1)}`,
      ratio: `${fmt(r, 2)} (none ÷ audited)`,
      target: `≥ ${target}`,
      met: ok && r >= target ? "yes" : "**no**",
    };
  };
  return [
    row(
      "configmap creates/s, 32 clients, audit log at Metadata (batch)",
      a.creates.Metadata,
      a.creates.none,
      0.85,
    ),
    row(
      "configmap gets/s, 32 clients, audit log at Metadata (batch)",
      a.gets.Metadata,
      a.gets.none,
      0.85,
    ),
    row(
      "configmap creates/s, 32 clients, audit log at RequestResponse (batch)",
      a.creates.RequestResponse,
      a.creates.none,
      0.7,
    ),
    row(
      "configmap gets/s, 32 clients, audit log at RequestResponse (batch)",
      a.gets.RequestResponse,
      a.gets.none,
      0.7,
    ),
    ...(["Metadata", "RequestResponse"] as const).flatMap((level) => [
      cpuRow(`server CPU per create, µs, audit at ${level}`, a.createCpuMicros, level),
      cpuRow(`server CPU per GET, µs, audit at ${level}`, a.getCpuMicros, level),
    ]),
  ];
}

/** Creates and gets with metrics on vs off (bench/metrics.ts), as table rows. */
async function metricsRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const dir = `${tmp}/metrics`;
  const off = serverPairOptions(dir, "metrics server", track, trackApi, {
    PLATFORM_METRICS: "off",
  });
  const m = await metricsFigures({
    ...serverPairOptions(dir, "metrics server", track, trackApi),
    startWithoutMetrics: off.start,
  });
  problems.push(...m.problems);
  const ok = m.problems.length === 0;
  const row = (figure: string, on: number, offValue: number): Row => ({
    figure,
    value: fmt(on),
    baseline: `metrics off ${fmt(offValue)}`,
    ratio: fmt(on / offValue, 2),
    target: "≥ 0.95",
    met: ok && on / offValue >= 0.95 ? "yes" : "**no**",
  });
  // The server's CPU per request, off ÷ on: what requests/s on ÷ off would be on a machine
  // that runs nothing else (the server's CPU, not the wall clock, is what the client shares).
  const cpuRow = (figure: string, micros: { on: number; off: number }): Row => ({
    figure,
    value: fmt(micros.on, 1),
    baseline: `metrics off ${fmt(micros.off, 1)}`,
    ratio: `${fmt(micros.off / micros.on, 2)} (off ÷ on)`,
    target: "≥ 0.95",
    met: ok && micros.off / micros.on >= 0.95 ? "yes" : "**no**",
  });
  return [
    row("configmap creates/s, 32 clients, metrics on", m.creates.on, m.creates.off),
    row("configmap gets/s, 32 clients, metrics on", m.gets.on, m.gets.off),
    cpuRow("server CPU per create, µs, metrics on", m.createCpuMicros),
    cpuRow("server CPU per GET, µs, metrics on", m.getCpuMicros),
    {
      figure: "request metrics recorded per GET, in process, µs",
      value: fmt(m.recordMicros, 2),
      baseline: "—",
      ratio: "—",
      target: "—",
      met: "—",
    },
  ];
}

/** `--workers=N` for N = 1, 2, 4 against N = 1 and against a hello-world with as many threads,
 * the scaling curve, 1,000 watchers' lag at N = 2 against N = 1, and N = 2's creates against
 * etcd's puts (bench/workers.ts), as table rows. */
async function workersRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const dir = `${tmp}/workers`;
  const w = await workersFigures({
    ...serverPairOptions(dir, "workers server", track, trackApi),
    startHello: async (dataDir, threads) => {
      await Deno.mkdir(dataDir, { recursive: true });
      const child = track(
        await spawnServer([SELF, "--hello-world", dataDir, String(threads)], dataDir),
      );
      const api = trackApi(await apiFor(child, false));
      return {
        api,
        stop: async () => void await stopServer(child, "SIGTERM", "hello-world server"),
      };
    },
  });
  problems.push(...w.problems);
  const ok = w.problems.length === 0;
  const rows: Row[] = [];
  for (const n of w.counts) {
    const scale = (figure: string, values: Record<number, number>, target?: number): Row => ({
      figure,
      value: fmt(values[n]),
      baseline: `${values === w.hello ? "1 thread" : "--workers=1"} ${fmt(values[1])}`,
      ratio: fmt(values[n] / values[1], 2),
      target: target ? `≥ ${target}` : "—",
      met: target ? (ok && values[n] / values[1] >= target ? "yes" : "**no**") : "—",
    });
    rows.push(
      scale(
        `configmap creates/s, 32 clients, --workers=${n}`,
        w.creates,
        n === 2 ? 1.6 : undefined,
      ),
      scale(`configmap gets/s, 32 clients, --workers=${n}`, w.gets, n === 2 ? 1.6 : undefined),
      // What the machine gives more threads now: on a shared machine, the ceiling of the
      // ratios above.
      scale(`hello-world req/s, 32 clients, ${n} threads`, w.hello),
      {
        figure: `configmap gets/s, --workers=${n}, against a hello-world on ${n} threads`,
        value: fmt(w.gets[n]),
        baseline: `hello-world ${fmt(w.hello[n])}`,
        ratio: `${fmt((w.gets[n] / w.hello[n]) * 100)} %`,
        target: "≥ 50 %",
        met: ok && w.gets[n] >= 0.5 * w.hello[n] ? "yes" : "**no**",
      },
    );
  }
  // The scaling curve: each figure at N = 1, 2, 4 and as multiples of N = 1.
  const curve = (figure: string, values: Record<number, number>): Row => ({
    figure: `scaling, ${figure}, N = ${w.counts.join(" / ")}`,
    value: w.counts.map((n) => fmt(values[n])).join(" / "),
    baseline: "N = 1",
    ratio: w.counts.map((n) => fmt(values[n] / values[1], 2)).join(" / "),
    target: "—",
    met: "—",
  });
  rows.push(
    curve("configmap creates/s", w.creates),
    curve("configmap gets/s", w.gets),
    curve("hello-world req/s", w.hello),
  );
  const lagRatio = w.lagP99[2] / w.lagP99[1];
  rows.push({
    figure: "watch lag p99, 1,000 watchers, 200 writes/s, --workers=2, ms",
    value: fmt(w.lagP99[2], 1),
    baseline: `--workers=1 ${fmt(w.lagP99[1], 1)}`,
    ratio: fmt(lagRatio, 2),
    target: "≤ 0.5",
    met: ok && lagRatio <= 0.5 ? "yes" : "**no**",
  }, {
    figure: "watch lag p50, 1,000 watchers, 200 writes/s, --workers=2, ms",
    value: fmt(w.lagP50[2], 1),
    baseline: `--workers=1 ${fmt(w.lagP50[1], 1)}`,
    ratio: fmt(w.lagP50[2] / w.lagP50[1], 2),
    target: "—",
    met: "—",
  });
  const etcdRatio = w.etcdPuts === undefined ? NaN : w.creates[2] / w.etcdPuts;
  rows.push({
    figure: "durable configmap creates/s, 32 clients, --workers=2, against etcd 3.4 puts (wrk)",
    value: fmt(w.creates[2]),
    baseline: `etcd puts ${w.etcdPuts === undefined ? "n/a" : fmt(w.etcdPuts)}`,
    ratio: fmt(etcdRatio, 2),
    target: "≥ 2",
    met: ok && etcdRatio >= 2 ? "yes" : "**no**",
  });
  return rows;
}

/** The etcd3 backend against etcd itself and against the file store (bench/etcd.ts), as table
 * rows. */
async function etcdRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const e = await etcdFigures(serverPairOptions(`${tmp}/etcd`, "etcd server", track, trackApi));
  problems.push(...e.problems);
  const ok = e.problems.length === 0;
  const row = (
    figure: string,
    value: string,
    baseline: string,
    ratio: number,
    target: string,
    met: boolean,
  ): Row => ({
    figure,
    value,
    baseline,
    ratio: fmt(ratio, 2),
    target,
    met: ok && met ? "yes" : "**no**",
  });
  const createRatio = e.createsEtcd / e.etcdPutsPerSec;
  const getRatio = e.getsEtcd / e.getsFile;
  const listRatio = e.listEtcdMs / e.listFileMs;
  const lagRatio = e.lagThreeReplicasP99 / e.lagOneReplicaP99;
  return [
    row(
      "configmap creates/s, 32 clients, on etcd",
      fmt(e.createsEtcd),
      `etcd txns ${fmt(e.etcdPutsPerSec)}`,
      createRatio,
      "≥ 0.6",
      createRatio >= 0.6,
    ),
    row(
      "configmap gets/s, 32 clients, on etcd, resourceVersion=0",
      fmt(e.getsEtcd),
      `file store ${fmt(e.getsFile)}`,
      getRatio,
      "≥ 0.83 (within 1.2×)",
      getRatio >= 1 / 1.2,
    ),
    row(
      "configmap creates/s, 32 clients, on etcd vs the file store",
      fmt(e.createsEtcd),
      `file store ${fmt(e.createsFile)}`,
      e.createsEtcd / e.createsFile,
      "—",
      true,
    ),
    row(
      "configmap gets/s, 32 clients, on etcd, consistent (no resourceVersion)",
      fmt(e.getsEtcdConsistent),
      `file store ${fmt(e.getsFile)}`,
      e.getsEtcdConsistent / e.getsFile,
      "—",
      true,
    ),
    row(
      "list of 10,000 configmaps on etcd, resourceVersion=0, ms (median)",
      fmt(e.listEtcdMs),
      `file store ${fmt(e.listFileMs)}`,
      listRatio,
      "≤ 1.2",
      listRatio <= 1.2,
    ),
    row(
      "watch lag p99, 1,000 watchers over 3 replicas, ms",
      fmt(e.lagThreeReplicasP99, 1),
      `1 replica ${fmt(e.lagOneReplicaP99, 1)}`,
      lagRatio,
      "≤ 2",
      lagRatio <= 2,
    ),
  ];
}

/** Creates and gets with every request traced to an OTLP receiver vs no tracing
 * (bench/tracing.ts), as table rows. */
async function tracingRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const t = await tracingFigures(
    serverPairOptions(`${tmp}/tracing`, "tracing server", track, trackApi),
  );
  problems.push(...t.problems);
  const ok = t.problems.length === 0;
  note(
    `tracing: ${fmt(t.bytesReceived / 1024)} KiB of spans received for about ` +
      `${fmt(t.tracedRequests)} traced requests`,
  );
  const row = (figure: string, value: number, baseline: number): Row => ({
    figure,
    value: fmt(value),
    baseline: `no tracing ${fmt(baseline)}`,
    ratio: fmt(value / baseline, 2),
    target: "≥ 0.7",
    met: ok && value / baseline >= 0.7 ? "yes" : "**no**",
  });
  return [
    row(
      "configmap creates/s, 32 clients, every request traced (1,000,000 per million)",
      t.creates.traced,
      t.creates.none,
    ),
    row(
      "configmap gets/s, 32 clients, every request traced (1,000,000 per million)",
      t.gets.traced,
      t.gets.none,
    ),
  ];
}

/** A non-storage CRD version against the storage version (bench/crd_versions.ts), as a row. */
async function crdVersionsRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const f = await crdVersionsFigures(
    serverPairOptions(`${tmp}/crd-versions`, "crd versions server", track, trackApi),
  );
  problems.push(...f.problems);
  const ratio = f.converted / f.storage;
  return [{
    figure: "lists/s of 1,000 custom resources, 4 clients, in v1beta1 (None conversion)",
    value: fmt(f.converted, 1),
    baseline: `storage version v1 ${fmt(f.storage, 1)}`,
    ratio: fmt(ratio, 2),
    target: "≥ 0.8",
    met: f.problems.length === 0 && ratio >= 0.8 ? "yes" : "**no**",
  }];
}

/** Custom resource creates with five validation rules vs none (bench/crd_rules.ts), as a row. */
async function crdRulesRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const r = await crdRulesFigures(
    serverPairOptions(`${tmp}/crd-rules`, "crd rules server", track, trackApi),
  );
  problems.push(...r.problems);
  const ratio = r.creates.rules / r.creates.none;
  const cpuRatio = r.cpuMicros.none / r.cpuMicros.rules;
  return [{
    figure: "custom resource creates/s, 32 clients, CRD with 5 validation rules",
    value: fmt(r.creates.rules),
    baseline: `no rules ${fmt(r.creates.none)}`,
    ratio: fmt(ratio, 2),
    target: "≥ 0.7",
    met: r.problems.length === 0 && ratio >= 0.7 ? "yes" : "**no**",
  }, {
    figure:
      "server CPU µs per custom resource create, 5 validation rules (ratio: no rules ÷ rules)",
    value: fmt(r.cpuMicros.rules),
    baseline: `no rules ${fmt(r.cpuMicros.none)}`,
    ratio: fmt(cpuRatio, 2),
    target: "≥ 0.7",
    met: r.problems.length === 0 && cpuRatio >= 0.7 ? "yes" : "**no**",
  }];
}

/** `deno task bench --only=auth`, `--only=limits`, `--only=encryption`, `--only=admission`,
 * `--only=audit`, `--only=metrics`, `--only=tracing`, `--only=crd-versions`, `--only=crd-rules` or
 * `--only=workers`:
 * those figures alone; `--backend etcd`: the
 * etcd3 backend's. */
async function onlyMain(rowsOf: typeof authRows): Promise<void> {
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
  await (Deno.args.includes("--only=auth")
    ? onlyMain(authRows)
    : Deno.args.includes("--only=limits")
    ? onlyMain(limitsRows)
    : Deno.args.includes("--only=encryption")
    ? onlyMain(encryptionRows)
    : Deno.args.includes("--only=admission")
    ? onlyMain(admissionRows)
    : Deno.args.includes("--only=audit")
    ? onlyMain(auditRows)
    : Deno.args.includes("--only=metrics")
    ? onlyMain(metricsRows)
    : Deno.args.includes("--only=tracing")
    ? onlyMain(tracingRows)
    : Deno.args.includes("--only=crd-versions")
    ? onlyMain(crdVersionsRows)
    : Deno.args.includes("--only=crd-rules")
    ? onlyMain(crdRulesRows)
    : Deno.args.includes("--only=workers")
    ? onlyMain(workersRows)
    : Deno.args.includes("--backend=etcd") ||
        Deno.args.some((a, i) => a === "--backend" && Deno.args[i + 1] === "etcd")
    ? onlyMain(etcdRows)
    : main());
}
