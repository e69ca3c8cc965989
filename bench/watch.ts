/**
 * Watch and paging figures for `deno task bench` (see bench/README.md):
 *
 *   - delivery lag of every event at every one of 1,000 watchers of one namespace's configmaps
 *     while a paced writer makes 200 writes/s there, next to the same with one watcher;
 *   - the server's RSS before and with the watchers connected;
 *   - 32-client creates/s with and without the watchers (the load itself is the caller's
 *     `measure()`, passed in);
 *   - paging through 10,000 and 100,000 configmaps, 500 per page.
 *
 * Times that cross from the writer to a watcher are `performance.timeOrigin + performance.now()`
 * (ms), carried in the object's data.
 */

import { haveWrk } from "./wrk.ts";
import { ROOT_CA_CONFIGMAP } from "../lib/controllers/namespace_defaults.ts";

/** What the figures need to talk to the server (the same shape as main.ts's `Api`). */
export interface Api {
  url: string;
  client: Deno.HttpClient;
  headers: Record<string, string>;
}

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across threads. */
function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

/** Resident set size of process `pid` in bytes (VmRSS of /proc/<pid>/status). */
export async function rssBytes(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb) * 1024;
}

/** CPU time (user + system, ms) process `pid` has used so far. */
export async function cpuMs(pid: number | "self"): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10; // USER_HZ is 100 on Linux
}

/** CPU time (ms) all processes on the machine have used so far (/proc/stat, without idle and
 * iowait). */
export async function machineCpuMs(): Promise<number> {
  const line = (await Deno.readTextFile("/proc/stat")).split("\n")[0];
  const [user, nice, system, _idle, _iowait, irq, softirq, steal] = line.trim().split(/\s+/)
    .slice(1).map(Number);
  return (user + nice + system + irq + softirq + (steal || 0)) * 10; // USER_HZ is 100
}

async function check(res: Response, what: string, ...expected: number[]): Promise<void> {
  if (expected.includes(res.status)) return;
  throw new Error(`${what} → ${res.status}: ${(await res.text()).slice(0, 300)}`);
}

/** Creates namespace `name`. */
export async function createNamespace(api: Api, name: string): Promise<void> {
  const res = await fetch(`${api.url}/api/v1/namespaces`, {
    method: "POST",
    client: api.client,
    headers: { ...api.headers, "Content-Type": "application/json" },
    body: JSON.stringify({ metadata: { name } }),
  });
  await check(res, `create namespace ${name}`, 201);
  await res.body?.cancel();
}

/** The resourceVersion of a (one-item) list of `collection`: where a watch starts. */
export async function listRevision(api: Api, collection: string): Promise<string> {
  const res = await fetch(`${api.url}${collection}?limit=1`, {
    client: api.client,
    headers: api.headers,
  });
  await check(res, `list ${collection}`, 200);
  return (await res.json()).metadata.resourceVersion;
}

// --- watchers --------------------------------------------------------------------------------

/** Keys in the writer's objects' data: they mark an event as one of ours. */
const SEQ = `"benchSeq":"`;
const SENT = `"benchSentMs":"`;

/** Where the events of one paced write run go, per (write, watcher). */
class Recording {
  readonly writes: number;
  /** lag[w * writes + seq], NaN until watcher w sees write seq. */
  readonly lag: Float64Array;
  readonly seen: Uint32Array;
  duplicates = 0;
  constructor(watchers: number, writes: number) {
    this.writes = writes;
    this.lag = new Float64Array(watchers * writes).fill(NaN);
    this.seen = new Uint32Array(watchers);
  }
  add(w: number, seq: number, lagMs: number): void {
    if (!(seq >= 0 && seq < this.writes)) return; // not one of this run's writes
    const i = w * this.writes + seq;
    if (!Number.isNaN(this.lag[i])) {
      this.duplicates++;
      return;
    }
    this.lag[i] = lagMs;
    this.seen[w]++;
  }
}

/**
 * Incremental decoder of an HTTP/1.1 chunked body into lines. Text is decoded as windows-1252
 * (one character per byte, so chunk sizes count characters); the watch events are ASCII JSON.
 */
class ChunkedLines {
  #decoder = new TextDecoder("windows-1252");
  /** Received, not yet decoded framing and data. */
  #raw = "";
  /** Characters left in the current chunk; -1 while reading a size line. */
  #left = -1;
  /** Body text after the last complete line. */
  #line = "";
  /** The terminating zero-size chunk was seen. */
  ended = false;

