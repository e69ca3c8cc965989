/**
 * The TLS front: client certificates on the public port without giving up Deno.serve.
 *
 * Deno.serve cannot ask for client certificates (it ignores `ca`/`requestCert`); `node:tls`
 * can. When client-certificate authentication is on, a `node:tls` server in a worker (its own
 * thread, `tls_front_worker.ts`) terminates TLS on the public port, asking every client for a
 * certificate, and forwards each connection's plaintext over loopback TCP to Deno.serve,
 * which then listens on `127.0.0.1:<free port>` without TLS and does all the HTTP (HTTP/1.1
 * and HTTP/2 alike: it recognises the HTTP/2 preface of clients that negotiated `h2`).
 *
 * The connection identity crosses over by address: the worker reports the local address of
 * each loopback connection it opens (which is what Deno.serve sees as `remoteAddr`) with the
 * chain the client presented, the main thread verifies the chain (`lib/auth/x509.ts`) and
 * registers the result under that address, and only then does the worker forward bytes. A
 * request on a loopback connection that the worker did not open (another local process) is
 * refused, so the plaintext listener is no way around TLS. An address is forgotten when its
 * connection ends; while a connection lives, no other socket can have its address.
 *
 * Without client-certificate authentication none of this runs: Deno.serve terminates TLS on
 * the public port itself, as fast as it can. README "Client certificates" has the numbers.
 *
 * @module
 */

import { ClientCAVerifier, type Verification, type VerifiedClient } from "../auth/mod.ts";
import { ConfigError, osReason, quote } from "../config/mod.ts";
import type { Logger } from "../api/mod.ts";
import { type ConnectionLimits, connectionLimits } from "./connections.ts";
import type { WorkerIn, WorkerOut } from "./tls_front_worker.ts";

/** Options of {@link TlsFront}. */
export interface TlsFrontOptions {
  /** The serving certificate chain and key (PEM). */
  certPem: string;
  keyPem: string;
  /** The CAs whose names go into the CertificateRequest (PEM bundle). */
  clientCAPem: string;
  /** Decides which presented chains authenticate. */
  verifier: ClientCAVerifier;
  logger: Logger;
}

/** A connection's registration: its verified client, or `null` (no trusted certificate). */
type Registration = VerifiedClient | null;

/** A request's verified client, kept on the request: a WeakMap entry per request would cost
 * every young-generation collection until a full one (lib/server/respond.ts says more). */
const CLIENT = Symbol("verified client");
interface ClientOfRequest {
  [CLIENT]?: VerifiedClient;
}

/** The TLS front of one server. Create it, serve with {@link handler}, then {@link listen}. */
export class TlsFront {
  readonly #opts: TlsFrontOptions;
  readonly #connections = new Map<string, Registration>();
  /** Connections being verified, by address: a `closed` meanwhile removes the entry. */
  readonly #verifying = new Map<string, number>();
  /** The client's address of each connection, by its key. */
  readonly #peers = new Map<string, string>();
  #worker: Worker | undefined;

  constructor(opts: TlsFrontOptions) {
    this.#opts = opts;
  }

  /** The verified client of the connection a request came on. */
  clientOf = (req: Request): VerifiedClient | undefined => (req as ClientOfRequest)[CLIENT];

