/**
 * The checkpoint file: the revision up to which object files are known complete and
 * durable, and the compaction floor, so both survive a restart. Replaced atomically.
 * @module
 */

import { isNotFound, writeFileAtomic } from "./fsutil.ts";

/** What the `checkpoint` file records. */
export interface Checkpoint {
  /** Object files reflect every write with revision ≤ this one, durably. */
  revision: number;
  /** History before this revision had been compacted. */
  compacted: number;
}

/** The checkpoint of a directory that has none. */
export const NO_CHECKPOINT: Checkpoint = { revision: 0, compacted: 1 };

/** Reads the checkpoint at `path`; {@link NO_CHECKPOINT} if the file does not exist. */
export async function readCheckpoint(path: string): Promise<Checkpoint> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (isNotFound(err)) return NO_CHECKPOINT;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const cp = parsed as Partial<Checkpoint> | undefined;
  if (
    !cp || cp.revision === undefined || !Number.isSafeInteger(cp.revision) || cp.revision < 0 ||
    cp.compacted === undefined || !Number.isSafeInteger(cp.compacted) || cp.compacted < 1
  ) {
    throw new Error(`Cannot parse checkpoint file "${path}": ${JSON.stringify(text.slice(0, 80))}`);
  }
  return { revision: cp.revision, compacted: cp.compacted };
}

/** Replaces the checkpoint at `path` durably. */
export async function writeCheckpoint(path: string, cp: Checkpoint): Promise<void> {
  const body = JSON.stringify({ version: 1, revision: cp.revision, compacted: cp.compacted });
  await writeFileAtomic(path, body + "\n");
}
