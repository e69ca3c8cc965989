/**
 * Start-up step 1, configuration: the feature gates, the service network and the files named
 * by flags (authorization, static tokens, encryption, authentication), read and checked before
 * anything is created or opened, so that a bad setting is a one-line ConfigError (main exits 2)
 * that leaves no trace.
 */

import {
  AuthenticationConfigReloader,
  type AuthorizationConfig,
  type BasicUser,
  connectionFromKubeconfig,
  loadAuthorizationConfig,
  loadBasicAuthFile,
  loadTokenFile,
  SERVICE_ACCOUNT_ISSUER,
  type TokenUser,
  type WebhookConnection,
} from "../../auth/mod.ts";
import {
  type AdmissionSettings,
  type EventRateDecision,
  EventRateLimiter,
  loadAdmissionSettings,
} from "../../admission/mod.ts";
import { PolicyIndex } from "../../rbac/mod.ts";
import {
  type AuditBackend,
  type AuditLogWriter,
  httpPost,
  loadAuditPolicy,
  openLogBackend,
  openWebhookBackend,
  PolicyEvaluator,
  unionBackend,
} from "../../audit/mod.ts";
import {
  checkFeatureGates,
  checkGatedFiles,
  ConfigError,
  featureGateStageLabel,
  featureGateWarnings,
  loadEgressSelectorConfig,
  loadTracingConfig,
  osReason,
  quote,
  resolveFeatureGates,
} from "../../config/mod.ts";
import { openTracer, type Tracer } from "../../tracing/mod.ts";
import { EgressDialer } from "../../egress/mod.ts";
import { EncryptionTransformer, loadEncryptionConfig } from "../../encryption/mod.ts";
import {
  builtinDefinitions,
  type ServiceAllocator,
  type ServiceNetwork,
  serviceNetwork,
} from "../../resources/mod.ts";
import type { ResourceDefinition } from "../../registry/mod.ts";
import type { Clock, Logger } from "../../api/mod.ts";
import { ServerMetrics } from "../../metrics/mod.ts";
import { KUBE_MAJOR, KUBE_MINOR, versionInfo } from "../version.ts";
import { rbacAuthorizes, servedDefinitions } from "../served_apis.ts";
import type { OpenResources } from "./open_resources.ts";
import type { StartOptions } from "./options.ts";
import { openThreadsAuditLog } from "./worker_audit.ts";

/** The settings every later step reads, checked. */
export interface Configuration {
  featureGates: Map<string, boolean>;
  /** `--service-cluster-ip-range` and `--service-node-port-range`. */
  network: ServiceNetwork;
  /** `--authorization-config`; without it system:masters, then RBAC. */
  authorization?: AuthorizationConfig;
  /** The rules the RBAC authorizer indexes; the RBAC definitions check escalation against them. */
  rbacPolicy: PolicyIndex;
  /**
   * The built-in definitions served (`--runtime-config`). Discovery, OpenAPI and routing follow
   * the catalogue made of them: what is filtered out is not served at all (served_apis.ts says
   * what cannot be, and what turns off with it).
   */
  servedBuiltins(serviceAllocator?: ServiceAllocator): ResourceDefinition[];
  /** `--token-auth-file`. */
  staticTokens?: Map<string, TokenUser>;
  /** `--basic-auth-file`: users by name, with their passwords. */
  basicUsers?: Map<string, BasicUser>;
  /** `--encryption-provider-config`: what the file store encrypts at rest. */
  encryption?: EncryptionTransformer;
  /** `--authentication-config`, re-read when it changes (registered in `resources`). */
  authentication?: AuthenticationConfigReloader;
  /** `--enable-admission-plugins`, `--disable-admission-plugins` and
   * `--admission-control-config-file`: the plugins that run, with their configurations. */
  admission: AdmissionSettings;
  /** EventRateLimit's buckets, when it runs: this thread's, or in a `--workers` worker the
   * main thread's (one set for the process, as kube's). */
  eventRates?: EventRateDecision;
  /** The server's time (`StartOptions.clock`). */
  clock: Clock;
  /** `--audit-policy-file` and where events go: the log (`--audit-log-*`), the webhook
   * (`--audit-webhook-*`), or both; when the policy and a backend are given. */
  audit?: { policy: PolicyEvaluator; backend: AuditBackend };
  /** With `--workers` > 1, on the main thread: the one audit log writer, which the workers'
   * events go to too (worker_audit.ts). */
  auditLogWriter?: AuditLogWriter;
  /** `--tracing-config-file`: where request spans go; the no-op tracer without it. */
  tracer: Tracer;
  /** `--egress-selector-config-file`: the one dialer of every outbound call (all `Direct`
   * without it); closed with the server, after what uses it. */
  egress: EgressDialer;
  /** The server's metrics (`/metrics`); every part records into these. Absent when metrics
   * are off (`StartOptions.metrics: false`): nothing is measured at all. */
  metrics?: ServerMetrics;
}

