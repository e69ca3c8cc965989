/**
 * Object files: one file per live key holding its current state, under `objects/` at the
 * path {@link keyToPath} gives. They are a cache of the journal that lets old segments go:
 * written in the background after the journal record is durable, coalesced per key, without
 * an fsync on the write path; {@link ObjectFiles.sync} later makes everything written so far
 * durable in one pass (that is what a checkpoint waits for).
 *
 * A file holds `{"key", "createRevision", "modRevision", "value"}` as JSON and is replaced
 * atomically (temporary file + rename), so a reader sees an old or a new version, never a
 * mix. After a crash an unsynced file may be old, missing or empty; replay of the journal
 * after the checkpoint rewrites every such file.
 * @module
 */

import type { StoreLogger } from "./logger.ts";
import { isNotFound, parentDir, syncDir, syncFileSystem } from "./fsutil.ts";
import { keyToPath, OBJECT_SUFFIX } from "./keypath.ts";
import { ObjectFileWriter, type WriteOp, type WriteResults } from "./object_writer.ts";
import { DIR_MODE, FILE_MODE } from "./permissions.ts";
import type { KeyValue } from "./store.ts";

/** Parallel file operations when syncing. */
const IO_CONCURRENCY = 16;
/** From this many files written since the last sync, one sync of the whole file system costs
 * less than a pass over them (a process start: about 1.5 ms, 0.4 ms of CPU here). */
const FILE_SYSTEM_SYNC_FROM = 64;
/** Changes written per background step; the writer re-checks its policy between steps. */
const CHUNK = 512;

/** When the background writer runs. */
export interface ObjectWritePolicy {
  /** Write once no change has been scheduled for this long. @default 50 */
  idleMs?: number;
  /** Write regardless of traffic once this many keys wait. @default 250_000 */
  maxBacklog?: number;
  /** Write regardless of traffic once the oldest waiting change is this old. @default 60_000 */
  maxDelayMs?: number;
}

/** Counters for tests and metrics. */
export interface ObjectFileStats {
  /** Files written (created or replaced). */
  writes: number;
  /** Files removed. */
  removes: number;
  /** Sync passes completed. */
  syncs: number;
  /** Of those, the passes done by one sync of the whole file system. */
  fileSystemSyncs: number;
  /** Writes that failed (they are retried by the next step or flush). */
  failures: number;
  /** Keys whose file is not yet written. */
  backlog: number;
}

interface Change {
  /** Oldest change of the key not yet on disk. */
  firstRevision: number;
  /** When that change was scheduled (performance.now()). */
  since: number;
  /** Newest state. */
  kv: KeyValue | undefined;
}

