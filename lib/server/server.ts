/**
 * The composition root: opens the store, prepares certificates and credentials, builds the
 * catalogue, the registries and the filter chain, starts controllers and serves HTTPS.
 * `startServer` is both what `platform serve` runs and what `mod.ts` exports for embedding.
 */

import type { Store } from "../storage/store.ts";
import { MemoryStore } from "../storage/memory.ts";
import { FileStore, StoreLockedError } from "../storage/file.ts";
import { tightenModes } from "../storage/permissions.ts";
import { prepareDataDir } from "./data_dir.ts";
import { EncryptionTransformer, loadEncryptionConfig } from "../encryption/mod.ts";
import {
  ensureAdminToken,
  ensureContinueKey,
  ensurePki,
  writeKubeconfig,
} from "../certificates/pki.ts";
import { loadTokenFile } from "../auth/token_file.ts";
import { tokenAuthenticator, unionAuthenticator } from "../auth/authenticator.ts";
import { clientCertificateAuthenticator } from "../auth/x509.ts";
import { createTlsFront } from "./tls_front.ts";
import {
  type ConnectionLimits,
  connectionLimits,
  ConnectionServer,
  listenTls,
} from "./connections.ts";
import { Catalogue } from "../registry/catalogue.ts";
import {
  buildAuthorizer,
  type ChainAuthorizer,
  privilegedGroupsAuthorizer,
  unionAuthorizer,
} from "../auth/authorizer_chain.ts";
import { loadAuthorizationConfig } from "../auth/authorization_config.ts";
import { AuthenticationConfigReloader } from "../auth/authentication_config_reloader.ts";
import { ConfigError } from "../config/flags.ts";
import { PolicyIndex, RBAC_GROUP, startRbac } from "../auth/rbac/mod.ts";
import { CsrController, loadSignerConfig } from "../certificates/controller.ts";
import { certificateSigningRequests } from "../registry/builtin/certificates.ts";
import { describeListenError, isControllerEnabled } from "../config/server_config.ts";
import { SERVICE_ACCOUNT_ISSUER, ServiceAccountTokens } from "../auth/service_account_tokens.ts";
import { tokenReviewer } from "../auth/token_review.ts";
import { builtinDefinitions } from "../registry/builtin/mod.ts";
import { rbacAuthorizes, rbacServed, servedDefinitions } from "./served_apis.ts";
import type { ResourceDefinition } from "../registry/definition.ts";
import { ResourceRegistry } from "../registry/generic.ts";
import {
  labelStoredNamespaces,
  NamespaceController,
  namespaceGate,
  SYSTEM_NAMESPACES,
} from "../registry/namespace_lifecycle.ts";
import { startNamespaceDefaults } from "../controllers/namespace_defaults.ts";
import { SchemaSet } from "../registry/schema.ts";
import { CatalogueOpenAPI } from "./openapi/mod.ts";
import { ServedCatalogue } from "./served_catalogue.ts";
import { CrdController } from "../apiextensions/controller.ts";
import { customResourceDefinitions } from "../registry/builtin/apiextensions.ts";
import { buildHandlerChain } from "./chain.ts";
import { RequestDeadlines } from "./filters/timeout.ts";
import type { AnonymousPolicy } from "./filters/authentication.ts";
import type { UserInfo } from "./context.ts";
import { resourceHandler } from "./handlers/resource.ts";
import { createLogger, type Logger, silentLogger } from "./log.ts";
import { renewServingCertificate } from "./serving_cert.ts";
import { router } from "./router.ts";
import { resolveFeatureGates } from "../config/feature_gates.ts";
import { setListenerNoDelay } from "./nodelay.ts";
import { streamLargeBodies } from "./respond.ts";
import { ServiceAllocator, serviceNetwork } from "../registry/builtin/service_ips.ts";
import { ServiceController } from "../registry/service_controller.ts";

export const ADMIN_USER = "platform-admin";
export const ADMIN_GROUP = "system:masters";

