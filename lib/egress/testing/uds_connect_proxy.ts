/**
 * A small HTTP CONNECT proxy on a Unix socket, owned by the test that starts it (the way a
 * konnectivity server's HTTPConnect mode listens): it tunnels `CONNECT host:port` to loopback
 * targets it is allowed to reach, answers 403 otherwise, and records each request line.
 *
 * @module
 */

import { writeAll } from "../proxy_connect.ts";
import { readHead } from "../http_head.ts";

export interface UdsConnectProxy extends AsyncDisposable {
  /** The socket path (a `udsName`). */
  path: string;
  /** The CONNECT request lines received, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** Starts the proxy; `allowedPorts` are the loopback ports it tunnels to. */
export async function startUdsConnectProxy(allowedPorts: number[]): Promise<UdsConnectProxy> {
  const dir = await Deno.makeTempDir({ prefix: "platform-uds-proxy-" });
  const path = `${dir}/proxy.sock`;
  const listener = Deno.listen({ transport: "unix", path });
  const requests: string[] = [];
  const open = new Set<Deno.Conn>();
  const serve = async (client: Deno.Conn) => {
    const head = await readHead(client);
    if (!head) return;
    requests.push(head.lines[0]);
    const [method, target] = head.lines[0].split(" ");
    const port = Number(target?.split(":").pop());
    const refuse = (status: string) =>
      writeAll(client, new TextEncoder().encode(`HTTP/1.1 ${status}\r\n\r\n`));
    if (method !== "CONNECT" || !allowedPorts.includes(port)) return await refuse("403 Forbidden");
    let upstream: Deno.Conn;
    try {
      upstream = await Deno.connect({ hostname: "127.0.0.1", port });
    } catch {
      return await refuse("503 Service Unavailable");
    }
    open.add(upstream);
    await writeAll(client, new TextEncoder().encode("HTTP/1.1 200 OK\r\n\r\n"));
    if (head.rest.length) await writeAll(upstream, head.rest);
    await Promise.all([copy(client, upstream), copy(upstream, client)]);
  };
  (async () => {
    try {
      for await (const conn of listener) {
        open.add(conn);
        serve(conn).catch(() => {}).finally(() => {
          open.delete(conn);
          closeQuietly(conn);
        });
      }
    } catch { /* closed */ }
  })();
  const close = async () => {
    try {
      listener.close();
    } catch { /* closed */ }
    for (const c of open) closeQuietly(c);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  return { path, requests, close, [Symbol.asyncDispose]: close };
}

async function copy(from: Deno.Conn, to: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(32 * 1024);
  try {
    for (;;) {
      const n = await from.read(buf);
      if (n === null) break;
      await writeAll(to, buf.subarray(0, n));
    }
    await to.closeWrite().catch(() => {});
  } catch {
    closeQuietly(from);
    closeQuietly(to);
  }
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* closed */ }
}
