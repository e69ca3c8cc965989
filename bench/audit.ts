/**
 * Audit figures for `deno task bench` (see bench/README.md): 32-client configmap creates/s
 * and gets/s on a server that audits everything at Metadata, one at RequestResponse (both to a
 * log file in batch mode), against one without audit. The three servers run on the file store
 * at the same time; the figures are medians of rounds that alternate between them.
 */

import type { AuthOptions } from "./auth.ts";
import { alternateRoundsCpu, seedConfigMaps } from "./figures_common.ts";

export interface AuditFigures {
  creates: Record<Level, number>;
  gets: Record<Level, number>;
  /** Each server's CPU time per request, µs (user + system, from /proc). */
  createCpuMicros: Record<Level, number>;
  getCpuMicros: Record<Level, number>;
  problems: string[];
}

type Level = "none" | "Metadata" | "RequestResponse";

export async function auditFigures(o: AuthOptions): Promise<AuditFigures> {
  const problems: string[] = [];
  await Deno.mkdir(o.dir, { recursive: true });
  const policy = (level: string) =>
    `apiVersion: audit.platform.io/v1\nkind: Policy\nrules:\n  - level: ${level}\n`;
  const flags = async (level: Exclude<Level, "none">) => {
    await Deno.writeTextFile(`${o.dir}/${level}.yaml`, policy(level));
    return [
      "--audit-policy-file",
      `${o.dir}/${level}.yaml`,
      "--audit-log-path",
      `${o.dir}/${level}.log`,
      "--audit-log-mode",
      "batch",
    ];
  };
  const servers = {
    none: await o.start(`${o.dir}/none`, []),
    Metadata: await o.start(`${o.dir}/metadata`, await flags("Metadata")),
    RequestResponse: await o.start(`${o.dir}/rr`, await flags("RequestResponse")),
  };
  try {
    const { create, get } = await seedConfigMaps(Object.values(servers));
    const alternate = (label: string, req: typeof get) =>
      alternateRoundsCpu(o, { servers, req, label: (l) => `${label}, audit ${l}`, problems });
    await new Promise((r) => setTimeout(r, 2_000));
    const gets = await alternate("configmap gets", get);
    const creates = await alternate("configmap creates", create);
    return {
      creates: creates.perSec,
      gets: gets.perSec,
      createCpuMicros: creates.cpuMicros,
      getCpuMicros: gets.cpuMicros,
      problems,
    };
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
}
