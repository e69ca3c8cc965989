/**
 * platform as a library: start a real API server in-process, for example in another
 * project's tests; or talk to a server as a client, with the credentials of a kubeconfig-format
 * configuration file (`ClientConnection`, `loadKubeconfig`, `ExecCredentialProvider`).
 *
 * @example
 * ```ts
 * import { startServer } from "./mod.ts";
 * const server = await startServer({ storage: "memory" });
 * const client = Deno.createHttpClient({ caCerts: [server.caCertPem] });
 * const res = await fetch(`${server.url}/api/v1/namespaces`, {
 *   headers: { Authorization: `Bearer ${server.adminToken}` },
 *   client,
 * });
 * console.log((await res.json()).items.length); // 4
 * client.close();
 * await server.close();
 * ```
 *
 * @example
 * ```ts
 * import { ClientConnection } from "./mod.ts";
 * // $PLATFORMCONFIG, else $HOME/.platform/config; flags' values as overrides.
 * const conn = await ClientConnection.fromConfig({ namespace: "team-a" });
 * const res = await conn.fetch("/api/v1/namespaces/team-a/configmaps");
 * console.log(res.status);
 * ```
 * @module
 */

export { startServer } from "./lib/server/server.ts";
export type { ServerHandle, StartOptions } from "./lib/server/server.ts";
export { loadServerConfig } from "./lib/config/mod.ts";
export type { ServerConfig } from "./lib/config/mod.ts";
export { parseRuntimeConfig } from "./lib/config/runtime_config.ts";
export { StatusError } from "./lib/api/errors.ts";
export type { Store } from "./lib/storage/store.ts";
export type { ResourceDefinition } from "./lib/registry/definition.ts";

// The client: configuration files, credential plugins, the authenticated fetch.
export {
  type ClientSettings,
  type ConnectionOverrides,
  defaultConfigSources,
  ExecCredentialError,
  ExecCredentialProvider,
  type ExecCredentialStatus,
  type Kubeconfig,
  KubeconfigError,
  loadKubeconfig,
  resolveClientSettings,
} from "./lib/kubeconfig/mod.ts";
export {
  ClientConnection,
  ConnectionError,
  type ConnectionOptions,
  Discovery,
  runPatchCommand,
} from "./lib/client/mod.ts";
