import assert from "node:assert/strict";
import type { Logger } from "../api/mod.ts";
import { type AuditEvent, AuditLogWriter, newEvent, openForwardingLogBackend } from "./mod.ts";

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (msg: string) => void lines.push(msg);
  return { lines, debug: log, info: log, warn: log, error: log } as Logger & { lines: string[] };
}

function event(i: number, stage: AuditEvent["stage"] = "ResponseComplete"): AuditEvent {
  const ev = newEvent({
    level: "Metadata",
    auditID: `id-${i}`,
    requestURI: `/api/v1/namespaces/default/configmaps/c${i}`,
    verb: "get",
    user: { username: "alice", groups: [] },
    sourceIPs: ["127.0.0.1"],
    annotations: {},
  });
  return { ...ev, stage };
}

Deno.test("forwarding backend, batch: one delivery per turn; past the buffer events are dropped, counted, logged", async () => {
  const delivered: { text: string; events: number }[] = [];
  const release = Promise.withResolvers<void>();
  const errors: [string, number][] = [];
  const logger = recordingLogger();
  const backend = openForwardingLogBackend({
    mode: "batch",
    batchBufferSize: 3,
    logger,
    onError: (plugin, n) => errors.push([plugin, n]),
    deliver: async (text, events) => {
      delivered.push({ text, events });
      await release.promise;
      return true;
    },
  });
  for (let i = 0; i < 5; i++) assert.equal(backend.process(event(i)), undefined);
  assert.deepEqual(errors, [["buffered", 1], ["buffered", 1]]);
  assert.equal(logger.lines.filter((l) => l.includes("is full")).length, 1);
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(delivered.length, 1);
  assert.equal(delivered[0].events, 3);
  assert.deepEqual(
    delivered[0].text.split("\n").filter((l) => l).map((l) => JSON.parse(l).auditID),
    ["id-0", "id-1", "id-2"],
  );
  // Still in flight: the buffer stays full until the writer is done with them.
  backend.process(event(5));
  assert.equal(errors.length, 3);
  release.resolve();
  await new Promise((r) => setTimeout(r, 10));
  backend.process(event(6));
  await backend.close();
  assert.equal(delivered.at(-1)!.events, 1);
  assert.match(delivered.at(-1)!.text, /"id-6"/);
});

Deno.test("forwarding backend, blocking-strict: only a RequestReceived event that was not written fails", async () => {
  for (const mode of ["blocking", "blocking-strict"] as const) {
    const backend = openForwardingLogBackend({
      mode,
      logger: recordingLogger(),
      deliver: () => Promise.resolve(false),
    });
    const received = backend.process(event(1, "RequestReceived"));
    assert.ok(received instanceof Promise, "a blocking mode waits for the write");
    if (mode === "blocking-strict") await assert.rejects(received);
    else await received;
    await backend.process(event(1, "ResponseComplete"));
    await backend.close();
  }
});

Deno.test("the writer: lines from every thread in one file; a failed write is counted and answered false", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-shared-log-" });
  try {
    const errors: [string, number][] = [];
    const writer = new AuditLogWriter({ path: `${dir}/audit.log`, logger: recordingLogger() });
    assert.equal(writer.write('{"a":1}\n{"a":2}\n', 2), true);
    assert.equal(writer.write('{"a":3}\n', 1), true);
    await writer.close();
    assert.equal(await Deno.readTextFile(`${dir}/audit.log`), '{"a":1}\n{"a":2}\n{"a":3}\n');
    assert.equal((await Deno.stat(`${dir}/audit.log`)).mode! & 0o777, 0o600);
    const full = new AuditLogWriter({
      path: "/dev/full",
      mode: "batch",
      logger: recordingLogger(),
      onError: (plugin, n) => errors.push([plugin, n]),
    });
    // Batch mode: what the threads send meanwhile goes in one write, in arrival order.
    const batch = new AuditLogWriter({
      path: `${dir}/batch.log`,
      mode: "batch",
      logger: recordingLogger(),
    });
    const written = [batch.write('{"b":1}\n', 1), batch.write('{"b":2}\n{"b":3}\n', 2)];
    assert.deepEqual(await Promise.all(written), [true, true]);
    assert.equal(await batch.write('{"b":4}\n', 1), true);
    await batch.close();
    assert.equal(
      await Deno.readTextFile(`${dir}/batch.log`),
      '{"b":1}\n{"b":2}\n{"b":3}\n{"b":4}\n',
    );
    const lost = [full.write('{"a":1}\n', 1), full.write('{"a":2}\n{"a":3}\n', 2)];
    assert.deepEqual(await Promise.all(lost), [false, false]);
    await full.close();
    assert.deepEqual(errors, [["log", 3]]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
