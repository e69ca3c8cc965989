/**
 * The module each `--workers` worker thread runs: the request stack of one server (TLS,
 * authentication, authorization, admission, registries, encoding) on the main thread's secure
 * port (SO_REUSEPORT), over a {@link WorkerStoreClient} of the main thread's store. The
 * start-up steps are the main thread's (server.ts) less what runs there alone: the data
 * directory is made, the store opened and snapshotted, the cluster-wide controllers and the
 * `kubernetes` Service run, and the serving certificate renewed by the main thread (which
 * hands a new one over the link, thread_link.ts, as it does the audit log and metrics).
 *
 * Messages: in `start` ({@link WorkerStart}) and `stop`; out `ready`, `failed`, `log`, `heap`
 * (the thread's V8 heap in use, at `ready` and every `heapCheckIntervalMs`), `crashed` and
 * `stopped` (server_worker.ts reads them). A test can make it crash (worker_crash_trigger.ts).
 *
 * An error nothing caught (or a rejection nothing handled) is a crash: the worker says so
 * (`crashed`), drains as on `stop` and ends, and the main thread starts another. The error is
 * caught here rather than left to end the thread because Deno 2.9.6 can panic, taking the
 * whole process, when a worker's isolate is torn down while its server still has connections.
 * @module
 */

/// <reference lib="deno.worker" />

import type { Logger } from "../../api/mod.ts";
import { ConfigError } from "../../config/mod.ts";
import {
  instrumentedStore,
  type RevisionCell,
  tracedStore,
  WorkerStoreClient,
} from "../../storage/mod.ts";
import { SharedSeats } from "../filters/inflight.ts";
import { WatchPacer } from "../handlers/watch_pacing.ts";
import type { BodyWriting } from "../respond.ts";
import { loadConfiguration } from "./configuration.ts";
import { startControllers } from "./controllers.ts";
import { prepareCredentials } from "./credentials.ts";
import { buildRequestHandler } from "./handler.ts";
import { OpenResources } from "./open_resources.ts";
import type { StartOptions } from "./options.ts";
import { buildRegistries } from "./registries.ts";
import { listen, serveCertificate, setNoDelay, Shutdown } from "./serve.ts";
import { MainThreadLink } from "./thread_link.ts";
import { registerThreadMetrics, reportHeap } from "./thread_metrics.ts";
import { armCrashTrigger } from "./worker_crash_trigger.ts";

/** What the main thread sends to start a worker. */
export interface WorkerStart {
  t: "start";
  /** The worker's number, 1 to N-1 (a replacement keeps the number of the one it replaces). */
  index: number;
  /** How often the worker reports its heap. */
  heapCheckIntervalMs: number;
  /** The main thread's options (functions left out), with `dataDir` and `securePort` set to
   * the ones it uses. */
  opts: StartOptions;
  /** The store owner's end is in the main thread. */
  storePort: MessagePort;
  /** The link to the main thread for the rest it shares (thread_link.ts). */
  linkPort: MessagePort;
  continueKey?: Uint8Array;
  /** The store's revision in shared memory (on a store only this process writes). */
  revisionCell?: RevisionCell;
  /** The in-flight seats every thread counts in (SharedSeats.cells). */
  seats?: Int32Array<SharedArrayBuffer>;
}

export type WorkerIn = WorkerStart | { t: "stop" };

export type WorkerOut =
  | { t: "ready" }
  | { t: "failed"; message: string; configError: boolean }
  | { t: "log"; level: keyof Logger; msg: string; extra: string[] }
  | { t: "heap"; used: number; atStart: boolean }
  | { t: "crashed"; message: string }
  | { t: "stopped" };

function post(m: WorkerOut): void {
  self.postMessage(m);
}

/** Log lines go to the main thread's logger. */
const logger: Logger = Object.fromEntries(
  (["debug", "info", "warn", "error"] as const).map((level) => [
    level,
    (msg: string, ...extra: unknown[]) =>
      post({
        t: "log",
        level,
        msg,
        extra: extra.map((e) => e instanceof Error ? (e.stack ?? e.message) : String(e)),
      }),
  ]),
) as unknown as Logger;

