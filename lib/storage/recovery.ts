/**
 * Opening a file store directory: rebuild the state, the history and consistent object files
 * from the checkpoint, the object files and the journal.
 *
 * 1. Read the checkpoint C: object files reflect every write ≤ C, durably.
 * 2. Load the object files (state at C or a little later: the writer may have run ahead).
 * 3. Replay the journal (truncating a torn tail); apply every record > C to the state. The
 *    last record of a key is its truth, whatever its object file says.
 * 4. Repair object files that lag or lead that truth (rewrite or delete them). A file ahead
 *    of the whole journal means the journal lost acknowledged records (a damaged disk): its
 *    state is restored from the key's last record if there is one, dropped if the key was
 *    created after the journal's end, and otherwise journaled again as a new revision.
 * 5. The records of the journal's contiguous tail at or after the compaction floor (and
 *    inside the retention window) become the history, so reads at older revisions and
 *    watches from a revision work across restarts.
 * 6. Hand the repairs to the background object writer and mark the files written since C
 *    for the next sync: the next checkpoint covers them (opening stays fast after a crash
 *    with a large backlog).
 * @module
 */

import type { Clock } from "../api/mod.ts";
import type { StoreLogger } from "./logger.ts";
import { type Checkpoint, readCheckpoint } from "./checkpoint.ts";
import type { EngineState } from "./engine.ts";
import { recordToEvent } from "./journal/event.ts";
import { Journal } from "./journal/journal.ts";
import type { JournalRecord } from "./journal/record.ts";
import { ObjectFiles, type ObjectWritePolicy } from "./objects.ts";
import type { KeyValue, StoreEvent } from "./store.ts";
import {
  type ReadValue,
  StoredValues,
  unreadableReason,
  type ValueTransformer,
} from "./transformer.ts";

/** What {@link recover} needs. */
export interface RecoveryOptions {
  logger: StoreLogger;
  clock: Clock;
  historyRetentionMs: number;
  segmentBytes?: number;
  preallocateBytes?: number;
  objectWrites?: ObjectWritePolicy;
  /** Reads stored values (decryption at rest); writes of repairs go through it too. */
  transformer?: ValueTransformer;
}

/** An opened directory, ready for a FileStore. */
export interface Recovered {
  state: EngineState;
  journal: Journal;
  objects: ObjectFiles;
  checkpoint: Checkpoint;
  /** Keys whose stored value is outdated (another provider or key than writes use now). */
  stale: Set<string>;
  /** The stored forms of values, shared by the journal appends and the object writer. */
  stored: StoredValues;
}

/** Opens the journal and object files under `dir` and rebuilds a consistent state. */
export async function recover(dir: string, opts: RecoveryOptions): Promise<Recovered> {
  const { logger } = opts;
  const cpPath = `${dir}/checkpoint`;
  const cp = await readCheckpoint(cpPath);
  const reader = new ValueReader(opts.transformer);
  const files = reader.files(await ObjectFiles.load(`${dir}/objects`, logger));
  const records: JournalRecord[] = [];
  const journal = await Journal.open(`${dir}/journal`, {
    logger,
    segmentBytes: opts.segmentBytes,
    preallocateBytes: opts.preallocateBytes,
    onRecord: (r) => records.push(reader.record(r)),
  });
  const stored = new StoredValues(opts.transformer);
  try {
    let current = Math.max(journal.lastRevision, cp.revision);
    const firstAfterCp = records.find((r) => r.revision > cp.revision);
    if (firstAfterCp && firstAfterCp.revision !== cp.revision + 1) {
      logger.warn(
        `recovery: the journal resumes at revision ${firstAfterCp.revision} after checkpoint ` +
          `${cp.revision}; writes in between are lost`,
      );
    }

    // The state: object files, then every record after the checkpoint.
    const state = new Map<string, KeyValue>(files);
    const events = new Map<number, StoreEvent>();
    const eventOf = (r: JournalRecord) => {
      let ev = events.get(r.revision);
      if (!ev) events.set(r.revision, ev = recordToEvent(r));
      return ev;
    };
    const lastRecord = new Map<string, JournalRecord>();
    for (const r of records) {
      lastRecord.set(r.key, r);
      if (r.revision <= cp.revision) continue;
      if (r.type === "put") state.set(r.key, eventOf(r).kv);
      else state.delete(r.key);
    }

    // Object files that lag or lead the journal.
    const repairs = new Map<string, KeyValue | undefined>();
    const touched = new Set<string>();
    for (const [key, r] of lastRecord) {
      if (r.revision <= cp.revision) continue;
      touched.add(key);
      const want = state.get(key);
      if (want?.modRevision !== files.get(key)?.modRevision) repairs.set(key, want);
    }
    const orphans: KeyValue[] = [];
    for (const [key, file] of files) {
      if (file.modRevision <= current || touched.has(key)) continue;
      logger.warn(
        `recovery: object file of "${key}" is at revision ${file.modRevision}, ahead of the ` +
          `journal (revision ${current}); the journal lost acknowledged writes`,
      );
      const r = lastRecord.get(key);
      if (r) {
        const want = r.type === "put" ? eventOf(r).kv : undefined;
        if (want) state.set(key, want);
        else state.delete(key);
        repairs.set(key, want);
      } else if (file.createRevision > current) {
        state.delete(key);
        repairs.set(key, undefined);
      } else {
        orphans.push(file);
      }
    }
    for (const file of orphans) {
      // Its previous value is unknown; keep the newest value under a fresh revision.
      const rec: JournalRecord = {
        type: "put",
        revision: ++current,
        key: file.key,
        value: file.value,
        createRevision: file.createRevision,
        prevModRevision: 0,
        prevValue: "",
        time: opts.clock.now(),
      };
      await journal.append({ ...rec, value: stored.of(file) });
      records.push(rec);
      const kv = eventOf(rec).kv;
      state.set(file.key, kv);
      repairs.set(file.key, kv);
    }

    // Repairs go through the background writer like any other change; the checkpoint only
    // moves past them once they are written and synced (the journal covers them until then).
    const objects = new ObjectFiles(`${dir}/objects`, {
      revision: cp.revision,
      logger,
      policy: opts.objectWrites,
      storedValue: stored.transforms ? (kv) => stored.of(kv) : undefined,
    });
    const ordered = [...repairs].map(([key, kv]) => ({
      key,
      kv,
      revision: lastRecord.get(key)?.revision ?? cp.revision,
    })).sort((a, b) => a.revision - b.revision);
    for (const { key, kv, revision } of ordered) objects.schedule(key, { kv, revision });
    if (touched.size > 0 || repairs.size > 0) {
      logger.warn(
        `recovery: replayed the journal after checkpoint ${cp.revision} up to revision ` +
          `${current}; ${repairs.size} object files are stale and will be rewritten`,
      );
    }
    // Files the previous process wrote after its last checkpoint may not be durable yet.
    objects.markUnsynced(touched);
    objects.advance(current);

    const history = buildHistory(records, {
      current,
      compacted: cp.compacted,
      cutoff: opts.clock.now() - opts.historyRetentionMs,
      eventOf,
    });
    reader.warn(logger, state);
    return {
      state: { kvs: state.values(), revision: current, ...history },
      journal,
      objects,
      checkpoint: cp,
      stale: reader.staleKeys(state, files),
      stored,
    };
  } catch (err) {
    await journal.close();
    throw err;
  }
}

