/**
 * The local relay: a loopback listener that Deno's `fetch` and the etcd client use as their
 * HTTP proxy, and that makes each of their connections through the configured proxy.
 *
 * Why a relay: `Deno.createHttpClient` speaks CONNECT only to a plain `http://` proxy over
 * TCP, with the target's TLS settings, and `Deno.startTls` (the etcd client's TLS on its
 * tunnel) needs a TCP connection under it; the configured proxy may be on a
 * Unix socket, or behind TLS with its own CA and client certificate. (Deno 2.9.6's `proxy:
 * {transport: "unix", path}` and `{transport: "tcp", …}` were tried: they send each request
 * itself over the socket, in absolute form and without TLS even for `https://` URLs, never a
 * CONNECT.) The relay speaks to clients in the form they know and to the proxy in the form it
 * needs (proxy_connect.ts).
 *
 * Clients authenticate to it with a random password (`Proxy-Authorization: Basic`): no other
 * local process can borrow the proxy's reach through the relay. A CONNECT is tunnelled as is;
 * a plain-HTTP request in absolute form (what clients send a proxy for `http://` URLs) is
 * tunnelled to its host with the request rewritten to origin form and `Connection: close`, so
 * the connection serves that one request. A tunnel that cannot be made is logged, naming the
 * proxy, and the client gets 502: to it, the same failure as an endpoint that cannot be
 * reached.
 *
 * @module
 */

import type { Logger } from "../api/mod.ts";
import { connectThroughProxy, type Tunnel, writeAll } from "./proxy_connect.ts";
import { headerValue, readHead } from "./http_head.ts";
import type { EgressProxy } from "./selection.ts";

/** Hop-by-hop headers dropped from a forwarded plain-HTTP request. */
const HOP_HEADERS = new Set([
  "proxy-authorization",
  "proxy-connection",
  "connection",
  "keep-alive",
]);

export class ConnectRelay {
  /** `http://127.0.0.1:<port>`: the proxy URL clients are given. */
  readonly url: string;
  readonly port: number;
  readonly username = "egress";
  readonly password: string;
  readonly #listener: Deno.Listener;
  readonly #proxy: EgressProxy;
  readonly #label: string;
  readonly #log: Logger;
  readonly #open = new Set<Deno.Conn>();
  #closed = false;

  /** Listens at once on a free loopback port; `label` prefixes log lines (`egress cluster`). */
  constructor(proxy: EgressProxy, label: string, log: Logger) {
    this.#proxy = proxy;
    this.#label = label;
    this.#log = log;
    const bytes = crypto.getRandomValues(new Uint8Array(24));
    this.password = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    this.#listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.port = (this.#listener.addr as Deno.NetAddr).port;
    this.url = `http://127.0.0.1:${this.port}`;
    this.#accept();
  }

  /** `user:password`, for `Proxy-Authorization: Basic`. */
  get credentials(): string {
    return `${this.username}:${this.password}`;
  }

  /** Stops listening and ends every open tunnel. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#listener.close();
    for (const conn of this.#open) closeQuietly(conn);
    this.#open.clear();
  }

  async #accept(): Promise<void> {
    try {
      for await (const conn of this.#listener) {
        noDelay(conn);
        this.#open.add(conn);
        this.#serve(conn).catch(() => {}).finally(() => {
          this.#open.delete(conn);
          closeQuietly(conn);
        });
      }
    } catch {
      // The listener was closed.
    }
  }

  async #serve(client: Deno.Conn): Promise<void> {
    const head = await readHead(client);
    if (!head) return;
    const [method = "", target = ""] = (head.lines[0] ?? "").split(" ");
    const expected = "Basic " + btoa(this.credentials);
    if (headerValue(head.lines, "proxy-authorization") !== expected) {
      await answer(client, "407 Proxy Authentication Required");
      return;
    }
    let hostPort: string;
    let first: Uint8Array;
    if (method === "CONNECT") {
      hostPort = target;
      first = head.rest;
    } else {
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        await answer(client, "400 Bad Request");
        return;
      }
      hostPort = `${url.hostname}:${url.port || 80}`;
      first = concat(new TextEncoder().encode(originForm(head.lines, url)), head.rest);
    }
    let tunnel: Tunnel;
    try {
      tunnel = await connectThroughProxy(this.#proxy, hostPort);
    } catch (err) {
      this.#log.warn(`${this.#label}: ${(err as Error).message}`);
      await answer(client, "502 Bad Gateway");
      return;
    }
    const upstream = tunnel.conn;
    noDelay(upstream);
    this.#open.add(upstream);
    try {
      if (this.#closed) return;
      if (method === "CONNECT") {
        await writeAll(
          client,
          new TextEncoder().encode("HTTP/1.1 200 Connection established\r\n\r\n"),
        );
      }
      if (tunnel.early.length > 0) await writeAll(client, tunnel.early);
      if (first.length > 0) await writeAll(upstream, first);
      await Promise.all([pipe(client, upstream), pipe(upstream, client)]);
    } finally {
      this.#open.delete(upstream);
      closeQuietly(upstream);
    }
  }
}

/** The request head in origin form for its host, without hop-by-hop headers, closing after. */
function originForm(lines: string[], url: URL): string {
  const [method, , version = "HTTP/1.1"] = lines[0].split(" ");
  const headers = lines.slice(1).filter((line) => {
    const name = line.slice(0, Math.max(0, line.indexOf(":"))).trim().toLowerCase();
    return !HOP_HEADERS.has(name);
  });
  return [`${method} ${url.pathname}${url.search} ${version}`, ...headers, "Connection: close"]
    .join("\r\n") + "\r\n\r\n";
}

/** Copies `from` to `to` until `from` ends, then ends `to`'s writing side. */
async function pipe(from: Deno.Conn, to: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(64 * 1024);
  try {
    for (;;) {
      const n = await from.read(buf);
      if (n === null) break;
      await writeAll(to, buf.subarray(0, n));
    }
    await to.closeWrite().catch(() => {});
  } catch {
    // One side is gone: end both.
    closeQuietly(from);
    closeQuietly(to);
  }
}

async function answer(conn: Deno.Conn, status: string): Promise<void> {
  const text = `HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`;
  await writeAll(conn, new TextEncoder().encode(text)).catch(() => {});
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Small writes (a CONNECT answer, a TLS handshake's flights) go out at once: with Nagle's
 * algorithm and delayed ACKs each new tunnel took some 40 ms more per round trip. */
function noDelay(conn: Deno.Conn): void {
  try {
    (conn as Partial<Deno.TcpConn>).setNoDelay?.(true);
  } catch {
    // Not a TCP connection, or already closed.
  }
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}
