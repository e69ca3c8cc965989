/**
 * The server configuration: flags, one optional YAML file (`--config`) and defaults joined
 * into one validated {@link ServerConfig}. Flags override the file; the file overrides the
 * parts of a `--controller-manager-config` file that apply; those override the defaults. For
 * the maps (`featureGates`, `runtimeConfig`) a flag overrides the file key by key; lists and
 * scalars are replaced whole.
 *
 * This module is the loader; its parts have their own modules: the fields and defaults
 * (`server_config_fields.ts`), the file's schema (`config_file_schema.ts`), the flag and file
 * layers (`config_layers.ts`) and the cross-field rules and file checks (`config_checks.ts`).
 *
 * @module
 */

import { resolve } from "node:path";
import { ConfigError } from "./config_error.ts";
import { formatFlagHelp, tokenizeArgs } from "./flags.ts";
import { featureGateHelpLines } from "./feature_gates.ts";
import { type Field, OPTIONAL_PATHS, SIGNING_FILE_FIELDS } from "./config_file_schema.ts";
import { fileLayer, flagLayer, flagOf, type Layer, type Settings } from "./config_layers.ts";
import { checkServerConfig } from "./config_checks.ts";
import { controllerManagerLayer } from "./controller_manager_config.ts";
import { DEFAULTS, type ServerConfig } from "./server_config_fields.ts";

/** The `--help` flag list: every flag with its default, then the feature gates (no usage line). */
export function helpText(): string {
  return formatFlagHelp(featureGateHelpLines());
}

/** Options of {@link loadServerConfig}. */
export interface LoadServerConfigOptions {
  /** The directory relative flag paths resolve against. @default Deno.cwd() */
  cwd?: string;
}

/**
 * Parse `platform serve` flags, read the `--config` file if given, and return the validated
 * configuration, or `{help}` when `--help`/`-h` is given. Reads only the files the
 * configuration names (to check that they exist and parse); writes nothing.
 *
 * @throws {ConfigError} whose message is the one line to print before exiting with status 2.
 * @example
 * ```ts
 * const cfg = await loadServerConfig(["--secure-port=0", "--feature-gates=WatchList=true"]);
 * if ("help" in cfg) console.log(cfg.help);
 * ```
 */
