/**
 * The one dialer every outbound call goes through. Given a selection (`cluster`,
 * `controlplane`, `etcd`) it gives what a client needs to make its connections the configured
 * way: fetch-based clients a `Deno.createHttpClient` to use ({@link EgressDialer.httpClientFactory}),
 * the etcd gRPC client a way to open its TCP connections ({@link EgressDialer.tcpRoute}).
 *
 * `Direct` selections change nothing. An `HTTPConnect` selection gets a local relay
 * (relay.ts), started on first use and stopped by {@link EgressDialer.close}, which the
 * clients use as their HTTP proxy.
 *
 * @module
 */

import { type Logger, silentLogger } from "../api/mod.ts";
import { ConnectRelay } from "./relay.ts";
import { connectThroughProxy, EgressError } from "./proxy_connect.ts";
import { nodeTunnel } from "./node_tunnel.ts";
import type { Socket as NodeSocket } from "node:net";
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

/** How a client opens a TCP connection to one `host:port` (its own TLS goes on top). */
export interface TcpRoute {
  /** Opens the connection; `early`: bytes a proxy sent after its answer (usually none). */
  dial(): Promise<{ conn: Deno.TcpConn; early?: Uint8Array }>;
  /** The proxy the connection goes through, as errors name it; absent: direct. */
  via?: string;
  /** Where a direct route connects (a client may open its TLS connection there itself). */
  direct?: { hostname: string; port: number };
  /** A tunnelled route's connection as a `node:net` socket, for TLS by `node:tls` (which,
   * unlike `Deno.startTls`, takes a client certificate on an open connection). */
  dialNode?(): Promise<NodeSocket>;
}

/** A direct connection to `hostPort` (`host:port`, `[v6]:port`). */
export function directTcpRoute(hostPort: string): TcpRoute {
  const { hostname, port } = splitHostPort(hostPort);
  return {
    dial: async () => ({ conn: await Deno.connect({ hostname, port }) }),
    direct: { hostname, port },
  };
}

function splitHostPort(hostPort: string): { hostname: string; port: number } {
  const at = hostPort.lastIndexOf(":");
  return {
    hostname: hostPort.slice(0, at).replace(/^\[(.*)\]$/, "$1"),
    port: Number(hostPort.slice(at + 1)),
  };
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

  /**
   * How `name`'s TCP connections to `hostPort` are made: directly, or tunnelled through the
   * local relay (plain TCP, so a client can start its TLS on the tunnel), which reaches the
   * configured proxy however it is reached (TCP, TLS, Unix socket).
   */
  tcpRoute(name: EgressSelectionName, hostPort: string): TcpRoute {
    const connection = this.connection(name);
    if (connection.protocol === "Direct") return directTcpRoute(hostPort);
    const relay = this.#relay(name);
    const via = proxyName(connection.proxy);
    const authorization = "Basic " + btoa(relay.credentials);
    return {
      dial: async () => {
        try {
          const { conn, early } = await connectThroughProxy(
            { transport: "tcp", url: relay.url },
            hostPort,
            authorization,
          );
          return { conn: conn as Deno.TcpConn, early };
        } catch (err) {
          // The relay answered; why the proxy did not is in the relay's log line.
          throw new EgressError(
            `the egress proxy ${via} gave no tunnel to ${hostPort} (the log says why)`,
            { cause: err },
          );
        }
      },
      dialNode: () => nodeTunnel(relay.port, authorization, hostPort, via),
      via,
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
