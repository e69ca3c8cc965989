/**
 * CPU per request of the whole request chain, without HTTP: several servers (with and without
 * audit, metrics on and off) are built in this one process, each seeded with 100 configmaps, and
 * driven in alternating batches (16 concurrent callers, a timer turn between requests as
 * connections give). The process's CPU time per batch, divided by its requests, is the figure;
 * as every server runs in the same process under the same load, a difference between them is
 * the servers' own, which rounds of separate server processes on a shared machine hide.
 *
 *   deno run -A bench/chain_cpu.ts [none] [Metadata] [RequestResponse] [metrics-off] [--creates]
 *
 * Not part of `deno task bench`: an instrument for looking at audit and metrics costs.
 */

import process from "node:process";
import { createLogger } from "../lib/api/mod.ts";
import { loadConfiguration } from "../lib/server/start/configuration.ts";
import { startControllers } from "../lib/server/start/controllers.ts";
import { openDataDir, prepareCredentials } from "../lib/server/start/credentials.ts";
import { buildRequestHandler } from "../lib/server/start/handler.ts";
import { OpenResources } from "../lib/server/start/open_resources.ts";
import type { StartOptions } from "../lib/server/start/options.ts";
import { buildRegistries } from "../lib/server/start/registries.ts";
import { Shutdown } from "../lib/server/start/serve.ts";
import { openStorage } from "../lib/server/start/storage.ts";
import { WatchPacer } from "../lib/server/handlers/watch_pacing.ts";

const CONFIGMAPS = "/api/v1/namespaces/default/configmaps";
const BATCH = 1_500;
const ROUNDS = 12;
const CALLERS = 16;

type Call = (method: string, path: string, body?: string) => Promise<Response>;

/** A server's request chain: `none`, an audit level (batch log), or `metrics-off`. */
async function chainOf(
  config: string,
  dir: string,
): Promise<{ call: Call; close(): Promise<void> }> {
  const audited = config !== "none" && config !== "metrics-off";
  await Deno.writeTextFile(
    `${dir}/policy.yaml`,
    `apiVersion: audit.platform.io/v1\nkind: Policy\nrules:\n  - level: ${config}\n`,
  );
  const opts: StartOptions = {
    dataDir: `${dir}/data`,
    metrics: config !== "metrics-off",
    audit: audited
      ? { policyFile: `${dir}/policy.yaml`, logPath: `${dir}/audit.log`, logMode: "batch" }
      : undefined,
  };
  const logger = createLogger("error");
  const resources = new OpenResources();
  const config_ = await loadConfiguration(opts, logger, resources);
  const dataDir = await openDataDir(opts, logger, resources);
  const credentials = await prepareCredentials(opts, dataDir, "127.0.0.1", config_, logger);
  const storage = await openStorage(opts, dataDir, config_, logger, resources);
  const api = await buildRegistries(config_, storage, logger, resources);
  const controllers = await startControllers(
    opts,
    config_,
    api,
    credentials.pki,
    logger,
    resources,
  );
  api.bindAuthorizer(controllers.authorizer);
  const shutdown = new Shutdown();
  const chain = await buildRequestHandler(
    opts,
    {
      dataDir,
      config: config_,
      credentials,
      api,
      controllers,
      serverAddress: () => "127.0.0.1:6443",
      shuttingDown: () => false,
      watchPacer: new WatchPacer(),
      bodies: { streamLarge: false },
    },
    logger,
    resources,
  );
  const headers = {
    Authorization: `Bearer ${credentials.adminToken}`,
    "Content-Type": "application/json",
    "User-Agent": "chain_cpu",
  };
  const call: Call = (method, path, body) =>
    chain(
      new Request(`https://127.0.0.1:6443${path}`, { method, body, headers }),
      shutdown.signal,
      "127.0.0.1",
    );
  for (let i = 0; i < 100; i++) {
    const body = JSON.stringify({ metadata: { name: `read-${i}` }, data: { a: "1", b: "2" } });
    await (await call("POST", CONFIGMAPS, body)).arrayBuffer();
  }
  return { call, close: () => resources.closeAll() };
}

const args = Deno.args.filter((a) => !a.startsWith("--"));
const configs = args.length > 0 ? args : ["none", "Metadata"];
const creates = Deno.args.includes("--creates");
const root = await Deno.makeTempDir({ prefix: "chain-cpu-" });
const chains: [string, Awaited<ReturnType<typeof chainOf>>][] = [];
for (const c of configs) {
  await Deno.mkdir(`${root}/${chains.length}`);
  chains.push([c, await chainOf(c, `${root}/${chains.length}`)]);
}

const turn = () => new Promise((r) => setTimeout(r, 0));
let created = 0;
async function batch(call: Call): Promise<number> {
  let started = 0;
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: CALLERS }, async () => {
    while (started < BATCH) {
      started++;
      await turn();
      const res = creates
        ? await call(
          "POST",
          CONFIGMAPS,
          JSON.stringify({ metadata: { name: `c-${created++}` }, data: { a: "1" } }),
        )
        : await call("GET", `${CONFIGMAPS}/read-${started % 100}`);
      await res.arrayBuffer();
    }
  }));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / BATCH;
}

const perRequest = new Map<string, number[]>(configs.map((c) => [c, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, chain] of round % 2 ? [...chains].reverse() : chains) {
    perRequest.get(name)!.push(await batch(chain.call));
  }
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
for (const [name, v] of perRequest) {
  console.log(
    `${creates ? "create" : "get"} ${name}: median ${median(v).toFixed(1)} µs CPU per request ` +
      `(min ${Math.min(...v).toFixed(1)}, max ${Math.max(...v).toFixed(1)})`,
  );
}
for (const [, chain] of chains) await chain.close();
await Deno.remove(root, { recursive: true });
