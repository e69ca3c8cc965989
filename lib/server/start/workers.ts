/**
 * `--workers=N`: N-1 worker threads (worker_thread.ts, each a {@link ServerWorker}) that serve
 * requests beside the main thread on the same secure port, and their supervisor. The main
 * thread keeps the store and serves it to them with a {@link StoreOwner}
 * (lib/storage/worker/), one MessagePort each; it alone runs the cluster-wide controllers,
 * leader election, snapshots and the serving certificate's renewal. A second port per worker,
 * its link (thread_link.ts, design in workers.md), carries the audit log's lines, metrics
 * scrapes and renewed certificates. With N = 1 (the default) nothing here runs.
 *
 * The supervisor:
 * - restarts a worker that crashes (an error nothing caught: it drains for up to 10 s, then
 *   its requests still in flight fail with their connections; its acknowledged writes are in
 *   the store, which the main thread owns): at once, or, when it crashes again within a minute
 *   of starting, after 1 s, 2 s, … up to 30 s;
 * - replaces a worker whose V8 heap in use is past `--worker-max-heap-mb` at one of its
 *   periodic reports: a new worker with the same number starts and serves first, then the
 *   old one drains (as on shutdown) and ends, so the port never has fewer threads;
 * - on close, drains the main thread (serve.ts) and every worker at the same time (each as
 *   the main thread drains), before the store owner closes.
 */

import type { Logger } from "../../api/mod.ts";
import { ConfigError } from "../../config/mod.ts";
import {
  newRevisionCell,
  publishingRevisions,
  type RevisionCell,
  type Store,
  StoreOwner,
} from "../../storage/mod.ts";
import type { Storage } from "./storage.ts";
import type { OpenResources } from "./open_resources.ts";
import type { StartOptions } from "./options.ts";
import type { ServerMetrics } from "../../metrics/mod.ts";
import type { AuditLogWriter } from "../../audit/mod.ts";
import type { EventRateDecision } from "../../admission/mod.ts";
import { SharedSeats } from "../filters/inflight.ts";
import { ServerWorker } from "./server_worker.ts";
import { WorkerLinks } from "./thread_link.ts";
import { heapUsed, registerThreadMetrics } from "./thread_metrics.ts";

/** The settings `--workers` > 1 cannot serve yet: a one-line ConfigError, before anything
 * opens. */
export function checkWorkerOptions(opts: StartOptions): void {
  const n = opts.workers ?? 1;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new ConfigError(`--workers: must be a whole number of at least 1, not ${n}`);
  }
}

/**
 * With workers: one continue-token key for every thread (a token from one is good on all),
 * the in-flight seats every thread counts in (shared memory), and, on a store this process
 * alone writes (not etcd3), every write's revision published in shared memory
 * (`publishingRevisions`), where the workers' consistent reads find it without a round trip
 * to this thread. Changes `storage` in place; nothing with one thread.
 */
export function workerStorage(
  opts: StartOptions,
  storage: Storage,
): Omit<WorkerShare, "dataDir" | "port"> {
  if ((opts.workers ?? 1) < 2) return { store: storage.store };
  storage.continueKey ??= crypto.getRandomValues(new Uint8Array(32));
  const seats = new SharedSeats();
  if (opts.storage !== "etcd3") {
    const revisionCell = newRevisionCell(storage.store.currentRevision());
    storage.store = publishingRevisions(storage.store, revisionCell);
    return { store: storage.store, continueKey: storage.continueKey, revisionCell, seats };
  }
  return { store: storage.store, continueKey: storage.continueKey, seats };
}

/** What the workers need from the main thread, once it listens. */
export interface WorkerShare {
  store: Store;
  continueKey?: Uint8Array;
  /** The store's revision in shared memory, when every write publishes it there. */
  revisionCell?: RevisionCell;
  /** The in-flight seats of every thread (`--max-requests-inflight` holds for the process). */
  seats?: SharedSeats;
  /** EventRateLimit's buckets (the workers ask these). */
  eventRates?: EventRateDecision;
  dataDir: string;
  /** The secure port the main thread listens on. */
  port: number;
  /** The one audit log writer (`--audit-log-path`) and the main thread's metrics, which the
   * workers' links reach (thread_link.ts). */
  auditLog?: AuditLogWriter;
  metrics?: ServerMetrics;
}