/** The retained history: the contiguous run of records ending at `current`, from the floor. */
function buildHistory(
  records: JournalRecord[],
  opts: {
    current: number;
    compacted: number;
    cutoff: number;
    eventOf: (r: JournalRecord) => StoreEvent;
  },
): Pick<EngineState, "floor" | "history"> {
  let start = records.length;
  while (
    start > 0 &&
    (start === records.length || records[start - 1].revision === records[start].revision - 1)
  ) {
    start--;
  }
  const last = records.at(-1);
  if (!last || last.revision !== opts.current) return { floor: opts.current + 1, history: [] };
  let floor = Math.min(Math.max(opts.compacted, records[start].revision), opts.current);
  // Skip what the retention window has already dropped (keeping the newest event).
  while (
    floor < opts.current && records[start + floor - records[start].revision].time < opts.cutoff
  ) {
    floor++;
  }
  const history = [];
  for (let i = start + floor - records[start].revision; i < records.length; i++) {
    history.push({ event: opts.eventOf(records[i]), time: records[i].time });
  }
  return { floor, history };
}

/** Reads stored values through the transformer and remembers which were stale or unreadable. */
class ValueReader {
  readonly #transformer: ValueTransformer | undefined;
  readonly #staleFiles = new Set<string>();
  readonly #staleRevisions = new Set<number>();

  constructor(transformer: ValueTransformer | undefined) {
    this.#transformer = transformer;
  }

  #read(key: string, stored: string): ReadValue {
    return this.#transformer!.fromStorage(key, stored);
  }

  /** The object files with their values read. */
  files(raw: Map<string, KeyValue>): Map<string, KeyValue> {
    if (!this.#transformer) return raw;
    const out = new Map<string, KeyValue>();
    for (const [key, kv] of raw) {
      const r = this.#read(key, kv.value);
      if (r.stale) this.#staleFiles.add(key);
      out.set(key, r.value === kv.value ? kv : Object.freeze({ ...kv, value: r.value }));
    }
    return out;
  }

  /** A journal record with its values read. */
  record(rec: JournalRecord): JournalRecord {
    if (!this.#transformer) return rec;
    const out = { ...rec };
    if (rec.type === "put") {
      const r = this.#read(rec.key, rec.value);
      if (r.stale) this.#staleRevisions.add(rec.revision);
      out.value = r.value;
    }
    if (rec.prevModRevision > 0) out.prevValue = this.#read(rec.key, rec.prevValue).value;
    return out;
  }

  /** The keys of `state` whose current value was read from an outdated stored form. */
  staleKeys(state: Map<string, KeyValue>, files: Map<string, KeyValue>): Set<string> {
    const stale = new Set<string>();
    if (this.#staleFiles.size === 0 && this.#staleRevisions.size === 0) return stale;
    for (const [key, kv] of state) {
      const fromFile = kv === files.get(key);
      if (fromFile ? this.#staleFiles.has(key) : this.#staleRevisions.has(kv.modRevision)) {
        stale.add(key);
      }
    }
    return stale;
  }

  /** One warning for all the live values that cannot be read. */
  warn(logger: StoreLogger, state: Map<string, KeyValue>): void {
    if (!this.#transformer) return;
    let count = 0;
    let first: [string, string] | undefined;
    for (const [key, kv] of state) {
      const reason = unreadableReason(kv.value);
      if (reason === undefined) continue;
      count++;
      first ??= [key, reason];
    }
    if (!first) return;
    logger.warn(
      `storage: the stored values of ${count} keys cannot be read with the encryption ` +
        `configuration; reading them fails until a key that decrypts them is configured ` +
        `(first: "${first[0]}": ${first[1]})`,
    );
  }
}
