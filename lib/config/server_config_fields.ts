/**
 * The fields of the server configuration: the validated {@link ServerConfig} every other part
 * of the server reads, the values each field takes when nothing sets it ({@link DEFAULTS}), the
 * accepted storage backends and log levels, the file's `apiVersion` and `kind`, and the signing
 * CA fields with {@link clusterSigningFiles}, which shapes them for `startServer`.
 *
 * @module
 */

import {
  SIGNER_APISERVER_CLIENT,
  SIGNER_APISERVER_CLIENT_NODEAGENT,
  SIGNER_NODEAGENT_SERVING,
} from "../api/mod.ts";
import {
  DEFAULT_SERVICE_CLUSTER_IP_RANGE,
  DEFAULT_SERVICE_NODE_PORT_RANGE,
} from "./service_network.ts";

/** The `apiVersion` of a configuration file. */
export const CONFIG_API_VERSION = "platform.io/v1alpha1";
/** The `kind` of a configuration file. */
export const CONFIG_KIND = "ServerConfiguration";

/**
 * The storage backends `--storage` and the file's `storage` field accept. The configuration
 * does not import lib/storage (a folder of its own layer): a new backend adds its name here and
 * registers itself in lib/storage (`registerStorageBackend`), which opens it by this name.
 */
export const STORAGE_BACKENDS = ["file", "memory", "etcd3"] as const;
export type StorageBackend = typeof STORAGE_BACKENDS[number];
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = typeof LOG_LEVELS[number];
/** `--audit-log-mode`. */
export const AUDIT_LOG_MODES = ["blocking", "blocking-strict", "batch"] as const;
export type AuditLogMode = typeof AUDIT_LOG_MODES[number];

/**
 * The validated server configuration. Field names are the configuration file's; paths are
 * absolute and durations are milliseconds.
 */
