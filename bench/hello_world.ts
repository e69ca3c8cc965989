/**
 * The bench's hello-world server (baseline B, and the workers figures): a `Deno.serve` over
 * HTTPS with the same TLS setup as the server's (a certificate of the data directory's CA)
 * answering every request with 14 bytes of text.
 *
 *   deno run -A bench/hello_world.ts <data dir> [threads]
 *
 * With a thread count, that many threads serve one port (SO_REUSEPORT; bench/hello_worker.ts).
 * Prints `serving on https://127.0.0.1:<port>` on standard error once it listens.
 */

import { serveTls } from "./tls_serve.ts";

const dataDir = Deno.args[0];
const body = new TextEncoder().encode("Hello, world!\n");
// With a thread count (`--only=workers`): that many threads on one port (SO_REUSEPORT).
const threads = Number(Deno.args[1] ?? 1);
const server = await serveTls(
  dataDir,
  () => new Response(body, { headers: { "content-type": "text/plain" } }),
  { reusePort: threads > 1 },
);
for (let i = 1; i < threads; i++) {
  const w = new Worker(new URL("./hello_worker.ts", import.meta.url), { type: "module" });
  const started = new Promise((r) => w.onmessage = r);
  w.postMessage({ port: server.port, cert: server.cert, key: server.key });
  await started;
}
await server.announce();
Deno.exit(0);