  /** Feeds received bytes; calls `onLine(text, start, end)` for each complete line. */
  push(bytes: Uint8Array, onLine: (text: string, start: number, end: number) => void): void {
    this.#raw += this.#decoder.decode(bytes, { stream: true });
    let body = this.#line;
    let pos = 0;
    const raw = this.#raw;
    while (pos < raw.length && !this.ended) {
      if (this.#left < 0) {
        const eol = raw.indexOf("\r\n", pos);
        if (eol < 0) break;
        const size = parseInt(raw.slice(pos, eol), 16);
        if (!Number.isFinite(size)) throw new Error(`bad chunk size "${raw.slice(pos, eol)}"`);
        if (size === 0) this.ended = true;
        this.#left = size;
        pos = eol + 2;
      } else if (this.#left > 0) {
        const take = Math.min(this.#left, raw.length - pos);
        body += raw.slice(pos, pos + take);
        this.#left -= take;
        pos += take;
      } else { // the CRLF after a chunk's data
        if (raw.length - pos < 2) break;
        pos += 2;
        this.#left = -1;
      }
    }
    this.#raw = raw.slice(pos);
    let start = 0;
    let nl: number;
    while ((nl = body.indexOf("\n", start)) >= 0) {
      onLine(body, start, nl);
      start = nl + 1;
    }
    this.#line = body.slice(start);
  }
}

/**
 * `count` watch streams on one collection, opened from a resourceVersion, each on its own
 * HTTP/1.1 connection over TLS (`Deno.connectTls`) and read by its own line reader until
 * {@link WatchFleet.close}. Not `fetch`: on this server's event stream fetch costs the client
 * about 3× the CPU per event of a bare socket (HTTP/2 or not), and the client shares the
 * machine's CPUs with the server.
 */
export class WatchFleet {
  readonly count: number;
  /** Event lines received, all watchers. */
  events = 0;
  /** Streams the server ended (or that failed) before close(). */
  ended = 0;
  errors: string[] = [];
  #conns: Deno.TlsConn[] = [];
  #loops: Promise<void>[] = [];
  #recording?: Recording;
  #closing = false;

  private constructor(count: number) {
    this.count = count;
  }

