import assert from "node:assert/strict";
import { silentLogger } from "../../api/mod.ts";
import { ServerMetrics } from "../../metrics/mod.ts";
import { PortRpc, RpcUnavailable } from "./port_rpc.ts";
import { MainThreadLink, scrapeThreads, WorkerLinks } from "./thread_link.ts";

Deno.test("port rpc: calls answered, failures carried, no answer times out, close rejects", async () => {
  const { port1, port2 } = new MessageChannel();
  const a = new PortRpc(port1);
  const b = new PortRpc(port2);
  b.handle("double", (n) => (n as number) * 2);
  b.handle("fail", () => {
    throw new Error("no such thing");
  });
  b.handle("never", () => new Promise(() => {}));
  assert.equal(await a.call("double", 21), 42);
  await assert.rejects(a.call("fail"), /no such thing/);
  await assert.rejects(a.call("missing"), /no handler for missing/);
  await assert.rejects(a.call("never", undefined, { timeoutMs: 50 }), RpcUnavailable);
  const waiting = a.call("never");
  a.close();
  await assert.rejects(waiting, RpcUnavailable);
  b.close();
});

Deno.test("a scrape merges the threads that answer and leaves out one that does not", async () => {
  const main = new ServerMetrics({ version: "1.32" });
  const worker = new ServerMetrics({ version: "1.32" });
  const links = new WorkerLinks({ metrics: main, logger: silentLogger });
  const live = new MainThreadLink(links.connect("worker 1").port);
  live.shareMetrics(worker, silentLogger);
  // Worker 2's port is never answered: a stuck thread.
  const stuck = links.connect("worker 2").port;
  main.watchEvents.child("", "v1", "ConfigMap").inc(2);
  worker.watchEvents.child("", "v1", "ConfigMap").inc(3);
  const sample = 'apiserver_watch_events_total{group="",version="v1",kind="ConfigMap"}';
  for (const scrape of [() => scrapeThreads(main), () => scrapeThreads(worker)]) {
    const text = await scrape();
    const line = text.split("\n").find((l) => l.startsWith(sample + " "));
    assert.equal(line, `${sample} 5`);
  }
  live.close();
  stuck.close();
  links.close();
});
