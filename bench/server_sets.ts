/**
 * Figures that compare a feature on servers of its own against a baseline server (audit,
 * metrics, tracing): {@link compareServers} spreads the rounds over {@link SERVER_SETS} sets of
 * servers and reads each ratio as the median of the rounds' own ratios.
 *
 * @module
 */

import type { AuthOptions, AuthServer } from "./auth.ts";
import { median, ROUNDS } from "./harness.ts";
import { alternateRoundsCpu, seedConfigMaps } from "./figures_common.ts";

/**
 * Sets of servers the rounds of a figure are spread over, each set in processes of its own and
 * started in another order. One process's rounds share its luck: which requests V8 compiled the
 * shared code for first, where the objects landed in the heap. Within one process that held for
 * every round: GETs with metrics on read 0.82 of off in one process and 1.00 in the next, each
 * over 10–30 rounds (2026-11-29), and the server started first fared worse.
 */
const SERVER_SETS = 3;

/** Each server's medians over all rounds: requests/s, and CPU µs per request (user + system,
 * from /proc: less exposed than requests/s to what else the machine runs). */
export interface ServerValues<M extends string> {
  creates: Record<M, number>;
  gets: Record<M, number>;
  createCpuMicros: Record<M, number>;
  getCpuMicros: Record<M, number>;
}

/** A feature's figures to its baseline's, each the median over rounds of the round's own
 * ratio: requests/s feature ÷ baseline, CPU per request baseline ÷ feature. */
export interface Ratios {
  creates: number;
  gets: number;
  createCpu: number;
  getCpu: number;
}

/** What {@link compareServers} measured. */
export interface Comparison<M extends string> {
  values: ServerValues<M>;
  /** `mode`'s {@link Ratios} to `base`. */
  ratios(mode: M, base: M): Ratios;
  /** Every run's requests/s, by server, of all sets. */
  perSec(mode: M): number[];
}

/**
 * Every run of one kind of request, of all sets of servers, in round order: the k-th run of
 * each server is of the same round.
 */
class RoundRuns<M extends string> {
  readonly perSec = new Map<M, number[]>();
  readonly cpu = new Map<M, number[]>();

  /** The median of each server's runs. */
  medians(runs: Map<M, number[]>): Record<M, number> {
    const medians = [...runs].map(([m, values]) => [m, median(values)]);
    return Object.fromEntries(medians) as Record<M, number>;
  }

  /**
   * The median over rounds of `of(mode's run, base's run)`. The sets run at levels of their own
   * (one's GETs 21,000/s, another's 33,000), so medians pooled over them would compare one
   * set's level with another's; a round's runs are of the same set, minutes apart at most.
   */
  ratio(runs: Map<M, number[]>, mode: M, base: M, of: (v: number, b: number) => number): number {
    const values = runs.get(mode) ?? [], baseline = runs.get(base) ?? [];
    return median(values.map((v, k) => of(v, baseline[k])));
  }
}

/**
 * Measures servers against each other on {@link SERVER_SETS} sets of them, one set after
 * another. `start` makes each set in `order` (the modes rotated by one a set, so that each is
 * started first in turn) under a directory of its own. Each set gets the same 500 configmaps,
 * then GETs (unless `createsOnly`) and creates at 32 clients in alternating rounds (`--rounds` shared among the sets,
 * with each server's CPU per request), named `configmap gets, <name(mode)>`; `beforeRounds` and
 * `afterRounds` run around them. Then the set is stopped; the directories are removed at the end.
 */
export async function compareServers<M extends string>(o: AuthOptions, opts: {
  modes: M[];
  start: (dir: string, order: M[]) => Promise<Record<M, AuthServer>>;
  name: (mode: M) => string;
  problems: string[];
  beforeRounds?: (servers: Record<M, AuthServer>) => Promise<void>;
  afterRounds?: () => Promise<void>;
  /** Measure creates only (a feature that only writes meet); gets get no figures. */
  createsOnly?: boolean;
}): Promise<Comparison<M>> {
  const gets = new RoundRuns<M>(), creates = new RoundRuns<M>();
  const rounds = Math.ceil(ROUNDS / SERVER_SETS);
  for (let set = 0; set < SERVER_SETS; set++) {
    const order = opts.modes.map((_, i) => opts.modes[(i + set) % opts.modes.length]);
    o.note(`server set ${set + 1} of ${SERVER_SETS}, started in the order ${order.join(", ")}`);
    const dir = `${o.dir}/set-${set}`;
    await Deno.mkdir(dir, { recursive: true });
    const servers = await opts.start(dir, order);
    try {
      const { create, get } = await seedConfigMaps(Object.values(servers));
      await opts.beforeRounds?.(servers);
      const alternate = (label: string, req: typeof get, runs: RoundRuns<M>) =>
        alternateRoundsCpu(o, {
          servers,
          req,
          label: (m) => `${label}, ${opts.name(m)}`,
          problems: opts.problems,
          rounds,
          runs: runs.perSec,
          cpuRuns: runs.cpu,
        });
      await new Promise((r) => setTimeout(r, 2_000));
      if (!opts.createsOnly) await alternate("configmap gets", get, gets);
      await alternate("configmap creates", create, creates);
      await opts.afterRounds?.();
    } finally {
      // Servers of one process share their stop.
      for (const stop of new Set(Object.values<AuthServer>(servers).map((s) => s.stop))) {
        await stop();
      }
    }
  }
  // The sets' directories go once every set is done: after thousands of files are removed, the
  // file system here makes new ones ~15 times dearer for about 30 s (ext4's inode allocator
  // skips recently freed inodes, one by one: 1.0 ms of kernel CPU a file against 69 µs,
  // 2026-11-29), which the next set's object writer would pay in its rounds.
  for (let set = 0; set < SERVER_SETS; set++) {
    await Deno.remove(`${o.dir}/set-${set}`, { recursive: true }).catch(() => {});
  }
  const rate = (v: number, b: number) => v / b, cpu = (v: number, b: number) => b / v;
  return {
    values: {
      creates: creates.medians(creates.perSec),
      gets: gets.medians(gets.perSec),
      createCpuMicros: creates.medians(creates.cpu),
      getCpuMicros: gets.medians(gets.cpu),
    },
    ratios: (mode, base) => ({
      creates: creates.ratio(creates.perSec, mode, base, rate),
      gets: gets.ratio(gets.perSec, mode, base, rate),
      createCpu: creates.ratio(creates.cpu, mode, base, cpu),
      getCpu: gets.ratio(gets.cpu, mode, base, cpu),
    }),
    perSec: (mode) => [...creates.perSec.get(mode) ?? [], ...gets.perSec.get(mode) ?? []],
  };
}

/**
 * Starts a server per mode with `start`, in `order`; stops those started if one fails. The
 * record lists them in the order of `modes`, whatever order they were started in: the rounds
 * measure them in that order and its reverse.
 */
export async function startEach<M extends string>(
  modes: M[],
  order: M[],
  start: (mode: M) => Promise<AuthServer>,
): Promise<Record<M, AuthServer>> {
  const started = new Map<M, AuthServer>();
  try {
    for (const mode of order) started.set(mode, await start(mode));
  } catch (e) {
    for (const s of started.values()) await s.stop();
    throw e;
  }
  return Object.fromEntries(modes.map((m) => [m, started.get(m)!])) as Record<M, AuthServer>;
}
