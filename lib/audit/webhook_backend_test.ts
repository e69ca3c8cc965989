import assert from "node:assert/strict";
import type { Logger } from "../api/mod.ts";
import { atStage, newEvent } from "./event.ts";
import { unionBackend } from "./log_backend.ts";
import { openWebhookBackend, type WebhookPost } from "./webhook_backend.ts";

function event(
  i: number,
  padding = 0,
  stage: "RequestReceived" | "ResponseComplete" = "ResponseComplete",
) {
  return atStage(
    newEvent({
      level: "Metadata",
      auditID: `id-${i}`,
      requestURI: `/version?pad=${"x".repeat(padding)}`,
      verb: "get",
      user: { username: "u", groups: [] },
      sourceIPs: [],
      annotations: {},
    }),
    stage,
  );
}

interface Received {
  ids: string[];
  bytes: number;
  at: number;
}

/** A webhook that records what it receives and answers with `status(n)` for the n-th POST. */
function receiver(status: (n: number) => number | Promise<number> = () => 200) {
  const got: Received[] = [];
  let n = 0;
  const post: WebhookPost = async (body) => {
    const list = JSON.parse(body);
    assert.equal(list.kind, "EventList");
    assert.equal(list.apiVersion, "audit.platform.io/v1");
    const answer = await status(n++);
    got.push({
      ids: list.items.map((e: { auditID: string }) => e.auditID),
      bytes: new TextEncoder().encode(body).length,
      at: Date.now(),
    });
    return answer;
  };
  return { post, got, posts: () => n };
}

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (m: string) => void lines.push(m);
  return { lines, debug: log, info: log, warn: log, error: log } as Logger & { lines: string[] };
}

const until = async (cond: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
};

Deno.test("audit webhook: a batch leaves when it has max-size events; the rest after max-wait", async () => {
  const hook = receiver();
  const logger = recordingLogger();
  const b = openWebhookBackend({ post: hook.post, maxBatchSize: 3, maxWaitMs: 100, logger });
  const start = Date.now();
  for (let i = 0; i < 7; i++) b.process(event(i));
  await until(() => hook.got.length === 2);
  assert.deepEqual(hook.got.map((g) => g.ids), [["id-0", "id-1", "id-2"], [
    "id-3",
    "id-4",
    "id-5",
  ]]);
  assert.ok(hook.got[1].at - start < 80, "full batches do not wait");
  await until(() => hook.got.length === 3);
  assert.deepEqual(hook.got[2].ids, ["id-6"]);
  assert.ok(hook.got[2].at - start >= 95, "the last one waited max-wait");
  await b.close();
  assert.equal(b.dropped(), 0);
});

Deno.test("audit webhook: a batch is split so that each POST stays under the byte bound", async () => {
  const hook = receiver();
  const logger = recordingLogger();
  const b = openWebhookBackend({
    post: hook.post,
    maxBatchSize: 10,
    maxBatchBytes: 2000,
    maxWaitMs: 10_000,
    logger,
  });
  for (let i = 0; i < 10; i++) b.process(event(i, 500));
  b.process(event(99, 5000)); // alone larger than a batch: dropped
  await b.close();
  const ids = hook.got.flatMap((g) => g.ids);
  assert.deepEqual(ids, Array.from({ length: 10 }, (_, i) => `id-${i}`));
  assert.ok(hook.got.length >= 4, `split into ${hook.got.length}`);
  for (const g of hook.got) assert.ok(g.bytes <= 2000, `${g.bytes} bytes`);
  assert.equal(b.dropped(), 1);
  assert.ok(logger.lines.some((l) => l.includes("id-99")));
});

Deno.test("audit webhook: a failed batch is retried with exponential backoff, then dropped", async () => {
  // 500, 500, then 200: the batch arrives on the third attempt.
  const hook = receiver((n) => (n < 2 ? 500 : 200));
  const logger = recordingLogger();
  const b = openWebhookBackend({
    post: hook.post,
    maxBatchSize: 2,
    initialBackoffMs: 40,
    logger,
  });
  b.process(event(1));
  b.process(event(2));
  await until(() => hook.got.length === 3);
  const gaps = [hook.got[1].at - hook.got[0].at, hook.got[2].at - hook.got[1].at];
  assert.ok(gaps[0] >= 35 && gaps[1] >= 75, `backoff doubles: ${gaps}`);
  assert.deepEqual(hook.got[2].ids, ["id-1", "id-2"]);
  assert.equal(b.dropped(), 0);

  // Always failing (or answering garbage with a 4xx): 1 + 3 attempts, then dropped and logged.
  const down = receiver(() => 400);
  const l2 = recordingLogger();
  const d = openWebhookBackend({
    post: down.post,
    maxBatchSize: 1,
    initialBackoffMs: 5,
    logger: l2,
  });
  d.process(event(3));
  await until(() => l2.lines.some((l) => l.includes("dropped a batch of 1 events")));
  assert.equal(down.posts(), 4);
  assert.equal(d.dropped(), 1);
  await d.close();
  await b.close();
});

