/**
 * The egress selections (spec 03's EgressSelectorConfiguration, once loaded and checked by
 * lib/config): for each kind of outbound traffic, how its connections are made.
 *
 * - `cluster`: calls into the cluster network: admission, authorization, audit (and later
 *   conversion) webhooks;
 * - `controlplane`: calls to the control plane's own services: OIDC discovery and key sets;
 * - `etcd`: the etcd storage backend.
 *
 * A selection the configuration leaves out is `Direct`.
 *
 * @module
 */

export const EGRESS_SELECTION_NAMES = ["controlplane", "etcd", "cluster"] as const;
export type EgressSelectionName = typeof EGRESS_SELECTION_NAMES[number];

/** TLS to an `https://` proxy, PEM text (read from the files the configuration names). */
export interface ProxyTls {
  /** Trusted in addition to the system roots; absent: the system roots only. */
  caBundle?: string;
  clientCert: string;
  clientKey: string;
}

/** Where an HTTP CONNECT proxy listens. */
export type EgressProxy =
  | { transport: "tcp"; url: string; tls?: ProxyTls }
  | { transport: "uds"; udsName: string };

/** How one selection's connections are made. */
export type EgressConnection =
  | { protocol: "Direct" }
  | { protocol: "HTTPConnect"; proxy: EgressProxy };

/** The configured selections; absent ones are `Direct`. */
export type EgressSelections = Partial<Record<EgressSelectionName, EgressConnection>>;

/** How logs and errors name a proxy: its URL without credentials, or its socket. */
export function proxyName(proxy: EgressProxy): string {
  if (proxy.transport === "uds") return `unix://${proxy.udsName}`;
  try {
    const url = new URL(proxy.url);
    url.username = "";
    url.password = "";
    return url.href.replace(/\/$/, "");
  } catch {
    return proxy.url;
  }
}
