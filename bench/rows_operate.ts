/**
 * The figures of operating the server (bench/audit.ts, metrics.ts, tracing.ts: issue 22) as rows
 * of the bench's table; `deno task bench` runs them, `--only=<name>` one.
 */

import { fileURLToPath } from "node:url";
import { auditFigures } from "./audit.ts";
import { metricsFigures } from "./metrics.ts";
import { tracingFigures } from "./tracing.ts";
import { spawnBenchScript } from "./rows.ts";
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
  // The ratios are the medians of the rounds' ratios (bench/audit.ts: the three sets of servers
  // run at levels of their own), not value ÷ baseline.
  const row = (
    figure: string,
    value: number,
    baseline: number,
    ratio: number,
    target: number,
  ): Row => ({
    figure,
    value: fmt(value),
    baseline: `no audit ${fmt(baseline)}`,
    ratio: `${fmt(ratio, 2)} (rounds' median)`,
    target: `≥ ${target}`,
    met: ok && ratio >= target ? "yes" : "**no**",
  });
  // The server's CPU per request, none ÷ audited: what requests/s audited ÷ none would be on a
  // machine that runs nothing else.
  const cpuRow = (
    figure: string,
    value: number,
    baseline: number,
    ratio: number,
    target: number,
  ): Row => ({
    ...row(figure, value, baseline, ratio, target),
    value: fmt(value, 1),
    baseline: `no audit ${fmt(baseline, 1)}`,
    ratio: `${fmt(ratio, 2)} (none ÷ audited, rounds' median)`,
  });
  const levels = ["Metadata", "RequestResponse"] as const;
  const target = { Metadata: 0.85, RequestResponse: 0.7 };
  return [
    ...levels.flatMap((level) => [
      row(
        `configmap creates/s, 32 clients, audit log at ${level} (batch)`,
        a.creates[level],
        a.creates.none,
        a.ratios[level].creates,
        target[level],
      ),
      row(
        `configmap gets/s, 32 clients, audit log at ${level} (batch)`,
        a.gets[level],
        a.gets.none,
        a.ratios[level].gets,
        target[level],
      ),
    ]),
    ...levels.flatMap((level) => [
      cpuRow(
        `server CPU per create, µs, audit at ${level}`,
        a.createCpuMicros[level],
        a.createCpuMicros.none,
        a.ratios[level].createCpu,
        target[level],
      ),
      cpuRow(
        `server CPU per GET, µs, audit at ${level}`,
        a.getCpuMicros[level],
        a.getCpuMicros.none,
        a.ratios[level].getCpu,
        target[level],
      ),
    ]),
  ];
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
  // The ratio is the median of the rounds' ratios (bench/metrics.ts: the three processes run
  // at levels of their own), not value ÷ baseline.
  const row = (figure: string, on: number, offValue: number, ratio: number): Row => ({
    figure,
    value: fmt(on),
    baseline: `metrics off ${fmt(offValue)}`,
    ratio: `${fmt(ratio, 2)} (rounds' median)`,
    target: "≥ 0.95",
    met: ok && ratio >= 0.95 ? "yes" : "**no**",
  });
  // The server's CPU per request, off ÷ on: what requests/s on ÷ off would be on a machine
  // that runs nothing else (the server's CPU, not the wall clock, is what the client shares).
  const cpuRow = (figure: string, micros: { on: number; off: number }, ratio: number): Row => ({
    figure,
    value: fmt(micros.on, 1),
    baseline: `metrics off ${fmt(micros.off, 1)}`,
    ratio: `${fmt(ratio, 2)} (off ÷ on, rounds' median)`,
    target: "≥ 0.95",
    met: ok && ratio >= 0.95 ? "yes" : "**no**",
  });
  return [
    row(
      "configmap creates/s, 32 clients, metrics on",
      m.creates.on,
      m.creates.off,
      m.ratios.creates,
    ),
    row("configmap gets/s, 32 clients, metrics on", m.gets.on, m.gets.off, m.ratios.gets),
    cpuRow("server CPU per create, µs, metrics on", m.createCpuMicros, m.ratios.createCpu),
    cpuRow("server CPU per GET, µs, metrics on", m.getCpuMicros, m.ratios.getCpu),
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
  // The ratios are the medians of the rounds' ratios (bench/tracing.ts), not value ÷ baseline.
  const row = (figure: string, value: number, baseline: number, ratio: number): Row => ({
    figure,
    value: fmt(value),
    baseline: `no tracing ${fmt(baseline)}`,
    ratio: `${fmt(ratio, 2)} (rounds' median)`,
    target: "≥ 0.7",
    met: ok && ratio >= 0.7 ? "yes" : "**no**",
  });
  const cpuRow = (figure: string, value: number, baseline: number, ratio: number): Row => ({
    ...row(figure, value, baseline, ratio),
    value: fmt(value, 1),
    baseline: `no tracing ${fmt(baseline, 1)}`,
    ratio: `${fmt(ratio, 2)} (none ÷ traced, rounds' median)`,
  });
  const every = "every request traced (1,000,000 per million)";
  return [
    row(
      `configmap creates/s, 32 clients, ${every}`,
      t.creates.traced,
      t.creates.none,
      t.ratios.creates,
    ),
    row(`configmap gets/s, 32 clients, ${every}`, t.gets.traced, t.gets.none, t.ratios.gets),
    cpuRow(
      "server CPU per create, µs, every request traced",
      t.createCpuMicros.traced,
      t.createCpuMicros.none,
      t.ratios.createCpu,
    ),
    cpuRow(
      "server CPU per GET, µs, every request traced",
      t.getCpuMicros.traced,
      t.getCpuMicros.none,
      t.ratios.getCpu,
    ),
  ];
}