export interface ServerConfig {
  /** The `--config` file, when one was given. */
  configFile?: string;
  dataDir: string;
  bindAddress: string;
  /** 0 = a free port. */
  securePort: number;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** Extra serving-certificate names, normalized (IPs canonical, DNS names lower-case). */
  tlsSANs: string[];
  tokenAuthFile?: string;
  /** Basic credentials (`--basic-auth-file`); off without it. */
  basicAuthFile?: string;
  /** AuthenticationConfiguration file (JWT issuers, anonymous access). */
  authenticationConfig?: string;
  /** The legacy anonymous switch, when set by a flag or the file (else anonymous is off, or
   * what the authentication configuration says). */
  anonymousAuth?: boolean;
  /** AuthorizationConfiguration file; absent: RBAC with system:masters as superusers. */
  authorizationConfig?: string;
  /** Admission plugins turned on besides the default ones (kube names, checked). */
  enableAdmissionPlugins: string[];
  /** Admission plugins turned off (kube names, checked; none also in the enabled list). */
  disableAdmissionPlugins: string[];
  /** AdmissionConfiguration file: the plugins' configurations. */
  admissionControlConfigFile?: string;
  /** Discovery and OpenAPI also list each built-in group under its Kubernetes name. */
  kubernetesGroupNames: boolean;
  /** EncryptionConfiguration file; absent: values are stored in clear. */
  encryptionProviderConfig?: string;
  /** CA bundle verifying client certificates; given, client-certificate authentication is on. */
  clientCAFile?: string;
  /** One CA for every well-known signer (both or neither; default: the cluster CA). */
  clusterSigningCertFile?: string;
  clusterSigningKeyFile?: string;
  /** One CA per well-known signer (each pair both or neither; not with the two above). */
  clusterSigningApiserverClientCertFile?: string;
  clusterSigningApiserverClientKeyFile?: string;
  clusterSigningApiserverClientNodeagentCertFile?: string;
  clusterSigningApiserverClientNodeagentKeyFile?: string;
  clusterSigningNodeagentServingCertFile?: string;
  clusterSigningNodeagentServingKeyFile?: string;
  /** Longest lifetime of an issued certificate. Milliseconds. */
  clusterSigningDuration: number;
  /** Explicit runtime-config settings with normalized keys; see `isEnabled()`. */
  runtimeConfig: Map<string, boolean>;
  /** Explicit feature gate settings, checked (known, not locked); `resolveFeatureGates()`
   * applies the defaults and AllAlpha/AllBeta. */
  featureGates: Map<string, boolean>;
  storage: StorageBackend;
  /** etcd client URLs (`--storage=etcd3`). */
  etcdServers: string[];
  /** Where the server's `/registry` tree lives in etcd. */
  etcdPrefix: string;
  etcdCAFile?: string;
  etcdCertFile?: string;
  etcdKeyFile?: string;
  /** etcd3: the passphrase replicas share (their common secrets are sealed with it in etcd). */
  token?: string;
  /** Milliseconds; 0 disables. */
  etcdCompactionInterval: number;
  /** Milliseconds between counts of the stored objects (`apiserver_storage_objects`); 0: none. */
  etcdCountMetricPollPeriod: number;
  /** Milliseconds between scheduled snapshots; 0: none. */
  snapshotInterval: number;
  /** Scheduled snapshot files kept. */
  snapshotRetention: number;
  /** Where scheduled snapshots go; absent: `<dataDir>/snapshots`. */
  snapshotDir?: string;
  /** Milliseconds. */
  historyRetention: number;
  /** Controller selection in kube syntax, e.g. `["*", "-csrsigning"]`. */
  controllers: string[];
  /** Elect one replica to run the cluster-wide controllers (etcd3 only). */
  leaderElect: boolean;
  /** Milliseconds. */
  leaderElectLeaseDuration: number;
  /** Milliseconds; shorter than the lease duration. */
  leaderElectRenewDeadline: number;
  /** Milliseconds; 1.2 times it is shorter than the renew deadline. */
  leaderElectRetryPeriod: number;
  /** The Lease's name. */
  leaderElectResourceName: string;
  /** The Lease's namespace. */
  leaderElectResourceNamespace: string;
  /** Canonical CIDRs, comma-separated (one, or one per IP family). */
  serviceClusterIPRange: string;
  /** `min-max`. */
  serviceNodePortRange: string;
  /** Milliseconds. */
  shutdownTimeout: number;
  /** Milliseconds. */
  requestTimeout: number;
  /** Seconds. */
  minRequestTimeout: number;
  /** 0: no limit. */
  maxRequestsInflight: number;
  /** Threads serving requests (the main thread and N-1 workers). */
  workers: number;
  /** Megabytes of V8 heap a worker thread may use before it is replaced; 0: no bound. */
  workerMaxHeapMb: number;
  /** 0: no limit. */
  maxMutatingRequestsInflight: number;
  /** 0: derived from the open-file limit. */
  maxConnections: number;
  /** 0: half of maxConnections. */
  maxConnectionsPerClient: number;
  maxRequestBodyBytes: number;
  logLevel: LogLevel;
  /** `major.minor`: the previous minor version, which shows hidden metrics again. */
  showHiddenMetricsForVersion?: string;
  /** Audit Policy file; absent: no auditing. */
  auditPolicyFile?: string;
  /** Where audit events are written: a file, or `-` for standard output; absent: nowhere. */
  auditLogPath?: string;
  /** Days a rotated audit log is kept (0: no limit). */
  auditLogMaxage: number;
  /** Rotated audit logs kept (0: all). */
  auditLogMaxbackup: number;
  /** Megabytes an audit log grows to before it is rotated (0: 100). */
  auditLogMaxsize: number;
  auditLogMode: AuditLogMode;
  /** Events the batch mode queues at most. */
  auditLogBatchBufferSize: number;
  /** TracingConfiguration file; absent: nothing is traced. */
  tracingConfigFile?: string;
  /** A KubeControllerManagerConfiguration file whose controller selection, leader election
   * and CSR signing duration apply (below flags and the `--config` file). */
  controllerManagerConfig?: string;
  /** An EgressSelectorConfiguration file; absent: every outbound call is direct. */
  egressSelectorConfigFile?: string;
  /** A kubeconfig naming the audit webhook; absent: no webhook. */
  auditWebhookConfigFile?: string;
  auditWebhookMode: AuditLogMode;
  /** Events the webhook's batch mode queues at most. */
  auditWebhookBatchBufferSize: number;
  /** Events in one batch at most. */
  auditWebhookBatchMaxSize: number;
  /** Milliseconds an event waits for its batch at most. */
  auditWebhookBatchMaxWait: number;
  /** Milliseconds before a failed batch is sent again (doubling each time). */
  auditWebhookInitialBackoff: number;
}

