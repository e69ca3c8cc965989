/**
 * One audit log for a server with worker threads (`--workers` > 1). Every thread turns its
 * events into JSON lines on its own thread (`eventJson`, the work one thread would do) and
 * hands them, a batch per turn of its event loop, to the one {@link AuditLogWriter} on the main
 * thread, which writes the file (with its rotation) or standard output. Lines rather than
 * events cross between threads: a string is cheap to clone and leaves the main thread nothing
 * to serialize (measured in lib/server/start/workers.md).
 *
 * The modes are those of the one-thread log backend (log_backend.ts), per thread:
 * - `blocking`: a request waits until the main thread has written its event (a failed write
 *   is logged and counted there);
 * - `blocking-strict`: the same, and a RequestReceived event that could not be written fails
 *   its request;
 * - `batch`: requests never wait; each thread keeps at most `--audit-log-batch-buffer-size`
 *   events not yet written, drops (counting `apiserver_audit_error_total{plugin="buffered"}`)
 *   and logs once per burst beyond that.
 *
 * @module
 */

import type { Logger } from "../api/mod.ts";
import type { AuditEvent } from "./event.ts";
import { eventJson } from "./event_json.ts";
import type { AuditBackend, AuditErrorCounter, LogBackendOptions, LogMode } from "./log_backend.ts";
import { ReusedBytes, RotatingFile, writeAllSync } from "./rotating_file.ts";
import { SpacedBatches } from "./spaced_batches.ts";
import type { Stage } from "./policy.ts";

/**
 * Hands a batch of lines (`events` of them, each ending in a newline) to the writer; resolves
 * to whether they were written, rejects when they could not reach it.
 */
export type DeliverLines = (text: string, events: number) => Promise<boolean>;

const encoder = new TextEncoder();

/** A thread's lines waiting for the writer, and whom to tell how their write went. */
interface Lines {
  text: string;
  events: number;
  written: (ok: boolean) => void;
}

/** The one writer of the log, on the main thread: lines from every thread, in arrival order. */
export class AuditLogWriter {
  readonly #out: { writeSync(b: Uint8Array): void; write(b: Uint8Array): Promise<void> };
  readonly #close: () => void;
  readonly #batch: boolean;
  readonly #logger: Logger;
  readonly #onError?: AuditErrorCounter;
  /** Batch mode: the threads' texts not yet written. */
  readonly #batches = new SpacedBatches<Lines>((batch) => this.#writeBatch(batch));
  /** One write at a time: each batch's bytes can go where the previous batch's were. */
  readonly #bytes = new ReusedBytes();
  #failing = false;

  /** Opens the file (0600, its directory made) or standard output; throws the OS error. */
  constructor(opts: LogBackendOptions) {
    if (opts.path === "-") {
      this.#out = {
        writeSync: (b) => writeAllSync(Deno.stdout, b),
        write: (b) => Promise.resolve(writeAllSync(Deno.stdout, b)),
      };
      this.#close = () => {};
    } else {
      const file = new RotatingFile(opts);
      this.#out = file;
      this.#close = () => file.close();
    }
    this.#batch = opts.mode === "batch";
    this.#logger = opts.logger;
    this.#onError = opts.onError;
  }

  /**
   * Writes `events` lines: in the blocking modes at once (the caller waits for the result), in
   * batch mode with what other threads sent meanwhile, at most once every few milliseconds (as
   * the one-thread batch mode writes, log_backend.ts). Resolves to false when the write failed
   * (counted as `log` errors and logged once per run of failures).
   */
  write(text: string, events: number): boolean | Promise<boolean> {
    if (!this.#batch) {
      try {
        this.#out.writeSync(encoder.encode(text));
        return this.#succeeded();
      } catch (err) {
        return this.#failed(err, events);
      }
    }
    const done = Promise.withResolvers<boolean>();
    this.#batches.add({ text, events, written: done.resolve });
    return done.promise;
  }

  /** Waits for the queued writes, then closes the file. */
  async close(): Promise<void> {
    await this.#batches.drain();
    this.#close();
  }

  async #writeBatch(batch: Lines[]): Promise<void> {
    let ok: boolean;
    try {
      await this.#out.write(this.#bytes.join(batch, (l) => l.text, ""));
      ok = this.#succeeded();
    } catch (err) {
      ok = this.#failed(err, batch.reduce((n, l) => n + l.events, 0));
    }
    for (const l of batch) l.written(ok);
  }

  #succeeded(): true {
    this.#failing = false;
    return true;
  }

  #failed(err: unknown, events: number): false {
    this.#onError?.("log", events);
    if (!this.#failing) {
      this.#logger.error(`audit log: cannot write ${events} events: ${message(err)}`);
    }
    this.#failing = true;
    return false;
  }
}

