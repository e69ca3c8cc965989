/**
 * FileStore: the default, embedded {@link Store}. Layout under its directory:
 *
 * ```
 * <dir>/lock          held (flock) while a process has the store open
 * <dir>/journal/      append-only segments: the source of truth (see journal/journal.ts)
 * <dir>/objects/      one file per live key, its current state (may lag the journal)
 * <dir>/checkpoint    revision up to which object files are complete and durable
 * ```
 *
 * A write resolves once its journal record is fdatasync'd (group commit shares the sync
 * between concurrent writes). Object files are written later in the background and made
 * durable by periodic checkpoints, which also let old journal segments go. Every
 * acknowledged write survives SIGKILL or power loss: on open the journal after the
 * checkpoint is replayed over the object files (see recovery.ts).
 *
 * @example
 * ```ts
 * const store = await FileStore.open({ dir: "data/store" });
 * await store.create("/registry/core/namespaces/default", "{}");
 * await store.close();
 * ```
 * @module
 */

import { type Checkpoint, writeCheckpoint } from "./checkpoint.ts";
import { type Clock, systemClock } from "../api/mod.ts";
import { consoleLogger, type StoreLogger } from "./logger.ts";
import { Engine, type EngineOptions, type EngineState } from "./engine.ts";
import { eventToRecord } from "./journal/event.ts";
import type { Journal, JournalStats } from "./journal/journal.ts";
import type { ObjectFiles, ObjectFileStats, ObjectWritePolicy } from "./objects.ts";
import { DIR_MODE, FILE_MODE } from "./permissions.ts";
import { recover } from "./recovery.ts";
import { removeAtomicTemps } from "./fsutil.ts";
import type { KeyValue, StoreEvent } from "./store.ts";
import type { StoredValues, ValueTransformer } from "./transformer.ts";

const DEFAULT_RETENTION_MS = 5 * 60_000;

/** Options of {@link FileStore.open}. */
export interface FileStoreOptions extends EngineOptions {
  /** The store's directory; created if missing. */
  dir: string;
  /** Receives repair and trouble warnings. @default console.warn */
  logger?: StoreLogger;
  /** Journal segment size that triggers a new segment. @default 64 MiB */
  segmentBytes?: number;
  /** How often object files are synced, the checkpoint advanced and old segments deleted.
   * @default min(30_000, max(1_000, historyRetentionMs / 2)) */
  checkpointIntervalMs?: number;
  /** When object files are written in the background (they wait for quiet moments). */
  objectWrites?: ObjectWritePolicy;
  /** How long `close` keeps writing object files before leaving the rest to the journal
   * (replayed by the next open). @default 3_000 */
  closeFlushMs?: number;
  /** Journal space reserved ahead of the writes, in zero-filled steps of this size, so that
   * most fdatasyncs need no file-system metadata update; 0 disables. @default 4 MiB */
  preallocateBytes?: number;
  /** Turns values into what the journal and object files hold (encryption at rest) and
   * back. Memory keeps plain values. @default values are stored as they are */
  transformer?: ValueTransformer;
}

/** Counters for tests and metrics. */
export interface FileStoreStats {
  journal: JournalStats;
  objects: ObjectFileStats;
  /** The revision of the last checkpoint written. */
  checkpointRevision: number;
}

/** Another process (or store) holds the directory's lock. */
export class StoreLockedError extends Error {
  readonly dir: string;
  constructor(dir: string) {
    super(`Storage directory "${dir}" is in use by another store`);
    this.name = "StoreLockedError";
    this.dir = dir;
  }
}

/** The file-backed {@link Store}. Open with {@link FileStore.open}. */
export class FileStore extends Engine {
  readonly dir: string;
  readonly #journal: Journal;
  readonly #objects: ObjectFiles;
  readonly #lock: Deno.FsFile;
  readonly #logger: StoreLogger;
  readonly #closeFlushMs: number;
  readonly #clock: Clock;
  readonly #retentionMs: number;
  readonly #checkpointMs: number;
  readonly #stored: StoredValues;
  /** Keys whose stored value is not in the form a write would give it now. */
  readonly #stale: Set<string>;
  #checkpoint: Checkpoint;
  #checkpointing: Promise<number> | undefined;
  #timer: ReturnType<typeof setInterval>;

