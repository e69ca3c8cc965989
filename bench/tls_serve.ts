/**
 * What the bench's own HTTPS servers (bench/hello_world.ts, bench/etcd_relay.ts) share: a
 * `Deno.serve` on a free loopback port with a serving certificate of the data directory's CA
 * (the server's TLS setup), and the `serving on https://127.0.0.1:<port>` line the bench
 * waits for, after which SIGTERM stops it.
 */

import { ensurePki } from "../lib/certificates/pki.ts";

/** A listening bench server: its port and certificate, and {@link announce} to go on. */
export interface BenchServer {
  port: number;
  cert: string;
  key: string;
  /** Prints the "serving on" line, then resolves when SIGTERM has stopped the server. */
  announce(): Promise<void>;
}

export async function serveTls(
  dataDir: string,
  handler: Deno.ServeHandler<Deno.NetAddr>,
  opts: { reusePort?: boolean } = {},
): Promise<BenchServer> {
  const pki = await ensurePki({
    dataDir,
    sans: [],
    bindAddress: "127.0.0.1",
    logger: { info: () => {} },
  });
  const ready = Promise.withResolvers<number>();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: pki.servingCertPem,
    key: pki.servingKeyPem,
    ...(opts.reusePort ? { reusePort: true } : {}),
    onListen: ({ port }) => ready.resolve(port),
  }, handler);
  const port = await ready.promise;
  return {
    port,
    cert: pki.servingCertPem,
    key: pki.servingKeyPem,
    announce: async () => {
      console.error(`serving on https://127.0.0.1:${port}`);
      Deno.addSignalListener("SIGTERM", () => server.shutdown());
      await server.finished;
    },
  };
}
