/**
 * Egress figures (`deno run --allow-all bench/egress.ts`, about 30 s): webhook-style POSTs/s
 * to a local HTTPS server (HTTP/1.1, kept connections, 8 at a time) made directly, through
 * Debian's tinyproxy (tcp) and through a CONNECT proxy on a Unix socket, both via the dialer's
 * relay; and the latency of a call on a new connection (a new tunnel each). Rounds alternate
 * between the three; medians are printed with their ratio to the direct figure measured in the
 * same run.
 */

import { EgressDialer } from "../lib/egress/mod.ts";
import { startTinyproxy } from "../lib/egress/testing/tinyproxy.ts";
import { startUdsConnectProxy } from "../lib/egress/testing/uds_connect_proxy.ts";
import { startTestWebhook } from "../lib/admission/webhook/webhook_testdata.ts";

const CONCURRENCY = 8;
const ROUND_MS = 2_000;
const ROUNDS = 3;
const FRESH_CALLS = 200;

await using hook = await startTestWebhook();
const port = Number(new URL(hook.url).port);
hook.received.length = 0;
await using tiny = await startTinyproxy({ connectPorts: [port] });
await using uds = await startUdsConnectProxy([port]);
const dialer = new EgressDialer({
  cluster: { protocol: "HTTPConnect", proxy: { transport: "tcp", url: tiny.url } },
  controlplane: { protocol: "HTTPConnect", proxy: { transport: "uds", udsName: uds.path } },
});
const ca = atob(hook.caBundle);
const body = JSON.stringify({ request: { uid: "1" } });
const ways = {
  direct: (o: Deno.CreateHttpClientOptions) => Deno.createHttpClient(o),
  tinyproxy: dialer.httpClientFactory("cluster"),
  uds: dialer.httpClientFactory("controlplane"),
};
type Way = keyof typeof ways;

async function call(client: Deno.HttpClient): Promise<void> {
  const res = await fetch(`${hook.url}/bench`, { method: "POST", body, client });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`status ${res.status}`);
}

/** Calls/s over kept connections. */
async function throughput(way: Way): Promise<number> {
  const client = ways[way]({ caCerts: [ca], http2: false });
  let done = 0;
  const end = performance.now() + ROUND_MS;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < end) {
      await call(client);
      done++;
    }
  }));
  client.close();
  return done / (ROUND_MS / 1000);
}

/** Median ms of a call on a new client (a new connection, and tunnel, each). */
async function freshLatency(way: Way): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < FRESH_CALLS; i++) {
    const client = ways[way]({ caCerts: [ca], http2: false });
    const t = performance.now();
    await call(client);
    times.push(performance.now() - t);
    client.close();
  }
  return median(times);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const order: Way[] = ["direct", "tinyproxy", "uds"];
const rates: Record<Way, number[]> = { direct: [], tinyproxy: [], uds: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const way of round % 2 ? [...order].reverse() : order) {
    rates[way].push(await throughput(way));
  }
}
const fresh: Record<Way, number> = { direct: 0, tinyproxy: 0, uds: 0 };
for (const way of order) fresh[way] = await freshLatency(way);
dialer.close();

const direct = median(rates.direct);
console.log("| way | POSTs/s, 8 at a time, kept connections | ratio | new connection, median |");
console.log("| --- | ---: | ---: | ---: |");
for (const way of order) {
  const r = median(rates[way]);
  console.log(
    `| ${way} | ${Math.round(r)} | ${(r / direct).toFixed(2)} | ${fresh[way].toFixed(2)} ms |`,
  );
}
