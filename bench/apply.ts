/**
 * Server-side apply figures for `deno task bench` (see bench/README.md): applies/s of a
 * configmap with 50 fields, with 1 and 16 clients, next to PUT updates/s of the same object
 * shape in the same run (the baseline: apply does what an update does plus the field-set
 * work). Each request changes one value, so every request is a real, durable write.
 *
 * The client is one raw keep-alive TLS connection per client ({@link RawHttp}) for both, so
 * client cost cancels in the ratio (Deno's fetch stalls ~40 ms on bodies this size).
 */

import { RawHttp } from "./raw_http.ts";
import type { Api } from "./harness.ts";

export interface ApplyOptions {
  api: Api;
  namespace: string;
  /** The server's CA certificate (PEM). */
  caPem: string;
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

type Writer = (
  conn: RawHttp,
  name: string,
  round: number,
) => Promise<{ status: number; body: string }>;

/** Closed loop: each client writes its own object as fast as the answers come back. */
async function run(
  conns: RawHttp[],
  ms: number,
  write: Writer,
  problems: string[],
): Promise<number> {
  let done = 0;
  let firstError: string | undefined;
  const end = performance.now() + ms;
  await Promise.all(conns.map(async (conn, c) => {
    for (let round = 1; performance.now() < end; round++) {
      const res = await write(conn, `apply-bench-${c}`, round);
      if (res.status < 300) done++;
      else firstError ??= `${res.status} ${res.body.slice(0, 200)}`;
    }
  }));
  if (firstError) problems.push(`apply bench, ${conns.length} clients: ${firstError}`);
  return done / (ms / 1000);
}

export async function applyFigures(opts: ApplyOptions): Promise<ApplyResult> {
  const { api, namespace } = opts;
  const problems: string[] = [];
  const base = `/api/v1/namespaces/${namespace}/configmaps`;
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
  const put: Writer = (conn, name, round) =>
    conn.request(
      "PUT",
      `${base}/${name}?fieldManager=bench-put`,
      headers("application/json"),
      body(name, round),
    );
  const apply: Writer = (conn, name, round) =>
    conn.request(
      "PATCH",
      `${base}/${name}?fieldManager=bench-apply&force=true`,
      headers("application/apply-patch+yaml"),
      body(name, round),
    );
  const rows: ApplyRow[] = [];
  for (const clients of CLIENTS) {
    const conns = await Promise.all(
      Array.from({ length: clients }, () => RawHttp.connect(api.url, opts.caPem)),
    );
    // Warm up both paths (creates the objects and their managed fields).
    await run(conns, 300, put, problems);
    await run(conns, 300, apply, problems);
    const putPerSec = await run(conns, opts.ms, put, problems);
    const applyPerSec = await run(conns, opts.ms, apply, problems);
    for (const c of conns) c.close();
    opts.note(
      `${FIELDS}-field configmap, ${clients} client(s): PUT ${putPerSec.toFixed(0)}/s, ` +
        `apply ${applyPerSec.toFixed(0)}/s (${(applyPerSec / putPerSec).toFixed(2)}×)`,
    );
    rows.push({ clients, putPerSec, applyPerSec });
  }
  return { rows, problems };
}
