/**
 * The `platform` command.
 *
 *   platform [serve] [flags]     serve the API (the default)
 *   platform check-config [flags] validate flags and the configuration file, then exit
 *   platform check-config FILE… [--print-defaults]
 *                                validate configuration files of any kind (lib/cli)
 *   platform version             print the version
 *   platform storage <command>   copy, snapshot or restore the stored objects (lib/cli)
 *   platform patch ...           patch an object of a server, as kubectl patch (lib/client)
 *
 * Exit codes: 0 on a clean stop, 2 for bad configuration, 1 for anything else.
 */

import {
  checkGatedFiles,
  ConfigError,
  featureGateWarnings,
  resolveFeatureGates,
} from "./lib/config/mod.ts";
import {
  checkPortFree,
  clusterSigningFiles,
  deprecatedFlagWarnings,
  loadEgressSelectorConfig,
  loadServerConfig,
  loadTracingConfig,
  type ServerConfig,
} from "./lib/config/mod.ts";
import { startServer } from "./lib/server/server.ts";
import { EtcdUnavailableError } from "./lib/storage/mod.ts";
import { createLogger } from "./lib/api/log.ts";
import { KUBE_MAJOR, KUBE_MINOR, PLATFORM_VERSION, versionInfo } from "./lib/server/version.ts";
import { showHiddenMetricsProblem } from "./lib/metrics/mod.ts";
import { builtinDefinitions } from "./lib/resources/mod.ts";
import { rbacAuthorizes, servedDefinitions } from "./lib/server/served_apis.ts";
import { loadAuthenticationConfig } from "./lib/auth/authentication_config.ts";
import { checkAnonymousFlagConflict } from "./lib/auth/anonymous.ts";
import { loadAuthorizationConfig } from "./lib/auth/authorization_config.ts";
import { SERVICE_ACCOUNT_ISSUER } from "./lib/auth/service_account_tokens.ts";
import { loadEncryptionConfig } from "./lib/encryption/mod.ts";
import { loadAdmissionSettings } from "./lib/admission/mod.ts";
import { loadAuditPolicy } from "./lib/audit/mod.ts";
import { connectionFromKubeconfig } from "./lib/auth/mod.ts";
import { isCheckConfigFiles, runCheckConfig, runStorageCommand } from "./lib/cli/mod.ts";
import { runPatchCommand } from "./lib/client/mod.ts";

const USAGE = `platform ${PLATFORM_VERSION}: a small Kubernetes-style API server

Usage:
  platform [serve] [flags]        serve the API over HTTPS (default)
  platform check-config [flags]   validate the configuration and exit
  platform check-config FILE... [--print-defaults]
                                  validate configuration files by apiVersion and kind
  platform version                print the version
  platform storage copy|snapshot|restore
                                  move, back up and restore the stored objects
  platform patch (-f FILENAME | TYPE NAME) -p PATCH
                                  patch an object (platform patch --help)
`;