  /**
   * Opens the watches and resolves once every one has its `200` response head and a pending
   * read, so that all are established before the caller starts writing. Throws if any fails.
   */
  static async open(opts: {
    api: Api;
    /** Replicas of one API: watcher w watches through apis[w % apis.length]. @default [api] */
    apis?: Api[];
    /** The server's CA certificate (PEM). */
    caPem: string;
    collection: string;
    resourceVersion: string;
    count: number;
  }): Promise<WatchFleet> {
    const apis = opts.apis ?? [opts.api];
    const targets = apis.map((api) => {
      const url = new URL(api.url);
      const head = new TextEncoder().encode(
        `GET ${opts.collection}?watch=1&resourceVersion=${opts.resourceVersion} HTTP/1.1\r\n` +
          `Host: ${url.host}\r\nAccept: application/json\r\n` +
          Object.entries(api.headers).map(([k, v]) => `${k}: ${v}\r\n`).join("") + "\r\n",
      );
      return { url, head };
    });
    const fleet = new WatchFleet(opts.count);
    // A server that does not answer in time: closing the connections fails the pending reads.
    const timer = setTimeout(() => fleet.close(), 30_000);
    try {
      const opened = await Promise.all(Array.from({ length: opts.count }, async (_, w) => {
        const { url, head } = targets[w % targets.length];
        const conn = await Deno.connectTls({
          hostname: url.hostname,
          port: Number(url.port),
          caCerts: [opts.caPem],
        });
        fleet.#conns.push(conn);
        if (fleet.#closing) {
          conn.close();
          throw new Error(`watch ${w}: no response within 30 s`);
        }
        for (let off = 0; off < head.length;) off += await conn.write(head.subarray(off));
        // The response head; whatever follows it is the start of the body.
        const buf = new Uint8Array(16 * 1024);
        let got = 0;
        let end = -1;
        while (end < 0) {
          const n = await conn.read(buf.subarray(got));
          if (n === null) throw new Error(`watch ${w}: connection closed before a response`);
          got += n;
          end = findHeadEnd(buf, got);
          if (end < 0 && got === buf.length) throw new Error(`watch ${w}: response head too long`);
        }
        const headText = new TextDecoder().decode(buf.subarray(0, end));
        if (
          !/^HTTP\/1\.1 200 /.test(headText) || !/^transfer-encoding: chunked\r?$/im.test(headText)
        ) {
          throw new Error(`watch ${w}: expected a chunked 200, got:\n${headText}`);
        }
        return { conn, rest: buf.slice(end, got) };
      }));
      fleet.#loops = opened.map(({ conn, rest }, w) => fleet.#read(w, conn, rest));
    } catch (err) {
      await fleet.close();
      throw new Error(`opening ${opts.count} watches: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
    return fleet;
  }

  /** Reads one stream; its first read is pending when this returns its promise. */
  async #read(w: number, conn: Deno.TlsConn, rest: Uint8Array): Promise<void> {
    const lines = new ChunkedLines();
    const onLine = (text: string, start: number, end: number) =>
      this.#line(w, text, start, end, at);
    let at = nowMs();
    const buf = new Uint8Array(64 * 1024);
    try {
      if (rest.length) lines.push(rest, onLine);
      while (!lines.ended) {
        const n = await conn.read(buf);
        if (n === null) break;
        at = nowMs();
        lines.push(buf.subarray(0, n), onLine);
      }
      if (!this.#closing) {
        this.ended++;
        if (this.errors.length < 5) this.errors.push(`watch ${w}: the server ended the stream`);
      }
    } catch (err) {
      if (!this.#closing) {
        this.ended++;
        if (this.errors.length < 5) this.errors.push(`watch ${w}: ${(err as Error).message}`);
      }
    }
  }

  #line(w: number, text: string, start: number, end: number, at: number): void {
    this.events++;
    if (text.startsWith(`{"type":"ERROR"`, start)) {
      if (this.errors.length < 5) this.errors.push(`watch ${w}: ${text.slice(start, end)}`);
      return;
    }
    const rec = this.#recording;
    if (!rec) return;
    const s = text.indexOf(SEQ, start);
    if (s < 0 || s > end) return;
    const t = text.indexOf(SENT, start);
    if (t < 0 || t > end) return;
    const seq = Number(text.slice(s + SEQ.length, text.indexOf('"', s + SEQ.length)));
    const sent = Number(text.slice(t + SENT.length, text.indexOf('"', t + SENT.length)));
    rec.add(w, seq, at - sent);
  }

  /** From now on, events carrying sequence numbers 0…writes-1 are recorded. */
  record(writes: number): Recording {
    this.#recording = new Recording(this.count, writes);
    return this.#recording;
  }

  /** Stops recording. */
  stopRecording(): void {
    this.#recording = undefined;
  }

  /** Ends every stream (closes its connection). */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    for (const c of this.#conns) {
      try {
        c.close();
      } catch { /* already closed */ }
    }
    await Promise.all(this.#loops);
  }
}

/** Index just past the blank line that ends an HTTP response head in buf[0, len), or -1. */
function findHeadEnd(buf: Uint8Array, len: number): number {
  for (let i = 3; i < len; i++) {
    if (buf[i] === 10 && buf[i - 1] === 13 && buf[i - 2] === 10 && buf[i - 3] === 13) {
      return i + 1;
    }
  }
  return -1;
}

// --- the paced writer ------------------------------------------------------------------------

interface WriteRun {
  /** Writes sent (sequence numbers 0…sent-1). */
  sent: number;
  /** acked[seq] = 1 when write seq was acknowledged. */
  acked: Uint8Array;
  ackedCount: number;
  errors: number;
  firstError?: string;
  /** Write latencies (send → response), sorted, ms. */
  latencies: Float64Array;
  /** Seconds from the first send to the last response. */
  seconds: number;
}

/**
 * `perSec` PUTs per second for `ms`, each at its scheduled time whether or not the earlier ones
 * are answered, cycling over `names` objects of `collection`: the first write of a name creates
 * it, the later ones replace it. Each body carries its sequence number and its send time. A
 * write waits for the previous write of the same name (so no two race) and for a free slot
 * when `maxInFlight` are unanswered; a server that cannot keep up gets fewer writes, and the
 * run still ends after `ms`.
 */
async function pacedWrites(
  api: Api,
  collection: string,
  opts: { perSec: number; ms: number; names: number; prefix: string; maxInFlight?: number },
): Promise<WriteRun> {
  const scheduled = Math.round(opts.perSec * opts.ms / 1000);
  const cap = opts.maxInFlight ?? 64;
  const acked = new Uint8Array(scheduled);
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let inFlight = 0;
  let slotFreed: (() => void) | undefined;
  const payload = "x".repeat(100);
  const last = new Map<string, Promise<void>>();
  const write = async (seq: number, name: string) => {
    const t0 = performance.now();
    const sent = performance.timeOrigin + t0;
    try {
      const res = await fetch(`${api.url}${collection}/${name}`, {
        method: "PUT",
        client: api.client,
        headers: { ...api.headers, "Content-Type": "application/json" },
        body: `{"metadata":{"name":"${name}","labels":{"app":"bench-watch"}},"data":{` +
          `"benchSeq":"${seq}","benchSentMs":"${sent}","payload":"${payload}"}}`,
      });
      if (res.status === 200 || res.status === 201) {
        await res.body?.cancel();
        acked[seq] = 1;
        latencies.push(performance.now() - t0);
      } else {
        errors++;
        firstError ??= `PUT ${collection}/${name} → ${res.status}: ${
          (await res.text()).slice(0, 200)
        }`;
      }
    } catch (err) {
      errors++;
      firstError ??= `PUT ${collection}/${name}: ${(err as Error).message}`;
    } finally {
      inFlight--;
      slotFreed?.();
    }
  };
  const start = performance.now();
  const deadline = start + opts.ms;
  let seq = 0;
  for (; seq < scheduled; seq++) {
    const wait = start + seq * 1000 / opts.perSec - performance.now();
    if (wait > 1) await sleep(wait);
    const name = `${opts.prefix}${seq % opts.names}`;
    await last.get(name);
    while (inFlight >= cap) await new Promise<void>((r) => slotFreed = r);
    if (performance.now() >= deadline) break;
    inFlight++;
    last.set(name, write(seq, name));
  }
  await Promise.all(last.values());
  const seconds = (performance.now() - start) / 1000;
  const sorted = Float64Array.from(latencies).sort();
  let ackedCount = 0;
  for (const a of acked) ackedCount += a;
  return { sent: seq, acked, ackedCount, errors, firstError, latencies: sorted, seconds };
}

export interface LagResult {
  watchers: number;
  /** Writes the writer was to make (rate × duration), and made. */
  scheduled: number;
  sent: number;
  acknowledged: number;
  /** Acknowledged writes per second. */
  writesPerSec: number;
  writeErrors: number;
  firstWriteError?: string;
  /** PUT latency, send → response, ms. */
  writeP50: number;
  writeP99: number;
  /** Delivered (write, watcher) pairs and their lag (send → received by the watcher), ms. */
  samples: number;
  p50: number;
  p99: number;
  max: number;
  /** Acknowledged (write, watcher) pairs not delivered by the end of the drain. */
  missed: number;
  /** Watchers that missed at least one acknowledged write. */
  watchersMissing: number;
  duplicates: number;
  /** Milliseconds from the writer's end until every watcher had every write (or the timeout). */
  drainMs: number;
  /** CPU the server and this process (writer and watchers) used, in cores (1 = one busy core). */
  serverCores: number;
  clientCores: number;
  /** CPU every other process on the machine used meanwhile, in cores: noise. */
  otherCores: number;
}

/**
 * Runs the paced writer on `collection` while `fleet` watches it (after an unrecorded warm-up),
 * waits until every watcher has every acknowledged write (at most `drainTimeoutMs` after the
 * writer's end), and computes the lag of every (write, watcher) pair.
 */
export async function measureLag(
  api: Api,
  fleet: WatchFleet,
  opts: {
    collection: string;
    perSec: number;
    ms: number;
    /** Distinct objects the writer cycles over. */
    names: number;
    /** Name prefix of the written objects (runs with different prefixes do not collide). */
    prefix: string;
    serverPid: number;
    drainTimeoutMs: number;
    /** Unrecorded writes first, for this long. @default 1000 */
    warmupMs?: number;
  },
): Promise<LagResult> {
  // Warm-up: the same writes for a while, unrecorded, until every watcher has them. For about
  // a second after a thousand streams start receiving, the server and this process run code
  // V8 has not optimized yet; the target is about the steady state.
  const warmupMs = opts.warmupMs ?? 1000;
  if (warmupMs > 0) {
    const before = fleet.events;
    const warm = await pacedWrites(api, opts.collection, {
      ...opts,
      ms: warmupMs,
      prefix: `${opts.prefix}warm-`,
    });
    const drainUntil = performance.now() + opts.drainTimeoutMs;
    while (
      fleet.events - before < warm.ackedCount * fleet.count && performance.now() < drainUntil
    ) {
      await sleep(10);
    }
  }
  const scheduled = Math.round(opts.perSec * opts.ms / 1000);
  const rec = fleet.record(scheduled);
  const cpu = async () => [
    await cpuMs(opts.serverPid),
    await cpuMs("self"),
    await machineCpuMs(),
    performance.now(),
  ];
  const cpu0 = await cpu();
  const run = await pacedWrites(api, opts.collection, opts);
  const drainStart = performance.now();
  const expected = run.ackedCount * fleet.count;
  const delivered = () => rec.seen.reduce((a, b) => a + b, 0);
  while (delivered() < expected && performance.now() - drainStart < opts.drainTimeoutMs) {
    await sleep(10);
  }
  const drainMs = performance.now() - drainStart;
  const cpu1 = await cpu();
  fleet.stopRecording();

  const lags = new Float64Array(delivered());
  let n = 0;
  let missed = 0;
  let watchersMissing = 0;
  for (let w = 0; w < fleet.count; w++) {
    let missing = 0;
    for (let seq = 0; seq < run.sent; seq++) {
      const lag = rec.lag[w * scheduled + seq];
      if (!Number.isNaN(lag)) lags[n++] = lag;
      else if (run.acked[seq]) missing++;
    }
    missed += missing;
    if (missing) watchersMissing++;
  }
  const sorted = lags.subarray(0, n).sort();
  const wall = cpu1[3] - cpu0[3];
  const [server, client, machine] = [0, 1, 2].map((i) => (cpu1[i] - cpu0[i]) / wall);
  return {
    watchers: fleet.count,
    scheduled,
    sent: run.sent,
    acknowledged: run.ackedCount,
    writesPerSec: run.ackedCount / run.seconds,
    writeErrors: run.errors,
    firstWriteError: run.firstError,
    writeP50: percentile(run.latencies, 0.5),
    writeP99: percentile(run.latencies, 0.99),
    samples: n,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: n ? sorted[n - 1] : NaN,
    missed,
    watchersMissing,
    duplicates: rec.duplicates,
    drainMs,
    serverCores: server,
    clientCores: client,
    otherCores: Math.max(0, machine - server - client),
  };
}

// --- filling a namespace ---------------------------------------------------------------------

/** Lua string literal. */
function lua(s: string): string {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, "\\n")}"`;
}

export interface FillResult {
  created: number;
  errors: number;
  firstError?: string;
  perSec: number;
}

/**
 * Creates configmaps `cm-000000` … in `namespace` (`count` of them) as fast as the client
 * goes: with wrk (32 connections; each request numbers its own name, and once all are sent the
 * connections idle on `/livez` until the last create is answered) when installed, else with 64
 * concurrent fetch loops.
 */
export async function fill(api: Api, namespace: string, count: number): Promise<FillResult> {
  const collection = `/api/v1/namespaces/${namespace}/configmaps`;
  const payload = "x".repeat(120);
  const bodyOf = (i: number) =>
    `{"metadata":{"name":"cm-${
      String(i).padStart(6, "0")
    }","labels":{"app":"bench-page"}},"data":{"payload":"${payload}"}}`;
  const [before, after] = bodyOf(0).split("cm-000000");
  const start = performance.now();
  if (await haveWrk()) return await fillWithWrk(api, collection, count, before, after);
  let next = 0;
  let created = 0;
  let errors = 0;
  let firstError: string | undefined;
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next < count) {
      const i = next++;
      try {
        const res = await fetch(api.url + collection, {
          method: "POST",
          client: api.client,
          headers: { ...api.headers, "Content-Type": "application/json" },
          body: bodyOf(i),
        });
        await check(res, `POST ${collection}`, 201);
        await res.body?.cancel();
        created++;
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
  }));
  return { created, errors, firstError, perSec: created / ((performance.now() - start) / 1000) };
}

/**
 * wrk (one thread, 32 connections) POSTing `before + name + after` for names `cm-000000` … in
 * order, then idling on `/livez` until every create is answered. wrk always runs for its whole
 * duration, so the script prints a line once the last create is answered and this stops wrk
 * with SIGINT (after which it reports as usual).
 */
async function fillWithWrk(
  api: Api,
  collection: string,
  count: number,
  before: string,
  after: string,
): Promise<FillResult> {
  const start = performance.now();
  const headers = { ...api.headers, "Content-Type": "application/json" };
  const script = [
    `local post, get = {}, {}`,
    ...Object.entries(headers).map(([k, v]) => `post[${lua(k)}] = ${lua(v)}`),
    // Globals of the thread's Lua state, read back in done(), which runs in another state.
    `count, sent, answered, created, first = ${count}, 0, 0, 0, "none"`,
    // wrk calls request() once before the run to check what it returns and sends nothing of
    // it: that call must not use up a name.
    `local checked = false`,
    `request = function()`,
    `  if sent >= count or not checked then`,
    `    checked = true`,
    `    return wrk.format("GET", "/livez", get)`,
    `  end`,
    `  local name = string.format("cm-%06d", sent)`,
    `  sent = sent + 1`,
    `  return wrk.format("POST", ${lua(collection)}, post, ${lua(before)} .. name .. ${
      lua(after)
    })`,
    `end`,
    `response = function(status, headers, body)`,
    `  if status == 200 then return end`,
    `  answered = answered + 1`,
    `  if status == 201 then created = created + 1`,
    `  elseif first == "none" then`,
    `    first = status .. " " .. string.gsub(string.sub(body, 1, 200), "\\n", " ")`,
    `  end`,
    `  if answered == count then`,
    `    io.write("all answered\\n")`,
    `    io.flush()`,
    `  end`,
    `end`,
    `local threads = {}`,
    `setup = function(thread) table.insert(threads, thread) end`,
    `done = function(summary)`,
    `  local t, e = threads[1], summary.errors`,
    `  io.write("fill: ", t:get("answered"), " ", t:get("created"), " socket errors: connect ",`,
    `    e.connect, ", read ", e.read, ", write ", e.write, ", timeout ", e.timeout,`,
    `    "; first: ", t:get("first"), "\\n")`,
    `end`,
  ].join("\n") + "\n";
  const file = await Deno.makeTempFile({ prefix: "bench-fill-", suffix: ".lua" });
  try {
    await Deno.writeTextFile(file, script);
    const proc = new Deno.Command("wrk", {
      args: [
        "-t1",
        "-c32",
        `-d${Math.ceil(count / 200) + 10}s`, // the longest it may take (it stops when done)
        "--timeout",
        "10s",
        "-s",
        file,
        api.url + collection,
      ],
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(proc.stderr).text();
    let out = "";
    let stopped = false;
    for await (const chunk of proc.stdout.pipeThrough(new TextDecoderStream())) {
      out += chunk;
      if (!stopped && out.includes("all answered\n")) {
        stopped = true;
        proc.kill("SIGINT");
      }
    }
    const status = await proc.status;
    const m = /^fill: (\d+) (\d+) socket errors: (.*); first: (.*)$/m.exec(out);
    if (!m) throw new Error(`wrk failed (exit ${status.code}): ${out}${await stderr}`);
    const created = Number(m[2]);
    const socketErrors = /[1-9]/.test(m[3]) ? `socket errors: ${m[3]}` : undefined;
    return {
      created,
      errors: count - created,
      firstError: m[4] !== "none" ? m[4] : socketErrors,
      perSec: created / ((performance.now() - start) / 1000),
    };
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

// --- paging ----------------------------------------------------------------------------------

export interface PageResult {
  ms: number;
  pages: number;
  items: number;
  /** Distinct list-metadata resourceVersions seen over the pages (1 when consistent). */
  revisions: string[];
  /** Items whose name did not sort after the previous item's (repeats or disorder). */
  outOfOrder: number;
}

/**
 * Lists `collection` in pages of `limit` (`?limit=` then `&continue=` until no token), timed
 * from the first request to the last page's parsed body.
 */
export async function pageThrough(
  api: Api,
  collection: string,
  limit: number,
): Promise<PageResult> {
  const revisions = new Set<string>();
  let items = 0;
  let pages = 0;
  let outOfOrder = 0;
  let last = "";
  let token: string | undefined;
  const start = performance.now();
  do {
    const res = await fetch(
      `${api.url}${collection}?limit=${limit}${
        token ? `&continue=${encodeURIComponent(token)}` : ""
      }`,
      { client: api.client, headers: api.headers },
    );
    await check(res, `page ${pages + 1} of ${collection}`, 200);
    const list = await res.json();
    pages++;
    revisions.add(list.metadata.resourceVersion);
    for (const item of list.items) {
      const name: string = item.metadata.name;
      if (name <= last) outOfOrder++;
      last = name;
      // The namespace's kube-root-ca.crt is the server's, not one of the filled objects.
      if (name !== ROOT_CA_CONFIGMAP) items++;
    }
    token = list.metadata.continue || undefined;
  } while (token);
  return { ms: performance.now() - start, pages, items, revisions: [...revisions], outOfOrder };
}

// --- the figures -----------------------------------------------------------------------------

/** What a load figure of main.ts (`measure()`) reports, as far as these figures need it. */
export interface Throughput {
  perSec: number;
  errors: number;
  firstError?: string;
}

export interface WatchFigures {
  /** The 200 writes/s writer seen by 1 watcher (the baseline) and by 1,000. */
  single: LagResult;
  fleet: LagResult;
  /** Server RSS (bytes) before the watchers connect, with them connected and idle, after the
   * writer's run. */
  rssBefore: number;
  rssWith: number;
  rssAfter: number;
  /** Milliseconds to open the 1,000 watches. */
  openMs: number;
  /** 32-client creates/s into the watched namespace without watchers; with the watchers, into
   * the watched namespace and into another one. */
  without: Throughput;
  withWatched: Throughput;
  withOther: Throughput;
  /** Watch streams the server ended while the bench still read them. */
  ended: number;
  problems: string[];
}

/**
 * The watch figures, on a server of their own: 1 and then `watchers` watchers of
 * `namespace`'s configmaps while a writer makes `perSec` writes/s there for `ms`; the server's
 * RSS around connecting the watchers; `creates(namespace)` (32-client creates, main.ts's
 * `measure()`) without and with the watchers. `settle(path, label)` is main.ts's `settle()`.
 */
export async function watchFigures(o: {
  api: Api;
  caPem: string;
  serverPid: number;
  namespace: string;
  /** A namespace nobody watches, for the creates that watchers should not notice. */
  otherNamespace: string;
  watchers: number;
  perSec: number;
  ms: number;
  baselineMs: number;
  drainTimeoutMs: number;
  creates: (namespace: string) => Promise<Throughput>;
  settle: (path: string, label: string) => Promise<unknown>;
  note: (msg: string) => void;
}): Promise<WatchFigures> {
  const problems: string[] = [];
  const collection = `/api/v1/namespaces/${o.namespace}/configmaps`;
  await createNamespace(o.api, o.namespace);
  const lagOpts = {
    collection,
    perSec: o.perSec,
    names: 100,
    serverPid: o.serverPid,
    drainTimeoutMs: o.drainTimeoutMs,
  };
  const describe = (label: string, r: LagResult) => {
    o.note(
      `${label}: ${r.acknowledged} of ${r.scheduled} writes acknowledged (${
        r.writesPerSec.toFixed(0)
      }/s, PUT p50 ${r.writeP50.toFixed(1)} ms, p99 ${r.writeP99.toFixed(1)} ms); ` +
        `${r.samples} deliveries, lag p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ` +
        `max ${r.max.toFixed(0)} ms; ${r.missed} missed, ${r.duplicates} duplicates; drained in ` +
        `${r.drainMs.toFixed(0)} ms; CPU: server ${r.serverCores.toFixed(2)}, bench ${
          r.clientCores.toFixed(2)
        }, other processes ${r.otherCores.toFixed(2)} cores`,
    );
    if (r.writeErrors) {
      problems.push(`${label}: ${r.writeErrors} writes failed: ${r.firstWriteError}`);
    }
    if (r.missed) {
      problems.push(
        `${label}: ${r.missed} (write, watcher) pairs not delivered ${
          (o.drainTimeoutMs / 1000).toFixed(0)
        } s after the last write (${r.watchersMissing} of ${r.watchers} watchers missed some)`,
      );
    }
    if (r.duplicates) problems.push(`${label}: ${r.duplicates} events delivered twice`);
    if (r.sent < r.scheduled) {
      problems.push(
        `${label}: the writer sent only ${r.sent} of ${r.scheduled} writes (${
          Math.round(r.sent / (o.ms / 1000))
        }/s of ${o.perSec}/s): the server did not keep up`,
      );
    }
  };

  // Baseline: the same writer, one watcher.
  const one = await WatchFleet.open({
    api: o.api,
    caPem: o.caPem,
    collection,
    resourceVersion: await listRevision(o.api, collection),
    count: 1,
  });
  const single = await measureLag(o.api, one, { ...lagOpts, ms: o.baselineMs, prefix: "one-" });
  await one.close();
  describe("watch lag, 1 watcher", single);

  const without = await o.creates(o.namespace);
  o.note(`creates/s, 32 clients, no watchers: ${without.perSec.toFixed(0)}`);
  await o.settle(`${collection}/one-0`, "after the creates without watchers");

  const rssBefore = await rssBytes(o.serverPid);
  const t0 = performance.now();
  const fleet = await WatchFleet.open({
    api: o.api,
    caPem: o.caPem,
    collection,
    resourceVersion: await listRevision(o.api, collection),
    count: o.watchers,
  });
  const openMs = performance.now() - t0;
  let fleetClosed = false;
  try {
    await sleep(500); // let the server finish setting the watches up
    const rssWith = await rssBytes(o.serverPid);
    o.note(
      `opened ${o.watchers} watches in ${openMs.toFixed(0)} ms; server RSS ${
        (rssBefore / 2 ** 20).toFixed(0)
      } MiB before, ${(rssWith / 2 ** 20).toFixed(0)} MiB with them (${
        ((rssWith - rssBefore) / 1024 / o.watchers).toFixed(1)
      } KiB per watcher)`,
    );
    const lag = await measureLag(o.api, fleet, { ...lagOpts, ms: o.ms, prefix: "w-" });
    describe(`watch lag, ${o.watchers} watchers`, lag);
    const rssAfter = await rssBytes(o.serverPid);
    o.note(`server RSS after the writer: ${(rssAfter / 2 ** 20).toFixed(0)} MiB`);

    await createNamespace(o.api, o.otherNamespace).catch(() => {}); // may exist
    const withOther = await o.creates(o.otherNamespace);
    o.note(
      `creates/s, 32 clients, into ${o.otherNamespace} with ${o.watchers} watchers on ${o.namespace}: ${
        withOther.perSec.toFixed(0)
      }`,
    );
    const events = fleet.events;
    const withWatched = await o.creates(o.namespace);
    o.note(
      `creates/s, 32 clients, into ${o.namespace} with ${o.watchers} watchers on it: ${
        withWatched.perSec.toFixed(0)
      } (the watchers received ${fleet.events - events} events meanwhile)`,
    );
    const ended = fleet.ended;
    if (ended) {
      problems.push(
        `${ended} of ${o.watchers} watch streams ended early; first: ${fleet.errors[0]}`,
      );
    } else if (fleet.errors.length) problems.push(`watch: ${fleet.errors[0]}`);
    await fleet.close();
    fleetClosed = true;
    await o.settle(`${collection}/one-0`, "after closing the watchers");
    return {
      single,
      fleet: lag,
      rssBefore,
      rssWith,
      rssAfter,
      openMs,
      without,
      withWatched,
      withOther,
      ended,
      problems,
    };
  } finally {
    if (!fleetClosed) await fleet.close();
  }
}

export interface PagingSize {
  count: number;
  fill: FillResult;
  /** Timed passes over all pages. */
  runs: PageResult[];
  /** Median pass, ms; per page and per item. */
  ms: number;
  msPerPage: number;
  msPerItem: number;
}

/**
 * For each of `counts`: that many configmaps in a namespace of their own (`fill()`), then
 * `runs` timed passes of {@link pageThrough} in pages of `limit` (after one untimed pass over
 * the smallest). Checks every pass saw exactly the objects created, in order, at one
 * resourceVersion.
 */
export async function pagingFigures(o: {
  api: Api;
  counts: number[];
  limit: number;
  runs: number;
  settle: (path: string, label: string) => Promise<unknown>;
  note: (msg: string) => void;
}): Promise<{ sizes: PagingSize[]; problems: string[] }> {
  const problems: string[] = [];
  const sizes: PagingSize[] = [];
  for (const count of o.counts) {
    const ns = `bench-page-${count}`;
    await createNamespace(o.api, ns);
    const fill_ = await fill(o.api, ns, count);
    o.note(
      `created ${fill_.created} configmaps in ${ns} at ${fill_.perSec.toFixed(0)}/s${
        fill_.errors ? `, ${fill_.errors} ERRORS, first: ${fill_.firstError}` : ""
      }`,
    );
    if (fill_.errors) {
      problems.push(`filling ${ns}: ${fill_.errors} errors, first: ${fill_.firstError}`);
    }
    sizes.push({ count, fill: fill_, runs: [], ms: NaN, msPerPage: NaN, msPerItem: NaN });
  }
  const last = sizes[sizes.length - 1];
  await o.settle(
    `/api/v1/namespaces/bench-page-${last.count}/configmaps/cm-000000`,
    "after the paging fills",
  );
  await pageThrough(o.api, `/api/v1/namespaces/bench-page-${sizes[0].count}/configmaps`, o.limit);
  for (const size of sizes) {
    const collection = `/api/v1/namespaces/bench-page-${size.count}/configmaps`;
    for (let i = 0; i < o.runs; i++) {
      const r = await pageThrough(o.api, collection, o.limit);
      size.runs.push(r);
      if (r.items !== size.fill.created) {
        problems.push(`paging ${collection}: ${r.items} items seen, ${size.fill.created} created`);
      }
      if (r.revisions.length !== 1) {
        problems.push(
          `paging ${collection}: the pages had ${r.revisions.length} resourceVersions (${
            r.revisions.slice(0, 5).join(", ")
          })`,
        );
      }
      if (r.outOfOrder) {
        problems.push(`paging ${collection}: ${r.outOfOrder} items out of order or repeated`);
      }
    }
    const sorted = [...size.runs].sort((a, b) => a.ms - b.ms);
    const median = sorted[sorted.length >> 1];
    size.ms = median.ms;
    size.msPerPage = median.ms / median.pages;
    size.msPerItem = median.ms / Math.max(1, median.items);
    o.note(
      `paged through ${median.items} configmaps in ${median.pages} pages of ${o.limit}: median ${
        median.ms.toFixed(0)
      } ms (${size.msPerPage.toFixed(1)} ms per page); runs ${
        size.runs.map((r) => r.ms.toFixed(0)).join(", ")
      } ms`,
    );
  }
  return { sizes, problems };
}
