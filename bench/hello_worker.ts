/**
 * One more thread of the bench's hello-world server (`bench/hello_world.ts <dir> <N>`):
 * the same Deno.serve over HTTPS on the same port (SO_REUSEPORT), the baseline of
 * `--only=workers` with the server's worker count.
 * @module
 */

/// <reference lib="deno.worker" />

self.onmessage = (ev: MessageEvent<{ port: number; cert: string; key: string }>) => {
  const { port, cert, key } = ev.data;
  const body = new TextEncoder().encode("Hello, world!\n");
  Deno.serve(
    { hostname: "127.0.0.1", port, cert, key, reusePort: true, onListen: () => {} },
    () => new Response(body, { headers: { "content-type": "text/plain" } }),
  );
  self.postMessage("ready");
};
