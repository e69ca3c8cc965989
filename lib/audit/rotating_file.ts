/**
 * The audit log's file, rotated as kube's (lumberjack's) is: when a write would take it past
 * `--audit-log-maxsize` megabytes (0: 100), it is renamed to
 * `<name>-<UTC time as 2006-01-02T15-04-05.000><ext>` and a new one is opened (0600); then
 * backups beyond `--audit-log-maxbackup` (0: all kept) and older than `--audit-log-maxage` days
 * (0: kept) are removed.
 * @module
 */

import { basename, dirname, extname, join } from "node:path";

/** Where the log goes and when it rotates. */
export interface RotationOptions {
  /** A file, or `-` for standard output. */
  path: string;
  /** `--audit-log-maxsize`: megabytes; 0: 100. */
  maxSizeMB?: number;
  /** The limit in bytes, for tests (overrides maxSizeMB). */
  maxSizeBytes?: number;
  /** `--audit-log-maxbackup`: 0 keeps every backup. */
  maxBackups?: number;
  /** `--audit-log-maxage`: days; 0 keeps every backup. */
  maxAgeDays?: number;
  /** The time rotated names carry. @default Date.now */
  now?: () => number;
}

const MB = 1024 * 1024;
const encoder = new TextEncoder();

/** A file that rotates by size, as lumberjack does. */
export class RotatingFile {
  readonly #path: string;
  readonly #max: number;
  readonly #maxBackups: number;
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  #file: Deno.FsFile;
  #size: number;

  constructor(opts: RotationOptions) {
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

export function writeAllSync(w: { writeSync(p: Uint8Array): number }, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += w.writeSync(bytes.subarray(off));
}

export async function writeAll(w: { write(p: Uint8Array): Promise<number> }, bytes: Uint8Array) {
  let off = 0;
  while (off < bytes.length) off += await w.write(bytes.subarray(off));
}

/** The largest buffer {@link ReusedBytes} keeps for the next batch. */
const MAX_REUSED_BYTES = 4 * MB;
/** Characters {@link ReusedBytes} joins into one string before encoding them. */
const CHUNK_CHARS = 32 * 1024;

/**
 * UTF-8 bytes of batches of lines, in one buffer reused from batch to batch: at thousands of
 * events a second, a new buffer per batch was as much garbage (outside V8's heap, which it
 * counts towards collecting) as the batch's text. A batch's bytes are valid until the next.
 */
export class ReusedBytes {
  #buffer = new Uint8Array(64 * 1024);

  /**
   * The texts of `items`, each followed by `suffix`, as UTF-8. They are joined and encoded a
   * chunk of about 32k characters at a time: a batch never becomes one string (of hundreds of
   * kB, which V8 makes outside its young generation and only a full collection frees), and an
   * `encodeInto` per item (half a µs of argument checks each) is not paid either.
   */
  join<T>(items: readonly T[], text: (item: T) => string, suffix: string): Uint8Array {
    let buffer = this.#buffer;
    let at = 0;
    let chunk: string[] = [];
    let chars = 0;
    const encode = () => {
      const t = chunk.join("");
      // Room for the text at 3 bytes a UTF-16 unit, its most.
      const need = at + t.length * 3;
      if (need > buffer.length) {
        const grown = new Uint8Array(Math.max(need, buffer.length * 2));
        grown.set(buffer.subarray(0, at));
        buffer = grown;
      }
      at += encoder.encodeInto(t, buffer.subarray(at)).written;
      chunk = [];
      chars = 0;
    };
    for (const item of items) {
      const line = text(item) + suffix;
      chunk.push(line);
      chars += line.length;
      if (chars >= CHUNK_CHARS) encode();
    }
    if (chars > 0) encode();
    if (buffer.length <= MAX_REUSED_BYTES) this.#buffer = buffer;
    return buffer.subarray(0, at);
  }
}
