/**
 * A real Prometheus (Debian's `prometheus`) that the test starts on a free loopback port with
 * a generated configuration scraping one target over HTTPS with a CA and a bearer token, and
 * its HTTP query API. Tests skip when Prometheus is missing, except under CI=true where that is
 * a failure (`.ci/run` installs it).
 */

import { freePort } from "./harness.ts";

export const PROMETHEUS = Deno.env.get("PROMETHEUS") ?? "/usr/bin/prometheus";

async function prometheusAvailable(): Promise<boolean> {
  try {
    return (await Deno.stat(PROMETHEUS)).isFile;
  } catch {
    return false;
  }
}

/** Whether Prometheus is on this machine. */
export const prometheusInstalled = await prometheusAvailable();
if (!prometheusInstalled && Deno.env.get("CI") === "true") {
  Deno.test("prometheus is installed (required under CI)", () => {
    throw new Error(`${PROMETHEUS} not found: apt-get install prometheus`);
  });
}

/** What Prometheus scrapes: `host:port` over HTTPS, verified with `caPem`, as `token`. */
export interface ScrapeTarget {
  target: string;
  caPem: string;
  token: string;
}

/** The scrape configuration the README shows, for one target, scraped every second. */
export function scrapeConfig(target: string, caFile: string, tokenFile: string): string {
  return `global:
  scrape_interval: 1s
scrape_configs:
  - job_name: platform
    scheme: https
    metrics_path: /metrics
    authorization:
      credentials_file: ${tokenFile}
    tls_config:
      ca_file: ${caFile}
    static_configs:
      - targets: ["${target}"]
`;
}

export interface Prometheus extends AsyncDisposable {
  url: string;
  /** An instant query's result vector (`/api/v1/query`). */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  /** The scrape targets' state (`/api/v1/targets`). */
  targets(): Promise<{ health: string; lastError: string; scrapeUrl: string }[]>;
  /** Polls until `check` returns something other than undefined (at most `seconds`). */
  until<T>(what: string, check: () => Promise<T | undefined>, seconds?: number): Promise<T>;
}

export async function startPrometheus(scrape: ScrapeTarget): Promise<Prometheus> {
  const dir = await Deno.makeTempDir({ prefix: "platform-prometheus-" });
  await Deno.writeTextFile(`${dir}/ca.crt`, scrape.caPem);
  await Deno.writeTextFile(`${dir}/token`, scrape.token, { mode: 0o600 });
  await Deno.writeTextFile(
    `${dir}/prometheus.yml`,
    scrapeConfig(scrape.target, `${dir}/ca.crt`, `${dir}/token`),
  );
  const port = freePort();
  const child = new Deno.Command(PROMETHEUS, {
    args: [
      `--config.file=${dir}/prometheus.yml`,
      `--storage.tsdb.path=${dir}/data`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const url = `http://127.0.0.1:${port}`;
  const api = async (path: string) => {
    const res = await fetch(url + path);
    const body = await res.json();
    if (body.status !== "success") throw new Error(`${path}: ${JSON.stringify(body)}`);
    return body.data;
  };
  const until: Prometheus["until"] = async (what, check, seconds = 30) => {
    const deadline = Date.now() + seconds * 1000;
    for (;;) {
      const got = await check().catch(() => undefined);
      if (got !== undefined) return got;
      if (Date.now() > deadline) {
        throw new Error(`Prometheus: gave up waiting for ${what}; its log: ${await logSoFar()}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    await child.status;
    await stderr;
    await Deno.remove(dir, { recursive: true });
  };
  const logSoFar = () =>
    Promise.race([stderr, new Promise<string>((r) => setTimeout(() => r("(running)"), 100))]);
  const prometheus: Prometheus = {
    url,
    query: async (expr) => (await api(`/api/v1/query?query=${encodeURIComponent(expr)}`)).result,
    targets: async () => (await api("/api/v1/targets")).activeTargets,
    until,
    [Symbol.asyncDispose]: stop,
  };
  try {
    await until("/-/ready", async () => {
      const res = await fetch(`${url}/-/ready`);
      await res.body?.cancel();
      return res.ok || undefined;
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return prometheus;
}