export interface StartOptions {
  /** Where certificates, credentials and (for the file store) objects live. Default: a new
   * temporary directory, removed by `close()`. */
  dataDir?: string;
  /** @default "127.0.0.1" */
  bindAddress?: string;
  /** 0 picks a free port. @default 0 */
  securePort?: number;
  /** @default "file" */
  storage?: "file" | "memory";
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  tlsSANs?: string[];
  tokenAuthFile?: string;
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
  /**
   * Client-certificate authentication on the secure port (user = CN, groups = O), verified
   * against `clientCAFile`, else the cluster CA (`<dataDir>/pki/ca.crt`). TLS then ends in a
   * node:tls front (see tls_front.ts). @default clientCAFile !== undefined
   */
  clientCertAuth?: boolean;
  /** An EncryptionConfiguration file (`--encryption-provider-config`): which resources the
   * file store encrypts at rest, with which keys. @default values are stored in clear */
  encryptionProviderConfigFile?: string;
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
  /** How often the serving certificate is checked for renewal (a generated one 30 days
   * before it expires; `tlsCertFile` when it changes). @default 3600000 */
  certificateCheckIntervalMs?: number;
  /** The time the serving certificate's renewal is decided at (tests move it ahead).
   * @default the real time */
  clock?: () => Date;
  /** Connection limits and timeouts (`--max-connections`, …). @default see connections.ts */
  connectionLimits?: Partial<ConnectionLimits>;
  /** Write `<dataDir>/admin.kubeconfig` once listening. @default true */
  writeKubeconfig?: boolean;
  featureGates?: Map<string, boolean>;
  /** `--runtime-config`: the built-in versions and resources served, with keys normalized as
   * `parseRuntimeConfig("coordination.k8s.io/v1=false")` gives them. @default stable versions
   * on, others off */
  runtimeConfig?: ReadonlyMap<string, boolean>;
  /** Controller selection in kube syntax (`--controllers`). @default ["*"] */
  controllers?: string[];
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
  logger?: Logger;
}

/** A running server. */
export interface ServerHandle {
  /** `https://127.0.0.1:<port>` */
  url: string;
  port: number;
  hostname: string;
  dataDir: string;
  /** PEM of the CA that verifies the serving certificate (trust it in clients). */
  caCertPem: string;
  /** The admin bearer token (user platform-admin, group system:masters). */
  adminToken: string;
  kubeconfigPath?: string;
  store: Store;
  /** Resolves when the server has stopped. */
  finished: Promise<void>;
  /** Stops accepting, ends watches, finishes in-flight requests, flushes the store. */
  close(): Promise<void>;
}

