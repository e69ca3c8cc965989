/**
 * The one dialer every outbound call goes through. Given a selection (`cluster`,
 * `controlplane`, `etcd`) it gives what a client needs to make its connections the configured
 * way: fetch-based clients a `Deno.createHttpClient` to use ({@link EgressDialer.httpClientFactory}),
 * the etcd gRPC client its target and channel options ({@link EgressDialer.grpcRoute}).
 *
 * `Direct` selections change nothing. An `HTTPConnect` selection gets a local relay
 * (relay.ts), started on first use and stopped by {@link EgressDialer.close}, which the
 * clients use as their HTTP proxy.
 *
 * @module
 */

import { type Logger, silentLogger } from "../api/mod.ts";
import { ConnectRelay } from "./relay.ts";
import {
  type EgressConnection,
  type EgressSelectionName,
  type EgressSelections,
  proxyName,
} from "./selection.ts";

/** What `Deno.createHttpClient` takes (client certificate and key included). */
export type HttpClientOptions = Parameters<typeof Deno.createHttpClient>[0];

/** Makes the `Deno.HttpClient` of an outbound client; `Deno.createHttpClient` by default. */
export type HttpClientFactory = (options: HttpClientOptions) => Deno.HttpClient;

/** How a gRPC client reaches `host:port`: the target to dial and the channel options to add. */
export interface GrpcRoute {
  target: string;
  options: Record<string, string | number>;
  /** The proxy the connection goes through, as errors name it; absent: direct. */
  via?: string;
}

export class EgressDialer {
  readonly #selections: EgressSelections;
  readonly #log: Logger;
  readonly #relays = new Map<EgressSelectionName, ConnectRelay>();

  constructor(selections: EgressSelections = {}, opts: { logger?: Logger } = {}) {
    this.#selections = selections;
    this.#log = opts.logger ?? silentLogger;
  }

  /** How `name`'s connections are made. */
  connection(name: EgressSelectionName): EgressConnection {
    return this.#selections[name] ?? { protocol: "Direct" };
  }

  /** Makes HTTP clients whose connections go the way `name` says. */
  httpClientFactory(name: EgressSelectionName): HttpClientFactory {
    if (this.connection(name).protocol === "Direct") {
      return (options) => Deno.createHttpClient(options);
    }
    return (options) => {
      const relay = this.#relay(name);
      return Deno.createHttpClient({
        ...options,
        proxy: {
          url: relay.url,
          basicAuth: { username: relay.username, password: relay.password },
        },
      });
    };
  }

  /** The target and channel options with which grpc-js reaches `hostPort` for `name`. */
  grpcRoute(name: EgressSelectionName, hostPort: string): GrpcRoute {
    const connection = this.connection(name);
    if (connection.protocol === "Direct") return { target: hostPort, options: {} };
    const relay = this.#relay(name);
    return {
      // grpc-js dials the target and asks it to CONNECT to `grpc.http_connect_target` (its
      // TLS then names that host); proxies from the environment would override both.
      target: `127.0.0.1:${relay.port}`,
      options: {
        "grpc.http_connect_target": `dns:${hostPort}`,
        "grpc.http_connect_creds": relay.credentials,
        "grpc.enable_http_proxy": 0,
      },
      via: proxyName(connection.proxy),
    };
  }

  /** Stops the relays; tunnels still open end. */
  close(): void {
    for (const relay of this.#relays.values()) relay.close();
    this.#relays.clear();
  }

  #relay(name: EgressSelectionName): ConnectRelay {
    let relay = this.#relays.get(name);
    if (!relay) {
      const connection = this.connection(name);
      if (connection.protocol !== "HTTPConnect") throw new Error(`egress ${name}: not proxied`);
      relay = new ConnectRelay(connection.proxy, `egress ${name}`, this.#log);
      this.#relays.set(name, relay);
    }
    return relay;
  }
}