  /**
   * The Deno.serve handler of the loopback listener: binds each request to its connection's
   * client (see {@link clientOf}) and passes it to `next`; refuses requests on connections
   * that did not come through the front.
   */
  handler(
    next: (req: Request, peer?: string) => Response | Promise<Response>,
  ): (req: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>) => Response | Promise<Response> {
    return (req, info) => {
      const key = addressKey(info.remoteAddr);
      const registration = this.#connections.get(key);
      if (registration === undefined) {
        return new Response("connect over TLS on the server's port\n", { status: 421 });
      }
      if (registration) (req as ClientOfRequest)[CLIENT] = registration;
      return next(req, this.#peers.get(key));
    };
  }

  /**
   * Start listening on `hostname:port` (0: a free port), forwarding to `upstream`, the
   * loopback HTTP server; resolves with the port. `reusePort` (`--workers`): every thread has
   * its own front, registry and loopback server, all listening on the port. On failure `upstream` is shut down, the worker
   * ended, and the error thrown is Deno's for the case (`Deno.errors.AddrInUse`, …).
   */
  async listen(
    hostname: string,
    port: number,
    upstream: { addr: Deno.NetAddr; shutdown(): Promise<void> },
    limits: ConnectionLimits = connectionLimits(),
    reusePort = false,
  ): Promise<number> {
    const worker = new Worker(new URL("./tls_front_worker.ts", import.meta.url).href, {
      type: "module",
    });
    this.#worker = worker;
    const { promise, resolve, reject } = Promise.withResolvers<number>();
    worker.onmessage = (e: MessageEvent<WorkerOut>) => {
      const m = e.data;
      switch (m.type) {
        case "listening":
          resolve(m.port);
          break;
        case "listen-error":
          reject(listenError(m.code, m.message));
          break;
        case "connection":
          this.#peers.set(m.key, m.peer);
          void this.#register(m.id, m.key, m.authorized, m.authorizationError, m.chain);
          break;
        case "closed":
          this.#verifying.delete(m.key);
          this.#connections.delete(m.key);
          this.#peers.delete(m.key);
          break;
      }
    };
    worker.onerror = (e) => {
      e.preventDefault();
      this.#opts.logger.error(`TLS front: ${e.message}`);
      reject(new Error(`TLS front: ${e.message}`));
    };
    this.#post({
      type: "listen",
      hostname,
      port,
      certPem: this.#opts.certPem,
      keyPem: this.#opts.keyPem,
      clientCAPem: this.#opts.clientCAPem,
      upstream: { hostname: upstream.addr.hostname, port: upstream.addr.port },
      reusePort,
      // Each client connection holds three descriptors here: the client's, and both ends of
      // its loopback connection.
      limits: {
        maxConnections: Math.max(1, Math.floor(limits.maxConnections / 3)),
        maxConnectionsPerClient: limits.maxConnectionsPerClient,
        handshakeTimeoutMs: limits.headerTimeoutMs,
      },
    });
    try {
      return await promise;
    } catch (err) {
      this.terminate();
      await upstream.shutdown();
      throw err;
    }
  }

  /** Serve this certificate to new connections from now on. */
  setCertificate(certPem: string, keyPem: string): void {
    this.#post({ type: "certificate", certPem, keyPem });
  }

  /** Stop accepting connections; those open go on until the loopback server closes them. */
  stopAccepting(): void {
    this.#post({ type: "stop" });
  }

  /** End the worker and every connection still open. */
  terminate(): void {
    this.#worker?.terminate();
    this.#worker = undefined;
    this.#connections.clear();
    this.#peers.clear();
    this.#verifying.clear();
  }

  #post(message: WorkerIn) {
    this.#worker?.postMessage(message);
  }

  async #register(
    id: number,
    key: string,
    authorized: boolean,
    authorizationError: string | undefined,
    chain: Uint8Array[],
  ) {
    let registration: Registration = null;
    this.#verifying.set(key, id);
    if (chain.length > 0) {
      // Both must agree: node:tls's verification and ours (which also names the reason).
      let result: Verification = { reason: authorizationError ?? "not verified" };
      if (authorized) {
        try {
          result = await this.#opts.verifier.verify(chain);
        } catch (err) {
          result = { reason: `cannot verify: ${(err as Error)?.message ?? err}` };
        }
      }
      if ("client" in result) registration = result.client;
      else this.#opts.logger.debug(`client certificate not accepted: ${result.reason}`);
    }
    // Closed while being verified: nothing to register (and nothing waits for admit).
    if (this.#verifying.get(key) !== id) return;
    this.#verifying.delete(key);
    this.#connections.set(key, registration);
    this.#post({ type: "admit", id });
  }
}

/** The key of a loopback connection: what the worker reports and Deno.serve sees. */
function addressKey(addr: Deno.NetAddr): string {
  return `${addr.hostname}:${addr.port}`;
}

/** A listen error of node:net as the Deno error that `describeListenError` understands. */
function listenError(code: string | undefined, message: string): Error {
  switch (code) {
    case "EADDRINUSE":
      return new Deno.errors.AddrInUse(message);
    case "EADDRNOTAVAIL":
      return new Deno.errors.AddrNotAvailable(message);
    case "EACCES":
    case "EPERM":
      return new Deno.errors.PermissionDenied(message);
    default:
      return new Error(message);
  }
}

/** Options of {@link createTlsFront}. */
export interface CreateTlsFrontOptions {
  /** Client-certificate authentication on? @default clientCAFile !== undefined */
  clientCertAuth?: boolean;
  /** The client CA bundle (`--client-ca-file`). @default the cluster CA */
  clientCAFile?: string;
  /** The cluster CA (PEM). */
  clusterCAPem: string;
  /** The serving certificate chain and key (PEM). */
  certPem: string;
  keyPem: string;
  logger: Logger;
}

/**
 * The TLS front when client-certificate authentication is on, else `undefined`.
 *
 * @throws {ConfigError} `--client-ca-file: …` when the bundle cannot be read or parsed.
 */
export async function createTlsFront(opts: CreateTlsFrontOptions): Promise<TlsFront | undefined> {
  if (!(opts.clientCertAuth ?? opts.clientCAFile !== undefined)) return undefined;
  let clientCAPem = opts.clusterCAPem;
  if (opts.clientCAFile !== undefined) {
    try {
      clientCAPem = await Deno.readTextFile(opts.clientCAFile);
    } catch (err) {
      throw new ConfigError(
        `--client-ca-file: cannot read ${quote(opts.clientCAFile)}: ${osReason(err)}`,
      );
    }
  }
  let verifier: ClientCAVerifier;
  try {
    verifier = ClientCAVerifier.fromPem(clientCAPem);
  } catch (err) {
    throw new ConfigError(
      `--client-ca-file: ${quote(opts.clientCAFile)} ${(err as Error).message}`,
    );
  }
  opts.logger.info(
    `client certificates: on, verified against ${opts.clientCAFile ?? "the cluster CA"}`,
  );
  return new TlsFront({
    certPem: opts.certPem,
    keyPem: opts.keyPem,
    clientCAPem,
    verifier,
    logger: opts.logger,
  });
}
