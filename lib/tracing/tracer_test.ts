/**
 * The tracer's bound: against a collector that accepts connections and never answers, spans
 * past `maxQueueSize` (encoded and not yet sent) are dropped, requests still get their spans,
 * and the log says so once, with the count once the queue has drained; the export's failure
 * is logged once.
 */

import assert from "node:assert/strict";
import type { Logger } from "../api/mod.ts";
import { openTracer } from "./tracer.ts";

function silentCollector() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  (async () => {
    for await (const conn of listener) conns.push(conn);
  })().catch(() => {});
  return {
    endpoint: `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    close() {
      listener.close();
      for (const c of conns) c.close();
    },
  };
}

Deno.test("tracer: past the queue bound spans are dropped and counted, requests go on", async () => {
  const collector = silentCollector();
  const warnings: string[] = [];
  let changed = () => {};
  const logger = {
    warn: (m: string) => {
      warnings.push(m);
      changed();
    },
    info: () => {},
    error: () => {},
    debug: () => {},
  } as unknown as Logger;
  const tracer = await openTracer(
    { endpoint: collector.endpoint, samplingRatePerMillion: 1_000_000 },
    { logger, maxQueueSize: 100, exportTimeoutMs: 1_000 },
  );
  try {
    for (let i = 0; i < 150; i++) {
      const span = tracer.startRequest("GET /healthz", { attributes: { i } });
      assert.equal(span.recording, true);
      span.end();
    }
    // The export of the 100 queued spans fails at its deadline; then the drops are counted.
    const dropped = "tracing: 50 spans were dropped (the queue was full)";
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(warnings.join("\n"))), 30_000);
      changed = () => {
        if (!warnings.includes(dropped)) return;
        clearTimeout(timer);
        resolve();
      };
    });
    assert.deepEqual(warnings.filter((w) => w.includes("queue")), [
      "tracing: the span queue is full: dropping spans until it drains",
      dropped,
    ]);
    const failures = warnings.filter((w) => w.startsWith("tracing: cannot export spans"));
    assert.equal(failures.length, 1, warnings.join("\n"));
    assert.match(failures[0], new RegExp(`to ${collector.endpoint} .*DEADLINE_EXCEEDED`));
  } finally {
    await tracer.close();
    collector.close();
  }
});
