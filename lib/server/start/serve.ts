/**
 * Start-up step 8, serving: listening on the secure port (through the TLS front when client
 * certificates are asked for), TCP_NODELAY on the listener, the serving certificate kept
 * current; and the end of serving, which the listening registers: stop accepting, let the
 * requests in flight finish (up to the shutdown timeout), close the connections.
 */

import { ConfigError, describeListenError } from "../../config/mod.ts";
import type { NamespaceDefaults } from "../../controllers/mod.ts";
import { connectionLimits, ConnectionServer, listenTls } from "../connections.ts";
import type { Logger } from "../../api/mod.ts";
import { setListenerNoDelay } from "../nodelay.ts";
import type { BodyWriting } from "../respond.ts";
import { renewServingCertificate, type ServingPair } from "../serving_cert.ts";
import type { Credentials } from "./credentials.ts";
import type { RequestHandler } from "./handler.ts";
import type { OpenResources } from "./open_resources.ts";
import type { StartOptions } from "./options.ts";

/** A server's shutdown: once begun, readiness fails and every request's signal is aborted. */
export class Shutdown {
  readonly #abort = new AbortController();

  /** Aborted when the shutdown begins: ends watches and other long requests. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get begun(): boolean {
    return this.#abort.signal.aborted;
  }

  begin(): void {
    this.#abort.abort();
  }
}

/** The server, listening. */
export interface Serving {
  server: ConnectionServer;
  /** The secure port (the one asked for, or the free one picked). */
  port: number;
  /** With `--workers`: the other threads, handed a renewed serving certificate too. */
  workers?: { servingCertificate(pair: ServingPair): Promise<void> };
  /** Ends serving: the shutdown begins, the listener closes, the requests in flight get up to
   * `--shutdown-timeout`, then the connections close. Once, however often it is called. */
  drain(): Promise<void>;
}

/**
 * Listens on `hostname` and the secure port; a port or address it cannot listen on is a
 * ConfigError naming the flag. Registers the end of serving in `resources`.
 */
export async function listen(
  opts: StartOptions,
  hostname: string,
  credentials: Credentials,
  chain: RequestHandler,
  shutdown: Shutdown,
  logger: Logger,
  resources: OpenResources,
): Promise<Serving> {
  const { pki, front } = credentials;
  const limits = connectionLimits(opts.connectionLimits);
  let server: ConnectionServer;
  let port = 0;
  try {
    // The client's address, for audit events: the connection's, or behind the front the one
    // the front saw.
    const handler = (req: Request, info?: Deno.ServeHandlerInfo<Deno.NetAddr>) =>
      chain(req, shutdown.signal, info?.remoteAddr.hostname);
    const behindFront = (req: Request, peer?: string) => chain(req, shutdown.signal, peer);
    const onError = (err: unknown) => {
      logger.error("unhandled request error", err);
      return new Response("internal error", { status: 500 });
    };
    // Behind the front, the HTTP server speaks plain HTTP on a loopback port, and every
    // connection comes from the front's address: the front limits connections per client.
    const listener = front
      ? Deno.listen({ hostname: "127.0.0.1", port: 0 })
      : listenTls(hostname, opts.securePort ?? 0, pki.servingCertPem, pki.servingKeyPem, {
        reusePort: (opts.workers ?? 1) > 1,
      });
    server = new ConnectionServer({
      listener,
      handler: front ? front.handler(behindFront) : handler,
      onError,
      limits: front ? { ...limits, maxConnectionsPerClient: limits.maxConnections } : limits,
      logger,
    });
    if (front) {
      port = await front.listen(
        hostname,
        opts.securePort ?? 0,
        server,
        limits,
        (opts.workers ?? 1) > 1,
      );
    }
  } catch (err) {
    throw listenError(err, hostname, opts.securePort ?? 0);
  }
  if (!front) port = server.addr.port;
  let draining: Promise<void> | undefined;
  const drain = () =>
    draining ??= (async () => {
      shutdown.begin();
      const timeoutMs = opts.shutdownTimeoutMs ?? 30_000;
      let timer: ReturnType<typeof setTimeout> | undefined;
      front?.stopAccepting();
      await Promise.race([
        server.shutdown(),
        new Promise<void>((r) => timer = setTimeout(r, timeoutMs)),
      ]);
      clearTimeout(timer);
      server.closeAll();
      front?.terminate();
    })();
  resources.add("serving", drain);
  return { server, port, drain };
}

/**
 * Checks the serving certificate every `--certificate-check-interval` and serves a renewed or
 * changed one to new connections; the CA bundle published in namespaces follows.
 */
export function keepServingCertificate(
  opts: StartOptions,
  hostname: string,
  credentials: Credentials,
  serving: Serving,
  namespaceDefaults: NamespaceDefaults,
  logger: Logger,
  resources: OpenResources,
): void {
  const { pki, front } = credentials;
  const stopRenewing = renewServingCertificate({
    current: { certPem: pki.servingCertPem, keyPem: pki.servingKeyPem },
    check: async () => {
      const now = await credentials.currentPki();
      namespaceDefaults.setCaBundle(now.servingCaPem ?? now.caCertPem);
      return { certPem: now.servingCertPem, keyPem: now.servingKeyPem };
    },
    onChange: async (pair) => {
      if (front) {
        front.setCertificate(pair.certPem, pair.keyPem);
        return;
      }
      await serving.workers?.servingCertificate(pair);
      await serveCertificate(opts, hostname, serving, pair);
    },
    intervalMs: opts.certificateCheckIntervalMs,
    logger,
  });
  resources.add("the serving certificate's renewal", stopRenewing);
}

/** Serves `pair` to new connections (a new listener on the same port); connections open on
 * the old one keep it. */
export async function serveCertificate(
  opts: StartOptions,
  hostname: string,
  serving: Serving,
  pair: ServingPair,
): Promise<void> {
  await serving.server.replaceListener(() =>
    listenTls(hostname, serving.port, pair.certPem, pair.keyPem, {
      reusePort: (opts.workers ?? 1) > 1,
    })
  );
  setListenerNoDelay(serving.port);
}

/**
 * TCP_NODELAY on the listener (see nodelay.ts); where it cannot be set, this server sends
 * larger bodies as one-chunk streams instead.
 */
export function setNoDelay(serving: Serving, bodies: BodyWriting, logger: Logger): void {
  const noDelay = setListenerNoDelay(serving.server.addr.port);
  if (noDelay !== undefined) {
    logger.warn(`cannot set TCP_NODELAY on the listener (${noDelay}): streaming larger bodies`);
    bodies.streamLarge = true;
  }
}

/** A failed listen is the operator's to fix: one line naming the flag (main exits 2). */
function listenError(err: unknown, host: string, port: number): unknown {
  const listening = err instanceof Deno.errors.AddrInUse ||
    err instanceof Deno.errors.AddrNotAvailable || err instanceof Deno.errors.PermissionDenied;
  return listening ? new ConfigError(describeListenError(err, host, port), { cause: err }) : err;
}
