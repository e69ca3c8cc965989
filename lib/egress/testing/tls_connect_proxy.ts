/**
 * An HTTP CONNECT proxy behind TLS that requires a client certificate of a given CA (node:tls,
 * which can require one), owned by the test that starts it: what an `https://` proxy URL with
 * `tlsConfig` talks to. Tunnels to the loopback ports it is allowed, records each CONNECT with
 * the client certificate's common name.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import * as net from "node:net";
import * as tls from "node:tls";

export interface TlsConnectProxy extends AsyncDisposable {
  /** `https://127.0.0.1:<port>` */
  url: string;
  /** `<client CN> <request line>` per CONNECT, in order. */
  requests: string[];
  close(): Promise<void>;
}

export interface TlsConnectProxyOptions {
  certPem: string;
  keyPem: string;
  /** The CA whose client certificates are accepted. */
  clientCaPem: string;
  allowedPorts: number[];
}

export async function startTlsConnectProxy(opts: TlsConnectProxyOptions): Promise<TlsConnectProxy> {
  const requests: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = tls.createServer({
    cert: opts.certPem,
    key: opts.keyPem,
    ca: [opts.clientCaPem],
    requestCert: true,
    rejectUnauthorized: true,
  }, (client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      client.off("data", onData);
      const line = head.subarray(0, head.indexOf("\r\n")).toString();
      const cn = client.getPeerCertificate()?.subject?.CN ?? "";
      requests.push(`${cn} ${line}`);
      const [method, target] = line.split(" ");
      const port = Number(target?.split(":").pop());
      if (method !== "CONNECT" || !opts.allowedPorts.includes(port)) {
        client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
        return;
      }
      const upstream = net.connect(port, "127.0.0.1", () => {
        client.write("HTTP/1.1 200 Connection established\r\n\r\n");
        const rest = head.subarray(end + 4);
        if (rest.length) upstream.write(rest);
        client.pipe(upstream).pipe(client);
      });
      sockets.add(upstream);
      upstream.on("close", () => sockets.delete(upstream));
      upstream.on("error", () => client.destroy());
    };
    client.on("data", onData);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  const close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { url: `https://127.0.0.1:${port}`, requests, close, [Symbol.asyncDispose]: close };
}