Deno.test("audit webhook: a slow webhook is cut by the timeout; the buffer is bounded, overflow logged once per burst", async () => {
  let release!: () => void;
  const stuck = new Promise<void>((r) => release = r);
  const hook = receiver(async (n) => {
    if (n === 0) await stuck;
    return 200;
  });
  const logger = recordingLogger();
  const b = openWebhookBackend({
    post: hook.post,
    bufferSize: 5,
    maxBatchSize: 2,
    maxWaitMs: 10_000,
    logger,
  });
  b.process(event(0));
  b.process(event(1)); // the first batch: its POST hangs
  for (let i = 2; i < 20; i++) b.process(event(i)); // 5 buffered, 13 dropped
  assert.equal(b.dropped(), 13);
  assert.equal(logger.lines.filter((l) => l.includes("is full")).length, 1);
  release();
  await until(() => hook.got.length >= 3);
  b.process(event(20));
  assert.ok(logger.lines.some((l) => l.includes("dropped 13 events")));
  await b.close();
  assert.deepEqual(hook.got.flatMap((g) => g.ids), [
    "id-0",
    "id-1",
    "id-2",
    "id-3",
    "id-4",
    "id-5",
    "id-6",
    "id-20",
  ]);

  // A POST that never answers is aborted at the timeout.
  const never = receiver(() => new Promise<number>(() => {}));
  const slow: WebhookPost = (body, signal) =>
    Promise.race([
      never.post(body, signal),
      new Promise<number>((_, reject) =>
        signal.addEventListener("abort", () => reject(signal.reason))
      ),
    ]);
  const l2 = recordingLogger();
  const s = openWebhookBackend({
    post: slow,
    maxBatchSize: 1,
    timeoutMs: 30,
    initialBackoffMs: 5,
    retries: 1,
    logger: l2,
  });
  s.process(event(1));
  await until(() => l2.lines.some((l) => l.includes("dropped a batch")));
  assert.ok(l2.lines.some((l) => l.includes("no answer within 30ms")), l2.lines.join("\n"));
  await s.close();
});

Deno.test("audit webhook: close sends what is buffered, within its bound", async () => {
  const hook = receiver();
  const b = openWebhookBackend({
    post: hook.post,
    maxBatchSize: 100,
    maxWaitMs: 60_000,
    logger: recordingLogger(),
  });
  for (let i = 0; i < 5; i++) b.process(event(i));
  await b.close();
  assert.deepEqual(hook.got.flatMap((g) => g.ids), ["id-0", "id-1", "id-2", "id-3", "id-4"]);

  // A webhook that hangs: close gives up at its bound and drops what is left.
  const hang: WebhookPost = (_body, signal) =>
    new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
  const logger = recordingLogger();
  const h = openWebhookBackend({ post: hang, maxWaitMs: 60_000, closeTimeoutMs: 50, logger });
  for (let i = 0; i < 5; i++) h.process(event(i));
  const start = Date.now();
  await h.close();
  assert.ok(Date.now() - start < 1000);
  assert.equal(h.dropped(), 5);
  h.process(event(9)); // after close: ignored
  assert.equal(h.dropped(), 5);
});

Deno.test("audit webhook: blocking modes send each event before returning; strict fails RequestReceived", async () => {
  const hook = receiver((n) => (n === 0 ? 200 : 503));
  const logger = recordingLogger();
  const b = openWebhookBackend({ post: hook.post, mode: "blocking", logger });
  await b.process(event(1));
  assert.deepEqual(hook.got[0].ids, ["id-1"]);
  await b.process(event(2, 0, "RequestReceived")); // fails, logged, not thrown
  assert.equal(logger.lines.length, 1);

  const strict = openWebhookBackend({ post: hook.post, mode: "blocking-strict", logger });
  await assert.rejects(() => strict.process(event(3, 0, "RequestReceived")) as Promise<void>);
  await strict.process(event(4)); // other stages: logged only
});

Deno.test("audit: the union backend gives each event to each backend", async () => {
  const a = receiver();
  const c = receiver(() => 500);
  const logger = recordingLogger();
  const u = unionBackend([
    openWebhookBackend({ post: a.post, mode: "blocking", logger }),
    openWebhookBackend({ post: c.post, mode: "blocking-strict", logger }),
  ]);
  await assert.rejects(() => u.process(event(1, 0, "RequestReceived")) as Promise<void>);
  assert.deepEqual(a.got[0].ids, ["id-1"]);
  assert.deepEqual(c.got[0].ids, ["id-1"]);
  await u.close();
});

Deno.test("audit webhook: close ends a backoff under way and tries the batch once more", async () => {
  const hook = receiver((n) => (n === 0 ? 500 : 200));
  const b = openWebhookBackend({
    post: hook.post,
    maxBatchSize: 1,
    initialBackoffMs: 60_000,
    logger: recordingLogger(),
  });
  b.process(event(1));
  await until(() => hook.posts() === 1);
  const start = Date.now();
  await b.close();
  assert.ok(Date.now() - start < 1000);
  assert.equal(hook.posts(), 2);
  assert.equal(b.dropped(), 0);
});
