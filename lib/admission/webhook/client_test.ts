import assert from "node:assert/strict";
import { CallError, WebhookClient } from "./client.ts";
import type { Webhook } from "./webhook.ts";

/** A webhook at `url`, as the client reads one. */
const webhookAt = (url: string) =>
  ({ name: "w.example.com", clientConfig: { url, caBundle: "" }, timeoutMs: 5_000 }) as Webhook;

Deno.test("WebhookClient reads an answer up to its limit, with or without a stated length", async () => {
  const answer = JSON.stringify({ response: { allowed: true, pad: "x".repeat(200) } });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    // Streamed: no Content-Length, chunked.
    const stream = () =>
      new ReadableStream({
        start(c) {
          const bytes = new TextEncoder().encode(answer);
          c.enqueue(bytes.slice(0, 100));
          c.enqueue(bytes.slice(100));
          c.close();
        },
      });
    return new Response(path === "/streamed" ? stream() : answer, {
      headers: { "Content-Type": "application/json" },
    });
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  const roomy = new WebhookClient({ maxResponseBytes: 1_000 });
  const tight = new WebhookClient({ maxResponseBytes: 100 });
  try {
    for (const path of ["/sized", "/streamed"]) {
      assert.deepEqual(await roomy.call(webhookAt(base + path), "{}"), JSON.parse(answer), path);
      await assert.rejects(tight.call(webhookAt(base + path), "{}"), (err: Error) => {
        assert(err instanceof CallError, path);
        assert.match(err.message, /the answer is larger than 100 bytes/, path);
        return true;
      });
    }
  } finally {
    roomy.close();
    tight.close();
    await server.shutdown();
  }
});