/** Starts the request stack; resolves to its stop. */
async function start(init: WorkerStart): Promise<() => Promise<void>> {
  const resources = new OpenResources();
  try {
    // Closed last: the audit log's last lines go over it.
    const link = new MainThreadLink(init.linkPort);
    resources.add("the link to the main thread", () => link.close());
    const opts: StartOptions = {
      ...init.opts,
      logger,
      workerThread: true,
      auditLogDelivery: link.deliverAuditLines,
      eventRateDecision: link.decideEventRate,
    };
    const config = await loadConfiguration(opts, logger, resources);
    if (config.metrics) link.shareMetrics(config.metrics, logger);
    registerThreadMetrics(config.metrics, `worker-${init.index}`);
    const dataDir = opts.dataDir!;
    const hostname = opts.bindAddress ?? "127.0.0.1";
    const credentials = await prepareCredentials(opts, dataDir, hostname, config, logger);
    const client = await WorkerStoreClient.connect(init.storePort, {
      historyRetentionMs: opts.historyRetentionMs,
      logger,
      revisionCell: init.revisionCell,
    });
    resources.add("the store client", () => client.close());
    const measured = config.metrics
      ? instrumentedStore(client, config.metrics.storageDuration)
      : client;
    const store = config.tracer.enabled ? tracedStore(measured, opts.storage ?? "file") : measured;
    const api = await buildRegistries(
      config,
      { store, continueKey: init.continueKey },
      logger,
      resources,
    );
    const controllers = await startControllers(
      opts,
      config,
      api,
      credentials.pki,
      logger,
      resources,
    );
    api.bindAuthorizer(controllers.authorizer);
    const shutdown = new Shutdown();
    const bodies: BodyWriting = { streamLarge: false };
    const chain = await buildRequestHandler(
      opts,
      {
        dataDir,
        config,
        credentials,
        api,
        controllers,
        serverAddress: () => `${hostname}:${opts.securePort}`,
        shuttingDown: () => shutdown.begun,
        watchPacer: new WatchPacer(),
        bodies,
        seats: init.seats && new SharedSeats(init.seats),
      },
      logger,
      resources,
    );
    const serving = await listen(opts, hostname, credentials, chain, shutdown, logger, resources);
    setNoDelay(serving, bodies, logger);
    link.onServingCertificate((pair) => serveCertificate(opts, hostname, serving, pair));
    resources.add("the crash trigger", armCrashTrigger(init.index));
    return () => resources.closeAll((what, err) => logger.error(`closing ${what}`, err));
  } catch (err) {
    await resources.closeAll(() => {});
    throw err;
  }
}

let stop: (() => Promise<void>) | undefined;
/** The start in progress: a `stop` that comes meanwhile waits for it, then stops. */
let starting: Promise<void> | undefined;

async function onStart(msg: WorkerStart): Promise<void> {
  try {
    const stopServing = await start(msg);
    post({ t: "ready" });
    const stopReporting = reportHeap(
      msg.heapCheckIntervalMs,
      (used, atStart) => post({ t: "heap", used, atStart }),
    );
    stop = () => {
      stopReporting();
      return stopServing();
    };
  } catch (err) {
    post({
      t: "failed",
      message: err instanceof Error ? err.message : String(err),
      configError: err instanceof ConfigError,
    });
  }
}

let ending: Promise<void> | undefined;

/** Stops serving as on shutdown, says so and ends the thread; once, however often asked. */
function end(): Promise<void> {
  ending ??= (async () => {
    await starting;
    await stop?.();
    post({ t: "stopped" });
    self.close();
  })();
  return ending;
}

/** An error nothing else caught: reported, then the worker drains and ends. */
function crashed(message: string): void {
  if (ending) {
    logger.error(`while ending: ${message}`);
    return;
  }
  post({ t: "crashed", message });
  void end();
}

globalThis.addEventListener("error", (ev) => {
  ev.preventDefault();
  const err = ev.error;
  crashed(err instanceof Error ? `uncaught ${err.stack ?? err.message}` : ev.message);
});
globalThis.addEventListener("unhandledrejection", (ev) => {
  ev.preventDefault();
  const reason = ev.reason;
  crashed(`unhandled rejection: ${reason instanceof Error ? reason.stack : String(reason)}`);
});

self.onmessage = (ev: MessageEvent<WorkerIn>) => {
  const msg = ev.data;
  if (msg.t === "start") {
    starting = onStart(msg);
  } else if (msg.t === "stop") {
    void end();
  }
};
