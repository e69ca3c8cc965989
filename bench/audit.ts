/**
 * Audit figures for `deno task bench` (see bench/README.md): 32-client configmap creates/s
 * and gets/s on a server that audits everything at Metadata, one at RequestResponse (both to a
 * log file in batch mode), against one without audit. The three servers run on the file store
 * at the same time, in processes of their own, in rounds that alternate between them; the
 * rounds are spread over three such sets of servers (server_sets.ts),
 * each started in another order. The figures are medians over all rounds; the ratios, medians
 * over rounds of each round's ratio.
 */

import type { AuthOptions } from "./auth.ts";
import { compareServers, type Ratios, type ServerValues, startEach } from "./server_sets.ts";

export interface AuditFigures extends ServerValues<Level> {
  /** Medians over rounds of audited ÷ none (requests/s) and none ÷ audited (CPU per request). */
  ratios: Record<Audited, Ratios>;
  problems: string[];
}

type Level = "none" | Audited;
type Audited = "Metadata" | "RequestResponse";

export async function auditFigures(o: AuthOptions): Promise<AuditFigures> {
  const problems: string[] = [];
  await Deno.mkdir(o.dir, { recursive: true });
  for (const level of ["Metadata", "RequestResponse"]) {
    await Deno.writeTextFile(
      `${o.dir}/${level}.yaml`,
      `apiVersion: audit.platform.io/v1\nkind: Policy\nrules:\n  - level: ${level}\n`,
    );
  }
  const flags = (level: Audited, dir: string) => [
    "--audit-policy-file",
    `${o.dir}/${level}.yaml`,
    "--audit-log-path",
    `${dir}/${level}.log`,
    "--audit-log-mode",
    "batch",
  ];
  const levels: Level[] = ["none", "Metadata", "RequestResponse"];
  const c = await compareServers(o, {
    modes: levels,
    start: (dir, order) =>
      startEach(
        levels,
        order,
        (level) => o.start(`${dir}/${level}`, level === "none" ? [] : flags(level, dir)),
      ),
    name: (l) => `audit ${l}`,
    problems,
  });
  return {
    ...c.values,
    ratios: {
      Metadata: c.ratios("Metadata", "none"),
      RequestResponse: c.ratios("RequestResponse", "none"),
    },
    problems,
  };
}
