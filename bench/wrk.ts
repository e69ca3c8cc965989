/**
 * Load from `wrk` (a C HTTP load generator), when it is installed: on a 2-core machine a
 * JavaScript client spends about as much CPU per request as a small server does, so with
 * Deno's fetch as the client the figures measure the client as much as the server. wrk needs a
 * few microseconds per request. The baseline (B) and the server are measured with the same
 * client, so their ratio stays fair either way.
 */

export interface WrkRequest {
  method: "GET" | "POST";
  /** Paths cycled through in order, one per request. */
  paths: readonly string[];
  headers: Record<string, string>;
  body?: string;
}

export interface WrkResult {
  /** Completed responses in the measured window, any status. */
  requests: number;
  /** Responses that were not 2xx or 3xx. */
  errors: number;
  perSec: number;
  p50: number;
  p99: number;
  /** Socket errors as wrk reports them ("connect 0, read 0, write 0, timeout 0"). */
  socketErrors?: string;
}

let found: boolean | undefined;

/** True when `wrk` runs here. */
export async function haveWrk(): Promise<boolean> {
  if (found !== undefined) return found;
  try {
    const out = await new Deno.Command("wrk", {
      args: ["--version"],
      stdout: "piped",
      stderr: "piped",
    })
      .output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    found = /^wrk /m.test(text) && /Copyright/.test(text);
  } catch {
    found = false;
  }
  return found;
}

/** Lua string literal. */
function lua(s: string): string {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, "\\n")}"`;
}

function script(req: WrkRequest): string {
  const lines = [
    `wrk.method = ${lua(req.method)}`,
    ...Object.entries(req.headers).map(([k, v]) => `wrk.headers[${lua(k)}] = ${lua(v)}`),
  ];
  if (req.body !== undefined) lines.push(`wrk.body = ${lua(req.body)}`);
  lines.push(
    `local paths = {${req.paths.map(lua).join(", ")}}`,
    `local i = 0`,
    `request = function()`,
    `  i = i % #paths + 1`,
    `  return wrk.format(nil, paths[i])`,
    `end`,
  );
  return lines.join("\n") + "\n";
}

/** Milliseconds from wrk's "123.45us" / "1.20ms" / "2.00s". */
function toMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "ms" ? n : m[2] === "s" ? n * 1000 : n * 60_000;
}

/** Parses wrk's report (run with `--latency`). */
export function parseWrk(out: string): WrkResult {
  const requests = Number(/(\d+) requests in /.exec(out)?.[1] ?? NaN);
  const perSec = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const errors = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const p50 = toMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? "");
  const p99 = toMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? "");
  const socketErrors = /Socket errors: (.*)/.exec(out)?.[1];
  if (!Number.isFinite(requests) || !Number.isFinite(perSec)) {
    throw new Error(`cannot read wrk's report:\n${out}`);
  }
  return { requests, errors, perSec, p50, p99, socketErrors };
}

/**
 * Runs wrk with `connections` connections on one thread for `ms` against `url` (TLS is
 * verified by nobody: wrk does not check certificates, which costs the server nothing).
 */
export function wrk(
  url: string,
  req: WrkRequest,
  connections: number,
  ms: number,
): Promise<WrkResult> {
  return wrkScript(url + req.paths[0], script(req), connections, ms);
}

/** Runs wrk as {@link wrk} does, with a Lua script of the caller's (its `request` builds
 * every request); `url` names the server (and the first path). */
export async function wrkScript(
  url: string,
  lua: string,
  connections: number,
  ms: number,
): Promise<WrkResult> {
  const file = await Deno.makeTempFile({ prefix: "bench-wrk-", suffix: ".lua" });
  try {
    await Deno.writeTextFile(file, lua);
    const out = await new Deno.Command("wrk", {
      args: [
        "-t1",
        `-c${connections}`,
        `-d${Math.max(1, Math.round(ms / 1000))}s`,
        "--timeout",
        "10s",
        "--latency",
        "-s",
        file,
        url,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    if (!out.success) {
      throw new Error(`wrk failed: ${text}${new TextDecoder().decode(out.stderr)}`);
    }
    return parseWrk(text);
  } finally {
    if (!Deno.env.get("BENCH_KEEP_WRK")) await Deno.remove(file).catch(() => {});
  }
}
