/**
 * The gRPC side of the etcd client, run on the client's worker thread (`client_worker.ts`):
 * `@grpc/grpc-js` with etcd's own .proto files (`protos/`, trimmed from etcd's repository;
 * Apache-2.0, see `protos/LICENSE`), loaded by `@grpc/proto-loader`. One connection holds the
 * channels to one endpoint at a time, of several: when a call or a watch stream finds the
 * endpoint unavailable, the next calls go to the next endpoint (round robin). The failed call
 * itself fails (a write is never sent twice); the watcher re-opens its stream.
 * @module
 */

// @ts-types="./grpc_types.d.ts"
import * as grpc from "@grpc/grpc-js";
// @ts-types="./proto_loader_types.d.ts"
import * as protoLoader from "@grpc/proto-loader";
import { Buffer } from "node:buffer";
import { isIP } from "node:net";
import { checkServerIdentity } from "node:tls";
import type { EtcdTls, WireError, WireRoute } from "./wire.ts";

// deno-lint-ignore no-explicit-any
type GrpcClient = any;

/** A watch stream as grpc-js gives it. */
export interface GrpcStream {
  write(req: unknown): boolean;
  on(event: string, fn: (arg: never) => void): unknown;
  cancel(): void;
}

let services:
  | { KV: grpc.ServiceClientConstructor; Watch: grpc.ServiceClientConstructor }
  | undefined;

function loadServices() {
  if (services) return services;
  const dir = new URL("./protos/", import.meta.url);
  const def = protoLoader.loadSync("rpc.proto", {
    includeDirs: [decodeURIComponent(dir.pathname)],
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: false,
  });
  // deno-lint-ignore no-explicit-any
  const pkg = grpc.loadPackageDefinition(def) as any;
  services = { KV: pkg.etcdserverpb.KV, Watch: pkg.etcdserverpb.Watch };
  return services;
}

/** gRPC's status for a server that cannot be reached (down, refused, no leader). */
export const UNAVAILABLE = 14;

export interface GrpcConnectionOptions {
  endpoints: string[];
  /** How each endpoint is reached (same order as `endpoints`). */
  routes: WireRoute[];
  first: number;
  tls?: EtcdTls;
  /** Called when later calls go to another endpoint (its index). */
  onFailover: (current: number) => void;
}

/** The channels to one etcd endpoint at a time, of several. */
export class GrpcConnection {
  readonly #opts: GrpcConnectionOptions;
  #current: number;
  #kv: GrpcClient;
  #watch: GrpcClient;
  #closed = false;

  constructor(opts: GrpcConnectionOptions) {
    this.#opts = opts;
    this.#current = opts.first;
    [this.#kv, this.#watch] = this.#channels(opts.first);
  }

  #channels(index: number): [GrpcClient, GrpcClient] {
    const { KV, Watch } = loadServices();
    const endpoint = this.#opts.endpoints[index];
    const secure = new URL(endpoint.includes("://") ? endpoint : `http://${endpoint}`)
      .protocol === "https:";
    const tls = this.#opts.tls;
    const { target, options: routeOptions } = this.#opts.routes[index];
    // TLS to an IP address: the TLS layer refuses an IP as the server name (SNI may not carry
    // one), which grpc-js sends by default. Then no SNI name is sent (a placeholder) and the
    // certificate is checked against the IP address (its IP SANs).
    const ip = secure ? ipHost(endpoint) : undefined;
    const creds = secure
      ? grpc.credentials.createSsl(
        tls?.ca ? Buffer.from(tls.ca) : null,
        tls?.key ? Buffer.from(tls.key) : null,
        tls?.cert ? Buffer.from(tls.cert) : null,
        ip === undefined ? {} : {
          checkServerIdentity: (_host: string, cert: unknown) =>
            checkServerIdentity(ip, cert as Parameters<typeof checkServerIdentity>[1]),
        },
      )
      : grpc.credentials.createInsecure();
    const options = {
      "grpc.max_receive_message_length": 512 * 1024 * 1024,
      // Back within two seconds of etcd's return (grpc's default backoff grows to two minutes).
      "grpc.initial_reconnect_backoff_ms": 100,
      "grpc.max_reconnect_backoff_ms": 2_000,
      ...(ip === undefined ? {} : { "grpc.ssl_target_name_override": IP_SERVER_NAME }),
      ...routeOptions,
    };
    return [new KV(target, creds, options), new Watch(target, creds, options)];
  }

  /** After endpoint `index` was found unavailable: the next calls go to the next endpoint. */
  #failover(index: number): void {
    const n = this.#opts.endpoints.length;
    if (this.#closed || n < 2 || this.#current !== index) return;
    const [kv, watch] = [this.#kv, this.#watch];
    this.#current = (this.#current + 1) % n;
    [this.#kv, this.#watch] = this.#channels(this.#current);
    kv.close();
    watch.close();
    this.#opts.onFailover(this.#current);
  }

  /** One unary call of the KV service; `done` gets the response or the error. */
  unary(
    method: string,
    req: unknown,
    call: { timeoutMs: number; waitForReady: boolean; traceparent?: string },
    done: (err: WireError | null, res?: unknown) => void,
  ): void {
    const index = this.#current;
    const options = {
      deadline: new Date(Date.now() + call.timeoutMs),
      waitForReady: call.waitForReady,
    };
    const cb = (err: grpc.ServiceError | null, res: unknown) => {
      if (err?.code === UNAVAILABLE) this.#failover(index);
      if (err) done(wireError(err));
      else done(null, res);
    };
    // A traced request's storage span goes to etcd as gRPC metadata.
    if (call.traceparent === undefined) this.#kv[method](req, options, cb);
    else this.#kv[method](req, traceMetadata(call.traceparent), options, cb);
  }

  /** Opens a Watch stream (its unavailability moves later calls to the next endpoint). */
  watchStream(): GrpcStream {
    const index = this.#current;
    const stream = this.#watch.Watch() as GrpcStream;
    stream.on("error", (err: grpc.ServiceError) => {
      if (err.code === UNAVAILABLE) this.#failover(index);
    });
    return stream;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#kv.close();
    this.#watch.close();
  }
}

/** The server name sent for an IP endpoint (see `#channels`). */
const IP_SERVER_NAME = "etcd.invalid";

/** The endpoint's host when it is an IP address (without IPv6 brackets). */
function ipHost(endpoint: string): string | undefined {
  const host = new URL(endpoint.includes("://") ? endpoint : `http://${endpoint}`).hostname
    .replace(/^\[(.*)\]$/, "$1");
  return isIP(host) ? host : undefined;
}

function traceMetadata(traceparent: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set("traceparent", traceparent);
  return metadata;
}

/** A grpc-js error as plain data (it crosses to the caller's thread). */
export function wireError(err: grpc.ServiceError | Error): WireError {
  const e = err as grpc.ServiceError;
  return { code: e.code ?? 2, details: e.details ?? "", message: e.message ?? String(err) };
}
