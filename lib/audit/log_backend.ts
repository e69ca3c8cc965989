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

import { basename, dirname, extname, join } from "node:path";
import type { Logger } from "../api/mod.ts";
import type { AuditLogMode } from "../config/mod.ts";
import type { AuditEvent } from "./event.ts";
import { eventJson } from "./event_json.ts";
import type { Stage } from "./policy.ts";

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

export interface LogBackendOptions {
  /** A file, or `-` for standard output. */
  path: string;
  mode?: LogMode;
  /** `--audit-log-maxsize`: megabytes; 0: 100. */
  maxSizeMB?: number;
  /** The limit in bytes, for tests (overrides maxSizeMB). */
  maxSizeBytes?: number;
  /** `--audit-log-maxbackup`: 0 keeps every backup. */
  maxBackups?: number;
  /** `--audit-log-maxage`: days; 0 keeps every backup. */
  maxAgeDays?: number;
  /** `--audit-log-batch-buffer-size`. @default 10000 */
  batchBufferSize?: number;
  logger: Logger;
  /** Counts events lost (`apiserver_audit_error_total`): `log` for failed writes, `buffered`
   * for the batch buffer's overflow, as kube names the plugins. */
  onError?: AuditErrorCounter;
  /** The time rotated names carry. @default Date.now */
  now?: () => number;
}

/** Called with the plugin that lost events and how many (kube's `HandlePluginError`). */
export type AuditErrorCounter = (plugin: "log" | "webhook" | "buffered", events: number) => void;

const MB = 1024 * 1024;
/** How long batch mode gathers events before it writes them. */
const BATCH_WAIT_MS = 5;
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

/** The largest buffer {@link ReusedBytes} keeps for the next text. */
const MAX_REUSED_BYTES = 4 * MB;

/**
 * UTF-8 bytes of texts written one at a time, in one buffer reused from text to text: at
 * thousands of events a second, a new buffer per batch was as much garbage (outside V8's heap,
 * which it counts towards collecting) as the batch's text. A text is valid until the next.
 */
export class ReusedBytes {
  #buffer = new Uint8Array(64 * 1024);

