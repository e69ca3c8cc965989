/**
 * `--workers=N`: N-1 worker threads (worker_thread.ts) that serve requests beside the main
 * thread on the same secure port. The main thread keeps the store and serves it to them with a
 * {@link StoreOwner} (lib/storage/worker/), one MessagePort each; it alone runs the
 * cluster-wide controllers, leader election, snapshots and the serving certificate's renewal.
 * With N = 1 (the default) nothing here runs.
 *
 * A worker that dies is logged and started again (its in-flight requests fail with their
 * connections; its acknowledged writes are in the store, which the main thread owns). Closing
 * stops every worker (each drains as the main thread does) before the store closes.
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
import type { WorkerIn, WorkerOut } from "./worker_thread.ts";

/** The settings `--workers` > 1 cannot serve yet: a one-line ConfigError, before anything
 * opens. */
export function checkWorkerOptions(opts: StartOptions): void {
  const n = opts.workers ?? 1;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new ConfigError(`--workers: must be a whole number of at least 1, not ${n}`);
  }
  if (n === 1) return;
  if (opts.audit?.logPath) {
    throw new ConfigError(
      "--workers: more than 1 does not work with --audit-log-path yet (use --audit-webhook-*)",
    );
  }
}

/**
 * With workers: one continue-token key for every thread (a token from one is good on all),
 * and, on a store this process alone writes (not etcd3), every write's revision published in
 * shared memory (`publishingRevisions`), where the workers' consistent reads find it without
 * a round trip to this thread. Changes `storage` in place; nothing with one thread.
 */
export function workerStorage(
  opts: StartOptions,
  storage: Storage,
): Omit<WorkerShare, "dataDir" | "port"> {
  if ((opts.workers ?? 1) < 2) return { store: storage.store };
  storage.continueKey ??= crypto.getRandomValues(new Uint8Array(32));
  if (opts.storage !== "etcd3") {
    const revisionCell = newRevisionCell(storage.store.currentRevision());
    storage.store = publishingRevisions(storage.store, revisionCell);
    return { store: storage.store, continueKey: storage.continueKey, revisionCell };
  }
  return { store: storage.store, continueKey: storage.continueKey };
}

/** What the workers need from the main thread, once it listens. */
export interface WorkerShare {
  store: Store;
  continueKey?: Uint8Array;
  /** The store's revision in shared memory, when every write publishes it there. */
  revisionCell?: RevisionCell;
  dataDir: string;
  /** The secure port the main thread listens on. */
  port: number;
}

/** Starts `opts.workers - 1` workers; resolves once every one serves. */
export async function startWorkers(
  opts: StartOptions,
  share: WorkerShare,
  logger: Logger,
  resources: OpenResources,
): Promise<void> {
  const count = (opts.workers ?? 1) - 1;
  if (count < 1) return;
  const owner = new StoreOwner(share.store);
  resources.add("the store owner", () => owner.close());
  // Functions stay behind: the worker has its own logger (lines come back here) and clock.
  const { logger: _logger, clock: _clock, ...data } = opts;
  const workerOpts: StartOptions = {
    ...data,
    dataDir: share.dataDir,
    securePort: share.port,
    writeKubeconfig: false,
  };
  const running = new Set<ServerWorker>();
  let closing = false;
  const spawn = async (index: number): Promise<void> => {
    const w = new ServerWorker(index, logger, (crashed) => {
      running.delete(crashed);
      if (closing) return;
      logger.warn(`worker ${index} stopped unexpectedly; starting it again`);
      spawn(index).catch((err) => logger.error(`worker ${index} did not start again`, err));
    });
    running.add(w);
    const { port1, port2 } = new MessageChannel();
    const conn = owner.connect(port1);
    w.onEnd = () => conn.end();
    await w.start({
      t: "start",
      opts: workerOpts,
      storePort: port2,
      continueKey: share.continueKey,
      revisionCell: share.revisionCell,
    }, [
      port2,
    ]);
  };
  resources.add("the workers", async () => {
    closing = true;
    await Promise.all([...running].map((w) => w.stop(opts.shutdownTimeoutMs ?? 30_000)));
  });
  await Promise.all(Array.from({ length: count }, (_, i) => spawn(i + 1)));
  logger.info(`serving on ${count + 1} threads (--workers=${count + 1})`);
}

/** One worker thread and its messages. */
class ServerWorker {
  readonly #index: number;
  readonly #logger: Logger;
  readonly #worker: Worker;
  readonly #onCrash: (w: ServerWorker) => void;
  #ready = Promise.withResolvers<void>();
  #stopped = Promise.withResolvers<void>();
  #state: "starting" | "serving" | "stopping" | "ended" = "starting";
  onEnd: () => void = () => {};

  constructor(index: number, logger: Logger, onCrash: (w: ServerWorker) => void) {
    this.#index = index;
    this.#logger = logger;
    this.#onCrash = onCrash;
    this.#worker = new Worker(new URL("./worker_thread.ts", import.meta.url), {
      type: "module",
      name: `platform worker ${index}`,
    });
    this.#worker.onmessage = (ev: MessageEvent<WorkerOut>) => this.#onMessage(ev.data);
    this.#worker.onerror = (ev) => {
      ev.preventDefault();
      this.#logger.error(`worker ${this.#index}: ${ev.message}`);
      this.#end(new Error(`worker ${this.#index} failed: ${ev.message}`));
    };
  }

  /** Sends `start`; resolves once the worker serves. */
  start(msg: WorkerIn, transfer: Transferable[]): Promise<void> {
    this.#worker.postMessage(msg, transfer);
    return this.#ready.promise;
  }

  /** Lets the worker drain and close; terminates it after `timeoutMs` (and a margin). */
  async stop(timeoutMs: number): Promise<void> {
    if (this.#state === "ended") return;
    this.#state = "stopping";
    this.#worker.postMessage({ t: "stop" } satisfies WorkerIn);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.#stopped.promise,
      new Promise<void>((r) => timer = setTimeout(r, timeoutMs + 5_000)),
    ]);
    clearTimeout(timer);
    this.#end();
  }

  #onMessage(m: WorkerOut): void {
    switch (m.t) {
      case "ready":
        this.#state = "serving";
        this.#ready.resolve();
        break;
      case "failed":
        this.#end(
          m.configError
            ? new ConfigError(m.message)
            : new Error(`worker ${this.#index}: ${m.message}`),
        );
        break;
      case "log":
        this.#logger[m.level](`worker ${this.#index}: ${m.msg}`, ...m.extra);
        break;
      case "stopped":
        this.#stopped.resolve();
        break;
    }
  }

  #end(err?: Error): void {
    if (this.#state === "ended") return;
    const was = this.#state;
    this.#state = "ended";
    this.#worker.terminate();
    this.onEnd();
    this.#stopped.resolve();
    if (was === "starting") this.#ready.reject(err ?? new Error(`worker ${this.#index} ended`));
    else if (was === "serving") this.#onCrash(this);
  }
}