/** Starts the server and resolves once it listens and its namespaces exist. */
export async function startServer(opts: StartOptions = {}): Promise<ServerHandle> {
  const logger = opts.logger ?? createLogger("info");
  const featureGates = resolveFeatureGates(opts.featureGates ?? new Map());

  // The access configuration files are validated before anything is created or opened: a bad
  // file is a configuration error that leaves no trace.
  checkAccessConfigGates(opts, featureGates);
  const network = serviceNetwork(opts.serviceClusterIPRange, opts.serviceNodePortRange);
  const authorizationConfig = opts.authorizationConfigFile
    ? await loadAuthorizationConfig(opts.authorizationConfigFile)
    : undefined;
  // The RBAC definitions check escalation against the rules the RBAC authorizer indexes.
  const rbacPolicy = new PolicyIndex();
  // Discovery, OpenAPI and routing follow the catalogue: what is filtered out here is not
  // served at all (served_apis.ts says what cannot be, and what turns off with it).
  const servedBuiltins = (serviceAllocator?: ServiceAllocator) =>
    servedDefinitions(
      builtinDefinitions({ rbacPolicy, serviceAllocator }),
      opts.runtimeConfig ?? new Map(),
      { rbacAuthorizes: rbacAuthorizes(authorizationConfig) },
    );
  // Checked before anything is written; built again below with the store's allocator.
  let definitions = servedBuiltins();
  const staticTokens = opts.tokenAuthFile ? await loadTokenFile(opts.tokenAuthFile) : undefined;
  const encryption = opts.encryptionProviderConfigFile
    ? new EncryptionTransformer(await loadEncryptionConfig(opts.encryptionProviderConfigFile))
    : undefined;
  const authnConfig = opts.authenticationConfigFile
    ? await AuthenticationConfigReloader.start({
      path: opts.authenticationConfigFile,
      logger,
      anonymousFlagSet: opts.anonymousAuth !== undefined,
      // Service account tokens are checked by their own authenticator.
      disallowedIssuers: [SERVICE_ACCOUNT_ISSUER],
    })
    : undefined;
  if (
    authnConfig?.config.anonymous?.conditions.length &&
    !featureGates.get("AnonymousAuthConfigurableEndpoints")
  ) {
    authnConfig.stop();
    throw new ConfigError(
      `${opts.authenticationConfigFile}: anonymous.conditions: needs the ` +
        "AnonymousAuthConfigurableEndpoints feature gate, which is off",
    );
  }

  const temporary = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? await Deno.makeTempDir({ prefix: "platform-" });
  await prepareDataDir(dataDir);
  tightenModes(dataDir, logger, { entries: ["pki", "store", "admin.kubeconfig"] });
  const hostname = opts.bindAddress ?? "127.0.0.1";
  const maxBodyBytes = opts.maxRequestBodyBytes ?? 3 * 1024 * 1024;

  const pkiOptions = {
    dataDir,
    sans: opts.tlsSANs ?? [],
    bindAddress: hostname,
    tlsCertFile: opts.tlsCertFile,
    tlsPrivateKeyFile: opts.tlsPrivateKeyFile,
    renewalClock: opts.clock,
  };
  const pki = await ensurePki({ ...pkiOptions, logger });
  // Client certificates: TLS ends in a node:tls front that asks for them (tls_front.ts);
  // made before anything opens, as a bad --client-ca-file fails the start.
  const front = await createTlsFront({
    clientCertAuth: opts.clientCertAuth,
    clientCAFile: opts.clientCAFile,
    clusterCAPem: pki.caCertPem,
    certPem: pki.servingCertPem,
    keyPem: pki.servingKeyPem,
    logger,
  });
  const adminToken = await ensureAdminToken(dataDir);
  const tokens = new Map<string, UserInfo>();
  for (const [token, user] of staticTokens ?? []) tokens.set(token, user);
  tokens.set(adminToken, { username: ADMIN_USER, uid: ADMIN_USER, groups: [ADMIN_GROUP] });

  const historyRetentionMs = opts.historyRetentionMs ?? 5 * 60_000;
  const store: Store = opts.storage === "memory"
    ? new MemoryStore({ historyRetentionMs })
    : await FileStore.open({
      dir: `${dataDir}/store`,
      historyRetentionMs,
      logger,
      transformer: encryption,
    }).catch((err) => {
      // A start-up problem of the user's, said in one line (main exits 2).
      if (err instanceof StoreLockedError) {
        throw new ConfigError(`--data-dir: ${dataDir} is in use by another platform server`);
      }
      throw err;
    });

  // Continue tokens outlive a restart with the data they page through.
  const continueKey = opts.storage === "memory" ? undefined : await ensureContinueKey(dataDir);
  // Service cluster IPs and node ports are records in the store.
  const serviceAllocator = new ServiceAllocator(store, network);
  definitions = servedBuiltins(serviceAllocator);
  const catalogue = new Catalogue(definitions);
  const schemas = SchemaSet.builtin();
  const gate = namespaceGate(store);
  const registries = new Map<ResourceDefinition, ResourceRegistry>();
  const newRegistry = (def: ResourceDefinition, schemas: SchemaSet) =>
    new ResourceRegistry(def, {
      store,
      schemas,
      namespaceGate: def.namespaced ? gate : undefined,
      continueKey,
    });
  for (const def of catalogue.definitions) {
    registries.set(def, newRegistry(def, schemas));
    for (const sub of Object.values(def.computedSubresources ?? {})) {
      registries.set(sub, newRegistry(sub, schemas));
    }
  }
  const namespaces = registries.get(catalogue.lookup("", "v1", "namespaces")!)!;
  await ensureNamespaces(namespaces, logger);
  const nsController = new NamespaceController({
    store,
    namespaces,
    contents: () => catalogue.namespacedStorage().map((d) => registries.get(d)!),
    logger,
  });
  await nsController.start();
  // Custom resources are served (and their CRDs' stored state loaded) before the first
  // request; the controller keeps the catalogue and the registries map in step with CRDs.
  const crds = registries.get(customResourceDefinitions);
  const crdController = crds &&
    new CrdController({ crds, catalogue, registries, newRegistry, logger });
  await crdController?.start();
  const controllers = opts.controllers ?? ["*"];
  const rbacRegistry = (plural: string) =>
    registries.get(catalogue.lookup(RBAC_GROUP, "v1", plural)!)!;
  // RBAC runs when its resources are served; when they are not, servedDefinitions made sure
  // that no authorizer needs it.
  const rbac = rbacServed(definitions)
    ? await startRbac({
      sources: {
        roles: rbacRegistry("roles"),
        roleBindings: rbacRegistry("rolebindings"),
        clusterRoles: rbacRegistry("clusterroles"),
        clusterRoleBindings: rbacRegistry("clusterrolebindings"),
      },
      index: rbacPolicy,
      aggregation: isControllerEnabled(controllers, "clusterrole-aggregation"),
      logger,
    })
    : undefined;
  // Without an authorization configuration: system:masters may do anything, then RBAC decides.
  const authorizer: ChainAuthorizer = authorizationConfig
    ? buildAuthorizer(authorizationConfig, { rbac: () => rbac!.authorizer, logger })
    : {
      ...unionAuthorizer([privilegedGroupsAuthorizer([ADMIN_GROUP]), rbac!.authorizer]),
      close() {},
    };
  const signing = isControllerEnabled(controllers, "csrsigning");
  const csrs = registries.get(certificateSigningRequests);
  const csrController = csrs && new CsrController({
    csrs,
    signer: signing
      ? await loadSignerConfig({
        clusterCA: { certPem: pki.caCertPem, keyPem: pki.caKeyPem },
        all: opts.clusterSigning,
        perSigner: opts.clusterSigningPerSigner,
        durationMs: opts.clusterSigningDurationMs,
      })
      : undefined,
    approver: isControllerEnabled(controllers, "csrapproving") ? { authorizer } : undefined,
    logger,
  });
  await csrController?.start();
  // The default ServiceAccount and the kube-root-ca.crt ConfigMap in every namespace, each
  // while its resource is served.
  const core = (plural: string) => {
    const def = catalogue.lookup("", "v1", plural);
    return def && registries.get(def);
  };
  const namespaceDefaults = await startNamespaceDefaults({
    namespaces,
    serviceAccounts: core("serviceaccounts"),
    configMaps: core("configmaps"),
    controllers,
    caBundle: pki.servingCaPem ?? pki.caCertPem,
    logger,
  });

  let shuttingDown = false;
  const shutdownSignal = new AbortController();
  let port = 0;
  // What discovery and OpenAPI list: the catalogue, and its built-in groups under
  // Kubernetes' names too.
  const served = new ServedCatalogue(catalogue, {
    kubernetesGroupNames: opts.kubernetesGroupNames,
  });
  const openapi = new CatalogueOpenAPI(served, () => crdController?.schemas() ?? schemas);
  // Service accounts not served: none exists, so no service account token authenticates.
  const serviceAccountDef = catalogue.lookup("", "v1", "serviceaccounts");
  const serviceAccounts = serviceAccountDef && registries.get(serviceAccountDef);
  const serviceAccountTokens = await ServiceAccountTokens.open(dataDir);
  const lookupServiceAccount = async (namespace: string, name: string) => {
    const sa = await serviceAccounts?.get(namespace, name).catch(() => undefined);
    return sa?.metadata?.uid;
  };
  const authenticator = unionAuthenticator([
    // Certificates first, as kube's x509 authenticator comes before tokens.
    ...(front ? [clientCertificateAuthenticator(front.clientOf)] : []),
    tokenAuthenticator(tokens),
    serviceAccountTokens.authenticator(lookupServiceAccount),
    // JWT issuers last: each skips tokens of other issuers after one decode.
    ...(authnConfig ? [authnConfig] : []),
  ]);
  // Anonymous access: the authentication configuration's `anonymous`, else the legacy flag.
  // Without either turning it on or the file shaping it, the probe and version paths are
  // public (authentication.ts); `--anonymous-auth=false` is the default, and changes nothing.
  const anonymous: AnonymousPolicy = {
    allowed: (path) =>
      authnConfig?.config.anonymous
        ? authnConfig.anonymousAllowed(path)
        : opts.anonymousAuth === true,
    configured: () => authnConfig?.config.anonymous !== undefined || opts.anonymousAuth === true,
  };
  const deadlines = new RequestDeadlines();
  const chain = buildHandlerChain({
    authenticator,
    anonymous,
    authorizer,
    maxBodyBytes,
    requestTimeoutMs: opts.requestTimeoutMs ?? 60_000,
    deadlines,
    inFlight: {
      readOnly: opts.maxRequestsInflight ?? 400,
      mutating: opts.maxMutatingRequestsInflight ?? 200,
    },
    responseCompression: featureGates.get("APIResponseCompression")!,
    logger,
    handler: router({
      catalogue: served,
      openapi,
      health: {
        livez: [{ name: "ping", check: () => true }, { name: "log", check: () => true }],
        readyz: [
          { name: "ping", check: () => true },
          { name: "storage", check: () => store.currentRevision() >= 0 },
          { name: "shutdown", check: () => !shuttingDown },
        ],
        healthz: [{ name: "ping", check: () => true }, { name: "storage", check: () => true }],
      },
      serverAddress: () => `${hostname}:${port}`,
      resources: resourceHandler({
        catalogue,
        registries,
        maxBodyBytes,
        watchList: featureGates.get("WatchList") ?? false,
        minRequestTimeoutS: opts.minRequestTimeoutSeconds ?? 1800,
        reviews: {
          authorizer,
          authenticator,
          reviewToken: tokenReviewer(authenticator, {
            tokens: serviceAccountTokens,
            lookup: lookupServiceAccount,
          }),
          serviceAccountTokens,
        },
      }),
    }),
  });

  let server: ConnectionServer;
  const limits = connectionLimits(opts.connectionLimits);
  try {
    const handler = (req: Request) => chain(req, shutdownSignal.signal);
    const onError = (err: unknown) => {
      logger.error("unhandled request error", err);
      return new Response("internal error", { status: 500 });
    };
    // Behind the front, the HTTP server speaks plain HTTP on a loopback port, and every
    // connection comes from the front's address: the front limits connections per client.
    const listener = front
      ? Deno.listen({ hostname: "127.0.0.1", port: 0 })
      : listenTls(hostname, opts.securePort ?? 0, pki.servingCertPem, pki.servingKeyPem);
    server = new ConnectionServer({
      listener,
      handler: front ? front.handler(handler) : handler,
      onError,
      limits: front ? { ...limits, maxConnectionsPerClient: limits.maxConnections } : limits,
      logger,
    });
    if (front) port = await front.listen(hostname, opts.securePort ?? 0, server, limits);
  } catch (err) {
    deadlines.stop();
    await namespaceDefaults.stop();
    await csrController?.stop();
    authnConfig?.stop();
    authorizer.close();
    await rbac?.stop();
    await crdController?.stop();
    await nsController.stop();
    await store.close();
    throw listenError(err, hostname, opts.securePort ?? 0);
  }
  if (!front) port = server.addr.port;
  // The `kubernetes` Service points at the port just opened (while Services are served).
  const servicesDef = catalogue.lookup("", "v1", "services");
  const serviceController = servicesDef && new ServiceController({
    services: registries.get(servicesDef)!,
    allocator: serviceAllocator,
    securePort: port,
    ctx: { user: { username: ADMIN_USER, groups: [ADMIN_GROUP] } },
    logger,
  });
  await serviceController?.start();
  const stopRenewing = renewServingCertificate({
    current: { certPem: pki.servingCertPem, keyPem: pki.servingKeyPem },
    check: async () => {
      const now = await ensurePki({ ...pkiOptions, logger: silentLogger });
      namespaceDefaults.setCaBundle(now.servingCaPem ?? now.caCertPem);
      return { certPem: now.servingCertPem, keyPem: now.servingKeyPem };
    },
    onChange: async (pair) => {
      if (front) {
        front.setCertificate(pair.certPem, pair.keyPem);
        return;
      }
      await server.replaceListener(() => listenTls(hostname, port, pair.certPem, pair.keyPem));
      setListenerNoDelay(port);
    },
    intervalMs: opts.certificateCheckIntervalMs,
    logger,
  });
  const noDelay = setListenerNoDelay(server.addr.port);
  if (noDelay !== undefined) {
    logger.warn(`cannot set TCP_NODELAY on the listener (${noDelay}): streaming larger bodies`);
    streamLargeBodies(true);
  }
  const url = `https://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
  let kubeconfigPath: string | undefined;
  if (opts.writeKubeconfig ?? true) {
    kubeconfigPath = `${dataDir}/admin.kubeconfig`;
    await writeKubeconfig({
      path: kubeconfigPath,
      server: `https://${connectHost(hostname)}:${port}`,
      caCertPem: pki.servingCaPem,
      token: adminToken,
      user: ADMIN_USER,
      clusterName: "platform",
      contextName: "platform",
    });
  }

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      shuttingDown = true;
      shutdownSignal.abort();
      const timeoutMs = opts.shutdownTimeoutMs ?? 30_000;
      let timer: ReturnType<typeof setTimeout> | undefined;
      stopRenewing();
      front?.stopAccepting();
      await Promise.race([
        server.shutdown(),
        new Promise<void>((r) => timer = setTimeout(r, timeoutMs)),
      ]);
      clearTimeout(timer);
      server.closeAll();
      deadlines.stop();
      front?.terminate();
      await serviceController?.stop();
      await namespaceDefaults.stop();
      await csrController?.stop();
      authnConfig?.stop();
      authorizer.close();
      await rbac?.stop();
      await crdController?.stop();
      await nsController.stop();
      await store.close();
      if (temporary) await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    })();
    return closing;
  };
  return {
    url,
    port,
    hostname,
    dataDir,
    caCertPem: pki.servingCaPem ?? pki.caCertPem,
    adminToken,
    kubeconfigPath,
    store,
    finished: server.finished,
    close,
  };
}

