/**
 * The flag table of `platform serve`: every flag with the configuration-file field it sets,
 * the kind of value it takes, its default as `--help` shows it and its help text. Names follow
 * kube-apiserver wherever it has one. The tokenizer and `--help` formatting (`flags.ts`) and
 * the flag layer of the configuration (`config_layers.ts`) read it; nothing here parses values.
 *
 * @module
 */

import { AUDIT_LOG_MODES, LOG_LEVELS, STORAGE_BACKENDS } from "./server_config_fields.ts";

/** The value a flag takes, which decides how it is parsed and shown in `--help`. */
export type FlagKind =
  | "string"
  | "path"
  | "host"
  | "port"
  | "list"
  | "map"
  | "duration"
  | "bytes"
  | "int"
  | "enum"
  | "bool";

/** One flag of `platform serve`. */
export interface FlagSpec {
  /** Name without the leading dashes, e.g. `secure-port`. */
  name: string;
  /** The configuration-file field set by this flag; absent for `--config`. */
  field?: string;
  kind: FlagKind;
  /** The default as shown in `--help`; `undefined` means "none". */
  defaultText?: string;
  /** For `enum` flags: the accepted values. */
  values?: readonly string[];
  /** Repeatable: every occurrence adds to the value (lists and maps). */
  repeatable?: boolean;
  /** Other names it is also given by (kube's spelling, say). */
  aliases?: readonly string[];
  /** Names kube still accepts but has deprecated (its `MarkDeprecated`). */
  deprecatedAliases?: readonly DeprecatedAlias[];
  help: string;
}

/**
 * A deprecated name of a flag: it still sets the flag, logs one warning line when used
 * (`Flag --<name> has been deprecated, <message>`, pflag's words) and `--help` says so.
 */
export interface DeprecatedAlias {
  name: string;
  /** The Kubernetes minor version that deprecated it, e.g. `1.10`. */
  since: string;
  /** Kube's deprecation message, as its `--help` and warning give it. */
  message: string;
}

