/**
 * Connections: the accept loop of the secure port, with the limits a public server needs.
 *
 * `Deno.serve` accepts connections itself and gives up for good on the first accept error:
 * once the process runs out of file descriptors (`EMFILE`) it stops serving, and it keeps an
 * idle or trickling connection open for as long as the client likes. So the server accepts
 * connections here and hands each to Deno's HTTP machinery (hyper, HTTP/1.1 and HTTP/2 as
 * negotiated) one at a time, through the runtime's per-connection entry point. This keeps
 * Deno.serve's request path (and its speed) and adds:
 *
 * - accept errors are never fatal: the loop backs off (5 ms doubling to 1 s) and retries;
 * - at most `maxConnections` open connections (by default below the file limit, so files,
 *   webhooks and etcd keep descriptors) and `maxConnectionsPerClient` per remote address;
 *   a connection over either limit is closed at once;
 * - a connection that sends no complete request head within `headerTimeoutMs` (kube: 32 s),
 *   and one with no request in flight for `idleTimeoutMs` (kube: 90 s), is closed;
 * - shutdown stops accepting, closes idle connections and lets requests in flight finish.
 *
 * @module
 */

import type { Logger } from "../api/mod.ts";
import { shutdownConnections } from "./proc_sockets.ts";

/** Deno.serve's handler, as each connection's requests are given to it. */
export type ConnectionHandler = (
  req: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Response | Promise<Response>;

export interface ConnectionLimits {
  /** Open connections at most (TLS handshakes included). @default the file limit less
   * {@link RESERVED_FILES} */
  maxConnections: number;
  /** Open connections from one remote address at most. @default maxConnections / 2 */
  maxConnectionsPerClient: number;
  /** Until the first request head is complete. @default 32000 */
  headerTimeoutMs: number;
  /** With no request in flight. @default 90000 */
  idleTimeoutMs: number;
}

/** File descriptors left to everything but connections (store, config files, outbound); a
 * quarter of the limit when that is less. */
export const RESERVED_FILES = 128;

interface Connection {
  conn: Deno.Conn<Deno.NetAddr>;
  /** Set once the connection is given to the HTTP server (after the TLS handshake). */
  serving: boolean;
  /** Closes the connection at once, requests in flight or not (see {@link cancelHook}). */
  cancel?: () => void;
  client: string;
  acceptedAt: number;
  /** Requests begun and not yet delivered. */
  inFlight: number;
  /** Requests begun, ever. */
  requests: number;
  /** When the last request was begun or delivered. */
  lastActive: number;
  finished: boolean;
  /** Ends the connection gracefully: HTTP/1.1 after the response in flight is written whole,
   * HTTP/2 with GOAWAY once its streams end. Set once the connection is served. */
  endGracefully?: () => void;
}

// The runtime's per-connection serve (what Deno.serve runs for each accepted connection).
type ServeOnConnection = (
  conn: Deno.Conn,
  signal: CancelHook,
  handler: ConnectionHandler,
  onError: (err: unknown) => Response | Promise<Response>,
  onListen: () => void,
) => { finished: Promise<void>; shutdown(): Promise<void> };

/**
 * What the runtime takes as the connection's abort signal: it only registers one "abort"
 * listener, which cancels the connection. Keeping that listener and calling it directly
 * (instead of aborting a real signal) lets the caller catch the error it throws when the
 * connection has just ended on its own; thrown from an event listener, it would be an uncaught
 * error that ends the process.
 */
interface CancelHook {
  addEventListener(type: "abort", listener: () => void, options?: unknown): void;
}

function cancelHook(c: Connection): CancelHook {
  return { addEventListener: (_type, listener) => c.cancel = listener };
}

function serveOnConnection(): ServeOnConnection | undefined {
  const internal = (Deno as unknown as Record<symbol, Record<string, unknown>>)[
    (Deno as unknown as { internal: symbol }).internal
  ];
  const fn = internal?.serveHttpOnConnection;
  return typeof fn === "function" ? fn as ServeOnConnection : undefined;
}

/** The secure port's listener: TLS 1.2/1.3 with HTTP/2 and HTTP/1.1 offered, as Deno.serve's. */
export function listenTls(
  hostname: string,
  port: number,
  cert: string,
  key: string,
  opts: { reusePort?: boolean } = {},
): Deno.TlsListener {
  return Deno.listenTls({
    hostname,
    port,
    cert,
    key,
    alpnProtocols: ["h2", "http/1.1"],
    // `--workers`: every thread listens on the port; the kernel spreads the connections.
    ...(opts.reusePort ? { reusePort: true } : {}),
  });
}

/** Whether this Deno can serve accepted connections one by one. */
export function canServeConnections(): boolean {
  return serveOnConnection() !== undefined;
}

/** The soft limit on open files of this process, from /proc (Linux), else undefined. */
export function openFileLimit(): number | undefined {
  try {
    const line = Deno.readTextFileSync("/proc/self/limits").split("\n").find((l) =>
      l.startsWith("Max open files")
    );
    const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
    const n = Number(soft);
    return Number.isFinite(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Defaults for what was not given: derived from the file limit, and kube's timeouts. */
export function connectionLimits(given: Partial<ConnectionLimits> = {}): ConnectionLimits {
  const files = openFileLimit() ?? 1024;
  const reserved = Math.min(RESERVED_FILES, Math.floor(files / 4));
  const maxConnections = given.maxConnections || Math.max(16, files - reserved);
  return {
    maxConnections,
    maxConnectionsPerClient: given.maxConnectionsPerClient ||
      Math.max(1, Math.floor(maxConnections / 2)),
    headerTimeoutMs: given.headerTimeoutMs ?? 32_000,
    idleTimeoutMs: given.idleTimeoutMs ?? 90_000,
  };
}

export interface ConnectionServerOptions {
  listener: Deno.Listener;
  handler: ConnectionHandler;
  onError: (err: unknown) => Response | Promise<Response>;
  limits: ConnectionLimits;
  logger: Logger;
  /** The timeouts are checked this often. @default 1 s, or a quarter of the shorter timeout */
  sweepIntervalMs?: number;
}

/** Serves every connection a listener accepts, within {@link ConnectionLimits}. */
export class ConnectionServer {
  readonly addr: Deno.NetAddr;
  /** Resolves when the accept loop has ended and every connection is closed. */
  readonly finished: Promise<void>;
  readonly #opts: ConnectionServerOptions;
  readonly #serve: ServeOnConnection;
  readonly #open = new Set<Connection>();
  readonly #perClient = new Map<string, number>();
  readonly #sweep: ReturnType<typeof setInterval>;
  #listener: Deno.Listener;
  #accepting = true;
  #replacing: Promise<void> | undefined;
  #draining = false;
  #allClosed = Promise.withResolvers<void>();
  #lastRefusalLog = -Infinity;
  #toShutDown: { localAddr: Deno.NetAddr; remoteAddr: Deno.NetAddr }[] = [];
  #shutdownTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(opts: ConnectionServerOptions) {
    const serve = serveOnConnection();
    if (!serve) throw new Error("this Deno cannot serve accepted connections");
    this.#opts = opts;
    this.#serve = serve;
    this.#listener = opts.listener;
    this.addr = opts.listener.addr as Deno.NetAddr;
    const { headerTimeoutMs, idleTimeoutMs } = opts.limits;
    this.#sweep = setInterval(
      () => this.#closeIdle(),
      opts.sweepIntervalMs ?? Math.max(10, Math.min(1000, headerTimeoutMs / 4, idleTimeoutMs / 4)),
    );
    this.finished = this.#acceptLoop().then(() => this.#allClosed.promise);
  }

  /** Open connections now. */
  get connections(): number {
    return this.#open.size;
  }

  /**
   * Serve new connections from the listener `open` makes (a renewed certificate on the same
   * port). The old listener is closed first: its port is free again once its pending accept
   * has been dropped, so `open` is retried for up to a second; connections arriving in between
   * wait in the kernel's queue or are refused. Open connections go on.
   */
  async replaceListener(open: () => Deno.Listener): Promise<void> {
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#replacing = promise;
    try {
      this.#listener.close();
    } catch {
      // Already closed.
    }
    try {
      for (let attempt = 0;; attempt++) {
        try {
          this.#listener = open();
          return;
        } catch (err) {
          if (attempt >= 50 || !(err instanceof Deno.errors.AddrInUse)) throw err;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    } finally {
      this.#replacing = undefined;
      resolve();
    }
  }

  /**
   * Stop accepting and end every connection gracefully: idle ones close now, the others once
   * their responses are written whole (so a watch's last chunk reaches its client); resolves
   * when every connection is closed.
   */
  shutdown(): Promise<void> {
    this.#stopAccepting();
    this.#draining = true;
    for (const c of this.#open) {
      if (c.endGracefully) c.endGracefully();
      else if (!c.serving) this.#close(c);
    }
    this.#checkAllClosed();
    return this.#allClosed.promise;
  }

  /** Close every connection now, requests in flight or not. */
  closeAll(): void {
    this.#stopAccepting();
    for (const c of this.#open) this.#close(c);
    this.#checkAllClosed();
  }

  #stopAccepting(): void {
    if (!this.#accepting) return;
    this.#accepting = false;
    clearInterval(this.#sweep);
    try {
      this.#listener.close();
    } catch {
      // Already closed.
    }
  }

  async #acceptLoop(): Promise<void> {
    let backoffMs = 0;
    while (this.#accepting) {
      const listener = this.#listener;
      let conn: Deno.Conn<Deno.NetAddr>;
      try {
        conn = await listener.accept() as Deno.Conn<Deno.NetAddr>;
      } catch (err) {
        if (!this.#accepting) break;
        // A replaced listener was closed under us: go on with the new one.
        if (this.#replacing) await this.#replacing;
        if (listener !== this.#listener) continue;
        backoffMs = Math.min(backoffMs ? backoffMs * 2 : 5, 1000);
        this.#logRefusal(`accepting a connection failed (${errorText(err)}); retrying`);
        await new Promise((r) => setTimeout(r, backoffMs));
        continue;
      }
      backoffMs = 0;
      const c = this.#track(conn);
      if (!c) continue;
      if ("handshake" in conn) void this.#handshake(c, conn as Deno.TlsConn);
      else this.#serveConnection(c);
    }
  }

  /** Counts a new connection, or closes it when it is over a limit. */
  #track(conn: Deno.Conn<Deno.NetAddr>): Connection | undefined {
    const limits = this.#opts.limits;
    const client = conn.remoteAddr.hostname;
    const fromClient = this.#perClient.get(client) ?? 0;
    if (this.#open.size >= limits.maxConnections || fromClient >= limits.maxConnectionsPerClient) {
      const which = this.#open.size >= limits.maxConnections
        ? `${limits.maxConnections} connections are open`
        : `${fromClient} connections from ${client} are open`;
      this.#logRefusal(`connection from ${client} closed: ${which}`);
      if ("handshake" in conn) this.#closeBeforeHandshake(conn);
      else closeQuietly(conn);
      return undefined;
    }
    const now = performance.now();
    const c: Connection = {
      conn,
      client,
      acceptedAt: now,
      inFlight: 0,
      requests: 0,
      lastActive: now,
      finished: false,
      serving: false,
    };
    this.#open.add(c);
    this.#perClient.set(client, fromClient + 1);
    return c;
  }

  /**
   * The TLS handshake, here rather than in the HTTP server: a connection given to it cannot be
   * closed before its handshake ends, so one that never sent a ClientHello would stay open.
   * The header timeout covers it (closing the connection fails the handshake).
   */
  async #handshake(c: Connection, conn: Deno.TlsConn): Promise<void> {
    try {
      await conn.handshake();
    } catch {
      closeQuietly(conn);
      this.#forget(c);
      return;
    }
    if (c.finished) return;
    if (this.#draining) {
      closeQuietly(conn);
      this.#forget(c);
      return;
    }
    this.#serveConnection(c);
  }

  #serveConnection(c: Connection): void {
    c.serving = true;
    const handler = this.#opts.handler;
    const served = this.#serve(
      c.conn,
      cancelHook(c),
      (req, info) => {
        c.inFlight++;
        c.requests++;
        c.lastActive = performance.now();
        info.completed.then(() => this.#delivered(c), () => this.#delivered(c));
        return handler(req, info);
      },
      this.#opts.onError,
      () => {},
    );
    c.endGracefully = () => void served.shutdown().catch(() => {});
    served.finished.then(() => this.#forget(c), () => this.#forget(c));
  }

  #delivered(c: Connection): void {
    c.inFlight--;
    c.lastActive = performance.now();
  }

  #forget(c: Connection): void {
    c.finished = true;
    if (!this.#open.delete(c)) return;
    const n = (this.#perClient.get(c.client) ?? 1) - 1;
    if (n > 0) this.#perClient.set(c.client, n);
    else this.#perClient.delete(c.client);
    this.#checkAllClosed();
  }

  #close(c: Connection): void {
    if (c.finished) return;
    if (!c.serving) {
      this.#closeBeforeHandshake(c.conn);
      return;
    }
    const cancel = c.cancel;
    c.cancel = undefined;
    try {
      cancel?.();
    } catch {
      // It ended on its own meanwhile.
    }
  }

  /** Closes connections past their header or idle timeout. */
  #closeIdle(): void {
    const { headerTimeoutMs, idleTimeoutMs } = this.#opts.limits;
    const now = performance.now();
    for (const c of this.#open) {
      if (c.inFlight > 0) continue;
      const late = c.requests === 0
        ? now - c.acceptedAt >= headerTimeoutMs
        : now - c.lastActive >= idleTimeoutMs;
      if (late) this.#close(c);
    }
  }

  /**
   * Closes a TLS connection whose handshake has not finished. Deno keeps the socket of such a
   * connection open after `close()` until the client sends something, so a silent client would
   * hold it for ever: the socket is also shut down underneath (see proc_sockets.ts), in
   * batches, as one look at /proc serves many.
   */
  #closeBeforeHandshake(conn: Deno.Conn<Deno.NetAddr>): void {
    this.#toShutDown.push({ localAddr: conn.localAddr, remoteAddr: conn.remoteAddr });
    closeQuietly(conn);
    this.#shutdownTimer ??= setTimeout(() => {
      this.#shutdownTimer = undefined;
      const batch = this.#toShutDown;
      this.#toShutDown = [];
      try {
        shutdownConnections(batch);
      } catch (err) {
        this.#logRefusal(`cannot shut down silent connections: ${errorText(err)}`);
      }
    }, 10);
  }

  #checkAllClosed(): void {
    if (!this.#accepting && this.#open.size === 0) this.#allClosed.resolve();
  }

  /** Refusals come in bursts: one log line per 10 s. */
  #logRefusal(message: string): void {
    const now = performance.now();
    if (now - this.#lastRefusalLog < 10_000) return;
    this.#lastRefusalLog = now;
    this.#opts.logger.warn(message);
  }
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Closed already.
  }
}

function errorText(err: unknown): string {
  return (err as Error)?.message ?? String(err);
}