/** The values every field takes when neither a flag nor the file sets it. */
export const DEFAULTS = {
  dataDir: "./data",
  bindAddress: "127.0.0.1",
  securePort: 6443,
  kubernetesGroupNames: true,
  storage: "file" as StorageBackend,
  etcdPrefix: "/registry",
  etcdCompactionInterval: 5 * 60_000,
  etcdCountMetricPollPeriod: 60_000,
  snapshotInterval: 0,
  snapshotRetention: 5,
  historyRetention: 5 * 60_000,
  controllers: ["*"],
  leaderElect: true,
  leaderElectLeaseDuration: 15_000,
  leaderElectRenewDeadline: 10_000,
  leaderElectRetryPeriod: 2_000,
  leaderElectResourceName: "platform-controllers",
  leaderElectResourceNamespace: "platform-system",
  serviceClusterIPRange: DEFAULT_SERVICE_CLUSTER_IP_RANGE,
  serviceNodePortRange: DEFAULT_SERVICE_NODE_PORT_RANGE,
  clusterSigningDuration: 8760 * 3_600_000,
  shutdownTimeout: 30_000,
  requestTimeout: 60_000,
  minRequestTimeout: 1800,
  maxRequestsInflight: 400,
  workers: 1,
  workerMaxHeapMb: 0,
  maxMutatingRequestsInflight: 200,
  maxConnections: 0,
  maxConnectionsPerClient: 0,
  maxRequestBodyBytes: 3 * 1024 * 1024,
  logLevel: "info" as LogLevel,
  auditLogMaxage: 0,
  auditLogMaxbackup: 0,
  auditLogMaxsize: 0,
  auditLogMode: "blocking" as AuditLogMode,
  auditLogBatchBufferSize: 10_000,
  auditWebhookMode: "batch" as AuditLogMode,
  auditWebhookBatchBufferSize: 10_000,
  auditWebhookBatchMaxSize: 400,
  auditWebhookBatchMaxWait: 30_000,
  auditWebhookInitialBackoff: 10_000,
} as const;

/** The per-signer CA fields of the configuration, with the well-known signer each is for. */
export const PER_SIGNER_CA_FIELDS = [
  {
    signer: SIGNER_APISERVER_CLIENT,
    cert: "clusterSigningApiserverClientCertFile",
    key: "clusterSigningApiserverClientKeyFile",
  },
  {
    signer: SIGNER_APISERVER_CLIENT_NODEAGENT,
    cert: "clusterSigningApiserverClientNodeagentCertFile",
    key: "clusterSigningApiserverClientNodeagentKeyFile",
  },
  {
    signer: SIGNER_NODEAGENT_SERVING,
    cert: "clusterSigningNodeagentServingCertFile",
    key: "clusterSigningNodeagentServingKeyFile",
  },
] as const;

/** A CA given as certificate and key files. */
export interface SigningFiles {
  certFile: string;
  keyFile: string;
}

/**
 * The signing CAs a configuration names, shaped as `startServer` takes them: `clusterSigning`
 * (one CA for every signer) or `clusterSigningPerSigner` (by signer name), or neither (the
 * cluster CA signs).
 */
export function clusterSigningFiles(cfg: ServerConfig): {
  clusterSigning?: SigningFiles;
  clusterSigningPerSigner?: Record<string, SigningFiles>;
} {
  if (cfg.clusterSigningCertFile !== undefined && cfg.clusterSigningKeyFile !== undefined) {
    return {
      clusterSigning: { certFile: cfg.clusterSigningCertFile, keyFile: cfg.clusterSigningKeyFile },
    };
  }
  const perSigner: Record<string, SigningFiles> = {};
  for (const { signer, cert, key } of PER_SIGNER_CA_FIELDS) {
    const certFile = cfg[cert];
    const keyFile = cfg[key];
    if (certFile !== undefined && keyFile !== undefined) perSigner[signer] = { certFile, keyFile };
  }
  return Object.keys(perSigner).length > 0 ? { clusterSigningPerSigner: perSigner } : {};
}
