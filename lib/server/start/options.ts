/**
 * What `startServer` takes: the settings of one server, each with its default. `platform serve`
 * fills them from flags and the configuration file (lib/config); embedders pass them directly.
 */

import type { ConnectionLimits } from "../connections.ts";
import type { Logger } from "../../api/mod.ts";
import type { DeliverLines } from "../../audit/mod.ts";
import type { EventRateDecision } from "../../admission/mod.ts";

export interface StartOptions {
  /** Where certificates, credentials and (for the file store) objects live. Default: a new
   * temporary directory, removed by `close()`. */
  dataDir?: string;
  /** @default "127.0.0.1" */
  bindAddress?: string;
  /** 0 picks a free port. @default 0 */
  securePort?: number;
  /** The storage backend by name (`storageBackendNames()` of lib/storage: `file`, `memory`,
   * or one registered with `registerStorageBackend`). @default "file" */
  storage?: string;
  /** `storage: "etcd3"`: etcd client URLs (required there). */
  etcdServers?: string[];
  /** `storage: "etcd3"`: where the server's `/registry` tree lives in etcd. @default "/registry" */
  etcdPrefix?: string;
  /** `storage: "etcd3"`: CA bundle, client certificate and key files for https:// servers. */
  /** With etcd3: the passphrase replicas share; the secrets every replica needs (CA,
   * service-account key, admin token) are kept in etcd sealed with a key derived from it. */
  token?: string;
  etcdCAFile?: string;
  etcdCertFile?: string;
  etcdKeyFile?: string;
  /** `storage: "etcd3"`: how often etcd is compacted; 0 disables. @default 300_000 */
  etcdCompactionIntervalMs?: number;
  /** How often `apiserver_storage_objects` is counted again; 0: not at all. @default 60_000 */
  storageCountPeriodMs?: number;
  /** Snapshots of the store every this often (`--snapshot-interval`); 0 or absent: none. */
  snapshotIntervalMs?: number;
  /** How many scheduled snapshot files are kept (`--snapshot-retention`). @default 5 */
  snapshotRetention?: number;
  /** Where scheduled snapshots go (`--snapshot-dir`). @default `<dataDir>/snapshots` */
  snapshotDir?: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  tlsSANs?: string[];
  tokenAuthFile?: string;
  /** `--basic-auth-file`: users who sign in with a password (HTTP basic). */
  basicAuthFile?: string;
  /** CA bundle that verifies client certificates (`--client-ca-file`); turns on clientCertAuth. */
  clientCAFile?: string;
  /** An AuthenticationConfiguration file (`--authentication-config`): JWT issuers and
   * anonymous access; re-read when it changes. */
  authenticationConfigFile?: string;
  /** The legacy `--anonymous-auth` switch, when given. @default false */
  anonymousAuth?: boolean;
  /** Discovery and OpenAPI also list each built-in group under its Kubernetes name.
   * @default true */
  kubernetesGroupNames?: boolean;
  /** An AuthorizationConfiguration file (`--authorization-config`).
   * @default system:masters as superusers, then RBAC */
  authorizationConfigFile?: string;
  /** `--enable-admission-plugins`: plugins turned on besides the default ones (kube names).
   * @default none: every plugin but EventRateLimit runs */
  enableAdmissionPlugins?: string[];
  /** `--disable-admission-plugins`: plugins turned off. @default none */
  disableAdmissionPlugins?: string[];
  /** An AdmissionConfiguration file (`--admission-control-config-file`): the plugins'
   * configurations. @default none */
  admissionControlConfigFile?: string;
  /** Auditing (`--audit-policy-file`, `--audit-log-*` and `--audit-webhook-*`): on when a
   * policy file and a backend (a log path, a webhook kubeconfig, or both) are given.
   * @default off */
  audit?: AuditOptions;
  /**
   * Client-certificate authentication on the secure port (user = CN, groups = O), verified
   * against `clientCAFile`, else the cluster CA (`<dataDir>/pki/ca.crt`). TLS then ends in a
   * node:tls front (see tls_front.ts). @default clientCAFile !== undefined
   */
  clientCertAuth?: boolean;
  /** An EncryptionConfiguration file (`--encryption-provider-config`): which resources the
   * file store encrypts at rest, with which keys. @default values are stored in clear */
  encryptionProviderConfigFile?: string;
  /** A TracingConfiguration file (`--tracing-config-file`): spans of requests exported over
   * OTLP/gRPC. @default nothing is traced */
  tracingConfigFile?: string;
  /** An EgressSelectorConfiguration file (`--egress-selector-config-file`): how webhooks
   * (`cluster`), OIDC discovery (`controlplane`) and etcd connect. @default all Direct */
  egressSelectorConfigFile?: string;
  /** @default 300000 (5 minutes) */
  historyRetentionMs?: number;
  /** @default 3145728 (3 MiB) */
  maxRequestBodyBytes?: number;
  /** @default 30000 */
  shutdownTimeoutMs?: number;
  /** `--request-timeout`: the deadline of non-watch requests. @default 60000 */
  requestTimeoutMs?: number;
  /** `--min-request-timeout`: watches without timeoutSeconds last between this and twice
   * this. @default 1800 */
  minRequestTimeoutSeconds?: number;
  /** `--max-requests-inflight` / `--max-mutating-requests-inflight`; 0: no limit.
   * @default 400 / 200 */
  maxRequestsInflight?: number;
  maxMutatingRequestsInflight?: number;
  /** `--workers`: threads that serve requests on the secure port (SO_REUSEPORT): this one,
   * which also owns the store and runs the controllers, and N-1 Deno workers, each with its own
   * request stack and a store client whose cache the store's events feed (workers.ts).
   * @default 1 */
  workers?: number;
  /** `--worker-max-heap-mb`: a worker thread whose V8 heap in use is past this many megabytes
   * is replaced by a new one and drained (workers.ts). 0 or absent: no bound. */
  workerMaxHeapMB?: number;
  /** How often each worker thread reports its heap (the bound is checked then). Embedding
   * and tests only. @default 10_000 */
  workerHeapCheckIntervalMs?: number;
  /** Set only inside a worker thread of `workers` (worker_thread.ts): the cluster-wide
   * controllers, snapshots and the `kubernetes` Service run on the main thread alone. */
  workerThread?: boolean;
  /** Set only inside a worker thread: where its audit log lines go, the main thread's one
   * writer (thread_link.ts). */
  auditLogDelivery?: DeliverLines;
  /** Set only inside a worker thread: EventRateLimit's decisions, made by the main thread's
   * buckets (thread_link.ts). */
  eventRateDecision?: EventRateDecision;
  /** How often the serving certificate is checked for renewal (a generated one 30 days
   * before it expires; `tlsCertFile` when it changes). @default 3600000 */
  certificateCheckIntervalMs?: number;
  /** The time the serving certificate's renewal is decided at and EventRateLimit's buckets
   * refill by (tests move it ahead, or hold it). @default the real time */
  clock?: () => Date;
  /** Connection limits and timeouts (`--max-connections`, …). @default see connections.ts */
  connectionLimits?: Partial<ConnectionLimits>;
  /** Write `<dataDir>/admin.kubeconfig` once listening. @default true */
  writeKubeconfig?: boolean;
  /** `--feature-gates`: explicit settings (kube's stages and defaults fill the rest). An
   * unknown or locked gate is refused; a GA or deprecated one is logged. @default none */
  featureGates?: Map<string, boolean>;
  /** `--runtime-config`: the built-in versions and resources served, with keys normalized as
   * `parseRuntimeConfig("coordination.k8s.io/v1=false")` gives them. @default stable versions
   * on, others off */
  runtimeConfig?: ReadonlyMap<string, boolean>;
  /** Controller selection in kube syntax (`--controllers`). @default ["*"] */
  controllers?: string[];
  /** `--leader-elect` and its settings: on a shared store (etcd3) the cluster-wide controllers
   * run on the one replica that holds a Lease. @default on, kube's durations */
  leaderElection?: LeaderElectionOptions;
  /** `--cluster-signing-cert-file` / `--cluster-signing-key-file`. @default the cluster CA */
  clusterSigning?: { certFile: string; keyFile: string };
  /** Per well-known signer name (`--cluster-signing-<signer>-cert-file` …). */
  clusterSigningPerSigner?: Record<string, { certFile: string; keyFile: string }>;
  /** `--cluster-signing-duration`. @default one year */
  clusterSigningDurationMs?: number;
  /** `--service-cluster-ip-range`: one CIDR or a dual-stack pair. @default "10.0.0.0/24" */
  serviceClusterIPRange?: string;
  /** `--service-node-port-range`. @default "30000-32767" */
  serviceNodePortRange?: string;
  /** `--show-hidden-metrics-for-version`: the previous minor version shows the metrics
   * hidden for being deprecated 3 minor versions ago. @default none */
  showHiddenMetricsForVersion?: string;
  /** False turns metrics off: nothing is recorded and `/metrics` is empty (the bench's
   * baseline). @default true */
  metrics?: boolean;
  logger?: Logger;
}

