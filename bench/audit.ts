/**
 * Audit figures for `deno task bench` (see bench/README.md): 32-client configmap creates/s
 * and gets/s on a server that audits everything at Metadata, one at RequestResponse (both to a
 * log file in batch mode), against one without audit. The three servers run on the file store
 * at the same time, in processes of their own, in rounds that alternate between them; the
 * rounds are spread over three such sets of servers (figures_common.ts, `acrossServerSets`),
 * each started in another order. The figures are medians over all rounds; the ratios, medians
 * over rounds of each round's ratio.
 */

import type { AuthOptions } from "./auth.ts";
import {
  acrossServerSets,
  alternateRoundsCpu,
  RoundRuns,
  seedConfigMaps,
  startEach,
} from "./figures_common.ts";

export interface AuditFigures {
  creates: Record<Level, number>;
  gets: Record<Level, number>;
  /** Each server's CPU time per request, µs (user + system, from /proc). */
  createCpuMicros: Record<Level, number>;
  getCpuMicros: Record<Level, number>;
  /** Medians over rounds of audited ÷ none (requests/s) and none ÷ audited (CPU per request). */
  ratios: Record<Audited, { creates: number; gets: number; createCpu: number; getCpu: number }>;
  problems: string[];
}

type Level = "none" | Audited;
type Audited = "Metadata" | "RequestResponse";

export async function auditFigures(o: AuthOptions): Promise<AuditFigures> {
  const problems: string[] = [];
  await Deno.mkdir(o.dir, { recursive: true });
  const policy = (level: string) =>
    `apiVersion: audit.platform.io/v1\nkind: Policy\nrules:\n  - level: ${level}\n`;
  const flags = async (level: Audited, dir: string) => {
    await Deno.writeTextFile(`${o.dir}/${level}.yaml`, policy(level));
    return [
      "--audit-policy-file",
      `${o.dir}/${level}.yaml`,
      "--audit-log-path",
      `${dir}/${level}.log`,
      "--audit-log-mode",
      "batch",
    ];
  };
  const gets = new RoundRuns<Level>();
  const creates = new RoundRuns<Level>();
  const levels: Level[] = ["none", "Metadata", "RequestResponse"];
  await acrossServerSets(
    o,
    levels,
    (dir, order) =>
      startEach(
        levels,
        order,
        async (level) =>
          o.start(`${dir}/${level}`, level === "none" ? [] : await flags(level, dir)),
      ),
    async (servers, rounds) => {
      const { create, get } = await seedConfigMaps(Object.values(servers));
      const alternate = (label: string, req: typeof get, runs: RoundRuns<Level>) =>
        alternateRoundsCpu(o, {
          servers,
          req,
          label: (l) => `${label}, audit ${l}`,
          problems,
          rounds,
          runs: runs.perSec,
          cpuRuns: runs.cpu,
        });
      await new Promise((r) => setTimeout(r, 2_000));
      await alternate("configmap gets", get, gets);
      await alternate("configmap creates", create, creates);
    },
  );
  const ratiosOf = (level: Audited) => {
    const c = creates.ratios(level, "none"), g = gets.ratios(level, "none");
    return { creates: c.perSec, gets: g.perSec, createCpu: c.cpu, getCpu: g.cpu };
  };
  return {
    creates: creates.medians(creates.perSec),
    gets: gets.medians(gets.perSec),
    createCpuMicros: creates.medians(creates.cpu),
    getCpuMicros: gets.medians(gets.cpu),
    ratios: { Metadata: ratiosOf("Metadata"), RequestResponse: ratiosOf("RequestResponse") },
    problems,
  };
}