/** Runs `fn` over `items` with at most `opts.limit` calls in flight. */
async function pool<T>(
  items: T[],
  fn: (item: T) => Promise<void>,
  opts: { limit: number },
): Promise<void> {
  const limit = opts.limit;
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * The object-file directory and its background writer.
 *
 * Creating files competes with the journal's fdatasync for the file system's own journal, so
 * the writer stays out of the way of traffic: it writes once the store has been idle for
 * `idleMs`, or when the backlog grows past `maxBacklog` keys or `maxDelayMs` of age, and
 * always on {@link flush}. It writes in chunks and re-checks between them. Changes to the same
 * key coalesce: only the newest state is written.
 *
 * `#dirty` keeps keys in the order their oldest unwritten change arrived (a Map keeps
 * insertion order and re-setting a key keeps its place), so the first entry bounds what is
 * written: every change older than its `firstRevision` is on disk.
 */
export class ObjectFiles {
  readonly dir: string;
  readonly #logger: StoreLogger;
  readonly #idleMs: number;
  readonly #maxBacklog: number;
  readonly #maxDelayMs: number;
  readonly #storedValue: ((kv: KeyValue) => string) | undefined;
  readonly #fileSystemSync: (path: string) => Promise<boolean>;
  #dirty = new Map<string, Change>();
  /** Newest revision handed to {@link schedule}. */
  #scheduled: number;
  #lastSchedule = 0;
  #running: Promise<void> | undefined;
  #flushing = 0;
  /** Set by {@link stop}: write until this time (performance.now()), then no more. */
  #stopAt: number | undefined;
  #stalled = false;
  #sleepTimer: ReturnType<typeof setTimeout> | undefined;
  #wakeSleeper: (() => void) | undefined;
  /** Serializes write steps and sync passes. */
  #lock: Promise<void> = Promise.resolve();
  #knownDirs = new Set<string>();
  #unsyncedFiles = new Set<string>();
  #unsyncedDirs = new Set<string>();
  #stats = { writes: 0, removes: 0, syncs: 0, fileSystemSyncs: 0, failures: 0 };
  /** Writes the files, on a thread of its own. */
  readonly #writer: ObjectFileWriter;

  /** A writer for `dir` whose files reflect every change up to `revision`. */
  constructor(
    dir: string,
    opts: {
      revision: number;
      logger: StoreLogger;
      policy?: ObjectWritePolicy;
      /** The value as the file holds it (encrypted at rest). @default the value */
      storedValue?: (kv: KeyValue) => string;
      /** Syncs a whole file system (tests replace it). @default {@link syncFileSystem} */
      fileSystemSync?: (path: string) => Promise<boolean>;
    },
  ) {
    this.#storedValue = opts.storedValue;
    this.#fileSystemSync = opts.fileSystemSync ?? syncFileSystem;
    this.dir = dir;
    this.#logger = opts.logger;
    this.#scheduled = opts.revision;
    this.#idleMs = opts.policy?.idleMs ?? 50;
    this.#maxBacklog = opts.policy?.maxBacklog ?? 250_000;
    this.#maxDelayMs = opts.policy?.maxDelayMs ?? 60_000;
    this.#writer = new ObjectFileWriter(dir, { fileMode: FILE_MODE, dirMode: DIR_MODE });
  }

  /**
   * Reads every object file under `dir`. Leftover temporary files, unreadable files and
   * files whose key does not encode to their own path are removed with a warning (the
   * journal restores whatever they should have held, if anything).
   */
  static async load(dir: string, logger: StoreLogger): Promise<Map<string, KeyValue>> {
    await Deno.mkdir(dir, { recursive: true, mode: DIR_MODE });
    const files: string[] = [];
    const walk = async (rel: string) => {
      for await (const e of Deno.readDir(rel ? `${dir}/${rel}` : dir)) {
        const path = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory) await walk(path);
        else files.push(path);
      }
    };
    await walk("");
    const out = new Map<string, KeyValue>();
    await pool(files, async (rel) => {
      const full = `${dir}/${rel}`;
      if (!rel.endsWith(OBJECT_SUFFIX)) {
        if (!rel.endsWith(".tmp")) logger.warn(`objects: removing stray file "${full}"`);
        await Deno.remove(full).catch(() => {});
        return;
      }
      const kv = parseObject(await Deno.readTextFile(full));
      if (!kv || keyToPath(kv.key) !== rel) {
        logger.warn(
          `objects: removing "${full}": ${kv ? `it holds key "${kv.key}"` : "unreadable content"}`,
        );
        await Deno.remove(full).catch(() => {});
        return;
      }
      out.set(kv.key, Object.freeze(kv));
    }, { limit: 32 });
    return out;
  }

  /** A snapshot of the counters. */
  get stats(): ObjectFileStats {
    return { ...this.#stats, backlog: this.#dirty.size };
  }

  /** Every change with revision ≤ this has been written (perhaps not yet synced). */
  get writtenRevision(): number {
    const first = this.#dirty.values().next();
    return first.done ? this.#scheduled : first.value.firstRevision - 1;
  }

  /** Declares that the files reflect every change up to `revision` except those scheduled. */
  advance(revision: number): void {
    this.#scheduled = Math.max(this.#scheduled, revision);
  }

  /**
   * Records that `key` is `change.kv` (or deleted, when it is undefined) as of
   * `change.revision`, to be written in the background. Call in revision order.
   */
  schedule(key: string, change: { kv: KeyValue | undefined; revision: number }): void {
    const { kv, revision } = change;
    const now = performance.now();
    const prev = this.#dirty.get(key);
    if (prev) prev.kv = kv;
    else this.#dirty.set(key, { firstRevision: revision, since: now, kv });
    this.#scheduled = Math.max(this.#scheduled, revision);
    this.#lastSchedule = now;
    this.#kick();
  }

  #kick(): void {
    if (this.#running || this.#stalled || this.#dirty.size === 0) return;
    if (this.#stopAt !== undefined && performance.now() >= this.#stopAt) return;
    this.#running = this.#run().catch((err) => {
      this.#logger.warn(`objects: background writer stopped: ${(err as Error).message}`);
      this.#stalled = true;
    }).finally(() => {
      this.#running = undefined;
      this.#kick();
    });
  }

  /** Whether the writer should write now rather than wait for a quiet moment. */
  #pressed(now: number): boolean {
    if (this.#flushing > 0 || this.#dirty.size >= this.#maxBacklog) return true;
    const first = this.#dirty.values().next();
    return !first.done && now - first.value.since >= this.#maxDelayMs;
  }

  async #run(): Promise<void> {
    while (this.#dirty.size > 0 && !this.#stalled) {
      const now = performance.now();
      if (this.#stopAt !== undefined && now >= this.#stopAt) return;
      const quiet = now - this.#lastSchedule;
      if (quiet < this.#idleMs && !this.#pressed(now)) {
        await this.#sleep(this.#idleMs - quiet);
        continue;
      }
      await this.#exclusive(() => this.#writeChunk());
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#wakeSleeper = resolve;
      this.#sleepTimer = setTimeout(() => this.#wake(), Math.max(1, ms));
      Deno.unrefTimer(this.#sleepTimer);
    });
  }

  #wake(): void {
    clearTimeout(this.#sleepTimer);
    this.#sleepTimer = undefined;
    const wake = this.#wakeSleeper;
    this.#wakeSleeper = undefined;
    wake?.();
  }

  async #writeChunk(): Promise<void> {
    const chunk: [string, Change][] = [];
    for (const entry of this.#dirty) {
      chunk.push(entry);
      if (chunk.length >= CHUNK) break;
    }
    for (const [key] of chunk) this.#dirty.delete(key);
    const failed: [string, Change][] = [];
    const fail = (key: string, change: Change, why: string) => {
      this.#stats.failures++;
      failed.push([key, change]);
      this.#logger.warn(`objects: cannot write "${key}": ${why}`);
    };
    // What each file is to hold is made here (values may be encrypted at rest on the way).
    const sent: { key: string; change: Change; op: WriteOp }[] = [];
    for (const [key, change] of chunk) {
      try {
        sent.push({ key, change, op: this.#opOf(key, change.kv) });
      } catch (err) {
        fail(key, change, (err as Error).message);
      }
    }
    let results: WriteResults = [];
    try {
      if (sent.length) results = await this.#writer.write(sent.map((s) => s.op));
    } catch (err) {
      results = sent.map(() => ({ error: (err as Error).message }));
    }
    sent.forEach(({ key, change, op }, i) => {
      const result = results[i] ?? { error: "no answer from the writer" };
      if (typeof result === "object") return fail(key, change, result.error);
      if (result === "absent") return;
      const full = `${this.dir}/${op.rel}`;
      if (op.parent) this.#madeParent(op.parent);
      this.#unsyncedDirs.add(parentDir(full));
      if (op.text === undefined) {
        this.#stats.removes++;
      } else {
        this.#unsyncedFiles.add(op.rel);
        this.#stats.writes++;
      }
    });
    if (failed.length === 0) return;
    // Put the failures back in front (keeping newer states that arrived meanwhile) and stop
    // until the next flush or sync, so a broken disk does not spin the writer.
    failed.sort((a, b) => a[1].firstRevision - b[1].firstRevision);
    const merged = new Map<string, Change>();
    for (const [key, change] of failed) {
      const newer = this.#dirty.get(key);
      merged.set(key, newer ? { ...change, kv: newer.kv } : change);
    }
    for (const [key, change] of this.#dirty) if (!merged.has(key)) merged.set(key, change);
    this.#dirty = merged;
    this.#stalled = true;
  }

  /** The write (or, without a value, the removal) of `key`'s file. */
  #opOf(key: string, kv: KeyValue | undefined): WriteOp {
    const rel = keyToPath(key);
    if (!kv) return { rel };
    const stored = this.#storedValue ? { ...kv, value: this.#storedValue(kv) } : kv;
    const parent = parentDir(rel);
    const known = parent === "." || this.#knownDirs.has(parent);
    return { rel, text: serializeObject(stored), parent: known ? undefined : parent };
  }

  /** A new directory entry is durable only once its parent is synced: remember the chain. */
  #madeParent(parent: string): void {
    for (let d = parent; d !== "." && !this.#knownDirs.has(d); d = parentDir(d)) {
      this.#knownDirs.add(d);
      const up = parentDir(d);
      this.#unsyncedDirs.add(up === "." ? this.dir : `${this.dir}/${up}`);
    }
  }

  /** Marks files written by someone else (a previous process) as needing a sync. */
  markUnsynced(keys: Iterable<string>): void {
    for (const key of keys) {
      const rel = keyToPath(key);
      this.#unsyncedFiles.add(rel);
      this.#unsyncedDirs.add(parentDir(`${this.dir}/${rel}`));
    }
  }

  /**
   * Writes every change scheduled so far, now. Rejects if some could not be written (they
   * stay scheduled).
   */
  async flush(): Promise<void> {
    this.#flushing++;
    try {
      this.#stalled = false;
      this.#wake();
      this.#kick();
      while (this.#running) await this.#running;
      if (this.#dirty.size > 0) {
        throw new Error(`Cannot write ${this.#dirty.size} object files (see warnings)`);
      }
    } finally {
      this.#flushing--;
    }
  }

  /**
   * Writes what it can within `timeoutMs`, then stops the writer for good. Whatever is left
   * stays covered by the journal and is rewritten by the next open. Resolves to the number
   * of keys left unwritten.
   */
  async stop(timeoutMs: number): Promise<number> {
    this.#stopAt = performance.now() + timeoutMs;
    this.#flushing++;
    this.#stalled = false;
    this.#wake();
    this.#kick();
    while (this.#running) await this.#running;
    this.#writer.close();
    return this.#dirty.size;
  }

  /**
   * Makes every file written so far durable: fdatasyncs the files, then fsyncs the
   * directories whose entries changed; or, when there are many, syncs their whole file system
   * at once. Resolves to the revision up to which object files are now complete and durable.
   */
  sync(): Promise<number> {
    if (this.#stalled) {
      this.#stalled = false;
      this.#kick();
    }
    return this.#exclusive(async () => {
      const upTo = this.writtenRevision;
      const files = [...this.#unsyncedFiles];
      const dirs = [...this.#unsyncedDirs];
      this.#unsyncedFiles.clear();
      this.#unsyncedDirs.clear();
      try {
        if (files.length >= FILE_SYSTEM_SYNC_FROM && await this.#syncFileSystem(dirs)) {
          this.#stats.syncs++;
          this.#stats.fileSystemSyncs++;
          return upTo;
        }
        await pool(files, async (rel) => {
          let f: Deno.FsFile;
          try {
            f = await Deno.open(`${this.dir}/${rel}`, { read: true });
          } catch (err) {
            if (isNotFound(err)) return; // removed since; its directory is synced below
            throw err;
          }
          try {
            await f.syncData();
          } finally {
            f.close();
          }
        }, { limit: IO_CONCURRENCY });
        // Deepest first, so a new directory is synced before the entry naming it.
        dirs.sort((a, b) => b.length - a.length);
        for (const d of dirs) {
          await syncDir(d).catch((err) => {
            if (!isNotFound(err)) throw err;
          });
        }
      } catch (err) {
        for (const f of files) this.#unsyncedFiles.add(f);
        for (const d of dirs) this.#unsyncedDirs.add(d);
        throw err;
      }
      this.#stats.syncs++;
      return upTo;
    });
  }

  /** Syncs the whole file system of the object files (see {@link syncFileSystem}), when the
   * directories `dirs` are all on it (none is a mount point of another): true when done. */
  async #syncFileSystem(dirs: string[]): Promise<boolean> {
    const device = async (path: string) => (await Deno.stat(path)).dev;
    const own = await device(this.dir);
    for (const d of dirs) {
      if (await device(d).catch(() => own) !== own) return false;
    }
    return await this.#fileSystemSync(this.dir);
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#lock.then(fn);
    this.#lock = run.then(() => {}, () => {});
    return run;
  }
}

/** The content of an object file. */
export function serializeObject(kv: KeyValue): string {
  return JSON.stringify({
    key: kv.key,
    createRevision: kv.createRevision,
    modRevision: kv.modRevision,
    value: kv.value,
  });
}

/** Parses an object file; undefined if it is not one. */
export function parseObject(text: string): KeyValue | undefined {
  try {
    const o = JSON.parse(text);
    if (
      typeof o?.key === "string" && typeof o.value === "string" &&
      Number.isSafeInteger(o.createRevision) && Number.isSafeInteger(o.modRevision) &&
      o.createRevision > 0 && o.modRevision >= o.createRevision
    ) {
      return {
        key: o.key,
        value: o.value,
        createRevision: o.createRevision,
        modRevision: o.modRevision,
      };
    }
  } catch {
    // not JSON: torn or foreign
  }
  return undefined;
}
