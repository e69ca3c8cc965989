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
  getsAndCreates,
  mediansOf,
  type Ratios,
  ratiosOf,
  RoundRuns,
  type ServerValues,
  startEach,
} from "./figures_common.ts";

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
    (servers, rounds) =>
      getsAndCreates(o, { servers, rounds, name: (l) => `audit ${l}`, problems, gets, creates }),
  );
  return {
    ...mediansOf(creates, gets),
    ratios: {
      Metadata: ratiosOf(creates, gets, "Metadata", "none"),
      RequestResponse: ratiosOf(creates, gets, "RequestResponse", "none"),
    },
    problems,
  };
}
