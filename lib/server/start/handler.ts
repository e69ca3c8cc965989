/**
 * Start-up step 7: the request handler. Authentication (client certificates, bearer tokens,
 * service account tokens, JWT issuers) and anonymous access, what discovery and OpenAPI list,
 * the router and the filter chain around it.
 */

import {
  basicAuthenticator,
  clientCertificateAuthenticator,
  ServiceAccountTokens,
  tokenAuthenticator,
  tokenReviewer,
  unionAuthenticator,
} from "../../auth/mod.ts";
import { buildHandlerChain } from "../chain.ts";
import type { Auditing } from "../filters/audit.ts";
import type { AnonymousPolicy } from "../filters/authentication.ts";
import type { SharedSeats } from "../filters/inflight.ts";
import { RequestDeadlines } from "../filters/timeout.ts";
import { resourceHandler } from "../handlers/resource.ts";
import type { WatchPacer } from "../handlers/watch_pacing.ts";
import type { Logger } from "../../api/mod.ts";
import { CatalogueOpenAPI } from "../openapi/mod.ts";
import type { BodyWriting } from "../respond.ts";
import { router } from "../router.ts";
import { ServedCatalogue } from "../served_catalogue.ts";
import type { Configuration } from "./configuration.ts";
import type { Controllers } from "./controllers.ts";
import type { Credentials } from "./credentials.ts";
import type { OpenResources } from "./open_resources.ts";
import type { StartOptions } from "./options.ts";
import type { ApiRegistries } from "./registries.ts";
import { countStoredObjects, levelCounter } from "./metrics.ts";
import { scrapeThreads } from "./thread_link.ts";
import { snapshotHandler } from "../snapshot_endpoint.ts";

/** A server's request handler: the whole chain, for requests on connections it accepts. */
export type RequestHandler = (
  req: Request,
  signal: AbortSignal,
  remoteAddr?: string,
) => Promise<Response>;

/** What the handler is built from. */
export interface HandlerParts {
  dataDir: string;
  config: Configuration;
  credentials: Credentials;
  api: ApiRegistries;
  controllers: Controllers;
  /** `host:port` as clients reach the server (port 0 until it listens). */
  serverAddress: () => string;
  /** True once the server shuts down: readiness fails. */
  shuttingDown: () => boolean;
  /** The server's own: watch pacing and how bodies are sent. */
  watchPacer: WatchPacer;
  bodies: BodyWriting;
  /** With `--workers`: the in-flight seats every thread counts in. */
  seats?: SharedSeats;
}

/** Builds the handler chain; its request deadlines are registered in `resources`. */
export async function buildRequestHandler(
  opts: StartOptions,
  parts: HandlerParts,
  logger: Logger,
  resources: OpenResources,
): Promise<RequestHandler> {
  const { config, credentials, api, controllers } = parts;
  const { front } = credentials;
  const authnConfig = config.authentication;
  const maxBodyBytes = opts.maxRequestBodyBytes ?? 3 * 1024 * 1024;
  // What discovery and OpenAPI list: the catalogue, and its built-in groups under
  // Kubernetes' names too.
  const served = new ServedCatalogue(api.catalogue, {
    kubernetesGroupNames: opts.kubernetesGroupNames,
  });
  const openapi = new CatalogueOpenAPI(served, controllers.schemas);
  // Service accounts not served: none exists, so no service account token authenticates.
  const serviceAccounts = api.core("serviceaccounts");
  const serviceAccountTokens = await ServiceAccountTokens.open(parts.dataDir);
  const lookupServiceAccount = async (namespace: string, name: string) => {
    const sa = await serviceAccounts?.get(namespace, name).catch(() => undefined);
    return sa?.metadata?.uid;
  };
  const authenticator = unionAuthenticator([
    // Certificates first, as kube's x509 authenticator comes before tokens.
    ...(front ? [clientCertificateAuthenticator(front.clientOf)] : []),
    tokenAuthenticator(credentials.tokens),
    ...(config.basicUsers ? [basicAuthenticator(config.basicUsers)] : []),
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
  const metrics = config.metrics;
  if (metrics) countStoredObjects(metrics, api, opts.storageCountPeriodMs ?? 60_000);
  const deadlines = new RequestDeadlines();
  resources.add("the request deadlines", () => deadlines.stop());
  const authorizer = controllers.authorizer;
  const store = api.store;
  const auditing: Auditing | undefined = config.audit && {
    ...config.audit,
    logger,
    countLevel: metrics && levelCounter(metrics),
  };
  return buildHandlerChain({
    authenticator,
    anonymous,
    authorizer,
    maxBodyBytes,
    requestTimeoutMs: opts.requestTimeoutMs ?? 60_000,
    deadlines,
    inFlight: {
      readOnly: opts.maxRequestsInflight ?? 400,
      mutating: opts.maxMutatingRequestsInflight ?? 200,
      shared: parts.seats,
    },
    responseCompression: config.featureGates.get("APIResponseCompression")!,
    bodies: parts.bodies,
    logger,
    auditing,
    metrics: metrics && {
      metrics,
      served: api.catalogue,
    },
    tracer: config.tracer,
    handler: router({
      catalogue: served,
      openapi,
      health: {
        livez: [{ name: "ping", check: () => true }, { name: "log", check: () => true }],
        readyz: [
          { name: "ping", check: () => true },
          { name: "storage", check: () => store.currentRevision() >= 0 },
          // kube's name for its check of etcd: here whether the store follows it.
          ...(store.reachable ? [{ name: "etcd", check: () => store.reachable!() }] : []),
          { name: "shutdown", check: () => !parts.shuttingDown() },
        ],
        healthz: [{ name: "ping", check: () => true }, { name: "storage", check: () => true }],
      },
      serverAddress: parts.serverAddress,
      metrics: metrics && (() => scrapeThreads(metrics)),
      snapshot: snapshotHandler(store, config.encryption),
      resources: resourceHandler({
        catalogue: api.catalogue,
        registries: api.registries,
        maxBodyBytes,
        watchList: config.featureGates.get("WatchList") ?? false,
        unsafeDelete: config.featureGates.get("AllowUnsafeMalformedObjectDeletion") ?? false,
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
        watchPacer: parts.watchPacer,
        metrics,
      }),
    }),
  });
}