/** A wildcard bind address is reached through loopback. */
function connectHost(bind: string): string {
  if (bind === "0.0.0.0" || bind === "") return "127.0.0.1";
  if (bind === "::" || bind === "[::]") return "[::1]";
  return bind.includes(":") ? `[${bind}]` : bind;
}

async function ensureNamespaces(namespaces: ResourceRegistry, logger: Logger): Promise<void> {
  const ctx = { user: { username: ADMIN_USER, groups: [ADMIN_GROUP] } };
  for (const name of SYSTEM_NAMESPACES) {
    try {
      await namespaces.get("", name);
    } catch {
      await namespaces.create("", { metadata: { name } }, ctx).catch((err) => {
        if (err?.code !== 409) throw err;
      });
    }
  }
  const labelled = await labelStoredNamespaces(namespaces);
  if (labelled.length) {
    logger.info(`namespaces given the kubernetes.io/metadata.name label: ${labelled.join(", ")}`);
  }
}

/** The access configuration files need their feature gates (on by default, as in kube). */
function checkAccessConfigGates(opts: StartOptions, gates: Map<string, boolean>): void {
  const needs = [
    [
      "--authentication-config",
      opts.authenticationConfigFile,
      "StructuredAuthenticationConfiguration",
    ],
    [
      "--authorization-config",
      opts.authorizationConfigFile,
      "StructuredAuthorizationConfiguration",
    ],
  ] as const;
  for (const [flag, file, gate] of needs) {
    if (file !== undefined && !gates.get(gate)) {
      throw new ConfigError(`${flag}: needs the ${gate} feature gate, which is off`);
    }
  }
}

/** A failed listen is the operator's to fix: one line naming the flag (main exits 2). */
function listenError(err: unknown, host: string, port: number): unknown {
  const listening = err instanceof Deno.errors.AddrInUse ||
    err instanceof Deno.errors.AddrNotAvailable || err instanceof Deno.errors.PermissionDenied;
  return listening ? new ConfigError(describeListenError(err, host, port), { cause: err }) : err;
}
