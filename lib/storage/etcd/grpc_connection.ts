/**
 * The gRPC side of the etcd client: our own gRPC channel (`lib/grpc`, HTTP/2 over a Deno
 * socket) carrying etcd's messages (`messages.ts`, after etcd's `.proto` files in `protos/`,
 * trimmed from etcd's repository; Apache-2.0, see `protos/LICENSE`).
 *
 * One connection holds the channel to one endpoint at a time, of several: when a call or a
 * watch stream finds the endpoint unavailable, the next calls go to the next endpoint (round
 * robin). The failed call itself fails (a write is never sent twice); the watcher re-opens its
 * stream.
 * @module
 */

import { checkServerIdentity, connect as nodeTlsConnect, type PeerCertificate } from "node:tls";
import { isIP } from "node:net";
import {
  type ClientStream,
  GrpcChannel,
  GrpcError,
  nodeTransport,
  Status,
  type Transport,
} from "../../grpc/mod.ts";
import type { TcpRoute } from "../../egress/mod.ts";
import { type MethodCodec, METHODS } from "./messages.ts";
import type { EtcdTls, WatchResponse, WireError } from "./wire.ts";

/** gRPC's status for a server that cannot be reached (down, refused, no leader). */
export const UNAVAILABLE = Status.UNAVAILABLE;

/** Responses up to this size are accepted (a large list in one Range). */
const MAX_MESSAGE_BYTES = 512 << 20;

export interface GrpcConnectionOptions {
  endpoints: string[];
  /** How each endpoint is reached (same order as `endpoints`). */
  routes: TcpRoute[];
  first: number;
  tls?: EtcdTls;
  /** Called when later calls go to another endpoint (its index). */
  onFailover: (current: number) => void;
}

/** A watch stream: write requests, hear `data`, then `error` or `end`. */
export interface GrpcStream {
  write(req: unknown): boolean;
  on(event: "data", fn: (res: WatchResponse) => void): this;
  on(event: "error", fn: (err: Error) => void): this;
  on(event: "end" | "close", fn: () => void): this;
  cancel(): void;
}

/** The channel to one etcd endpoint at a time, of several. */
export class GrpcConnection {
  readonly #opts: GrpcConnectionOptions;
  #current: number;
  #channel: GrpcChannel;
  #closed = false;

  constructor(opts: GrpcConnectionOptions) {
    this.#opts = opts;
    this.#current = opts.first;
    this.#channel = this.#open(opts.first);
  }

  #open(index: number): GrpcChannel {
    const endpoint = this.#opts.endpoints[index];
    const url = new URL(endpoint.includes("://") ? endpoint : `http://${endpoint}`);
    const secure = url.protocol === "https:";
    const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
    const tls = this.#opts.tls;
    const route = this.#opts.routes[index];
    return new GrpcChannel({
      authority: url.host,
      secure,
      // Back within two seconds of etcd's return.
      initialBackoffMs: 100,
      maxBackoffMs: 2_000,
      maxMessageBytes: MAX_MESSAGE_BYTES,
      dial: async () => {
        if (secure && route.direct) {
          // The certificate is checked against the endpoint's host name or IP address.
          const conn = await Deno.connectTls({ ...route.direct, ...tlsOptions(tls, hostname) });
          return { conn: await handshaken(conn) };
        }
        // Deno.startTls takes no client certificate: node:tls on a tunnel of its own.
        if (secure && tls?.cert) return { conn: await nodeTls(route, tls, hostname) };
        const { conn, early } = await route.dial();
        conn.setNoDelay(true);
        if (!secure) return { conn, early };
        if (early?.length) {
          conn.close();
          throw new Error("the proxy sent bytes before the TLS handshake");
        }
        return { conn: await handshaken(await Deno.startTls(conn, tlsOptions(tls, hostname))) };
      },
    });
  }

  /** After endpoint `index` was found unavailable: the next calls go to the next endpoint. */
  #failover(index: number): void {
    const n = this.#opts.endpoints.length;
    if (this.#closed || n < 2 || this.#current !== index) return;
    const old = this.#channel;
    this.#current = (this.#current + 1) % n;
    this.#channel = this.#open(this.#current);
    old.close();
    this.#opts.onFailover(this.#current);
  }

  /** One unary call of the KV service. */
  async unary(
    method: string,
    req: unknown,
    call: { timeoutMs: number; waitForReady: boolean; traceparent?: string },
  ): Promise<unknown> {
    const index = this.#current;
    const path = `/etcdserverpb.KV/${method}`;
    const codec = METHODS.get(path)!;
    try {
      const bytes = await this.#channel.unary(path, codec.encode(req), {
        timeoutMs: call.timeoutMs,
        waitForReady: call.waitForReady,
        // A traced request's storage span goes to etcd as gRPC metadata.
        ...(call.traceparent === undefined
          ? {}
          : { metadata: [["traceparent", call.traceparent]] }),
      });
      return codec.decode(bytes);
    } catch (err) {
      if (err instanceof GrpcError && err.code === UNAVAILABLE) this.#failover(index);
      throw err;
    }
  }

  /** Opens a Watch stream (its unavailability moves later calls to the next endpoint). */
  watchStream(): GrpcStream {
    const index = this.#current;
    const path = "/etcdserverpb.Watch/Watch";
    const codec = METHODS.get(path)!;
    return new WatchCall(this.#channel, path, codec, (err) => {
      if (err.code === UNAVAILABLE) this.#failover(index);
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#channel.close();
  }
}

