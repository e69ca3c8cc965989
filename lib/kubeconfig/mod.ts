/**
 * The public surface of lib/kubeconfig/ (lib/README.md): client configuration files
 * (kubeconfig v1), loaded and merged as kubectl merges `KUBECONFIG`, resolved to the settings
 * of one connection, and ExecCredential plugins.
 *
 * @example
 * ```ts
 * import { defaultConfigSources, loadKubeconfig, resolveClientSettings } from "./mod.ts";
 * const config = await loadKubeconfig(defaultConfigSources());
 * const settings = await resolveClientSettings(config, { namespace: "team-a" });
 * console.log(settings.server, settings.namespace);
 * ```
 *
 * @module
 */
export {
  boolField,
  isObj,
  KubeconfigError,
  type KubeconfigFile,
  namedEntries,
  type NamedEntry,
  type Obj,
  parseKubeconfig,
  stringField,
} from "./parse.ts";
export {
  CONFIG_ENV,
  type ConfigSources,
  defaultConfigSources,
  type Kubeconfig,
  loadKubeconfig,
  mergeKubeconfigs,
} from "./load.ts";
export {
  type ClientSettings,
  type ConnectionOverrides,
  type Impersonation,
  resolveClientSettings,
} from "./resolve.ts";
export {
  EXEC_API_VERSIONS,
  type ExecConfig,
  type InteractiveMode,
  parseExecConfig,
} from "./exec_config.ts";
export {
  type ExecClusterInfo,
  ExecCredentialError,
  type ExecCredentialOptions,
  ExecCredentialProvider,
  type ExecCredentialStatus,
} from "./exec_credential.ts";
