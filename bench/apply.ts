/**
 * Server-side apply figures for `deno task bench` (see bench/README.md): applies/s of a
 * configmap with 50 fields, with 1 and 16 clients, next to PUT updates/s of the same object
 * shape in the same run (the baseline: apply does what an update does plus the field-set
 * work). Each request changes one value, so every request is a real, durable write.
 *
 * The client is Deno's fetch in this process for both, so client cost cancels in the ratio.
 */

import type { Api } from "./watch.ts";

export interface ApplyOptions {
  api: Api;
  namespace: string;
  /** Measurement window of each run, ms. */
  ms: number;
  note: (msg: string) => void;
}

export interface ApplyRow {
  clients: number;
  putPerSec: number;
  applyPerSec: number;
}

export interface ApplyResult {
  rows: ApplyRow[];
  problems: string[];
}

const FIELDS = 50;
const CLIENTS = [1, 16];

function data(round: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < FIELDS; i++) out[`key-${String(i).padStart(2, "0")}`] = `value-${i}`;
  out["key-00"] = `round-${round}`;
  return out;
}

type Writer = (name: string, round: number) => Promise<Response>;

/** Closed loop: each client writes its own object as fast as the answers come back. */
async function run(clients: number, ms: number, write: Writer, problems: string[]) {
  let done = 0;
  let firstError: string | undefined;
  const end = performance.now() + ms;
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    for (let round = 1; performance.now() < end; round++) {
      const res = await write(`apply-bench-${c}`, round);
      const text = await res.text();
      if (res.ok) done++;
      else firstError ??= `${res.status} ${text.slice(0, 200)}`;
    }
  }));
  if (firstError) problems.push(`apply bench, ${clients} clients: ${firstError}`);
  return done / (ms / 1000);
}

export async function applyFigures(opts: ApplyOptions): Promise<ApplyResult> {
  const { api, namespace } = opts;
  const problems: string[] = [];
  const base = `${api.url}/api/v1/namespaces/${namespace}/configmaps`;
  const headers = (type: string) => ({ ...api.headers, "Content-Type": type });
  await fetch(`${api.url}/api/v1/namespaces`, {
    method: "POST",
    client: api.client,
    headers: headers("application/json"),
    body: JSON.stringify({ metadata: { name: namespace } }),
  }).then((r) => r.arrayBuffer());
  const body = (name: string, round: number) =>
    JSON.stringify({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace },
      data: data(round),
    });
  const put: Writer = (name, round) =>
    fetch(`${base}/${name}?fieldManager=bench-put`, {
      method: "PUT",
      client: api.client,
      headers: headers("application/json"),
      body: body(name, round),
    });
  const apply: Writer = (name, round) =>
    fetch(`${base}/${name}?fieldManager=bench-apply&force=true`, {
      method: "PATCH",
      client: api.client,
      headers: headers("application/apply-patch+yaml"),
      body: body(name, round),
    });
  const rows: ApplyRow[] = [];
  for (const clients of CLIENTS) {
    // Warm up both paths (creates the objects and their managed fields).
    await run(clients, 300, put, problems);
    await run(clients, 300, apply, problems);
    const putPerSec = await run(clients, opts.ms, put, problems);
    const applyPerSec = await run(clients, opts.ms, apply, problems);
    opts.note(
      `${FIELDS}-field configmap, ${clients} client(s): PUT ${putPerSec.toFixed(0)}/s, ` +
        `apply ${applyPerSec.toFixed(0)}/s (${(applyPerSec / putPerSec).toFixed(2)}×)`,
    );
    rows.push({ clients, putPerSec, applyPerSec });
  }
  return { rows, problems };
}
