/**
 * Restoring a file store from a snapshot: the store directory is built beside the target
 * (object files and a checkpoint at the snapshot's revision, an empty journal) and renamed
 * into place only once the whole snapshot has been read, checked and synced. Revisions are
 * kept: every object has the resourceVersion it had when the snapshot was taken, and the next
 * write gets the revision after the snapshot's.
 * @module
 */

import { dirname } from "node:path";
import { writeCheckpoint } from "../checkpoint.ts";
import { isNotFound, syncDir } from "../fsutil.ts";
import { ObjectFiles } from "../objects.ts";
import { DIR_MODE, FILE_MODE } from "../permissions.ts";
import type { StoreLogger } from "../logger.ts";
import { readSnapshotFile } from "./files.ts";
import type { SnapshotHeader } from "./format.ts";

/** The target holds a store and `force` was not given, or a running server holds it. */
export class RestoreRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RestoreRefusedError";
  }
}

/** Whether `storeDir` holds nothing (missing, or an empty directory). */
export async function isEmptyDir(storeDir: string): Promise<boolean> {
  try {
    for await (const _ of Deno.readDir(storeDir)) return false;
    return true;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
}

/** Whether a running store (a server) holds `storeDir`'s lock. */
export async function storeDirLocked(storeDir: string): Promise<boolean> {
  let lock: Deno.FsFile;
  try {
    lock = await Deno.open(`${storeDir}/lock`, { read: true, write: true });
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
  try {
    if (!await lock.tryLock(true)) return true;
    await lock.unlock();
    return false;
  } finally {
    lock.close();
  }
}

/**
 * Brings `storeDir` (a data directory's `store/`) back to the snapshot at `snapshotPath`.
 * Refuses a non-empty `storeDir` unless `force`, and always one a running server holds. The
 * old store, when replaced, is removed only after the new one is in place.
 */
export async function restoreStoreDir(
  snapshotPath: string,
  storeDir: string,
  opts: { force?: boolean; logger: StoreLogger },
): Promise<SnapshotHeader> {
  const replacing = !await isEmptyDir(storeDir);
  if (replacing && !opts.force) {
    throw new RestoreRefusedError(
      `${storeDir} is not empty: it holds a store (add --force to replace it)`,
    );
  }
  if (replacing && await storeDirLocked(storeDir)) {
    throw new RestoreRefusedError(`${storeDir} is in use by a running server: stop it first`);
  }
  const parent = dirname(storeDir);
  await Deno.mkdir(parent, { recursive: true, mode: DIR_MODE });
  const tmp = await Deno.makeTempDir({ dir: parent, prefix: ".store-restore-" });
  try {
    await Deno.chmod(tmp, DIR_MODE);
    const header = await buildStoreDir(snapshotPath, tmp, opts.logger);
    if (replacing) {
      const old = `${tmp}.replaced`;
      await Deno.rename(storeDir, old);
      await Deno.rename(tmp, storeDir);
      await syncDir(parent);
      await Deno.remove(old, { recursive: true });
    } else {
      await Deno.remove(storeDir).catch(() => {}); // an empty directory
      await Deno.rename(tmp, storeDir);
      await syncDir(parent);
    }
    return header;
  } catch (err) {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
    throw err;
  }
}

/** Writes the store of the snapshot into the empty directory `dir`, durably. */
async function buildStoreDir(
  snapshotPath: string,
  dir: string,
  logger: StoreLogger,
): Promise<SnapshotHeader> {
  const objects = new ObjectFiles(`${dir}/objects`, {
    revision: 0,
    logger,
    // Everything is written by the flush below, in one pass.
    policy: { idleMs: 3_600_000, maxDelayMs: 3_600_000, maxBacklog: Number.MAX_SAFE_INTEGER },
  });
  await Deno.mkdir(`${dir}/objects`, { mode: DIR_MODE });
  await Deno.mkdir(`${dir}/journal`, { mode: DIR_MODE });
  const header = await readSnapshotFile(snapshotPath, (kv) => {
    objects.schedule(kv.key, { kv: Object.freeze(kv), revision: kv.modRevision });
  });
  try {
    await objects.flush();
    await objects.sync();
  } finally {
    await objects.stop(0);
  }
  await Deno.writeTextFile(`${dir}/lock`, "", { mode: FILE_MODE });
  // History before the snapshot's revision is not in it: the compaction floor is there.
  await writeCheckpoint(`${dir}/checkpoint`, {
    revision: header.revision,
    compacted: Math.max(1, header.revision),
  });
  await syncDir(`${dir}/journal`);
  await syncDir(dir);
  return header;
}
