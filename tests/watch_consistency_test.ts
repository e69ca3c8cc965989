// deno-lint-ignore-file no-explicit-any
/**
 * Watches against the durable store across restarts: a watch resumed after a restart gets
 * exactly the events it missed (with `--workers` 1, 2 and 4, each request then on a new
 * connection), and a randomized run (several writers, watchers with
 * different selectors and start versions, two restarts) in which every watcher sees every
 * matching change exactly once, in revision order, with no gaps.
 */

import { assert, assertEquals } from "./assert.ts";
import { type ServerHandle, startServer } from "../mod.ts";
import { silentLogger } from "../lib/api/log.ts";
import { freePort } from "./harness.ts";
import { assertThreadsServed } from "./threads.ts";

const CM = "/api/v1/namespaces/default/configmaps";

/** A server on a fixed port and data directory that can be restarted. With `workers` > 1,
 * every request goes over a new connection (the kernel spreads them over the threads). */
class Restartable {
  server!: ServerHandle;
  client!: Deno.HttpClient;
  /** New clients whose responses may still be read (watches): closed by stop(). */
  #fresh = new Set<Deno.HttpClient>();
  constructor(readonly dataDir: string, readonly port: number, readonly workers = 1) {}
  async start(): Promise<void> {
    this.server = await startServer({
      dataDir: this.dataDir,
      securePort: this.port,
      storage: "file",
      logger: silentLogger,
      shutdownTimeoutMs: 2000,
      workers: this.workers,
    });
    this.client = Deno.createHttpClient({ caCerts: [this.server.caCertPem] });
  }
  async stop(): Promise<void> {
    await this.server.close();
    const clients = [this.client, ...this.#fresh];
    this.#fresh.clear();
    for (const c of clients) {
      try {
        c.close();
      } catch {
        // Closed already.
      }
    }
  }
  fetch(path: string, init: RequestInit = {}): Promise<Response> {
    return this.#send(path, init).response;
  }
  /** The request, and the new client it went over (closed by the caller) if any. */
  #send(path: string, init: RequestInit): { response: Promise<Response>; fresh?: Deno.HttpClient } {
    let fresh: Deno.HttpClient | undefined;
    if (this.workers > 1) {
      fresh = Deno.createHttpClient({ caCerts: [this.server.caCertPem] });
      this.#fresh.add(fresh);
    }
    const response = fetch(this.server.url + path, {
      ...init,
      client: fresh ?? this.client,
      headers: {
        Authorization: `Bearer ${this.server.adminToken}`,
        "Content-Type": "application/json",
      },
    });
    return { response, fresh };
  }
  async json(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const { response, fresh } = this.#send(path, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    try {
      const res = await response;
      return { status: res.status, body: await res.json() };
    } finally {
      if (fresh) {
        this.#fresh.delete(fresh);
        fresh.close();
      }
    }
  }
}

/** Reads a watch until the stream ends; calls `onEvent` for each event. */
async function readWatch(res: Response, onEvent: (ev: any) => void): Promise<void> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buf += value;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) onEvent(JSON.parse(line));
      }
    }
  } catch {
    // The server went away mid-stream (a restart): the caller resumes.
  } finally {
    reader.releaseLock();
  }
}

for (const workers of [1, 2, 4]) {
  Deno.test(
    `a watch resumed after a restart gets exactly the events it missed, --workers=${workers}`,
    () => resumedAfterRestart(workers),
  );
}

async function resumedAfterRestart(workers: number): Promise<void> {
  const dataDir = await Deno.makeTempDir({ prefix: "platform-watch-" });
  const srv = new Restartable(dataDir, freePort(), workers);
  try {
    await srv.start();
    const rvs: string[] = [];
    const write = async (name: string, v: string) => {
      const got = await srv.json("GET", `${CM}/${name}`);
      const body = { metadata: { name }, data: { v } };
      const res = got.status === 200
        ? await srv.json("PUT", `${CM}/${name}`, body)
        : await srv.json("POST", CM, body);
      rvs.push(res.body.metadata.resourceVersion);
    };
    await write("a", "1");
    await write("b", "1");
    const resumeFrom = rvs.at(-1)!;
    await write("a", "2"); // missed before the restart
    await write("c", "1");
    await srv.stop();
    await srv.start();
    await write("b", "2"); // after the restart
    await srv.json("DELETE", `${CM}/c`);
    const res = await srv.fetch(`${CM}?watch=1&resourceVersion=${resumeFrom}&timeoutSeconds=2`);
    const seen: string[] = [];
    await readWatch(res, (ev) => seen.push(`${ev.type} ${ev.object.metadata.name}`));
    assertEquals(seen, ["MODIFIED a", "ADDED c", "MODIFIED b", "DELETED c"]);
    await assertThreadsServed(srv.server, workers);
  } finally {
    await srv.stop().catch(() => {});
    await Deno.remove(dataDir, { recursive: true });
  }
}

