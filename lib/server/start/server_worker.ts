/**
 * One `--workers` worker thread as the main thread sees it: the Deno `Worker` running
 * worker_thread.ts, its messages, and its life (starting, serving, stopping, ended). The
 * supervisor (workers.ts) decides what to do when it ends unexpectedly or reports its heap.
 */

import type { Logger } from "../../api/mod.ts";
import { ConfigError } from "../../config/mod.ts";
import type { WorkerIn, WorkerOut } from "./worker_thread.ts";

/** What a {@link ServerWorker} tells its supervisor. */
export interface WorkerEvents {
  /** It crashed while serving (an uncaught error, say): it is draining or already ended. */
  crashed(w: ServerWorker): void;
  /** Its V8 heap in use, in bytes: once when it serves (`atStart`), then periodically. */
  heap(w: ServerWorker, usedBytes: number, atStart: boolean): void;
}

/** How long a crashed worker may drain before it is terminated. */
const CRASH_DRAIN_MS = 10_000;

/** One worker thread and its messages. */
export class ServerWorker {
  readonly index: number;
  readonly #logger: Logger;
  readonly #worker: Worker;
  readonly #events: WorkerEvents;
  #ready = Promise.withResolvers<void>();
  #stopped = Promise.withResolvers<void>();
  #state: "starting" | "serving" | "stopping" | "ended" = "starting";
  /** When it started serving (performance.now()). */
  servingSince = 0;
  /** Called once when the thread is gone, whatever the reason. */
  onEnd: () => void = () => {};

  constructor(index: number, logger: Logger, events: WorkerEvents) {
    this.index = index;
    this.#logger = logger;
    this.#events = events;
    this.#worker = new Worker(new URL("./worker_thread.ts", import.meta.url), {
      type: "module",
      name: `platform worker ${index}`,
    });
    this.#ready.promise.catch(() => {}); // a start that fails is reported by start()
    this.#worker.onmessage = (ev: MessageEvent<WorkerOut>) => this.#onMessage(ev.data);
    // What worker_thread.ts could not catch itself (an error while it loads, say).
    this.#worker.onerror = (ev) => {
      ev.preventDefault();
      this.#logger.error(`worker ${this.index}: ${ev.message}`);
      this.#end(new Error(`worker ${this.index} failed: ${ev.message}`));
    };
  }

  get serving(): boolean {
    return this.#state === "serving";
  }

  /** Sends `start`; resolves once the worker serves. */
  start(msg: WorkerIn, transfer: Transferable[]): Promise<void> {
    this.#worker.postMessage(msg, transfer);
    return this.#ready.promise;
  }

  /**
   * Lets the worker drain as a server does on shutdown (stop accepting, finish the requests in
   * flight, end watches, close) and waits for it; terminates it after `timeoutMs` and a margin.
   */
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
        // Asked to stop while starting: it stays "stopping" (its end is no crash).
        if (this.#state === "starting") this.#state = "serving";
        this.servingSince = performance.now();
        this.#ready.resolve();
        break;
      case "failed":
        this.#end(
          m.configError
            ? new ConfigError(m.message)
            : new Error(`worker ${this.index}: ${m.message}`),
        );
        break;
      case "log":
        this.#logger[m.level](`worker ${this.index}: ${m.msg}`, ...m.extra);
        break;
      case "heap":
        this.#events.heap(this, m.used, m.atStart);
        break;
      case "crashed":
        this.#crashed(m.message);
        break;
      case "stopped":
        this.#stopped.resolve();
        break;
    }
  }

  /**
   * The worker caught an error nothing else did and is draining itself: its supervisor starts
   * another at once, and this one is terminated once it has ended (after CRASH_DRAIN_MS at most).
   */
  #crashed(message: string): void {
    this.#logger.error(`worker ${this.index}: ${message}`);
    if (this.#state === "starting") {
      this.#end(new Error(`worker ${this.index} failed while starting: ${message}`));
      return;
    }
    if (this.#state !== "serving") return; // already stopping: stop() ends it
    this.#state = "stopping";
    this.#events.crashed(this);
    let timer: ReturnType<typeof setTimeout> | undefined;
    Promise.race([
      this.#stopped.promise.then(() => true),
      new Promise<boolean>((r) => timer = setTimeout(() => r(false), CRASH_DRAIN_MS)),
    ]).then((drained) => {
      clearTimeout(timer);
      this.#logger.warn(
        drained
          ? `worker ${this.index}: the crashed one has drained and ended`
          : `worker ${this.index}: the crashed one did not drain within ` +
            `${CRASH_DRAIN_MS / 1000}s; terminating it`,
      );
      this.#end();
    });
  }

  #end(err?: Error): void {
    if (this.#state === "ended") return;
    const was = this.#state;
    this.#state = "ended";
    this.#worker.terminate();
    this.onEnd();
    this.#stopped.resolve();
    // Ended before it served (a failed start, or stopped while starting): start() rejects.
    // After `ready` this does nothing.
    this.#ready.reject(err ?? new Error(`worker ${this.index} ended before it served`));
    if (was === "serving") this.#events.crashed(this);
  }
}