async function main(args: string[]): Promise<number> {
  let command = "serve";
  if (args[0] && !args[0].startsWith("-")) {
    command = args[0];
    args = args.slice(1);
  }
  switch (command) {
    case "version":
      console.log(JSON.stringify({ platformVersion: PLATFORM_VERSION, ...versionInfo() }, null, 2));
      return 0;
    case "check-config":
      // Files named: check them by kind; flags only: check the server's configuration.
      if (isCheckConfigFiles(args)) return await runCheckConfig(args);
      break;
    case "serve":
      break;
    case "help":
      args = ["--help"];
      break;
    case "storage":
      return await runStorageCommand(args);
    case "patch":
      return await runPatchCommand(args, {
        stdout: (text) => writeAll(Deno.stdout, text),
        stderr: (text) => writeAll(Deno.stderr, text),
        clientVersion: versionInfo().gitVersion,
      });
    default:
      console.error(`platform: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }

  let config: ServerConfig;
  try {
    const loaded = await loadServerConfig(args);
    if ("help" in loaded) {
      console.log(`${USAGE}\nFlags:\n${loaded.help}`);
      return 0;
    }
    config = loaded;
    // serve checks these as it starts, before it creates anything.
    if (command === "check-config") await checkAccessConfigFiles(config);
    // The warnings kube logs for GA and deprecated gates (serve logs them as it starts).
    if (command === "check-config") {
      for (const w of deprecatedFlagWarnings(args)) console.error(`platform: ${w}`);
      for (const w of featureGateWarnings(config.featureGates)) console.error(`platform: ${w}`);
    }
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`platform: ${err.message}`);
      return 2;
    }
    throw err;
  }
  if (command === "check-config") {
    console.log("configuration is valid");
    return 0;
  }
  return await serve(config, deprecatedFlagWarnings(args));
}

/** The access configuration files and the runtime config, validated as the server would at
 * start. */
async function checkAccessConfigFiles(config: ServerConfig): Promise<void> {
  checkGatedFiles({
    authenticationConfig: config.authenticationConfig,
    tracingConfig: config.tracingConfigFile,
  }, resolveFeatureGates(config.featureGates));
  if (config.authenticationConfig !== undefined) {
    const authn = await loadAuthenticationConfig(config.authenticationConfig, {
      disallowedIssuers: [SERVICE_ACCOUNT_ISSUER],
    });
    checkAnonymousFlagConflict(authn, {
      file: config.authenticationConfig,
      flagSet: config.anonymousAuth !== undefined,
    });
  }
  const authz = config.authorizationConfig === undefined
    ? undefined
    : await loadAuthorizationConfig(config.authorizationConfig);
  servedDefinitions(builtinDefinitions(), config.runtimeConfig, {
    rbacAuthorizes: rbacAuthorizes(authz),
  });
  if (config.encryptionProviderConfig !== undefined) {
    await loadEncryptionConfig(config.encryptionProviderConfig);
  }
  await loadAdmissionSettings(admissionOptions(config));
  if (config.auditPolicyFile !== undefined) await loadAuditPolicy(config.auditPolicyFile);
  if (config.tracingConfigFile !== undefined) await loadTracingConfig(config.tracingConfigFile);
  if (config.egressSelectorConfigFile !== undefined) {
    const egress = await loadEgressSelectorConfig(config.egressSelectorConfigFile);
    for (const w of egress.warnings) console.error(`${config.egressSelectorConfigFile}: ${w}`);
  }
  if (config.showHiddenMetricsForVersion !== undefined) {
    const problem = showHiddenMetricsProblem(
      `${KUBE_MAJOR}.${KUBE_MINOR}`,
      config.showHiddenMetricsForVersion,
    );
    if (problem) throw new ConfigError(`--show-hidden-metrics-for-version: ${problem}`);
  }
  if (config.auditWebhookConfigFile !== undefined) {
    await connectionFromKubeconfig(config.auditWebhookConfigFile).catch((err) => {
      throw new ConfigError(
        `--audit-webhook-config-file: ${err instanceof Error ? err.message : err}`,
      );
    });
  }
}

/** The admission flags as `startServer` and `loadAdmissionSettings` take them. */
function admissionOptions(config: ServerConfig) {
  return {
    enable: config.enableAdmissionPlugins,
    disable: config.disableAdmissionPlugins,
    configFile: config.admissionControlConfigFile,
  };
}

async function serve(config: ServerConfig, flagWarnings: string[]): Promise<number> {
  const logger = createLogger(config.logLevel);
  for (const w of flagWarnings) logger.warn(w);
  let server;
  // Listening from the start: a signal that comes while the server starts (its kubeconfig may
  // already be written) stops it once it has started, instead of killing it half-way.
  let onSignal: (signal: string) => void = (signal) => void (early ??= signal);
  let early: string | undefined;
  Deno.addSignalListener("SIGINT", () => onSignal("SIGINT"));
  Deno.addSignalListener("SIGTERM", () => onSignal("SIGTERM"));
  try {
    // Before anything is generated or logged: a taken port is a configuration error.
    checkPortFree(config.bindAddress, config.securePort);
    server = await startServer({
      dataDir: config.dataDir,
      bindAddress: config.bindAddress,
      securePort: config.securePort,
      storage: config.storage,
      etcdServers: config.etcdServers,
      etcdPrefix: config.etcdPrefix,
      etcdCAFile: config.etcdCAFile,
      etcdCertFile: config.etcdCertFile,
      etcdKeyFile: config.etcdKeyFile,
      token: config.token,
      etcdCompactionIntervalMs: config.etcdCompactionInterval,
      storageCountPeriodMs: config.etcdCountMetricPollPeriod,
      snapshotIntervalMs: config.snapshotInterval,
      snapshotRetention: config.snapshotRetention,
      snapshotDir: config.snapshotDir,
      tlsCertFile: config.tlsCertFile,
      tlsPrivateKeyFile: config.tlsPrivateKeyFile,
      tlsSANs: config.tlsSANs,
      tokenAuthFile: config.tokenAuthFile,
      basicAuthFile: config.basicAuthFile,
      clientCAFile: config.clientCAFile,
      authenticationConfigFile: config.authenticationConfig,
      anonymousAuth: config.anonymousAuth,
      kubernetesGroupNames: config.kubernetesGroupNames,
      authorizationConfigFile: config.authorizationConfig,
      enableAdmissionPlugins: config.enableAdmissionPlugins,
      disableAdmissionPlugins: config.disableAdmissionPlugins,
      admissionControlConfigFile: config.admissionControlConfigFile,
      audit: {
        policyFile: config.auditPolicyFile,
        logPath: config.auditLogPath,
        logMaxAgeDays: config.auditLogMaxage,
        logMaxBackups: config.auditLogMaxbackup,
        logMaxSizeMB: config.auditLogMaxsize,
        logMode: config.auditLogMode,
        logBatchBufferSize: config.auditLogBatchBufferSize,
        webhookConfigFile: config.auditWebhookConfigFile,
        webhookMode: config.auditWebhookMode,
        webhookBatchBufferSize: config.auditWebhookBatchBufferSize,
        webhookBatchMaxSize: config.auditWebhookBatchMaxSize,
        webhookBatchMaxWaitMs: config.auditWebhookBatchMaxWait,
        webhookInitialBackoffMs: config.auditWebhookInitialBackoff,
      },
      encryptionProviderConfigFile: config.encryptionProviderConfig,
      tracingConfigFile: config.tracingConfigFile,
      egressSelectorConfigFile: config.egressSelectorConfigFile,
      ...clusterSigningFiles(config),
      clusterSigningDurationMs: config.clusterSigningDuration,
      controllers: config.controllers,
      leaderElection: {
        enabled: config.leaderElect,
        leaseDurationMs: config.leaderElectLeaseDuration,
        renewDeadlineMs: config.leaderElectRenewDeadline,
        retryPeriodMs: config.leaderElectRetryPeriod,
        resourceName: config.leaderElectResourceName,
        resourceNamespace: config.leaderElectResourceNamespace,
      },
      serviceClusterIPRange: config.serviceClusterIPRange,
      serviceNodePortRange: config.serviceNodePortRange,
      historyRetentionMs: config.historyRetention,
      maxRequestBodyBytes: config.maxRequestBodyBytes,
      requestTimeoutMs: config.requestTimeout,
      minRequestTimeoutSeconds: config.minRequestTimeout,
      maxRequestsInflight: config.maxRequestsInflight,
      workers: config.workers,
      workerMaxHeapMB: config.workerMaxHeapMb,
      maxMutatingRequestsInflight: config.maxMutatingRequestsInflight,
      connectionLimits: {
        maxConnections: config.maxConnections,
        maxConnectionsPerClient: config.maxConnectionsPerClient,
      },
      shutdownTimeoutMs: config.shutdownTimeout,
      showHiddenMetricsForVersion: config.showHiddenMetricsForVersion,
      featureGates: config.featureGates,
      runtimeConfig: config.runtimeConfig,
      logger,
    });
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`platform: ${err.message}`);
      return 2;
    }
    // A file or directory the server could not use (the data directory's contents, say): the
    // operator's to fix, said in one line. Anything else is a bug, and keeps its stack.
    if (isOsError(err)) {
      console.error(`platform: cannot start: ${(err as Error).message}`);
      return 2;
    }
    // Storage that does not answer (etcd down): one line naming the endpoints, exit 1.
    if (err instanceof EtcdUnavailableError) {
      console.error(`platform: cannot start: ${err.message}`);
      return 1;
    }
    throw err;
  }
  logger.info(`serving on ${server.url}`);
  logger.info(`data directory: ${server.dataDir}`);
  if (server.kubeconfigPath) {
    logger.info(`admin kubeconfig: ${server.kubeconfigPath}`);
    logger.info(`try: kubectl --kubeconfig ${server.kubeconfigPath} get namespaces`);
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      // A second signal: the operator does not want to wait.
      logger.warn(`received ${signal} again: exiting now`);
      Deno.exit(1);
    }
    stopping = true;
    logger.info(`received ${signal}: shutting down`);
    // Once closed, nothing is left to do: requests the drain gave up on may still wait (on a
    // webhook, say), and would keep the process up until the grace period below ran out.
    server.close().then(() => {
      logger.info("stopped");
      Deno.exit(0);
    }, (err) => {
      logger.error("shutdown failed", err);
      Deno.exit(1);
    });
    // The grace period bounds the stop, whatever is still running after it.
    setTimeout(() => {
      logger.error("shutdown took longer than --shutdown-timeout + 10s: exiting");
      Deno.exit(1);
    }, config.shutdownTimeout + 10_000);
  };
  onSignal = stop;
  if (early) stop(early);
  await server.finished;
  await server.close();
  return 0;
}

/** Writes all of `text` (a single write may take only part of it). */
function writeAll(out: { writeSync(p: Uint8Array): number }, text: string): void {
  let bytes = new TextEncoder().encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(out.writeSync(bytes));
}

/** An error of the operating system (Deno.errors.*: NotFound, PermissionDenied, …). */
function isOsError(err: unknown): boolean {
  return Object.values(Deno.errors).some((E) => err instanceof E);
}

if (import.meta.main) {
  try {
    Deno.exit(await main(Deno.args));
  } catch (err) {
    console.error(`platform: ${(err as Error)?.stack ?? err}`);
    Deno.exit(1);
  }
}
