/**
 * Watchers by the thousand, each a raw HTTP/1.1 connection read as chunked lines, and a paced
 * writer whose every event's delivery lag they record: the watch figures' instrument
 * (bench/watch.ts), also used by the etcd and workers figures.
 *
 * Times that cross from the writer to a watcher are `performance.timeOrigin + performance.now()`
 * (ms), carried in the object's data.
 */

import type { Api } from "./harness.ts";
import { cpuMs, machineCpuMs } from "./proc_stats.ts";

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across threads. */
function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

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