/** Every flag of `platform serve`, in the order `--help` lists them. */
export const FLAGS: readonly FlagSpec[] = [
  {
    name: "config",
    kind: "path",
    help: "Path of a ServerConfiguration YAML file. Flags override the file; the file " +
      "overrides defaults. Relative paths in the file resolve against its directory.",
  },
  {
    name: "data-dir",
    field: "dataDir",
    kind: "path",
    defaultText: "./data",
    help: "Directory holding the stored objects, the journal and the generated PKI.",
  },
  {
    name: "bind-address",
    field: "bindAddress",
    kind: "host",
    defaultText: "127.0.0.1",
    help: "IP address or host name to listen on for HTTPS (0.0.0.0 or :: for all interfaces).",
  },
  {
    name: "secure-port",
    field: "securePort",
    kind: "port",
    defaultText: "6443",
    help: "Port to serve HTTPS on; 0 picks a free port.",
  },
  {
    name: "tls-cert-file",
    field: "tlsCertFile",
    kind: "path",
    help: "PEM serving certificate (leaf first, then intermediates). Without it a " +
      "certificate signed by the generated cluster CA is used.",
  },
  {
    name: "tls-private-key-file",
    field: "tlsPrivateKeyFile",
    kind: "path",
    help: "PEM private key matching --tls-cert-file.",
  },
  {
    name: "tls-san",
    field: "tlsSANs",
    kind: "list",
    repeatable: true,
    help: "Extra subject alternative names (IP addresses or DNS names) for the generated " +
      "serving certificate. Repeatable and/or comma-separated.",
  },
  {
    name: "token-auth-file",
    field: "tokenAuthFile",
    kind: "path",
    help: 'Static bearer tokens, one per line as CSV: token,user,uid,"group1,group2".',
  },
  {
    name: "basic-auth-file",
    field: "basicAuthFile",
    kind: "path",
    help: "Basic credentials (off without it), one per line as CSV: " +
      'password,user,uid,"group1,group2". For clients that sign in with a user name and ' +
      "password (platform patch --username/--password).",
  },
  {
    name: "client-ca-file",
    field: "clientCAFile",
    kind: "path",
    help: "PEM CA bundle that verifies client certificates. Given, the server asks every " +
      "client for a certificate and one that verifies authenticates as user = subject CN, " +
      "groups = subject O. The cluster CA is <data-dir>/pki/ca.crt. Without it client " +
      "certificates are not asked for.",
  },
  {
    name: "authentication-config",
    field: "authenticationConfig",
    kind: "path",
    help: "AuthenticationConfiguration file (apiserver.platform.io/v1beta1): JWT issuers with " +
      "their claim mappings, and anonymous access. Validated at start; re-read when it " +
      "changes (an invalid new version is logged and the old one stays in force).",
  },
  {
    name: "kubernetes-group-names",
    field: "kubernetesGroupNames",
    kind: "bool",
    defaultText: "true",
    help: "Discovery and OpenAPI also list each built-in group under its Kubernetes name " +
      "(rbac.authorization.k8s.io beside rbac.authorization.platform.io), so manifests and " +
      "clients written for Kubernetes work unchanged. Requests work under either name.",
  },
  {
    name: "anonymous-auth",
    field: "anonymousAuth",
    kind: "bool",
    defaultText: "false",
    help: "Serve requests without credentials as user system:anonymous (group " +
      "system:unauthenticated), for the authorizers to judge. Not together with an " +
      "authentication configuration that has an anonymous section.",
  },
  {
    name: "authorization-config",
    field: "authorizationConfig",
    kind: "path",
    defaultText: "RBAC, with system:masters as superusers",
    help: "AuthorizationConfiguration file (apiserver.platform.io/v1beta1): the ordered " +
      "authorizers (RBAC, Webhook, AlwaysAllow, AlwaysDeny).",
  },
  {
    name: "enable-admission-plugins",
    field: "enableAdmissionPlugins",
    kind: "list",
    repeatable: true,
    help: "Admission plugins to turn on besides those on by default, comma-separated. Plugins: " +
      "NamespaceLifecycle, EventRateLimit (off by default), CertificateApproval, " +
      "CertificateSigning, MutatingAdmissionWebhook, ValidatingAdmissionPolicy, " +
      "ValidatingAdmissionWebhook. Enabled plugins run in this order, whatever the order given.",
  },
  {
    name: "disable-admission-plugins",
    field: "disableAdmissionPlugins",
    kind: "list",
    repeatable: true,
    help: "Admission plugins to turn off, comma-separated (a plugin is not both enabled and " +
      "disabled).",
  },
  {
    name: "admission-control-config-file",
    field: "admissionControlConfigFile",
    kind: "path",
    help: "AdmissionConfiguration file (apiserver.config.platform.io/v1): the configuration of " +
      "each admission plugin (EventRateLimit's limits, the webhooks' kubeconfig), inline or in " +
      "a file beside it.",
  },
  {
    name: "cluster-signing-cert-file",
    field: "clusterSigningCertFile",
    kind: "path",
    defaultText: "<data-dir>/pki/ca.crt",
    help: "PEM CA certificate (then its intermediates) with which the built-in CSR signer " +
      "issues certificates for every well-known signer. With --cluster-signing-key-file.",
  },
  {
    name: "cluster-signing-key-file",
    field: "clusterSigningKeyFile",
    kind: "path",
    defaultText: "<data-dir>/pki/ca.key",
    help: "PEM private key of --cluster-signing-cert-file.",
  },
  ...perSignerFlags("apiserver-client", "ApiserverClient"),
  ...perSignerFlags("apiserver-client-nodeagent", "ApiserverClientNodeagent"),
  ...perSignerFlags("nodeagent-serving", "NodeagentServing"),
  {
    name: "cluster-signing-duration",
    field: "clusterSigningDuration",
    kind: "duration",
    defaultText: "8760h",
    help: "Longest lifetime of a certificate the built-in signer issues; a request's " +
      "spec.expirationSeconds may ask for less.",
  },
  {
    name: "runtime-config",
    field: "runtimeConfig",
    kind: "map",
    repeatable: true,
    help: "Enable or disable built-in API versions and resources: key[=true|false],… with " +
      "keys api/all, api/ga, api/beta, api/alpha, v1 (core), group/version, " +
      "group/version/resource (a built-in group in either spelling, coordination.k8s.io = " +
      "coordination.platform.io). What is off leaves discovery, OpenAPI and routing; " +
      "v1/namespaces, and RBAC's resources while RBAC authorizes, cannot be turned off.",
  },
  {
    name: "feature-gates",
    field: "featureGates",
    kind: "map",
    repeatable: true,
    help: "Feature gates: Name=true|false,… (see the list below).",
  },
  {
    name: "storage",
    field: "storage",
    kind: "enum",
    values: STORAGE_BACKENDS,
    aliases: ["storage-backend"],
    defaultText: "file",
    help: "Storage backend: file (durable, under --data-dir), memory (lost on exit) or " +
      "etcd3 (etcd v3 at --etcd-servers, shared by every server on the same --etcd-prefix).",
  },
  {
    name: "etcd-servers",
    field: "etcdServers",
    kind: "list",
    repeatable: true,
    help: "etcd client URLs for --storage=etcd3 (http://host:port or https://host:port), " +
      "comma-separated; the first that answers is used.",
  },
  {
    name: "etcd-prefix",
    field: "etcdPrefix",
    kind: "string",
    defaultText: "/registry",
    help: "Where the server's /registry tree lives in etcd: /registry keeps the keys as the " +
      "server names them; /a/registry puts them under /a; another prefix P gives P/registry/….",
  },
  {
    name: "etcd-cafile",
    field: "etcdCAFile",
    kind: "path",
    help: "CA bundle that verifies https:// etcd servers.",
  },
  {
    name: "etcd-certfile",
    field: "etcdCertFile",
    kind: "path",
    help: "Client certificate presented to etcd (with --etcd-keyfile).",
  },
  {
    name: "etcd-keyfile",
    field: "etcdKeyFile",
    kind: "path",
    help: "Private key of --etcd-certfile.",
  },
  {
    name: "token",
    field: "token",
    kind: "string",
    help: "etcd3 only: a passphrase every replica is given. The first replica keeps its CA, " +
      "service-account key and admin token in etcd sealed with it; the others take theirs " +
      "from there. Put it in the --config file to keep it off the command line.",
  },

  {
    name: "etcd-compaction-interval",
    field: "etcdCompactionInterval",
    kind: "duration",
    defaultText: "5m",
    help: "How often etcd's history is compacted (to the revision of the previous round); 0 " +
      "disables.",
  },
  {
    name: "etcd-count-metric-poll-period",
    field: "etcdCountMetricPollPeriod",
    kind: "duration",
    defaultText: "1m",
    help: "How often the stored objects per resource (apiserver_storage_objects on /metrics) " +
      "are counted again; 0 turns that metric off. Any backend.",
  },
  {
    name: "snapshot-interval",
    field: "snapshotInterval",
    kind: "duration",
    defaultText: "0",
    help: "Take a snapshot of the store this often (as `platform storage snapshot` does, " +
      "without stopping writes) into --snapshot-dir; 0 takes none.",
  },
  {
    name: "snapshot-retention",
    field: "snapshotRetention",
    kind: "int",
    defaultText: "5",
    help: "How many scheduled snapshots are kept; older ones are deleted.",
  },
  {
    name: "snapshot-dir",
    field: "snapshotDir",
    kind: "path",
    defaultText: "<data-dir>/snapshots",
    help: "Directory of the scheduled snapshots (made 0700, files 0600).",
  },
  {
    name: "encryption-provider-config",
    field: "encryptionProviderConfig",
    kind: "path",
    defaultText: "none: values are stored in clear",
    help: "EncryptionConfiguration file (apiserver.config.platform.io/v1): the resources the " +
      "file and etcd3 stores encrypt at rest (aescbc, aesgcm, secretbox, identity) and their keys.",
  },
  {
    name: "history-retention",
    field: "historyRetention",
    kind: "duration",
    defaultText: "5m",
    help: "How long past revisions stay available to watches and consistent lists.",
  },
  {
    name: "controllers",
    field: "controllers",
    kind: "list",
    repeatable: true,
    defaultText: "*",
    help: "Controllers to run: '*' runs every one, 'name' enables one, '-name' disables " +
      "one, e.g. '*,-csrsigning'. Names: clusterrole-aggregation, csrapproving, csrsigning, " +
      "root-ca-cert-publisher, serviceaccount.",
  },
  {
    name: "controller-manager-config",
    field: "controllerManagerConfig",
    kind: "path",
    help: "A KubeControllerManagerConfiguration file (controllermanager.config.platform.io/" +
      "v1alpha1 or kubecontrollermanager.config.k8s.io/v1alpha1). Its generic.controllers, " +
      "generic.leaderElection and csrSigningController.clusterSigningDuration apply where no " +
      "flag and no --config field sets the same setting.",
  },
  {
    name: "leader-elect",
    field: "leaderElect",
    kind: "bool",
    defaultText: "true",
    help: "Run the cluster-wide controllers (CSR approving and signing, RBAC aggregation, " +
      "namespace finalization and defaults, policy status, the kubernetes Service) on one " +
      "replica at a time, elected through a coordination Lease. Only with --storage=etcd3: " +
      "the file and memory stores serve one process, which always runs them.",
  },
  {
    name: "leader-elect-lease-duration",
    field: "leaderElectLeaseDuration",
    kind: "duration",
    defaultText: "15s",
    help: "How long the other replicas wait, after they last saw the leader renew its Lease, " +
      "before one of them takes over.",
  },
  {
    name: "leader-elect-renew-deadline",
    field: "leaderElectRenewDeadline",
    kind: "duration",
    defaultText: "10s",
    help: "How long the leader keeps trying to renew its Lease before it stops its " +
      "controllers; shorter than --leader-elect-lease-duration.",
  },
  {
    name: "leader-elect-retry-period",
    field: "leaderElectRetryPeriod",
    kind: "duration",
    defaultText: "2s",
    help: "How often the leader renews its Lease and the other replicas try to acquire it.",
  },
  {
    name: "leader-elect-resource-name",
    field: "leaderElectResourceName",
    kind: "string",
    defaultText: "platform-controllers",
    help: "Name of the Lease the replicas elect their leader through.",
  },
  {
    name: "leader-elect-resource-namespace",
    field: "leaderElectResourceNamespace",
    kind: "string",
    defaultText: "platform-system",
    help: "Namespace of that Lease.",
  },
  {
    name: "service-cluster-ip-range",
    field: "serviceClusterIPRange",
    kind: "string",
    defaultText: "10.0.0.0/24",
    help: "CIDR the cluster IPs of Services are allocated from; an IPv4 and an IPv6 CIDR " +
      "separated by a comma for dual-stack (the first is the primary family). Its first " +
      "address is the kubernetes Service's.",
  },
  {
    name: "service-node-port-range",
    field: "serviceNodePortRange",
    kind: "string",
    defaultText: "30000-32767",
    help: "Port range the node ports of NodePort and LoadBalancer Services are allocated from.",
  },
  {
    name: "shutdown-timeout",
    field: "shutdownTimeout",
    kind: "duration",
    defaultText: "30s",
    help: "How long a graceful shutdown waits for in-flight requests.",
  },
  {
    name: "request-timeout",
    field: "requestTimeout",
    kind: "duration",
    defaultText: "60s",
    help: "Default deadline of a non-watch request.",
  },
  {
    name: "min-request-timeout",
    field: "minRequestTimeout",
    kind: "int",
    defaultText: "1800",
    help: "Seconds a watch without timeoutSeconds lasts at least (it ends at a random time " +
      "between this and twice this, as kube's do).",
  },
  {
    name: "max-requests-inflight",
    field: "maxRequestsInflight",
    kind: "int",
    defaultText: "400",
    help: "Non-mutating requests (watches aside) served at once; more get 429. 0: no limit.",
  },
  {
    name: "workers",
    field: "workers",
    kind: "int",
    defaultText: "1",
    help: "Threads that serve requests on the secure port (reusePort): the main thread, which " +
      "owns the store and runs the controllers, and N-1 workers. 1: one thread.",
  },
  {
    name: "worker-max-heap-mb",
    field: "workerMaxHeapMb",
    kind: "int",
    defaultText: "0",
    help: "Megabytes of V8 heap a --workers worker thread may use; past it the worker is " +
      "replaced by a new one and drained. 0: no bound.",
  },
  {
    name: "max-mutating-requests-inflight",
    field: "maxMutatingRequestsInflight",
    kind: "int",
    defaultText: "200",
    help: "Mutating requests served at once; more get 429. 0: no limit.",
  },
  {
    name: "max-connections",
    field: "maxConnections",
    kind: "int",
    defaultText: "the open-file limit less 128",
    help: "Open client connections at most; more are closed at once. 0: the default.",
  },
  {
    name: "max-connections-per-client",
    field: "maxConnectionsPerClient",
    kind: "int",
    defaultText: "half of --max-connections",
    help: "Open connections from one client address at most. 0: the default.",
  },
  {
    name: "max-request-body-bytes",
    field: "maxRequestBodyBytes",
    kind: "bytes",
    defaultText: "3145728",
    help: "Largest accepted request body, in bytes.",
  },
  {
    name: "log-level",
    field: "logLevel",
    kind: "enum",
    values: LOG_LEVELS,
    defaultText: "info",
    help: "Least severe log level written.",
  },
  {
    name: "show-hidden-metrics-for-version",
    field: "showHiddenMetricsForVersion",
    kind: "string",
    help: "The previous minor version (e.g. 1.31) to show the metrics hidden for being " +
      "deprecated 3 minor versions ago on /metrics again; no other version is accepted.",
  },
  {
    name: "audit-policy-file",
    field: "auditPolicyFile",
    kind: "path",
    help: "Audit Policy file (audit.platform.io/v1 or audit.k8s.io/v1): which requests are " +
      "audited at which level. Without it (or without a backend) nothing is audited.",
  },
  {
    name: "audit-log-path",
    field: "auditLogPath",
    kind: "path",
    help: "File audit events are appended to as JSON lines (created 0600); - for standard " +
      "output.",
  },
  {
    name: "audit-log-maxage",
    field: "auditLogMaxage",
    kind: "int",
    defaultText: "0",
    help: "Days a rotated audit log is kept, by the time in its name. 0: no limit.",
  },
  {
    name: "audit-log-maxbackup",
    field: "auditLogMaxbackup",
    kind: "int",
    defaultText: "0",
    help: "Rotated audit logs kept. 0: all.",
  },
  {
    name: "audit-log-maxsize",
    field: "auditLogMaxsize",
    kind: "int",
    defaultText: "0",
    help: "Megabytes the audit log grows to before it is rotated (renamed with the time). " +
      "0: 100.",
  },
  {
    name: "audit-log-mode",
    field: "auditLogMode",
    kind: "enum",
    values: AUDIT_LOG_MODES,
    defaultText: "blocking",
    help: "blocking: each event is written before the request goes on; blocking-strict: " +
      "also, a request whose first event cannot be written fails; batch: events are queued " +
      "and written in the background, dropped (and counted) when the buffer is full.",
  },
  {
    name: "audit-log-batch-buffer-size",
    field: "auditLogBatchBufferSize",
    kind: "int",
    defaultText: "10000",
    help: "Events the batch mode queues at most.",
  },
  {
    name: "egress-selector-config-file",
    field: "egressSelectorConfigFile",
    kind: "path",
    help: "EgressSelectorConfiguration: how outbound connections are made, per selection " +
      "(cluster: webhooks; controlplane: OIDC discovery; etcd): Direct, or through an HTTP " +
      "CONNECT proxy over tcp or a Unix socket.",
  },
  {
    name: "audit-webhook-config-file",
    field: "auditWebhookConfigFile",
    kind: "path",
    help: "Kubeconfig of the audit webhook: the cluster's server (the URL EventList batches " +
      "are POSTed to) and CA, the user's client certificate and key or token.",
  },
  {
    name: "audit-webhook-mode",
    field: "auditWebhookMode",
    kind: "enum",
    values: AUDIT_LOG_MODES,
    defaultText: "batch",
    help: "batch: events are sent in batches in the background, dropped (and counted) when " +
      "the buffer is full; blocking: each event is sent before the request goes on; " +
      "blocking-strict: also, a request whose first event cannot be sent fails.",
  },
  {
    name: "audit-webhook-batch-buffer-size",
    field: "auditWebhookBatchBufferSize",
    kind: "int",
    defaultText: "10000",
    help: "Events the webhook's batch mode queues at most.",
  },
  {
    name: "audit-webhook-batch-max-size",
    field: "auditWebhookBatchMaxSize",
    kind: "int",
    defaultText: "400",
    help: "Events in one batch at most; a batch is also split so that each POST stays " +
      "under 3 MiB.",
  },
  {
    name: "audit-webhook-batch-max-wait",
    field: "auditWebhookBatchMaxWait",
    kind: "duration",
    defaultText: "30s",
    help: "How long an event waits for its batch to fill before the batch is sent.",
  },
  {
    name: "audit-webhook-initial-backoff",
    field: "auditWebhookInitialBackoff",
    kind: "duration",
    defaultText: "10s",
    deprecatedAliases: [{
      name: "audit-webhook-batch-initial-backoff",
      since: "1.10",
      message: "Deprecated, use --audit-webhook-initial-backoff instead.",
    }],
    help: "Wait before a failed batch is sent again, doubled on each of 3 retries; then the " +
      "batch is dropped.",
  },
  {
    name: "tracing-config-file",
    field: "tracingConfigFile",
    kind: "path",
    help: "TracingConfiguration file (apiserver.platform.io/v1beta1 or kube's " +
      "apiserver.config.k8s.io): the OTLP/gRPC collector endpoint and samplingRatePerMillion; " +
      "absent: nothing is traced.",
  },
];

/**
 * The `--cluster-signing-<signer>-{cert,key}-file` pair of one well-known signer
 * (`platform.io/<signer>`): fields `clusterSigning<Field>CertFile` / `…KeyFile`.
 */
function perSignerFlags(signer: string, field: string): FlagSpec[] {
  return [
    {
      name: `cluster-signing-${signer}-cert-file`,
      field: `clusterSigning${field}CertFile`,
      kind: "path",
      defaultText: "the cluster CA",
      help: `PEM CA certificate with which the built-in signer issues certificates for ` +
        `platform.io/${signer} requests (with its key file). Not together with ` +
        `--cluster-signing-cert-file and --cluster-signing-key-file.`,
    },
    {
      name: `cluster-signing-${signer}-key-file`,
      field: `clusterSigning${field}KeyFile`,
      kind: "path",
      defaultText: "the cluster CA key",
      help: `PEM private key of --cluster-signing-${signer}-cert-file.`,
    },
  ];
}