/** The audit flags, as `startServer` takes them. */
export interface AuditOptions {
  /** `--audit-policy-file`. */
  policyFile?: string;
  /** `--audit-log-path`: a file, or `-` for standard output. */
  logPath?: string;
  /** `--audit-log-maxage`, days (0: no limit). */
  logMaxAgeDays?: number;
  /** `--audit-log-maxbackup` (0: all kept). */
  logMaxBackups?: number;
  /** `--audit-log-maxsize`, megabytes (0: 100). */
  logMaxSizeMB?: number;
  /** `--audit-log-mode`. @default "blocking" */
  logMode?: "blocking" | "blocking-strict" | "batch";
  /** `--audit-log-batch-buffer-size`. @default 10000 */
  logBatchBufferSize?: number;
  /** `--audit-webhook-config-file`: a kubeconfig naming the webhook. */
  webhookConfigFile?: string;
  /** `--audit-webhook-mode`. @default "batch" */
  webhookMode?: "blocking" | "blocking-strict" | "batch";
  /** `--audit-webhook-batch-buffer-size`. @default 10000 */
  webhookBatchBufferSize?: number;
  /** `--audit-webhook-batch-max-size`. @default 400 */
  webhookBatchMaxSize?: number;
  /** `--audit-webhook-batch-max-wait`. @default 30000 */
  webhookBatchMaxWaitMs?: number;
  /** `--audit-webhook-initial-backoff`. @default 10000 */
  webhookInitialBackoffMs?: number;
  /** Bound of one POST to the webhook. @default 30000 */
  webhookTimeoutMs?: number;
}

/** The leader election flags (`--leader-elect*`), as `startServer` takes them. */
export interface LeaderElectionOptions {
  /** `--leader-elect`: only has an effect with `storage: "etcd3"`. @default true */
  enabled?: boolean;
  /** @default 15000 */
  leaseDurationMs?: number;
  /** @default 10000 */
  renewDeadlineMs?: number;
  /** @default 2000 */
  retryPeriodMs?: number;
  /** @default "platform-controllers" */
  resourceName?: string;
  /** @default "platform-system" */
  resourceNamespace?: string;
}