  private constructor(
    state: EngineState,
    parts: {
      journal: Journal;
      objects: ObjectFiles;
      lock: Deno.FsFile;
      checkpoint: Checkpoint;
      stale: Set<string>;
      stored: StoredValues;
    },
    opts: FileStoreOptions,
  ) {
    super(state, opts);
    this.#stored = parts.stored;
    this.#stale = parts.stale;
    this.dir = opts.dir;
    this.#journal = parts.journal;
    this.#objects = parts.objects;
    this.#lock = parts.lock;
    this.#checkpoint = parts.checkpoint;
    this.#logger = opts.logger ?? consoleLogger;
    this.#closeFlushMs = opts.closeFlushMs ?? 3_000;
    this.#clock = opts.clock ?? systemClock;
    this.#retentionMs = opts.historyRetentionMs ?? DEFAULT_RETENTION_MS;
    this.#checkpointMs = opts.checkpointIntervalMs ??
      Math.min(30_000, Math.max(1_000, this.#retentionMs / 2));
    this.#timer = setInterval(() => {
      this.checkpoint().catch((err) =>
        this.#logger.warn(`storage: checkpoint failed: ${(err as Error).message}`)
      );
    }, this.#checkpointMs);
    Deno.unrefTimer(this.#timer);
  }

  /**
   * Opens (or creates) the store in `opts.dir`: takes the directory lock, loads the object
   * files, replays the journal after the checkpoint, repairs object files, truncates a torn
   * journal tail (with a warning) and rebuilds the retained history. Throws if another
   * process holds the directory or the journal is damaged beyond its tail.
   */
  static async open(opts: FileStoreOptions): Promise<FileStore> {
    const logger = opts.logger ?? consoleLogger;
    await Deno.mkdir(opts.dir, { recursive: true, mode: DIR_MODE });
    const lock = await Deno.open(`${opts.dir}/lock`, {
      read: true,
      write: true,
      create: true,
      mode: FILE_MODE,
    });
    try {
      if (!await lock.tryLock(true)) {
        throw new StoreLockedError(opts.dir);
      }
      // A checkpoint write cut short by a crash; the lock says no one writes here now.
      for (const name of await removeAtomicTemps(opts.dir)) {
        logger.warn(`removing "${opts.dir}/${name}", left by an interrupted write`);
      }
      const r = await recover(opts.dir, {
        logger,
        clock: opts.clock ?? systemClock,
        historyRetentionMs: opts.historyRetentionMs ?? DEFAULT_RETENTION_MS,
        segmentBytes: opts.segmentBytes,
        preallocateBytes: opts.preallocateBytes,
        objectWrites: opts.objectWrites,
        transformer: opts.transformer,
      });
      return new FileStore(r.state, { ...r, lock }, opts);
    } catch (err) {
      lock.close();
      throw err;
    }
  }

  protected persist(event: StoreEvent, time: number): Promise<void> {
    const record = eventToRecord(event, time);
    if (this.#stored.transforms) {
      if (event.type === "put") record.value = this.#stored.of(event.kv);
      if (event.prevKv) record.prevValue = this.#stored.of(event.prevKv);
    }
    if (this.#stale.size > 0) this.#stale.delete(event.kv.key);
    return this.#journal.append(record);
  }

  /**
   * True when `kv`'s stored value is not what a write would store now: it was written with
   * another encryption provider or key than the one new writes use (or in clear text before
   * its resource was encrypted). Writing it again, unchanged, re-encrypts it.
   */
  override isStale(kv: KeyValue): boolean {
    return this.#stale.has(kv.key);
  }

  protected override afterApply(events: readonly StoreEvent[]): void {
    for (const ev of events) {
      this.#objects.schedule(ev.kv.key, {
        kv: ev.type === "put" ? ev.kv : undefined,
        revision: ev.revision,
      });
    }
  }

  /** Counters: journal appends and fsyncs, object file writes, checkpoint revision. */
  stats(): FileStoreStats {
    return {
      journal: this.#journal.stats,
      objects: this.#objects.stats,
      checkpointRevision: this.#checkpoint.revision,
    };
  }

  /**
   * Writes every pending object file now and then checkpoints (what `close` does, without
   * closing). Resolves to the checkpoint revision. Does not change the store's revision.
   */
  async flush(): Promise<number> {
    await this.#objects.flush();
    await this.#checkpointing?.catch(() => {});
    return await this.checkpoint();
  }

  /**
   * Syncs the object files written so far, records the checkpoint and deletes journal
   * segments older than both the checkpoint and the retained history, or older than the
   * checkpoint and the retention window (so that a deleted value leaves the disk at most the
   * retention plus three checkpoint intervals after its deletion, even when nothing else is
   * written). Runs on a timer and on close. Resolves to the checkpoint revision. Does not
   * change the store's revision.
   */
  checkpoint(): Promise<number> {
    this.#checkpointing ??= this.#writeCheckpoint().finally(() => {
      this.#checkpointing = undefined;
    });
    return this.#checkpointing;
  }

  async #writeCheckpoint(): Promise<number> {
    // Never move back: a startup repair of an older key may be pending below the checkpoint.
    const revision = Math.max(await this.#objects.sync(), this.#checkpoint.revision);
    const compacted = Math.max(1, this.oldestRevision());
    if (revision !== this.#checkpoint.revision || compacted !== this.#checkpoint.compacted) {
      this.#checkpoint = { revision, compacted };
      await writeCheckpoint(`${this.dir}/checkpoint`, this.#checkpoint);
    }
    const now = this.#clock.now();
    await this.#journal.prune(Math.min(revision + 1, compacted), {
      expired: { before: now - this.#retentionMs, upTo: revision },
    });
    // Segments span at most about one interval, so that they expire soon after their records.
    await this.#journal.rotate(now - this.#checkpointMs);
    return revision;
  }

  protected override async closeBackend(): Promise<void> {
    clearInterval(this.#timer);
    try {
      await this.#journal.flush();
      await this.#checkpointing?.catch(() => {});
      const left = await this.#objects.stop(this.#closeFlushMs);
      if (left > 0) {
        this.#logger.warn(
          `storage: closing with ${left} object files unwritten; the next open replays them ` +
            `from the journal`,
        );
      }
      await this.checkpoint();
    } finally {
      await this.#journal.close();
      // Unlock before closing: closing a file can be deferred while an operation on it is
      // pending, and the next open must find the directory free once close() resolves.
      await this.#lock.unlock().catch(() => {});
      this.#lock.close();
    }
  }
}
