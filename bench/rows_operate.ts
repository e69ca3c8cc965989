/**
 * The figures of operating the server (bench/audit.ts, metrics.ts, tracing.ts: issue 22) as rows
 * of the bench's table; `deno task bench` runs them, `--only=<name>` one.
 */

import { fileURLToPath } from "node:url";
import { auditFigures } from "./audit.ts";
import { metricsFigures } from "./metrics.ts";
import { tracingFigures } from "./tracing.ts";
import { spawnBenchScript } from "./rows.ts";
import type { Ratios, ServerValues } from "./server_sets.ts";
import {
  type Api,
  apiFor,
  type Child,
  fmt,
  note,
  type Row,
  SERVER_V8_FLAGS,
  serverPairOptions,
} from "./harness.ts";

/** Two servers in one process, metrics on and off (bench/server_pair.ts). */
const PAIR = fileURLToPath(new URL("./server_pair.ts", import.meta.url));

/** Creates and gets with the audit log at Metadata and RequestResponse vs none (bench/audit.ts),
 * as table rows. */
export async function auditRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const a = await auditFigures(serverPairOptions(`${tmp}/audit`, "audit server", track, trackApi));
  problems.push(...a.problems);
  const ok = a.problems.length === 0;
  const levels = ["Metadata", "RequestResponse"] as const;
  const rows = levels.map((level) =>
    comparedRows({
      what: `audit log at ${level} (batch)`,
      cpuWhat: `audit at ${level}`,
      baseline: "no audit",
      cpuRatio: "none ÷ audited",
      target: level === "Metadata" ? 0.85 : 0.7,
      ok,
      ...valuesOf(a, level, "none"),
      ratios: a.ratios[level],
    })
  );
  return [...rows.flatMap((r) => r.rates), ...rows.flatMap((r) => r.cpu)];
}

/** Creates and gets with metrics on vs off (bench/metrics.ts), as table rows. */
export async function metricsRows(
  tmp: string,
  track: (c: Child) => Child,
  trackApi: (a: Api) => Api,
  problems: string[],
): Promise<Row[]> {
  const dir = `${tmp}/metrics`;
  const m = await metricsFigures({
    ...serverPairOptions(dir, "metrics servers", track, trackApi),
    startPair: async (onDir, offDir, offFirst) => {
      const { child, stop } = await spawnBenchScript(
        [...SERVER_V8_FLAGS, PAIR, onDir, offDir, ...offFirst ? ["--off-first"] : []],
        onDir,
        "metrics servers",
        track,
      );
      const second = child.log.map((l) => /metrics-off server on (\S+)/.exec(l)?.[1]).find((u) =>
        u
      );
      if (!second) throw new Error(`${PAIR} did not say where its metrics-off server is`);
      const server = async (c: Child) => ({
        api: trackApi(await apiFor(c, true)),
        stop,
        pid: c.proc.pid,
      });
      return {
        on: await server(child),
        off: await server({ ...child, url: second, dataDir: offDir }),
      };
    },
  });
  problems.push(...m.problems);
  const ok = m.problems.length === 0;
  const { rates, cpu } = comparedRows({
    what: "metrics on",
    cpuWhat: "metrics on",
    baseline: "metrics off",
    cpuRatio: "off ÷ on",
    target: 0.95,
    ok,
    ...valuesOf(m, "on", "off"),
    ratios: m.ratios,
  });
  return [
    ...rates,
    ...cpu,
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

/** Creates and gets with every request traced to an OTLP receiver vs no tracing
 * (bench/tracing.ts), as table rows. */
export async function tracingRows(
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
  const { rates, cpu } = comparedRows({
    what: "every request traced (1,000,000 per million)",
    cpuWhat: "every request traced",
    baseline: "no tracing",
    cpuRatio: "none ÷ traced",
    target: 0.7,
    ok,
    ...valuesOf(t, "traced", "none"),
    ratios: t.ratios,
  });
  return [...rates, ...cpu];
}

/** A feature's figures against its baseline's, as {@link comparedRows} shows them. */
interface Compared {
  /** The feature, in the names of the requests/s rows and of the CPU rows. */
  what: string;
  cpuWhat: string;
  /** The baseline's name ("no audit"), and how the CPU ratio reads ("none ÷ audited"). */
  baseline: string;
  cpuRatio: string;
  target: number;
  /** False when the figures had problems: no target is met. */
  ok: boolean;
  /** With the feature, and the baseline. */
  creates: [number, number];
  gets: [number, number];
  createCpu: [number, number];
  getCpu: [number, number];
  /** Medians over rounds of each round's ratio (bench/server_sets.ts). */
  ratios: Ratios;
}

/**
 * Creates/s and gets/s with a feature against without, and the server's CPU per create and per
 * GET (baseline ÷ feature: what requests/s would read on a machine that runs nothing else). The
 * ratios are the medians of the rounds' own ratios, not value ÷ baseline: the sets of servers the
 * rounds are spread over run at levels of their own.
 */
function comparedRows(c: Compared): { rates: Row[]; cpu: Row[] } {
  const row = (figure: string, [value, base]: [number, number], ratio: number, cpu: boolean) => ({
    figure,
    value: fmt(value, cpu ? 1 : 0),
    baseline: `${c.baseline} ${fmt(base, cpu ? 1 : 0)}`,
    ratio: `${fmt(ratio, 2)} (${cpu ? `${c.cpuRatio}, ` : ""}rounds' median)`,
    target: `≥ ${c.target}`,
    met: c.ok && ratio >= c.target ? "yes" : "**no**",
  });
  return {
    rates: [
      row(`configmap creates/s, 32 clients, ${c.what}`, c.creates, c.ratios.creates, false),
      row(`configmap gets/s, 32 clients, ${c.what}`, c.gets, c.ratios.gets, false),
    ],
    cpu: [
      row(`server CPU per create, µs, ${c.cpuWhat}`, c.createCpu, c.ratios.createCpu, true),
      row(`server CPU per GET, µs, ${c.cpuWhat}`, c.getCpu, c.ratios.getCpu, true),
    ],
  };
}

/** `mode`'s figures and `base`'s, side by side, as {@link Compared} takes them. */
function valuesOf<M extends string>(f: ServerValues<M>, mode: M, base: M) {
  const pair = (r: Record<M, number>): [number, number] => [r[mode], r[base]];
  return {
    creates: pair(f.creates),
    gets: pair(f.gets),
    createCpu: pair(f.createCpuMicros),
    getCpu: pair(f.getCpuMicros),
  };
}
