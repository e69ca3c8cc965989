/**
 * The log backend (`--audit-log-path`): one JSON line per event, to a file (mode 0600) or to
 * standard output (`-`). The file rotates as kube's (lumberjack's) does: when a write would
 * take it past `--audit-log-maxsize` megabytes (0: 100), it is renamed to
 * `<name>-<UTC time as 2006-01-02T15-04-05.000><ext>` and a new one is opened; then backups
 * beyond `--audit-log-maxbackup` (0: all kept) and older than `--audit-log-maxage` days (0:
 * kept) are removed.
 *
 * Modes (`--audit-log-mode`): `blocking` writes each event before the request goes on (a write
 * that fails is logged); `blocking-strict` too, and a RequestReceived event that cannot be
 * written fails the request (the filter answers 500); `batch` queues events in a bounded buffer
 * (`--audit-log-batch-buffer-size`) written in the background: when it is full, events are
 * dropped and counted, logged once per burst, and requests never wait.
 *
 * @module
 */

import type { Logger } from "../api/mod.ts";
import type { AuditLogMode } from "../config/mod.ts";
import type { AuditEvent } from "./event.ts";
import { eventJson } from "./event_json.ts";
import type { Stage } from "./policy.ts";
import { SpacedBatches } from "./spaced_batches.ts";
import {
  ReusedBytes,
  RotatingFile,
  type RotationOptions,
  writeAll,
  writeAllSync,
} from "./rotating_file.ts";

export { AUDIT_LOG_MODES as LOG_MODES } from "../config/mod.ts";
export type LogMode = AuditLogMode;

/** Where events go. */
export interface AuditBackend {
  /** Takes one event; a promise when the request waits for it (a blocking webhook). Throws (or
   * rejects) only when the event must fail its request (blocking-strict, RequestReceived). */
  process(ev: AuditEvent): void | Promise<void>;
  /** Writes what is queued and closes. */
  close(): Promise<void>;
}

export interface LogBackendOptions extends RotationOptions {
  mode?: LogMode;
  /** `--audit-log-batch-buffer-size`. @default 10000 */
  batchBufferSize?: number;
  logger: Logger;
  /** Counts events lost (`apiserver_audit_error_total`): `log` for failed writes, `buffered`
   * for the batch buffer's overflow, as kube names the plugins. */
  onError?: AuditErrorCounter;
}

/** Called with the plugin that lost events and how many (kube's `HandlePluginError`). */
export type AuditErrorCounter = (plugin: "log" | "webhook" | "buffered", events: number) => void;

const encoder = new TextEncoder();

/** Opens the log: the file is created (0600) or appended to. Throws the OS error. */
export function openLogBackend(opts: LogBackendOptions): AuditBackend & { dropped(): number } {
  const out: Sink = opts.path === "-" ? stdoutSink() : new RotatingFile(opts);
  const mode = opts.mode ?? "blocking";
  return mode === "batch"
    ? new BatchBackend(out, opts.batchBufferSize ?? 10_000, opts.logger, opts.onError)
    : new BlockingBackend(out, mode === "blocking-strict", opts.logger, opts.onError);
}

interface Sink {
  writeSync(bytes: Uint8Array): void;
  write(bytes: Uint8Array): Promise<void>;
  close(): void;
}

/** Events to each of `backends` (the log and the webhook): a failure of one that must fail
 * the request does, once the others have the event. */
export function unionBackend(backends: AuditBackend[]): AuditBackend {
  if (backends.length === 1) return backends[0];
  return {
    process(ev) {
      const errors: unknown[] = [];
      const waits: Promise<void>[] = [];
      for (const b of backends) {
        try {
          const r = b.process(ev);
          if (r) waits.push(r.catch((err) => void errors.push(err)));
        } catch (err) {
          errors.push(err);
        }
      }
      if (waits.length === 0) {
        if (errors.length > 0) throw errors[0];
        return;
      }
      return Promise.all(waits).then(() => {
        if (errors.length > 0) throw errors[0];
      });
    },
    async close() {
      await Promise.all(backends.map((b) => b.close()));
    },
  };
}

function stdoutSink(): Sink {
  return {
    writeSync: (bytes) => writeAllSync(Deno.stdout, bytes),
    write: (bytes) => writeAll(Deno.stdout, bytes),
    close: () => {},
  };
}

function line(ev: AuditEvent): Uint8Array {
  return encoder.encode(eventJson(ev) + "\n");
}

class BlockingBackend {
  #failing = false;
  constructor(
    readonly out: Sink,
    readonly strict: boolean,
    readonly logger: Logger,
    readonly onError?: AuditErrorCounter,
  ) {}

  process(ev: AuditEvent): void {
    try {
      this.out.writeSync(line(ev));
      this.#failing = false;
    } catch (err) {
      this.onError?.("log", 1);
      if (!this.#failing) this.logger.error(`audit log: cannot write an event: ${message(err)}`);
      this.#failing = true;
      if (this.strict && ev.stage === ("RequestReceived" satisfies Stage)) throw err;
    }
  }

  dropped(): number {
    return 0;
  }

  close(): Promise<void> {
    this.out.close();
    return Promise.resolve();
  }
}

class BatchBackend {
  /** One write at a time: each batch's bytes can go where the previous batch's were. */
  readonly #bytes = new ReusedBytes();
  readonly #batches = new SpacedBatches<AuditEvent>((events) => this.#write(events));
  #dropped = 0;
  /** Dropped since the buffer last had room: the burst being logged. */
  #burst = 0;
  #closed = false;

  constructor(
    readonly out: Sink,
    readonly size: number,
    readonly logger: Logger,
    readonly onError?: AuditErrorCounter,
  ) {}

  process(ev: AuditEvent): void {
    if (this.#closed) return;
    if (this.#batches.waiting >= this.size) {
      this.#dropped++;
      this.onError?.("buffered", 1);
      if (this.#burst++ === 0) {
        this.logger.warn(
          `audit log: the batch buffer (${this.size} events) is full: dropping events`,
        );
      }
      return;
    }
    this.#batches.add(ev);
  }

  dropped(): number {
    return this.#dropped;
  }

  async #write(events: AuditEvent[]): Promise<void> {
    if (this.#burst > 0) {
      this.logger.warn(`audit log: dropped ${this.#burst} events while the buffer was full`);
      this.#burst = 0;
    }
    try {
      await this.out.write(this.#bytes.join(events, eventJson, "\n"));
    } catch (err) {
      this.onError?.("log", events.length);
      this.logger.error(`audit log: cannot write ${events.length} events: ${message(err)}`);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#batches.drain();
    this.out.close();
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