export async function loadServerConfig(
  argv: string[],
  opts: LoadServerConfigOptions = {},
): Promise<ServerConfig | { help: string }> {
  const cwd = opts.cwd ?? Deno.cwd();
  const args = tokenizeArgs(argv);
  if (args.help) return { help: helpText() };

  const flags = flagLayer(args.values, cwd);
  let file: Layer | undefined;
  let configFile: string | undefined;
  const configArg = args.values.get("config")?.at(-1);
  if (configArg !== undefined) {
    if (configArg.trim() === "") throw new ConfigError("--config: must not be empty");
    configFile = resolve(cwd, configArg);
    file = await fileLayer(configFile, configArg);
  }

  // Under both: the parts of a KubeControllerManagerConfiguration that apply to the server.
  const cmPath = flags.values.controllerManagerConfig ?? file?.values.controllerManagerConfig;
  const cm = cmPath === undefined ? undefined : await controllerManagerLayer(
    cmPath,
    flags.shown.controllerManagerConfig ?? file?.shown.controllerManagerConfig ?? cmPath,
  );

  /** The layer that decided a field: flags, else the file, else the controller manager
   * configuration, else none (default). */
  const from = (field: Field): Layer | undefined =>
    [flags, file, cm].find((layer) => layer?.values[field] !== undefined);
  const pick = <K extends Field>(field: K): Settings[K] | undefined =>
    (flags.values[field] ?? file?.values[field] ?? cm?.values[field]) as Settings[K] | undefined;
  const merged = <K extends "featureGates" | "runtimeConfig">(field: K) =>
    new Map([...(file?.values[field] ?? []), ...(flags.values[field] ?? [])]);

  const cfg: ServerConfig = {
    configFile,
    dataDir: pick("dataDir") ?? resolve(cwd, DEFAULTS.dataDir),
    bindAddress: pick("bindAddress") ?? DEFAULTS.bindAddress,
    securePort: pick("securePort") ?? DEFAULTS.securePort,
    tlsCertFile: pick("tlsCertFile"),
    tlsPrivateKeyFile: pick("tlsPrivateKeyFile"),
    tlsSANs: pick("tlsSANs") ?? [],
    tokenAuthFile: pick("tokenAuthFile"),
    basicAuthFile: pick("basicAuthFile"),
    authenticationConfig: pick("authenticationConfig"),
    anonymousAuth: pick("anonymousAuth"),
    kubernetesGroupNames: pick("kubernetesGroupNames") ?? DEFAULTS.kubernetesGroupNames,
    authorizationConfig: pick("authorizationConfig"),
    enableAdmissionPlugins: pick("enableAdmissionPlugins") ?? [],
    disableAdmissionPlugins: pick("disableAdmissionPlugins") ?? [],
    admissionControlConfigFile: pick("admissionControlConfigFile"),
    encryptionProviderConfig: pick("encryptionProviderConfig"),
    clientCAFile: pick("clientCAFile"),
    ...Object.fromEntries(SIGNING_FILE_FIELDS.map((f) => [f, pick(f)])),
    clusterSigningDuration: pick("clusterSigningDuration") ?? DEFAULTS.clusterSigningDuration,
    runtimeConfig: merged("runtimeConfig"),
    featureGates: merged("featureGates"),
    storage: pick("storage") ?? DEFAULTS.storage,
    etcdServers: pick("etcdServers") ?? [],
    etcdPrefix: pick("etcdPrefix") ?? DEFAULTS.etcdPrefix,
    etcdCAFile: pick("etcdCAFile"),
    etcdCertFile: pick("etcdCertFile"),
    etcdKeyFile: pick("etcdKeyFile"),
    token: pick("token"),
    etcdCompactionInterval: pick("etcdCompactionInterval") ?? DEFAULTS.etcdCompactionInterval,
    etcdCountMetricPollPeriod: pick("etcdCountMetricPollPeriod") ??
      DEFAULTS.etcdCountMetricPollPeriod,
    snapshotInterval: pick("snapshotInterval") ?? DEFAULTS.snapshotInterval,
    snapshotRetention: pick("snapshotRetention") ?? DEFAULTS.snapshotRetention,
    snapshotDir: pick("snapshotDir"),
    historyRetention: pick("historyRetention") ?? DEFAULTS.historyRetention,
    controllerManagerConfig: pick("controllerManagerConfig"),
    controllers: pick("controllers") ?? [...DEFAULTS.controllers],
    leaderElect: pick("leaderElect") ?? DEFAULTS.leaderElect,
    leaderElectLeaseDuration: pick("leaderElectLeaseDuration") ??
      DEFAULTS.leaderElectLeaseDuration,
    leaderElectRenewDeadline: pick("leaderElectRenewDeadline") ??
      DEFAULTS.leaderElectRenewDeadline,
    leaderElectRetryPeriod: pick("leaderElectRetryPeriod") ?? DEFAULTS.leaderElectRetryPeriod,
    leaderElectResourceName: pick("leaderElectResourceName") ?? DEFAULTS.leaderElectResourceName,
    leaderElectResourceNamespace: pick("leaderElectResourceNamespace") ??
      DEFAULTS.leaderElectResourceNamespace,
    serviceClusterIPRange: pick("serviceClusterIPRange") ?? DEFAULTS.serviceClusterIPRange,
    serviceNodePortRange: pick("serviceNodePortRange") ?? DEFAULTS.serviceNodePortRange,
    shutdownTimeout: pick("shutdownTimeout") ?? DEFAULTS.shutdownTimeout,
    requestTimeout: pick("requestTimeout") ?? DEFAULTS.requestTimeout,
    minRequestTimeout: pick("minRequestTimeout") ?? DEFAULTS.minRequestTimeout,
    maxRequestsInflight: pick("maxRequestsInflight") ?? DEFAULTS.maxRequestsInflight,
    workers: pick("workers") ?? DEFAULTS.workers,
    workerMaxHeapMb: pick("workerMaxHeapMb") ?? DEFAULTS.workerMaxHeapMb,
    maxMutatingRequestsInflight: pick("maxMutatingRequestsInflight") ??
      DEFAULTS.maxMutatingRequestsInflight,
    maxConnections: pick("maxConnections") ?? DEFAULTS.maxConnections,
    maxConnectionsPerClient: pick("maxConnectionsPerClient") ?? DEFAULTS.maxConnectionsPerClient,
    maxRequestBodyBytes: pick("maxRequestBodyBytes") ?? DEFAULTS.maxRequestBodyBytes,
    logLevel: pick("logLevel") ?? DEFAULTS.logLevel,
    showHiddenMetricsForVersion: pick("showHiddenMetricsForVersion"),
    auditPolicyFile: pick("auditPolicyFile"),
    auditLogPath: pick("auditLogPath"),
    auditLogMaxage: pick("auditLogMaxage") ?? DEFAULTS.auditLogMaxage,
    auditLogMaxbackup: pick("auditLogMaxbackup") ?? DEFAULTS.auditLogMaxbackup,
    auditLogMaxsize: pick("auditLogMaxsize") ?? DEFAULTS.auditLogMaxsize,
    auditLogMode: pick("auditLogMode") ?? DEFAULTS.auditLogMode,
    auditLogBatchBufferSize: pick("auditLogBatchBufferSize") ?? DEFAULTS.auditLogBatchBufferSize,
    auditWebhookConfigFile: pick("auditWebhookConfigFile"),
    tracingConfigFile: pick("tracingConfigFile"),
    egressSelectorConfigFile: pick("egressSelectorConfigFile"),
    auditWebhookMode: pick("auditWebhookMode") ?? DEFAULTS.auditWebhookMode,
    auditWebhookBatchBufferSize: pick("auditWebhookBatchBufferSize") ??
      DEFAULTS.auditWebhookBatchBufferSize,
    auditWebhookBatchMaxSize: pick("auditWebhookBatchMaxSize") ?? DEFAULTS.auditWebhookBatchMaxSize,
    auditWebhookBatchMaxWait: pick("auditWebhookBatchMaxWait") ?? DEFAULTS.auditWebhookBatchMaxWait,
    auditWebhookInitialBackoff: pick("auditWebhookInitialBackoff") ??
      DEFAULTS.auditWebhookInitialBackoff,
  };
  if (cfg.configFile === undefined) delete cfg.configFile;
  for (const k of OPTIONAL_PATHS) {
    if (cfg[k] === undefined) delete cfg[k];
  }
  if (cfg.anonymousAuth === undefined) delete cfg.anonymousAuth;
  if (cfg.showHiddenMetricsForVersion === undefined) delete cfg.showHiddenMetricsForVersion;
  if (cfg.token === undefined) delete cfg.token;

  // Cross-field rules and the files the configuration points at.
  const where = (field: Field) => from(field)?.where(field) ?? `--${flagOf(field)}`;
  const shown = (field: Field) =>
    from(field)?.shown[field] ?? String(cfg[field as keyof ServerConfig]);
  /** How a message names another field: its field when the file set it, else its flag. */
  const named = (field: Field) => from(field) === file ? field : `--${flagOf(field)}`;
  await checkServerConfig(cfg, { where, shown, named, fromFlags: (f) => from(f) === flags });
  return cfg;
}
