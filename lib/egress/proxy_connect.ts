/**
 * One tunnel through an HTTP CONNECT proxy: dial the proxy (TCP, TLS, or a Unix socket), ask
 * `CONNECT host:port`, and hand back the connection once the proxy answers 200. Any other
 * answer, or a proxy that cannot be reached, is an {@link EgressError} naming the proxy.
 *
 * @module
 */

import { type EgressProxy, proxyName } from "./selection.ts";
import { readHead } from "./http_head.ts";

/** A tunnel could not be made; the message names the proxy and the target. */
export class EgressError extends Error {
  override name = "EgressError";
}

/** An open tunnel: the connection, and bytes the proxy sent after its answer (usually none). */
export interface Tunnel {
  conn: Deno.Conn;
  early: Uint8Array;
}

/** Bound of dialing the proxy and reading its answer to CONNECT. */
const HANDSHAKE_TIMEOUT_MS = 30_000;

/**
 * Opens a tunnel to `hostPort` (`host:port`, `[v6]:port`) through `proxy`.
 *
 * @throws {EgressError} when the proxy cannot be reached or does not answer 200.
 */
export async function connectThroughProxy(
  proxy: EgressProxy,
  hostPort: string,
  proxyAuthorization?: string,
): Promise<Tunnel> {
  const name = proxyName(proxy);
  let conn: Deno.Conn;
  try {
    conn = await dialProxy(proxy);
  } catch (err) {
    throw new EgressError(`cannot reach proxy ${name}: ${reasonOf(err)}`, { cause: err });
  }
  const timer = setTimeout(() => conn.close(), HANDSHAKE_TIMEOUT_MS);
  try {
    const auth = proxyAuthorization ? `Proxy-Authorization: ${proxyAuthorization}\r\n` : "";
    const request = `CONNECT ${hostPort} HTTP/1.1\r\nHost: ${hostPort}\r\n${auth}\r\n`;
    await writeAll(conn, new TextEncoder().encode(request));
    const head = await readHead(conn);
    if (!head) throw new Error("the proxy closed the connection without an answer");
    const status = head.lines[0] ?? "";
    if (!/^HTTP\/1\.[01] 200\b/.test(status)) {
      throw new EgressError(
        `proxy ${name} refused CONNECT to ${hostPort}: ${JSON.stringify(status.slice(0, 200))}`,
      );
    }
    clearTimeout(timer);
    return { conn, early: head.rest };
  } catch (err) {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by the timer */ }
    if (err instanceof EgressError) throw err;
    throw new EgressError(`proxy ${name}, CONNECT to ${hostPort}: ${reasonOf(err)}`, {
      cause: err,
    });
  }
}

async function dialProxy(proxy: EgressProxy): Promise<Deno.Conn> {
  if (proxy.transport === "uds") {
    return await Deno.connect({ transport: "unix", path: proxy.udsName });
  }
  const url = new URL(proxy.url);
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (url.protocol === "http:") {
    return await Deno.connect({ hostname, port: Number(url.port || 80) });
  }
  const tls = proxy.tls;
  const conn = await Deno.connectTls({
    hostname,
    port: Number(url.port || 443),
    caCerts: tls?.caBundle ? [tls.caBundle] : undefined,
    ...(tls ? { cert: tls.clientCert, key: tls.clientKey } : {}),
  });
  // Now, so that an untrusted proxy is "cannot reach proxy", not a failed CONNECT.
  try {
    await conn.handshake();
  } catch (err) {
    conn.close();
    throw err;
  }
  return conn;
}

/** Writes every byte of `data`. */
export async function writeAll(conn: Deno.Conn, data: Uint8Array): Promise<void> {
  let at = 0;
  while (at < data.length) at += await conn.write(data.subarray(at));
}

function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