  of(text: string): Uint8Array {
    const { read, written } = encoder.encodeInto(text, this.#buffer);
    if (read === text.length) return this.#buffer.subarray(0, written);
    const bytes = encoder.encode(text);
    if (bytes.length <= MAX_REUSED_BYTES) {
      this.#buffer = new Uint8Array(Math.min(MAX_REUSED_BYTES, bytes.length * 2));
    }
    return bytes;
  }
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
  #buffer: AuditEvent[] = [];
  /** One write at a time: each batch's bytes can go where the previous batch's were. */
  readonly #bytes = new ReusedBytes();
  #dropped = 0;
  /** Dropped since the buffer last had room: the burst being logged. */
  #burst = 0;
  #flushing: Promise<void> | undefined;
  #closed = false;

  constructor(
    readonly out: Sink,
    readonly size: number,
    readonly logger: Logger,
    readonly onError?: AuditErrorCounter,
  ) {}

  process(ev: AuditEvent): void {
    if (this.#closed) return;
    if (this.#buffer.length >= this.size) {
      this.#dropped++;
      this.onError?.("buffered", 1);
      if (this.#burst++ === 0) {
        this.logger.warn(
          `audit log: the batch buffer (${this.size} events) is full: dropping events`,
        );
      }
      return;
    }
    this.#buffer.push(ev);
    this.#flushing ??= this.#flush();
  }

  dropped(): number {
    return this.#dropped;
  }

  async #flush(): Promise<void> {
    // A few milliseconds later: events of the requests that run meanwhile go in the same
    // write. An async write costs Deno about 30 µs of CPU whatever its size (a hand-off to a
    // blocking thread and back), so one per event loop turn cost a GET more than its events'
    // text did; at 14,000 events/s a write now carries about 70.
    await new Promise((r) => setTimeout(r, BATCH_WAIT_MS));
    while (this.#buffer.length > 0) {
      const events = this.#buffer;
      this.#buffer = [];
      if (this.#burst > 0) {
        this.logger.warn(`audit log: dropped ${this.#burst} events while the buffer was full`);
        this.#burst = 0;
      }
      const bytes = this.#bytes.of(events.map((e) => eventJson(e) + "\n").join(""));
      try {
        await this.out.write(bytes);
      } catch (err) {
        this.onError?.("log", events.length);
        this.logger.error(`audit log: cannot write ${events.length} events: ${message(err)}`);
      }
    }
    this.#flushing = undefined;
  }

  async close(): Promise<void> {
    this.#closed = true;
    while (this.#flushing) await this.#flushing;
    this.out.close();
  }
}

/** A file that rotates by size, as lumberjack does. */
export class RotatingFile implements Sink {
  readonly #path: string;
  readonly #max: number;
  readonly #maxBackups: number;
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  #file: Deno.FsFile;
  #size: number;

  constructor(opts: LogBackendOptions) {
    this.#path = opts.path;
    this.#max = opts.maxSizeBytes ?? (opts.maxSizeMB || 100) * MB;
    this.#maxBackups = opts.maxBackups ?? 0;
    this.#maxAgeMs = (opts.maxAgeDays ?? 0) * 86_400_000;
    this.#now = opts.now ?? Date.now;
    // As lumberjack: the directory is made when missing.
    Deno.mkdirSync(dirname(this.#path), { recursive: true, mode: 0o755 });
    this.#file = openLog(this.#path);
    this.#size = this.#file.statSync().size;
  }

  writeSync(bytes: Uint8Array): void {
    this.#beforeWrite(bytes.length);
    writeAllSync(this.#file, bytes);
    this.#size += bytes.length;
  }

  async write(bytes: Uint8Array): Promise<void> {
    this.#beforeWrite(bytes.length);
    this.#size += bytes.length;
    await writeAll(this.#file, bytes);
  }

  close(): void {
    try {
      this.#file.close();
    } catch {
      // Already closed.
    }
  }

  #beforeWrite(length: number): void {
    if (this.#size === 0 || this.#size + length <= this.#max) return;
    this.#file.close();
    Deno.renameSync(this.#path, backupName(this.#path, this.#now()));
    this.#file = openLog(this.#path);
    this.#size = 0;
    this.#removeOldBackups();
  }

  #removeOldBackups(): void {
    if (this.#maxBackups <= 0 && this.#maxAgeMs <= 0) return;
    const dir = dirname(this.#path);
    const backups: { name: string; time: number }[] = [];
    for (const entry of Deno.readDirSync(dir)) {
      const time = backupTime(this.#path, entry.name);
      if (entry.isFile && time !== undefined) backups.push({ name: entry.name, time });
    }
    backups.sort((a, b) => b.time - a.time);
    const cutoff = this.#now() - this.#maxAgeMs;
    backups.forEach((b, i) => {
      const tooMany = this.#maxBackups > 0 && i >= this.#maxBackups;
      const tooOld = this.#maxAgeMs > 0 && b.time < cutoff;
      if (tooMany || tooOld) {
        try {
          Deno.removeSync(join(dir, b.name));
        } catch {
          // Gone already.
        }
      }
    });
  }
}

function openLog(path: string): Deno.FsFile {
  return Deno.openSync(path, { create: true, append: true, mode: 0o600 });
}

/** `audit.log` rotated at `t`: `audit-2026-11-27T10-00-00.123.log` (UTC). */
export function backupName(path: string, t: number): string {
  const ext = extname(path);
  const stem = path.slice(0, path.length - ext.length);
  const stamp = new Date(t).toISOString().slice(0, 23).replace(/:/g, "-");
  return `${stem}-${stamp}${ext}`;
}

/** The time a backup of `path` named `name` was made; undefined when it is none. */
function backupTime(path: string, name: string): number | undefined {
  const ext = extname(path);
  const base = basename(path);
  const stem = base.slice(0, base.length - ext.length);
  if (!name.startsWith(`${stem}-`) || !name.endsWith(ext)) return undefined;
  const stamp = name.slice(stem.length + 1, name.length - ext.length);
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d)-(\d\d)-(\d\d)\.(\d{3})$/.exec(stamp);
  if (!m) return undefined;
  const t = Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`);
  return Number.isNaN(t) ? undefined : t;
}

function writeAllSync(w: { writeSync(p: Uint8Array): number }, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += w.writeSync(bytes.subarray(off));
}

async function writeAll(w: { write(p: Uint8Array): Promise<number> }, bytes: Uint8Array) {
  let off = 0;
  while (off < bytes.length) off += await w.write(bytes.subarray(off));
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