/**
 * Starts `opts.workers - 1` workers; resolves once every one serves, to the links to them
 * (none with one thread). `drainMain` (the main thread's `Serving.drain`, serve.ts) runs when
 * they are told to drain, at the same time: every thread stops accepting at once, and the whole
 * drain takes one `--shutdown-timeout`, not one for the workers and then one for the main
 * thread.
 */
export async function startWorkers(
  opts: StartOptions,
  share: WorkerShare,
  logger: Logger,
  resources: OpenResources,
  drainMain: () => Promise<void> = () => Promise.resolve(),
): Promise<WorkerLinks | undefined> {
  const count = (opts.workers ?? 1) - 1;
  if (count < 1) return;
  const owner = new StoreOwner(share.store);
  resources.add("the store owner", () => owner.close());
  const links = new WorkerLinks({
    auditLog: share.auditLog,
    metrics: share.metrics,
    eventRates: share.eventRates,
    logger,
  });
  resources.add("the links to the workers", () => links.close());
  registerThreadMetrics(share.metrics, "main");
  const supervisor = new WorkerSupervisor(opts, share, owner, links, logger);
  resources.add("the workers", async () => {
    await Promise.all([drainMain(), supervisor.close()]);
  });
  await Promise.all(Array.from({ length: count }, (_, i) => supervisor.startFirst(i + 1)));
  logger.info(
    `serving on ${count + 1} threads (--workers=${count + 1}); main thread V8 heap ` +
      `${mib(heapUsed())} MiB`,
  );
  return links;
}

/** A worker that dies within this long of starting counts as dying again (back-off). */
const QUICK_DEATH_MS = 60_000;
const MAX_RESTART_DELAY_MS = 30_000;

/** The workers: which serves each number, restarts, replacements, the drain at close. */
class WorkerSupervisor {
  readonly #opts: StartOptions;
  readonly #share: WorkerShare;
  readonly #owner: StoreOwner;
  readonly #links: WorkerLinks;
  readonly #logger: Logger;
  readonly #workerOpts: StartOptions;
  /** Every live thread, replaced ones still draining included. */
  readonly #running = new Set<ServerWorker>();
  /** The worker serving each number. */
  readonly #current = new Map<number, ServerWorker>();
  readonly #replacing = new Set<number>();
  readonly #quickDeaths = new Map<number, number>();
  readonly #restartTimers = new Set<ReturnType<typeof setTimeout>>();
  #closing = false;

