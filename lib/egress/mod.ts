/**
 * The egress selector: the one dialer every outbound call (webhooks, OIDC, etcd) goes through,
 * and the selections it is configured with.
 *
 * @example
 * ```ts
 * import { EgressDialer } from "./lib/egress/mod.ts";
 * const dialer = new EgressDialer({
 *   cluster: { protocol: "HTTPConnect", proxy: { transport: "tcp", url: "http://127.0.0.1:8888" } },
 * });
 * const client = dialer.httpClientFactory("cluster")({ caCerts: [webhookCa] });
 * await fetch("https://webhook.example:8443/validate", { client, method: "POST", body });
 * client.close();
 * dialer.close();
 * ```
 *
 * @module
 */

export {
  EGRESS_SELECTION_NAMES,
  type EgressConnection,
  type EgressProxy,
  type EgressSelectionName,
  type EgressSelections,
  proxyName,
  type ProxyTls,
} from "./selection.ts";
export {
  directTcpRoute,
  EgressDialer,
  type HttpClientFactory,
  type HttpClientOptions,
  type TcpRoute,
} from "./dialer.ts";
export { connectThroughProxy, EgressError, type Tunnel } from "./proxy_connect.ts";