/** Reads and checks the configuration; opens nothing but the authentication file's watch. */
export async function loadConfiguration(
  opts: StartOptions,
  logger: Logger,
  resources: OpenResources,
): Promise<Configuration> {
  const metrics = serverMetrics(opts, logger);
  // Explicit settings: refused when unknown or locked, logged (as kube does) when GA or
  // deprecated, then resolved against the defaults.
  const explicitGates = opts.featureGates ?? new Map();
  checkFeatureGates(explicitGates);
  for (const warning of featureGateWarnings(explicitGates)) logger.warn(warning);
  const featureGates = resolveFeatureGates(explicitGates);
  if (metrics) recordFeatureGates(metrics, featureGates);
  // First: the clients opened below (OIDC discovery, the audit webhook) dial through it.
  const egress = await openEgress(opts, logger, resources);
  checkGatedFiles({
    authenticationConfig: opts.authenticationConfigFile,
    tracingConfig: opts.tracingConfigFile,
  }, featureGates);
  const network = serviceNetwork(opts.serviceClusterIPRange, opts.serviceNodePortRange);
  const authorization = opts.authorizationConfigFile
    ? await loadAuthorizationConfig(opts.authorizationConfigFile)
    : undefined;
  const admission = await loadAdmissionSettings({
    enable: opts.enableAdmissionPlugins,
    disable: opts.disableAdmissionPlugins,
    configFile: opts.admissionControlConfigFile,
  });
  // Checked whenever given, used when there is also somewhere to write to.
  const auditPolicy = opts.audit?.policyFile
    ? await loadAuditPolicy(opts.audit.policyFile)
    : undefined;
  // Read now, so that a bad kubeconfig is a configuration error; opened with the log below.
  const auditWebhook = opts.audit?.webhookConfigFile
    ? await readAuditWebhookConfig(opts.audit.webhookConfigFile)
    : undefined;
  const rbacPolicy = new PolicyIndex();
  const servedBuiltins = (serviceAllocator?: ServiceAllocator) =>
    servedDefinitions(
      builtinDefinitions({ rbacPolicy, serviceAllocator }),
      opts.runtimeConfig ?? new Map(),
      { rbacAuthorizes: rbacAuthorizes(authorization) },
    );
  // Checked here, before anything is written; built again with the store's allocator.
  servedBuiltins();
  const staticTokens = opts.tokenAuthFile ? await loadTokenFile(opts.tokenAuthFile) : undefined;
  const basicUsers = opts.basicAuthFile ? await loadBasicAuthFile(opts.basicAuthFile) : undefined;
  const encryption = opts.encryptionProviderConfigFile
    ? new EncryptionTransformer(await loadEncryptionConfig(opts.encryptionProviderConfigFile))
    : undefined;
  const authentication = opts.authenticationConfigFile
    ? await AuthenticationConfigReloader.start({
      path: opts.authenticationConfigFile,
      logger,
      jwt: { createHttpClient: egress.httpClientFactory("controlplane") },
      anonymousFlagSet: opts.anonymousAuth !== undefined,
      // Service account tokens are checked by their own authenticator.
      disallowedIssuers: [SERVICE_ACCOUNT_ISSUER],
    })
    : undefined;
  if (authentication) {
    resources.add("the authentication configuration", () => authentication.stop());
  }
  // Opened early, closed late: the last requests' spans are exported on the way out.
  const tracer = await openTracer(
    opts.tracingConfigFile ? await loadTracingConfig(opts.tracingConfigFile) : undefined,
    { logger },
  );
  if (tracer.enabled) resources.add("the tracer", () => tracer.close());
  if (
    authentication?.config.anonymous?.conditions.length &&
    !featureGates.get("AnonymousAuthConfigurableEndpoints")
  ) {
    throw new ConfigError(
      `${opts.authenticationConfigFile}: anonymous.conditions: needs the ` +
        "AnonymousAuthConfigurableEndpoints feature gate, which is off",
    );
  }
  const auditLog = auditPolicy && opts.audit?.logPath
    ? openAuditLog(opts, opts.audit.logPath, logger, resources, metrics)
    : undefined;
  const clock = { now: () => (opts.clock ? opts.clock().getTime() : Date.now()) };
  return {
    featureGates,
    network,
    authorization,
    rbacPolicy,
    servedBuiltins,
    staticTokens,
    basicUsers,
    encryption,
    authentication,
    admission,
    eventRates: opts.eventRateDecision ?? eventRatesOf(admission, clock),
    clock,
    tracer,
    audit: auditPolicy && (opts.audit?.logPath || auditWebhook)
      ? {
        policy: new PolicyEvaluator(auditPolicy),
        backend: countedBackends([
          ...(auditLog ? [auditLog.backend] : []),
          ...(auditWebhook
            ? [openAuditWebhook(opts, auditWebhook, egress, logger, resources, metrics)]
            : []),
        ], metrics),
      }
      : undefined,
    auditLogWriter: auditLog?.writer,
    egress,
    metrics,
  };
}

