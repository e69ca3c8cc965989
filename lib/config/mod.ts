/**
 * Server configuration: flags, the ServerConfiguration YAML file, feature gates and
 * runtime config.
 *
 * @example
 * ```ts
 * import { ConfigError, loadServerConfig } from "./lib/config/mod.ts";
 * try {
 *   const cfg = await loadServerConfig(Deno.args);
 *   if ("help" in cfg) {
 *     console.log(cfg.help);
 *     Deno.exit(0);
 *   }
 * } catch (err) {
 *   if (!(err instanceof ConfigError)) throw err;
 *   console.error(err.message);
 *   Deno.exit(2);
 * }
 * ```
 *
 * @module
 */

export { ConfigError, osReason, quote } from "./config_error.ts";
export {
  ADMISSION_PLUGIN_NAMES,
  admissionPluginOverlap,
  checkAdmissionPluginName,
  DEFAULT_OFF_ADMISSION_PLUGINS,
  enabledAdmissionPlugins,
} from "./admission_plugins.ts";
export { type DeprecatedAlias, FLAGS, type FlagSpec } from "./flag_table.ts";
export { deprecatedFlagWarnings } from "./flags.ts";
export { formatDuration, normalizeIp, parseDuration } from "./value_parsers.ts";
export {
  ALL_ALPHA,
  ALL_BETA,
  checkFeatureGates,
  checkGatedFiles,
  FEATURE_GATES,
  featureGateStageLabel,
  featureGateWarnings,
  type FeatureSpec,
  type FeatureStage,
  isKnownFeatureGate,
  parseFeatureGates,
  resolveFeatureGates,
} from "./feature_gates.ts";
export {
  groupVersionKey,
  isEnabled,
  type KnownApis,
  normalizeRuntimeConfigKey,
  parseRuntimeConfig,
  validateRuntimeConfig,
  versionStage,
} from "./runtime_config.ts";
export {
  describeValue,
  fieldPath,
  type FieldPathOptions,
  formatIssue,
  formatIssueAsFieldError,
  type IssueFormat,
  type SchemaIssue,
  similarField,
  valueAt,
} from "./schema_issues.ts";
export {
  AUDIT_LOG_MODES,
  type AuditLogMode,
  clusterSigningFiles,
  CONFIG_API_VERSION,
  CONFIG_KIND,
  DEFAULTS,
  LOG_LEVELS,
  type LogLevel,
  PER_SIGNER_CA_FIELDS,
  type ServerConfig,
  type SigningFiles,
  STORAGE_BACKENDS,
  type StorageBackend,
} from "./server_config_fields.ts";
export { helpText, loadServerConfig, type LoadServerConfigOptions } from "./server_config.ts";
export { type ControllerOptions, isControllerEnabled } from "./controller_selection.ts";
export { checkPortFree, describeListenError, hostPort } from "./listen.ts";
export {
  type FileRef,
  importMatchingKey,
  type KeyPair,
  readKeyPair,
  signatureParams,
} from "./key_pair.ts";
export {
  DEFAULT_SERVICE_CLUSTER_IP_RANGE,
  DEFAULT_SERVICE_NODE_PORT_RANGE,
  type IPRange,
  parseNodePortRange,
  parseServiceClusterIPRange,
  type ServiceNetwork,
  serviceNetwork,
} from "./service_network.ts";
export { parseYamlConfig, readConfigFile } from "./yaml_file.ts";
export {
  loadTracingConfig,
  parseTracingConfig,
  TRACING_CONFIG_API_VERSIONS,
  TRACING_CONFIG_KIND,
} from "./tracing_config.ts";
export { checkKindDocument, CONFIG_KINDS, findConfigKind } from "./kinds/registry.ts";
export {
  type ConfigKind,
  formatGoDuration,
  type KindCheck,
  parseGoDuration,
} from "./kinds/common.ts";
export {
  EGRESS_SELECTOR_CONFIG_API_VERSIONS,
  EGRESS_SELECTOR_CONFIG_KIND,
  type EgressSelectorConfig,
  loadEgressSelectorConfig,
} from "./egress_selector_config.ts";
