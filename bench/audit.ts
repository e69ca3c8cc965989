/**
 * Audit figures for `deno task bench` (see bench/README.md): 32-client configmap creates/s
 * and gets/s on a server that audits everything at Metadata, one at RequestResponse (both to a
 * log file in batch mode), against one without audit. The three servers run on the file store
 * at the same time; the figures are medians of rounds that alternate between them.
 */

import type { AuthOptions } from "./auth.ts";
import type { WrkRequest } from "./wrk.ts";
import { admin, median } from "./figures_common.ts";

export interface AuditFigures {
  creates: Record<Level, number>;
  gets: Record<Level, number>;
  problems: string[];
}

type Level = "none" | "Metadata" | "RequestResponse";

const CONNECTIONS = 32;
const ROUNDS = 3;
const COLLECTION = "/api/v1/namespaces/default/configmaps";
const OBJECTS = 500;

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
  const levels = Object.keys(servers) as Level[];
  try {
    const data = { a: "1", b: "2", c: "3" };
    const paths: string[] = [];
    for (let i = 0; i < OBJECTS; i++) paths.push(`${COLLECTION}/read-${i}`);
    for (const s of Object.values(servers)) {
      for (let i = 0; i < OBJECTS; i++) {
        await admin(s.api, COLLECTION, { metadata: { name: `read-${i}` }, data });
      }
    }
    const create = {
      method: "POST" as const,
      paths: [COLLECTION],
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ metadata: { generateName: "bench-" }, data }),
      expected: 201,
    };
    const get = { method: "GET" as const, paths, headers: {}, expected: 200 };
    const alternate = async (label: string, req: WrkRequest & { expected: number }) => {
      const runs: Record<Level, number[]> = { none: [], Metadata: [], RequestResponse: [] };
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 ? [...levels].reverse() : levels;
        for (const level of order) {
          const r = await o.measure(servers[level].api, CONNECTIONS, o.ms, req);
          o.note(`${label}, audit ${level}: ${Math.round(r.perSec)}/s`);
          if (r.errors) {
            problems.push(`${label}, ${level}: ${r.errors} errors, first: ${r.firstError}`);
          }
          runs[level].push(r.perSec);
          await new Promise((r) => setTimeout(r, req.method === "POST" ? 1_500 : 300));
        }
      }
      return Object.fromEntries(levels.map((l) => [l, median(runs[l])])) as Record<Level, number>;
    };
    await new Promise((r) => setTimeout(r, 2_000));
    const gets = await alternate("configmap gets", get);
    const creates = await alternate("configmap creates", create);
    return { creates, gets, problems };
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
}