/** EventRateLimit's buckets when the plugin runs (it refuses to run without its configuration). */
function eventRatesOf(admission: AdmissionSettings, clock: Clock): EventRateDecision | undefined {
  const config = admission.config.eventRateLimit;
  if (!config || !admission.enabled.includes("EventRateLimit")) return undefined;
  const limiter = new EventRateLimiter(config, clock);
  return (keys) => limiter.decide(keys);
}

/** The server's metrics, unless off; a bad `--show-hidden-metrics-for-version` is a
 * ConfigError either way. */
function serverMetrics(opts: StartOptions, logger: Logger): ServerMetrics | undefined {
  let metrics: ServerMetrics;
  try {
    metrics = new ServerMetrics({
      version: `${KUBE_MAJOR}.${KUBE_MINOR}`,
      showHiddenMetricsForVersion: opts.showHiddenMetricsForVersion,
      logger,
      enabled: opts.metrics ?? true,
      build: versionInfo(),
    });
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  return metrics.registry.enabled ? metrics : undefined;
}

/** kube's `kubernetes_feature_enabled`: every gate with its stage, 1 when on. */
function recordFeatureGates(metrics: ServerMetrics, gates: ReadonlyMap<string, boolean>): void {
  const enabled = metrics.registry.gauge({
    name: "kubernetes_feature_enabled",
    help: "This metric records the data about the stage and enablement of a k8s feature.",
    stability: "BETA",
    labels: ["name", "stage"],
  });
  for (const [name, on] of gates) enabled.child(name, featureGateStageLabel(name)).set(on ? 1 : 0);
}

/** The backends as one, counting each event handed to them (`apiserver_audit_event_total`). */
function countedBackends(
  backends: AuditBackend[],
  metrics: ServerMetrics | undefined,
): AuditBackend {
  const backend = unionBackend(backends);
  if (!metrics) return backend;
  const events = metrics.auditEvents.child();
  return {
    process(ev) {
      events.inc();
      return backend.process(ev);
    },
    close: () => backend.close(),
  };
}

/** `--egress-selector-config-file`, loaded (its deprecation warnings logged) into the dialer. */
async function openEgress(
  opts: StartOptions,
  logger: Logger,
  resources: OpenResources,
): Promise<EgressDialer> {
  const file = opts.egressSelectorConfigFile;
  const loaded = file ? await loadEgressSelectorConfig(file) : undefined;
  for (const warning of loaded?.warnings ?? []) logger.warn(`${file}: ${warning}`);
  const dialer = new EgressDialer(loaded?.selections ?? {}, { logger });
  resources.add("the egress dialer", () => dialer.close());
  return dialer;
}

/** Opens `--audit-log-path` (its directory made if missing, as kube's); closed with the
 * server. A log that cannot be opened is a configuration error naming the flag. */
function openAuditLog(
  opts: StartOptions,
  path: string,
  logger: Logger,
  resources: OpenResources,
  metrics: ServerMetrics | undefined,
): { backend: AuditBackend; writer?: AuditLogWriter } {
  const a = opts.audit ?? {};
  const log = {
    path,
    mode: a.logMode,
    maxSizeMB: a.logMaxSizeMB,
    maxBackups: a.logMaxBackups,
    maxAgeDays: a.logMaxAgeDays,
    batchBufferSize: a.logBatchBufferSize,
    logger,
    onError: auditErrors(metrics),
  };
  let opened: { backend: AuditBackend; writer?: AuditLogWriter; close(): Promise<void> };
  try {
    if ((opts.workers ?? 1) > 1) {
      // Every thread's events to the main thread's one writer.
      opened = openThreadsAuditLog(opts, log);
    } else {
      const backend = openLogBackend(log);
      opened = { backend, close: () => backend.close() };
    }
  } catch (err) {
    throw new ConfigError(`--audit-log-path: cannot open ${quote(path)}: ${osReason(err)}`);
  }
  resources.add("the audit log", () => opened.close());
  return opened;
}

/** `--audit-webhook-config-file`, read and checked; a configuration error naming the flag. */
async function readAuditWebhookConfig(path: string): Promise<WebhookConnection> {
  try {
    return await connectionFromKubeconfig(path);
  } catch (err) {
    throw new ConfigError(
      `--audit-webhook-config-file: ${err instanceof Error ? err.message : err}`,
    );
  }
}

/** The audit webhook backend for the kubeconfig's connection; closed (flushed) with the
 * server. */
function openAuditWebhook(
  opts: StartOptions,
  conn: WebhookConnection,
  egress: EgressDialer,
  logger: Logger,
  resources: OpenResources,
  metrics: ServerMetrics | undefined,
): AuditBackend {
  const a = opts.audit ?? {};
  let client: Deno.HttpClient;
  try {
    client = egress.httpClientFactory("cluster")({
      caCerts: conn.caCerts,
      ...(conn.clientCertificate ? conn.clientCertificate : {}),
    });
  } catch (err) {
    throw new ConfigError(`--audit-webhook-config-file: ${osReason(err)}`);
  }
  const backend = openWebhookBackend({
    post: httpPost(conn.url, { client, authorization: conn.authorization }),
    mode: a.webhookMode,
    bufferSize: a.webhookBatchBufferSize,
    maxBatchSize: a.webhookBatchMaxSize,
    maxWaitMs: a.webhookBatchMaxWaitMs,
    initialBackoffMs: a.webhookInitialBackoffMs,
    timeoutMs: a.webhookTimeoutMs,
    logger,
    onError: auditErrors(metrics),
  });
  resources.add("the audit webhook", async () => {
    await backend.close();
    client.close();
  });
  return backend;
}

/** Lost audit events, counted per plugin (`apiserver_audit_error_total`). */
function auditErrors(metrics: ServerMetrics | undefined) {
  return metrics &&
    ((plugin: string, events: number) => metrics.auditErrors.child(plugin).inc(events));
}