interface Change {
  rv: number;
  name: string;
  /** Labels after the change; undefined when deleted. */
  labels?: Record<string, string>;
}

interface WatcherSpec {
  label: string;
  selector: (labels: Record<string, string>, name: string) => boolean;
  query: string;
  /** "0" (initial state first) or "past" (a revision from the middle of the run). */
  start: "0" | "past";
}

// With 4 threads the writers' and watchers' requests each go over a new connection.
for (const workers of [1, 4]) {
  Deno.test({
    name:
      `randomized: every watcher sees every matching change once, in order, across restarts, --workers=${workers}`,
    sanitizeResources: false,
    sanitizeOps: false,
  }, () => randomized(workers));
}

async function randomized(workers: number): Promise<void> {
  const dataDir = await Deno.makeTempDir({ prefix: "platform-watch-rand-" });
  const srv = new Restartable(dataDir, freePort(), workers);
  let seed = 20261122;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const names = Array.from({ length: 24 }, (_, i) => `k${i}`);
  const colors = ["red", "blue", "green"];
  const acknowledged: { status: number; name: string; body: any }[] = [];
  let paused: Promise<void> | undefined;
  let inflight = 0;
  /** Writes answered so far (any status). */
  let done = 0;
  let idle: (() => void) | undefined;

  const writer = async (ops: number) => {
    for (let i = 0; i < ops; i++) {
      while (paused) await paused;
      inflight++;
      try {
        const name = names[Math.floor(random() * names.length)];
        const labels = { color: colors[Math.floor(random() * colors.length)] };
        const r = random();
        let res;
        if (r < 0.45) res = await srv.json("POST", CM, { metadata: { name, labels } });
        else if (r < 0.8) {
          res = await srv.json("PUT", `${CM}/${name}`, { metadata: { name, labels } });
        } else res = await srv.json("DELETE", `${CM}/${name}`);
        if (res.status === 200 || res.status === 201) {
          acknowledged.push({ status: res.status, name, body: res.body });
        } else {
          assert([404, 409].includes(res.status), `${res.status} ${JSON.stringify(res.body)}`);
        }
      } finally {
        done++;
        inflight--;
        if (inflight === 0) idle?.();
      }
    }
  };

  const specs: WatcherSpec[] = [
    { label: "all from 0", selector: () => true, query: "", start: "0" },
    { label: "all from past", selector: () => true, query: "", start: "past" },
    {
      label: "red from 0",
      selector: (l) => l.color === "red",
      query: "&labelSelector=color%3Dred",
      start: "0",
    },
    {
      label: "not red from past",
      selector: (l) => l.color !== "red",
      query: "&labelSelector=color%21%3Dred",
      start: "past",
    },
    {
      label: "k3 by name from past",
      selector: (_l, n) => n === "k3",
      query: "&fieldSelector=metadata.name%3Dk3",
      start: "past",
    },
  ];

  try {
    await srv.start();
    await Promise.all([writer(40), writer(40)]);
    const pastRv = srv.server.store.currentRevision();
    let stopped = false;
    const watchers = specs.map((spec) => {
      const w = {
        spec,
        events: [] as any[],
        lastRv: 0,
        done: undefined as Promise<void> | undefined,
      };
      w.done = (async () => {
        let rv = spec.start === "past" ? String(pastRv) : "0";
        while (!stopped) {
          let res: Response;
          try {
            res = await srv.fetch(
              `${CM}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}${spec.query}`,
            );
          } catch {
            await new Promise((r) => setTimeout(r, 50)); // restarting
            continue;
          }
          if (res.status !== 200) {
            await res.body?.cancel();
            await new Promise((r) => setTimeout(r, 50));
            continue;
          }
          // With "0" the stream starts with the state as of pastRv (nothing is written
          // until the watchers are connected), so objects at or below it are that state.
          const fromState = rv === "0";
          await readWatch(res, (ev) => {
            assert(ev.type !== "ERROR", `${spec.label}: ${JSON.stringify(ev.object)}`);
            const evRv = Number(ev.object.metadata.resourceVersion);
            if (ev.type !== "BOOKMARK") {
              const initial = fromState && evRv <= pastRv;
              w.events.push({ type: ev.type, name: ev.object.metadata.name, rv: evRv, initial });
            }
            w.lastRv = Math.max(w.lastRv, evRv);
            rv = String(w.lastRv);
          });
        }
      })();
      return w;
    });
    // Let every watcher connect (and the "0" ones receive the state) before writing more.
    await new Promise((r) => setTimeout(r, 300));

    const restart = async () => {
      let resume!: () => void;
      paused = new Promise((r) => resume = r);
      if (inflight > 0) await new Promise<void>((r) => idle = r);
      idle = undefined;
      await srv.stop();
      await srv.start();
      paused = undefined;
      resume();
    };
    const before = done;
    const writing = Promise.all([writer(120), writer(120), writer(120)]);
    // Restart twice while the writers are busy.
    let restarts = 0;
    for (const at of [100, 220]) {
      while (done < before + at) await new Promise((r) => setTimeout(r, 5));
      await restart();
      restarts++;
    }
    await writing;
    assertEquals(restarts, 2);
    // A last write ends the run: the history below is read up to it.
    const end = await srv.json("POST", CM, {
      metadata: { name: "zend", labels: { color: "red" } },
    });
    const finalRv = Number(end.body.metadata.resourceVersion);
    const deadline = Date.now() + 20_000;
    while (watchers.some((w) => w.lastRv < finalRv) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    stopped = true;

    // The truth: the store's own history of the collection (kept across the restarts), which
    // must hold every acknowledged write.
    const truth: Change[] = [];
    const prefix = "/registry/core/configmaps/default/";
    const history = srv.server.store.watch(prefix, { afterRevision: 0 });
    for await (const ev of history) {
      const name = ev.kv.key.slice(prefix.length);
      const labels = ev.type === "put" ? JSON.parse(ev.kv.value).metadata.labels ?? {} : undefined;
      truth.push({ rv: ev.revision, name, labels });
      if (ev.revision >= finalRv) break;
    }
    history.stop();
    const byRv = new Map(truth.map((c) => [c.rv, c]));
    for (const a of acknowledged) {
      if (a.body.kind === "Status") continue; // a delete's answer carries no resourceVersion
      const c = byRv.get(Number(a.body.metadata.resourceVersion));
      assert(c && c.name === a.name, `acknowledged ${a.name}@${a.body.metadata.resourceVersion}`);
    }
    for (const w of watchers) {
      assert(w.lastRv >= finalRv, `${w.spec.label} reached ${w.lastRv}, not ${finalRv}`);
      // The state each name had at the watcher's starting point.
      const startRv = pastRv;
      const before = new Map<string, Record<string, string> | undefined>();
      for (const c of truth) if (c.rv <= startRv) before.set(c.name, c.labels);
      const expected: string[] = [];
      if (w.spec.start === "0") {
        for (const [name, labels] of [...before].sort(([a], [b]) => a < b ? -1 : 1)) {
          if (labels && w.spec.selector(labels, name)) expected.push(`ADDED ${name}`);
        }
      }
      const state = new Map(before);
      for (const c of truth) {
        if (c.rv <= startRv) continue;
        const prev = state.get(c.name);
        const was = prev !== undefined && w.spec.selector(prev, c.name);
        const is = c.labels !== undefined && w.spec.selector(c.labels, c.name);
        state.set(c.name, c.labels);
        if (was && is) expected.push(`MODIFIED ${c.name}@${c.rv}`);
        else if (is) expected.push(`ADDED ${c.name}@${c.rv}`);
        else if (was) expected.push(`DELETED ${c.name}@${c.rv}`);
      }
      const got = w.events.map((e) =>
        e.initial ? `${e.type} ${e.name}` : `${e.type} ${e.name}@${e.rv}`
      );
      assertEquals(got, expected, w.spec.label);
    }
    await assertThreadsServed(srv.server, workers);
  } finally {
    await srv.stop().catch(() => {});
    await Deno.remove(dataDir, { recursive: true });
  }
}
