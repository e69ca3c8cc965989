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

import type { Clock, StoreLogger } from "./clock.ts";
import { type Checkpoint, readCheckpoint } from "./checkpoint.ts";
import type { EngineState } from "./engine.ts";
import { recordToEvent } from "./journal/event.ts";
import { Journal } from "./journal/journal.ts";
import type { JournalRecord } from "./journal/record.ts";
import { ObjectFiles, type ObjectWritePolicy } from "./objects.ts";
import type { KeyValue, StoreEvent } from "./store.ts";

/** What {@link recover} needs. */
export interface RecoveryOptions {
  logger: StoreLogger;
  clock: Clock;
  historyRetentionMs: number;
  segmentBytes?: number;
  preallocateBytes?: number;
  objectWrites?: ObjectWritePolicy;
}

/** An opened directory, ready for a FileStore. */
export interface Recovered {
  state: EngineState;
  journal: Journal;
  objects: ObjectFiles;
  checkpoint: Checkpoint;
}

/** Opens the journal and object files under `dir` and rebuilds a consistent state. */
export async function recover(dir: string, opts: RecoveryOptions): Promise<Recovered> {
  const { logger } = opts;
  const cpPath = `${dir}/checkpoint`;
  const cp = await readCheckpoint(cpPath);
  const files = await ObjectFiles.load(`${dir}/objects`, logger);
  const records: JournalRecord[] = [];
  const journal = await Journal.open(`${dir}/journal`, {
    logger,
    segmentBytes: opts.segmentBytes,
    preallocateBytes: opts.preallocateBytes,
    onRecord: (r) => records.push(r),
  });
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
      await journal.append(rec);
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
    return {
      state: { kvs: state.values(), revision: current, ...history },
      journal,
      objects,
      checkpoint: cp,
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
