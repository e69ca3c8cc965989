/**
 * The composition root: `startServer` runs the start-up steps of start/ in order, each
 * registering what it opens in one stack, which closes it all in reverse order when a later
 * step fails and when the server is closed. `startServer` is both what `platform serve` runs
 * and what `mod.ts` exports for embedding.
 *
 *   1. configuration      files named by flags, read and checked; nothing is written yet
 *   2. data directory     created and proved writable (or a temporary one)
 *   3. credentials        certificates, the TLS front, bearer tokens
 *   4. storage            the store and the continue-token key
 *   5. registries         the catalogue, a registry per resource, the system namespaces
 *   6. controllers        namespaces, CRDs, RBAC and the authorizer, CSRs, namespace defaults
 *   7. request handler    authentication, discovery and OpenAPI, the router, the filter chain
 *   8. serving            listen; the worker threads of `--workers` (workers.ts) on the same
 *                         port; then the kubernetes Service (it needs the port), serving
 *                         certificate renewal, TCP_NODELAY, the admin kubeconfig
 *
 * Closing runs the stack: renewal stops, serving ends (readiness fails, watches end, accepting
 * stops, requests in flight finish up to the shutdown timeout, connections close), then the
 * controllers stop, the store closes and a temporary data directory is removed.
 */

import type { Store } from "../storage/mod.ts";
import { WatchPacer } from "./handlers/watch_pacing.ts";
import { createLogger } from "../api/mod.ts";
import type { BodyWriting } from "./respond.ts";
import { loadConfiguration } from "./start/configuration.ts";
import { startControllers } from "./start/controllers.ts";
import { openDataDir, prepareCredentials, writeAdminKubeconfig } from "./start/credentials.ts";
import { buildRequestHandler } from "./start/handler.ts";
import { OpenResources } from "./start/open_resources.ts";
import type { StartOptions } from "./start/options.ts";
import { buildRegistries } from "./start/registries.ts";
import { keepServingCertificate, listen, setNoDelay, Shutdown } from "./start/serve.ts";
import { etcdTls, openStorage } from "./start/storage.ts";
import { joinSharedState } from "./start/bootstrap.ts";
import { startSnapshotSchedule } from "./start/snapshots.ts";
import { checkWorkerOptions, startWorkers, workerStorage } from "./start/workers.ts";

export { ADMIN_GROUP, ADMIN_USER } from "../api/mod.ts";
export type { StartOptions } from "./start/options.ts";

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
  const resources = new OpenResources();
  try {
    checkWorkerOptions(opts);
    const config = await loadConfiguration(opts, logger, resources);
    const dataDir = await openDataDir(opts, logger, resources);
    const hostname = opts.bindAddress ?? "127.0.0.1";
    if (opts.token !== undefined && opts.storage === "etcd3") {
      await joinSharedState(
        opts,
        dataDir,
        hostname,
        await etcdTls(opts),
        logger,
        (hostPort) => config.egress.tcpRoute("etcd", hostPort),
      );
    }
    const credentials = await prepareCredentials(opts, dataDir, hostname, config, logger);
    const storage = await openStorage(opts, dataDir, config, logger, resources);
    const workers = workerStorage(opts, storage);
    await startSnapshotSchedule(opts, dataDir, storage.store, config, logger, resources);
    const api = await buildRegistries(config, storage, logger, resources);
    const controllers = await startControllers(
      opts,
      config,
      api,
      credentials.pki,
      logger,
      resources,
    );
    api.bindAuthorizer(controllers.authorizer);
    // This server's own, shared by none other in the process.
    const shutdown = new Shutdown();
    const bodies: BodyWriting = { streamLarge: false };
    let port = 0; // until it listens
    const chain = await buildRequestHandler(
      opts,
      {
        dataDir,
        config,
        credentials,
        api,
        controllers,
        serverAddress: () => `${hostname}:${port}`,
        shuttingDown: () => shutdown.begun,
        watchPacer: new WatchPacer(),
        bodies,
        seats: workers.seats,
      },
      logger,
      resources,
    );
    const serving = await listen(opts, hostname, credentials, chain, shutdown, logger, resources);
    port = serving.port;
    // `--workers`: the other threads serve on the same port, over this thread's store.
    serving.workers = await startWorkers(
      opts,
      {
        ...workers,
        dataDir,
        port,
        auditLog: config.auditLogWriter,
        metrics: config.metrics,
        eventRates: config.eventRates,
      },
      logger,
      resources,
      () => serving.drain(),
    );
    // The `kubernetes` Service points at the port just opened (while Services are served).
    await controllers.startServiceController(port);
    keepServingCertificate(
      opts,
      hostname,
      credentials,
      serving,
      controllers.namespaceDefaults,
      logger,
      resources,
    );
    setNoDelay(serving, bodies, logger);
    const kubeconfigPath = (opts.writeKubeconfig ?? true)
      ? await writeAdminKubeconfig(dataDir, hostname, port, credentials)
      : undefined;
    let closing: Promise<void> | undefined;
    return {
      url: `https://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`,
      port,
      hostname,
      dataDir,
      caCertPem: credentials.pki.servingCaPem ?? credentials.pki.caCertPem,
      adminToken: credentials.adminToken,
      kubeconfigPath,
      store: storage.store,
      finished: serving.server.finished,
      close: () => closing ??= resources.closeAll(),
    };
  } catch (err) {
    await resources.closeAll((what, closeErr) =>
      logger.error(`closing ${what} after a failed start`, closeErr)
    );
    throw err;
  }
}
