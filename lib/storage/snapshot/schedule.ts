/**
 * Snapshots on a schedule (`--snapshot-interval`, `--snapshot-retention`): every interval a
 * snapshot file `platform-snapshot-<UTC time>-r<revision>.snap` in the snapshot directory,
 * then the oldest beyond the retention count are deleted. A round is skipped when the store has
 * not changed since the newest file's revision (so an idle server does not rotate its distinct
 * older snapshots away for copies of one). A failed round is logged and the next one tries
 * again; a round never overlaps the previous one.
 * @module
 */

import { isNotFound } from "../fsutil.ts";
import type { StoreLogger } from "../logger.ts";
import { encodeSnapshot, type SnapshotContent } from "./format.ts";
import { writeSnapshotFile } from "./files.ts";

/** Scheduled snapshot files are named so that their names sort by age. */
const SNAPSHOT_FILE = /^platform-snapshot-\d{8}T\d{9}Z-r\d+\.snap$/;

/** Options of {@link scheduleSnapshots}. */
export interface SnapshotScheduleOptions {
  /** Where the files go (made 0700 if missing). */
  dir: string;
  intervalMs: number;
  /** How many of the newest snapshot files are kept. */
  retention: number;
  /** Takes one snapshot of the running store. */
  take: () => Promise<SnapshotContent>;
  /** The store's revision now, to skip a round when nothing changed. */
  currentRevision?: () => number;
  logger: StoreLogger & { info?(message: string): void };
}

/** A running schedule. */
export interface SnapshotSchedule {
  /** Stops the timer and waits for a round in progress. */
  stop(): Promise<void>;
}

/** Starts taking snapshots every `intervalMs`; the first one after one interval. */
export function scheduleSnapshots(opts: SnapshotScheduleOptions): SnapshotSchedule {
  let round: Promise<void> | undefined;
  const timer = setInterval(() => {
    round ??= changedSinceNewest(opts).then((changed) => {
      if (changed) return snapshotRound(opts);
    }).then(() => {}, (err) => {
      opts.logger.warn(`snapshot: failed: ${(err as Error).message}`);
    }).finally(() => round = undefined);
  }, opts.intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await round;
    },
  };
}

/** Takes one snapshot into `opts.dir` and applies the retention; resolves to its path. */
export async function snapshotRound(opts: SnapshotScheduleOptions): Promise<string> {
  const content = await opts.take();
  const stamp = content.takenAt ?? new Date();
  const name = `platform-snapshot-${fileStamp(stamp)}-r${content.revision}.snap`;
  const path = `${opts.dir}/${name}`;
  await writeSnapshotFile(encodeSnapshot(content), path);
  opts.logger.info?.(
    `snapshot: revision ${content.revision} (${content.items.length} keys) written to ${path}`,
  );
  await pruneSnapshots(opts.dir, opts.retention);
  return path;
}

/** False when the newest scheduled file of `opts.dir` is at the store's current revision. */
async function changedSinceNewest(opts: SnapshotScheduleOptions): Promise<boolean> {
  if (!opts.currentRevision) return true;
  const names = await scheduledFiles(opts.dir);
  const newest = names.at(-1)?.match(/-r(\d+)\.snap$/)?.[1];
  return newest === undefined || Number(newest) !== opts.currentRevision();
}

/** The scheduled snapshot files of `dir`, oldest first. */
async function scheduledFiles(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile && SNAPSHOT_FILE.test(e.name)) names.push(e.name);
  }
  return names.sort();
}

/** Deletes all but the newest `keep` scheduled snapshot files of `dir`. */
export async function pruneSnapshots(dir: string, keep: number): Promise<string[]> {
  const names = await scheduledFiles(dir);
  const old = names.slice(0, Math.max(0, names.length - keep));
  for (const name of old) {
    await Deno.remove(`${dir}/${name}`).catch((err) => {
      if (!isNotFound(err)) throw err;
    });
  }
  return old;
}

/** `20261127T183012345Z`: UTC, to the millisecond, sortable as text. */
function fileStamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, "").replace(".", "");
}