/** What a thread's backend needs. */
export interface ForwardingLogOptions {
  deliver: DeliverLines;
  mode?: LogMode;
  /** `--audit-log-batch-buffer-size`: batch mode's events not yet written, at most.
   * @default 10000 */
  batchBufferSize?: number;
  logger: Logger;
  /** Counts `buffered` (batch overflow) and `log` (lines that could not reach the writer). */
  onError?: AuditErrorCounter;
}

/** A thread's log backend: its events as lines to the one writer (see the module comment). */
export function openForwardingLogBackend(opts: ForwardingLogOptions): AuditBackend {
  return new ForwardingBackend(opts);
}

class ForwardingBackend implements AuditBackend {
  readonly #o: ForwardingLogOptions;
  readonly #mode: LogMode;
  readonly #limit: number;
  /** Lines of this turn, sent together at its end. */
  #lines: string[] = [];
  /** This turn's batch: whether it was written, once known. */
  #sent: Promise<boolean> | undefined;
  #resolveSent: ((ok: boolean) => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Batch mode: events handed over and not yet written. */
  #inFlight = 0;
  #burst = 0;
  readonly #pending = new Set<Promise<unknown>>();
  #closed = false;

  constructor(opts: ForwardingLogOptions) {
    this.#o = opts;
    this.#mode = opts.mode ?? "blocking";
    this.#limit = opts.batchBufferSize ?? 10_000;
  }

  process(ev: AuditEvent): void | Promise<void> {
    if (this.#closed) return;
    if (this.#mode === "batch") {
      if (this.#inFlight + this.#lines.length >= this.#limit) {
        this.#o.onError?.("buffered", 1);
        if (this.#burst++ === 0) {
          this.#o.logger.warn(
            `audit log: the batch buffer (${this.#limit} events) is full: dropping events`,
          );
        }
        return;
      }
      this.#queue(ev);
      return;
    }
    const sent = this.#queue(ev);
    const strict = this.#mode === "blocking-strict" &&
      ev.stage === ("RequestReceived" satisfies Stage);
    return sent.then((ok) => {
      if (!ok && strict) throw new Error("the audit log could not be written");
    });
  }

  /** Adds the event's line to this turn's batch; resolves with the batch's outcome. */
  #queue(ev: AuditEvent): Promise<boolean> {
    this.#lines.push(eventJson(ev) + "\n");
    if (!this.#sent) {
      const { promise, resolve } = Promise.withResolvers<boolean>();
      this.#sent = promise;
      this.#resolveSent = resolve;
      // Batch mode: after the current turn, so that the events of requests that run meanwhile
      // cross together. A blocking mode waits for no timer (setTimeout(0) costs 1 to 4 ms): the
      // events queued by the same run of callbacks cross together.
      if (this.#mode === "batch") this.#timer = setTimeout(() => this.#flush(), 0);
      else queueMicrotask(() => this.#flush());
    }
    return this.#sent;
  }

  #flush(): void {
    clearTimeout(this.#timer);
    const resolve = this.#resolveSent;
    if (!resolve) return; // flushed already (by close)
    const lines = this.#lines;
    this.#lines = [];
    this.#sent = this.#resolveSent = undefined;
    if (lines.length === 0) return resolve(true);
    if (this.#burst > 0) {
      this.#o.logger.warn(`audit log: dropped ${this.#burst} events while the buffer was full`);
      this.#burst = 0;
    }
    this.#inFlight += lines.length;
    const done = this.#o.deliver(lines.join(""), lines.length).catch((err) => {
      this.#o.onError?.("log", lines.length);
      this.#o.logger.error(
        `audit log: cannot hand ${lines.length} events to the writer: ${message(err)}`,
      );
      return false;
    }).then((ok) => {
      this.#inFlight -= lines.length;
      this.#pending.delete(done);
      resolve(ok);
    });
    this.#pending.add(done);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#sent) this.#flush();
    await Promise.all(this.#pending);
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