/** TLS by `node:tls` with our client certificate, over a tunnel through the egress relay. */
async function nodeTls(route: TcpRoute, tls: EtcdTls, hostname: string): Promise<Transport> {
  if (!route.dialNode) throw new Error("no tunnel for a client certificate");
  const socket = await route.dialNode();
  const dec = new TextDecoder();
  const conn = nodeTlsConnect({
    socket,
    // No IP address as the server name (SNI may not carry one): a placeholder, and the
    // certificate checked against the address itself.
    servername: isIP(hostname) ? "etcd.invalid" : hostname,
    checkServerIdentity: (_name: string, cert: PeerCertificate) =>
      checkServerIdentity(hostname, cert),
    ...(tls.ca ? { ca: dec.decode(tls.ca) } : {}),
    cert: dec.decode(tls.cert!),
    key: dec.decode(tls.key!),
    ALPNProtocols: ["h2"],
  });
  await new Promise<void>((resolve, reject) => {
    conn.once("secureConnect", () => resolve());
    conn.once("error", (err: Error) => reject(err));
  });
  if (conn.alpnProtocol !== "h2") {
    conn.destroy();
    throw new Error("etcd did not agree to HTTP/2 (ALPN)");
  }
  return nodeTransport(conn);
}

/** TLS to etcd: its CA, our certificate, HTTP/2 by ALPN. */
function tlsOptions(tls: EtcdTls | undefined, hostname: string) {
  const dec = new TextDecoder();
  return {
    hostname,
    alpnProtocols: ["h2"],
    ...(tls?.ca ? { caCerts: [dec.decode(tls.ca)] } : {}),
    ...(tls?.cert && tls.key ? { cert: dec.decode(tls.cert), key: dec.decode(tls.key) } : {}),
  };
}

/** `conn` once its handshake is done (a refused certificate fails here, not on first use). */
async function handshaken(conn: Deno.TlsConn): Promise<Deno.TlsConn> {
  try {
    await conn.handshake();
    return conn;
  } catch (err) {
    conn.close();
    throw err;
  }
}

/** A Watch stream as an emitter of decoded responses. */
class WatchCall implements GrpcStream {
  // deno-lint-ignore no-explicit-any
  readonly #handlers = new Map<string, ((arg: any) => void)[]>();
  readonly #stream: ClientStream;
  readonly #codec: MethodCodec;
  #cancelled = false;

  constructor(
    channel: GrpcChannel,
    path: string,
    codec: MethodCodec,
    onError: (err: GrpcError) => void,
  ) {
    this.#codec = codec;
    this.#stream = channel.stream(path, {
      message: (bytes) => this.#emit("data", codec.decode(bytes)),
      end: (err) => {
        if (this.#cancelled) return;
        if (err) {
          onError(err);
          this.#emit("error", Object.assign(new Error(err.message), wireError(err)));
        } else this.#emit("end");
      },
    }, { waitForReady: false });
  }

  write(req: unknown): boolean {
    this.#stream.write(this.#codec.encode(req));
    return true;
  }

  // deno-lint-ignore no-explicit-any
  on(event: string, fn: (arg: any) => void): this {
    this.#handlers.set(event, [...(this.#handlers.get(event) ?? []), fn]);
    return this;
  }

  cancel(): void {
    this.#cancelled = true;
    this.#stream.cancel();
  }

  #emit(event: string, arg?: unknown): void {
    for (const fn of this.#handlers.get(event) ?? []) fn(arg);
  }
}

/** A call's failure as plain data: gRPC code, etcd's own message, and the full text. */
export function wireError(err: GrpcError | Error): WireError {
  if (err instanceof GrpcError) {
    return { code: err.code, details: err.details, message: err.message };
  }
  return { code: Status.UNKNOWN, details: "", message: err.message };
}