  constructor(
    opts: StartOptions,
    share: WorkerShare,
    owner: StoreOwner,
    links: WorkerLinks,
    logger: Logger,
  ) {
    this.#opts = opts;
    this.#share = share;
    this.#owner = owner;
    this.#links = links;
    this.#logger = logger;
    // Functions stay behind: the worker has its own logger (lines come back here) and clock.
    const { logger: _logger, clock: _clock, ...data } = opts;
    this.#workerOpts = {
      ...data,
      dataDir: share.dataDir,
      securePort: share.port,
      writeKubeconfig: false,
    };
  }

  /** Worker `index` at start: a failure fails the server's start. */
  async startFirst(index: number): Promise<void> {
    this.#current.set(index, await this.#spawn(index));
  }

  /** Drains every worker (up to the shutdown timeout each, all at once). */
  async close(): Promise<void> {
    this.#closing = true;
    for (const t of this.#restartTimers) clearTimeout(t);
    await Promise.all([...this.#running].map((w) => w.stop(this.#shutdownTimeoutMs())));
  }

  #shutdownTimeoutMs(): number {
    return this.#opts.shutdownTimeoutMs ?? 30_000;
  }

  async #spawn(index: number): Promise<ServerWorker> {
    const w = new ServerWorker(index, this.#logger, {
      crashed: (crashed) => this.#crashed(crashed),
      heap: (from, used, atStart) => this.#heap(from, used, atStart),
    });
    this.#running.add(w);
    const { port1, port2 } = new MessageChannel();
    const conn = this.#owner.connect(port1);
    // One link per thread, not per number: a replaced worker draining keeps its own.
    const link = this.#links.connect(`worker ${index}`);
    w.onEnd = () => {
      conn.end();
      link.end();
      this.#running.delete(w);
    };
    await w.start({
      t: "start",
      index,
      heapCheckIntervalMs: this.#opts.workerHeapCheckIntervalMs ?? 10_000,
      opts: this.#workerOpts,
      storePort: port2,
      linkPort: link.port,
      continueKey: this.#share.continueKey,
      revisionCell: this.#share.revisionCell,
      seats: this.#share.seats?.cells,
    }, [port2, link.port]);
    return w;
  }

  #crashed(w: ServerWorker): void {
    const index = w.index;
    if (this.#closing || this.#current.get(index) !== w) return;
    this.#current.delete(index);
    if (this.#replacing.has(index)) {
      this.#logger.warn(`worker ${index} stopped unexpectedly; its replacement is starting`);
      return;
    }
    const quick = performance.now() - w.servingSince < QUICK_DEATH_MS;
    const deaths = quick ? (this.#quickDeaths.get(index) ?? 0) : 0;
    this.#quickDeaths.set(index, deaths + 1);
    const delayMs = deaths === 0 ? 0 : Math.min(MAX_RESTART_DELAY_MS, 1000 * 2 ** (deaths - 1));
    this.#logger.warn(
      `worker ${index} stopped unexpectedly; starting it again` +
        (delayMs ? ` in ${delayMs / 1000}s (it died ${deaths + 1} times in a row)` : ""),
    );
    const timer = setTimeout(() => {
      this.#restartTimers.delete(timer);
      if (this.#closing) return;
      this.#spawn(index).then(
        (again) => {
          this.#current.set(index, again);
          this.#logger.info(`worker ${index} serving again`);
        },
        (err) => {
          if (!this.#closing) this.#logger.error(`worker ${index} did not start again`, err);
        },
      );
    }, delayMs);
    this.#restartTimers.add(timer);
  }

  #heap(w: ServerWorker, used: number, atStart: boolean): void {
    const index = w.index;
    if (atStart) this.#logger.info(`worker ${index} serving; V8 heap ${mib(used)} MiB`);
    const maxMB = this.#opts.workerMaxHeapMB ?? 0;
    // At start a worker is not replaced: one over the bound already would be replaced over
    // and over; at its first periodic report it is, at most once per report period.
    if (maxMB <= 0 || atStart || used <= maxMB * MB) return;
    if (this.#closing || this.#current.get(index) !== w || this.#replacing.has(index)) return;
    this.#replacing.add(index);
    this.#logger.warn(
      `worker ${index}: V8 heap ${mib(used)} MiB is over --worker-max-heap-mb=${maxMB}; ` +
        "starting a new worker in its place, then draining it",
    );
    this.#spawn(index).then(
      async (fresh) => {
        this.#replacing.delete(index);
        if (this.#current.get(index) === w) this.#current.set(index, fresh);
        else if (!this.#current.has(index)) this.#current.set(index, fresh);
        this.#logger.info(`worker ${index} replaced; draining the old one`);
        await w.stop(this.#shutdownTimeoutMs());
        this.#logger.info(`worker ${index}: the replaced one has drained and ended`);
      },
      (err) => {
        this.#replacing.delete(index);
        if (!this.#closing) {
          this.#logger.error(
            `worker ${index}: its replacement did not start; it keeps serving`,
            err,
          );
        }
      },
    );
  }
}

const MB = 1024 * 1024;

/** Bytes as MiB with one decimal. */
function mib(bytes: number): string {
  return (bytes / MB).toFixed(1);
}
