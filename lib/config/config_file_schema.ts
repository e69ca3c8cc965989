/**
 * The configuration file's schema (zod): its shape and primitive types only, the field lists
 * derived from it, and {@link issueMessage}, which turns the first schema issue into a one-line
 * message. Meaning (durations, addresses, gate names) is checked by the same parsers the flags
 * use, in `config_layers.ts`.
 *
 * @module
 */

import { z } from "zod";
import {
  describeValue,
  fieldPath,
  formatIssue,
  type SchemaIssue,
  similarField,
  valueAt,
} from "./schema_issues.ts";
import {
  AUDIT_LOG_MODES,
  CONFIG_API_VERSION,
  CONFIG_KIND,
  LOG_LEVELS,
  PER_SIGNER_CA_FIELDS,
  STORAGE_BACKENDS,
} from "./server_config_fields.ts";

export const fileSchema = z.strictObject({
  apiVersion: z.literal(CONFIG_API_VERSION),
  kind: z.literal(CONFIG_KIND),
  dataDir: z.string().optional(),
  bindAddress: z.string().optional(),
  securePort: z.number().optional(),
  tlsCertFile: z.string().optional(),
  tlsPrivateKeyFile: z.string().optional(),
  tlsSANs: z.array(z.string()).optional(),
  tokenAuthFile: z.string().optional(),
  basicAuthFile: z.string().optional(),
  authenticationConfig: z.string().optional(),
  anonymousAuth: z.boolean().optional(),
  kubernetesGroupNames: z.boolean().optional(),
  authorizationConfig: z.string().optional(),
  enableAdmissionPlugins: z.array(z.string()).optional(),
  disableAdmissionPlugins: z.array(z.string()).optional(),
  admissionControlConfigFile: z.string().optional(),
  encryptionProviderConfig: z.string().optional(),
  clientCAFile: z.string().optional(),
  clusterSigningCertFile: z.string().optional(),
  clusterSigningKeyFile: z.string().optional(),
  clusterSigningApiserverClientCertFile: z.string().optional(),
  clusterSigningApiserverClientKeyFile: z.string().optional(),
  clusterSigningApiserverClientNodeagentCertFile: z.string().optional(),
  clusterSigningApiserverClientNodeagentKeyFile: z.string().optional(),
  clusterSigningNodeagentServingCertFile: z.string().optional(),
  clusterSigningNodeagentServingKeyFile: z.string().optional(),
  clusterSigningDuration: z.string().optional(),
  runtimeConfig: z.union([z.string(), z.record(z.string(), z.boolean())]).optional(),
  featureGates: z.record(z.string(), z.boolean()).optional(),
  storage: z.enum(STORAGE_BACKENDS).optional(),
  etcdServers: z.array(z.string()).optional(),
  etcdPrefix: z.string().optional(),
  etcdCAFile: z.string().optional(),
  etcdCertFile: z.string().optional(),
  etcdKeyFile: z.string().optional(),
  token: z.string().optional(),
  etcdCompactionInterval: z.string().optional(),
  etcdCountMetricPollPeriod: z.string().optional(),
  snapshotInterval: z.string().optional(),
  snapshotRetention: z.number().optional(),
  snapshotDir: z.string().optional(),
  historyRetention: z.string().optional(),
  controllers: z.array(z.string()).optional(),
  controllerManagerConfig: z.string().optional(),
  leaderElect: z.boolean().optional(),
  leaderElectLeaseDuration: z.string().optional(),
  leaderElectRenewDeadline: z.string().optional(),
  leaderElectRetryPeriod: z.string().optional(),
  leaderElectResourceName: z.string().optional(),
  leaderElectResourceNamespace: z.string().optional(),
  serviceClusterIPRange: z.string().optional(),
  serviceNodePortRange: z.string().optional(),
  shutdownTimeout: z.string().optional(),
  requestTimeout: z.string().optional(),
  minRequestTimeout: z.number().optional(),
  maxRequestsInflight: z.number().optional(),
  workers: z.number().optional(),
  workerMaxHeapMb: z.number().optional(),
  maxMutatingRequestsInflight: z.number().optional(),
  maxConnections: z.number().optional(),
  maxConnectionsPerClient: z.number().optional(),
  maxRequestBodyBytes: z.number().optional(),
  logLevel: z.enum(LOG_LEVELS).optional(),
  showHiddenMetricsForVersion: z.string().optional(),
  auditPolicyFile: z.string().optional(),
  auditLogPath: z.string().optional(),
  auditLogMaxage: z.number().optional(),
  auditLogMaxbackup: z.number().optional(),
  auditLogMaxsize: z.number().optional(),
  auditLogMode: z.enum(AUDIT_LOG_MODES).optional(),
  auditLogBatchBufferSize: z.number().optional(),
  egressSelectorConfigFile: z.string().optional(),
  auditWebhookConfigFile: z.string().optional(),
  auditWebhookMode: z.enum(AUDIT_LOG_MODES).optional(),
  auditWebhookBatchBufferSize: z.number().optional(),
  auditWebhookBatchMaxSize: z.number().optional(),
  auditWebhookBatchMaxWait: z.string().optional(),
  auditWebhookInitialBackoff: z.string().optional(),
  tracingConfigFile: z.string().optional(),
});

export type FileConfig = z.infer<typeof fileSchema>;
/** A field of the configuration file (besides apiVersion and kind). */
export type Field = Exclude<keyof FileConfig, "apiVersion" | "kind">;

/** The signing CA file fields: one CA for all, then one per signer. */
export const SIGNING_FILE_FIELDS = [
  "clusterSigningCertFile",
  "clusterSigningKeyFile",
  ...PER_SIGNER_CA_FIELDS.flatMap(({ cert, key }) => [cert, key]),
] as const;

/** Optional path fields: absent from a `ServerConfig` when unset. */
export const OPTIONAL_PATHS = [
  "tlsCertFile",
  "tlsPrivateKeyFile",
  "tokenAuthFile",
  "basicAuthFile",
  "authenticationConfig",
  "authorizationConfig",
  "admissionControlConfigFile",
  "encryptionProviderConfig",
  "clientCAFile",
  "auditPolicyFile",
  "auditLogPath",
  "etcdCAFile",
  "etcdCertFile",
  "etcdKeyFile",
  "snapshotDir",
  "auditWebhookConfigFile",
  "tracingConfigFile",
  "egressSelectorConfigFile",
  "controllerManagerConfig",
  ...SIGNING_FILE_FIELDS,
] as const;
export type PathField = typeof OPTIONAL_PATHS[number];

export const FIELDS = Object.keys(fileSchema.shape).filter((k) =>
  k !== "apiVersion" && k !== "kind"
);

/** One zod issue as `path: what is wrong`; only the first unknown key is named. */
export function issueMessage(issue: SchemaIssue, data: unknown): string {
  if (issue.code === "invalid_union") {
    // runtimeConfig: a string or a mapping to booleans.
    const input = valueAt(data, issue.path);
    const path = fieldPath(issue.path);
    if (input !== null && typeof input === "object" && !Array.isArray(input)) {
      for (const [k, v] of Object.entries(input)) {
        if (typeof v !== "boolean") {
          return `${fieldPath([...issue.path, k])}: expected boolean, got ${describeValue(v)}`;
        }
      }
    }
    return `${path === "" ? "" : `${path}: `}expected a string or a mapping of keys to ` +
      `booleans, got ${describeValue(input)}`;
  }
  return formatIssue(issue, data, {
    suggest: (key) => similarField(key, [...FIELDS, "apiVersion", "kind"]),
  })[0];
}
