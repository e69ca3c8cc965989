/** Small helpers the figure modules of the bench share. */

import type { AuthOptions, AuthServer } from "./auth.ts";
import type { Api } from "./harness.ts";
import type { WrkRequest } from "./wrk.ts";
import { cpuMs } from "./proc_stats.ts";
import { median, ROUNDS } from "./harness.ts";

export { median };

/** POSTs `body` to `path` as the admin; throws on anything but success. */
export async function admin(api: Api, path: string, body: unknown): Promise<void> {
  const res = await fetch(api.url + path, {
    method: "POST",
    client: api.client,
    headers: { ...api.headers, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`POST ${path} → ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

type Measured = Awaited<ReturnType<AuthOptions["measure"]>>;
type Request = WrkRequest & { expected: number };

const CONNECTIONS = 32;
const COLLECTION = "/api/v1/namespaces/default/configmaps";
const OBJECTS = 500;

/**
 * Makes the same 500 configmaps on every server; the creates and gets the figures that compare
 * servers measure (creates add new objects, gets cycle over these).
 */
export async function seedConfigMaps(
  servers: AuthServer[],
): Promise<{ create: Request; get: Request }> {
  const data = { a: "1", b: "2", c: "3" };
  const paths: string[] = [];
  for (let i = 0; i < OBJECTS; i++) paths.push(`${COLLECTION}/read-${i}`);
  for (const s of servers) {
    for (let i = 0; i < OBJECTS; i++) {
      await admin(s.api, COLLECTION, { metadata: { name: `read-${i}` }, data });
    }
  }
  return {
    create: {
      method: "POST",
      paths: [COLLECTION],
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ metadata: { generateName: "bench-" }, data }),
      expected: 201,
    },
    get: { method: "GET", paths, headers: {}, expected: 200 },
  };
}

/**
 * `req` at 32 clients on each server, in rounds that alternate the order between them; the
 * median requests/s per server. `run` wraps each measurement (to record more of it).
 */
export async function alternateRounds<M extends string>(o: AuthOptions, opts: {
  servers: Record<M, AuthServer>;
  req: Request;
  /** How a run is named in notes and problems. */
  label: (mode: M) => string;
  problems: string[];
  run?: (mode: M, measure: () => Promise<Measured>) => Promise<Measured>;
  /** @default `--rounds` */
  rounds?: number;
  /** Receives every run's requests/s, by server (to pool runs of several processes). */
  runs?: Map<M, number[]>;
}): Promise<Record<M, number>> {
  const modes = Object.keys(opts.servers) as M[];
  const runs = new Map<M, number[]>(modes.map((m) => [m, []]));
  for (let round = 0; round < (opts.rounds ?? ROUNDS); round++) {
    for (const mode of round % 2 ? [...modes].reverse() : modes) {
      const pids = Object.values<AuthServer>(opts.servers).map((s) => s.pid);
      if (!await untilIdle(pids)) o.note(`${opts.label(mode)}: a server was still busy after 30 s`);
      const measure = () => o.measure(opts.servers[mode].api, CONNECTIONS, o.ms, opts.req);
      const r = await (opts.run ? opts.run(mode, measure) : measure());
      o.note(`${opts.label(mode)}: ${Math.round(r.perSec)}/s`);
      if (r.errors) {
        opts.problems.push(`${opts.label(mode)}: ${r.errors} errors, first: ${r.firstError}`);
      }
      runs.get(mode)!.push(r.perSec);
      pushTo(opts.runs, mode, r.perSec);
    }
  }
  return Object.fromEntries(modes.map((m) => [m, median(runs.get(m)!)])) as Record<M, number>;
}

/**
 * {@link alternateRounds}, also reading each server's CPU time (user + system, from /proc) around
 * each round: the medians of requests/s and of CPU µs per request, per server. CPU per request
 * is less exposed than requests/s to what else the machine runs.
 */
export async function alternateRoundsCpu<M extends string>(o: AuthOptions, opts: {
  servers: Record<M, AuthServer>;
  req: Request;
  label: (mode: M) => string;
  problems: string[];
  rounds?: number;
  /** Receive every run's requests/s and CPU µs per request, by server. */
  runs?: Map<M, number[]>;
  cpuRuns?: Map<M, number[]>;
}): Promise<{ perSec: Record<M, number>; cpuMicros: Record<M, number> }> {
  const modes = Object.keys(opts.servers) as M[];
  const cpu = new Map<M, number[]>(modes.map((m) => [m, []]));
  const perSec = await alternateRounds(o, {
    ...opts,
    run: async (mode, measure) => {
      const pid = opts.servers[mode].pid;
      const cpuNow = () => pid === undefined ? Promise.resolve(NaN) : cpuMs(pid).catch(() => NaN);
      const before = await cpuNow();
      const r = await measure();
      // Warm-up included: the CPU time read spans it too.
      const micros = (await cpuNow() - before) * 1e3 /
        (r.served ?? r.perSec * o.ms / 1000);
      cpu.get(mode)!.push(micros);
      pushTo(opts.cpuRuns, mode, micros);
      o.note(`${opts.label(mode)}: ${micros.toFixed(1)} µs CPU per request`);
      return r;
    },
  });
  const cpuMicros = Object.fromEntries(modes.map((m) => [m, median(cpu.get(m)!)]));
  return { perSec, cpuMicros: cpuMicros as Record<M, number> };
}

function pushTo<M>(runs: Map<M, number[]> | undefined, mode: M, value: number): void {
  if (!runs) return;
  const list = runs.get(mode);
  if (list) list.push(value);
  else runs.set(mode, [value]);
}

/** How long a round waits at most for the servers to be quiet. */
const QUIET_LIMIT_MS = 30_000;
const QUIET_WINDOW_MS = 250;
/** What a server has done so far: CPU ms and bytes written to files (its object files'
 * writes use the disk more than the CPU). */
async function activity(pid: number): Promise<{ cpu: number; bytes: number }> {
  const io = await Deno.readTextFile(`/proc/${pid}/io`).catch(() => "");
  const bytes = Number(/^write_bytes: (\d+)/m.exec(io)?.[1] ?? 0);
  return { cpu: await cpuMs(pid).catch(() => 0), bytes };
}

/**
 * Waits until the servers `pids` are quiet: each used under a tenth of a core and wrote no file,
 * two 250 ms windows in a row; false when that
 * did not come within 30 s. A round must not pay for the last one's leftovers: once its
 * traffic stops, a file-store server writes the object files of its creates in the background
 * (about 1 ms of CPU and disk a file here), and that work would land in the next round; so
 * would the kernel's writeback of those files, which it then flushes.
 */
export async function untilIdle(pids: (number | undefined)[]): Promise<boolean> {
  const known = pids.filter((p): p is number => p !== undefined);
  const deadline = performance.now() + QUIET_LIMIT_MS;
  let calm = 0;
  let before = await Promise.all(known.map(activity));
  while (performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, QUIET_WINDOW_MS));
    const now = await Promise.all(known.map(activity));
    const busy = now.some((a, i) =>
      a.cpu - before[i].cpu > QUIET_WINDOW_MS / 10 || a.bytes > before[i].bytes
    );
    before = now;
    calm = busy ? 0 : calm + 1;
    if (calm >= 2) {
      await flushDirtyPages();
      return true;
    }
  }
  return false;
}

/**
 * The kernel writes a round's object files to the disk later (ext4 allocates their blocks then,
 * seconds after the process wrote them): `sync` does it now, so that the next round does not.
 */
async function flushDirtyPages(): Promise<void> {
  await new Deno.Command("sync", { stdout: "null", stderr: "null" }).output().catch(() => {});
}
