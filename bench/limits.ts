/**
 * The cost of the request limits for `deno task bench --only=limits` (see bench/README.md):
 * GETs/s and creates/s by a user who is not in system:masters (the admin is never limited),
 * 32 clients, on a server with the default in-flight limits (400 read-only and 200 mutating
 * seats, shared fairly per user) against the same server with both limits off
 * (`--max-requests-inflight=0 --max-mutating-requests-inflight=0`), measured alternately in
 * the same run. Authorization is `AlwaysAllow` on both, so only the limits differ.
 */

import type { AuthOptions, AuthServer } from "./auth.ts";
import type { Api } from "./harness.ts";

/** Servers with extra flags and a load client, as bench/auth.ts takes them. */
export type LimitsOptions = AuthOptions;

export interface LimitsFigures {
  getsLimited: number;
  getsUnlimited: number;
  createsLimited: number;
  createsUnlimited: number;
  problems: string[];
}

const CONNECTIONS = 32;
const ROUNDS = 3;
const CM = "/api/v1/namespaces/default/configmaps";

export async function limitsFigures(o: LimitsOptions): Promise<LimitsFigures> {
  const problems: string[] = [];
  await Deno.mkdir(o.dir, { recursive: true });
  await Deno.writeTextFile(
    `${o.dir}/allow.yaml`,
    "apiVersion: apiserver.platform.io/v1beta1\nkind: AuthorizationConfiguration\n" +
      "authorizers:\n  - {type: AlwaysAllow, name: allow}\n",
  );
  await Deno.writeTextFile(`${o.dir}/tokens.csv`, 'bench-token,bench,bench,""\n');
  const common = [
    "--token-auth-file",
    `${o.dir}/tokens.csv`,
    "--authorization-config",
    `${o.dir}/allow.yaml`,
  ];
  const limited = await o.start(`${o.dir}/limited`, common);
  const unlimited = await o.start(`${o.dir}/unlimited`, [
    ...common,
    "--max-requests-inflight=0",
    "--max-mutating-requests-inflight=0",
  ]);
  try {
    const as = (s: AuthServer): Api => ({
      ...s.api,
      headers: { Authorization: "Bearer bench-token" },
    });
    for (const s of [limited, unlimited]) {
      const res = await fetch(`${s.api.url}${CM}`, {
        method: "POST",
        client: s.api.client,
        headers: { ...s.api.headers, "Content-Type": "application/json" },
        body: JSON.stringify({ metadata: { name: "bench-limits" }, data: { a: "b" } }),
      });
      await res.body?.cancel();
    }
    const get = {
      method: "GET" as const,
      paths: [`${CM}/bench-limits`],
      headers: {},
      expected: 200,
    };
    const create = {
      method: "POST" as const,
      paths: [CM],
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ metadata: { generateName: "bench-" }, data: { a: "b" } }),
      expected: 201,
    };
    const run = async (label: string, api: Api, req: typeof get | typeof create) => {
      const r = await o.measure(api, CONNECTIONS, o.ms, req);
      o.note(`${label}: ${Math.round(r.perSec)}/s`);
      if (r.errors) problems.push(`${label}: ${r.errors} errors, first: ${r.firstError}`);
      return r.perSec;
    };
    const runs = { gl: [] as number[], gu: [] as number[], cl: [] as number[], cu: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      runs.gu.push(await run("GET, limits off", as(unlimited), get));
      runs.gl.push(await run("GET, limits on", as(limited), get));
      runs.cu.push(await run("create, limits off", as(unlimited), create));
      runs.cl.push(await run("create, limits on", as(limited), create));
    }
    return {
      getsLimited: median(runs.gl),
      getsUnlimited: median(runs.gu),
      createsLimited: median(runs.cl),
      createsUnlimited: median(runs.cu),
      problems,
    };
  } finally {
    await limited.stop();
    await unlimited.stop();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
