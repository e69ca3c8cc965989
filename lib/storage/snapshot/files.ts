/**
 * Snapshot files: taking a snapshot of an open store, writing one to disk whole or not at
 * all, and reading one back with every check of the format.
 * @module
 */

import { basename, dirname } from "node:path";
import { isNotFound, syncDir, writeAll } from "../fsutil.ts";
import { DIR_MODE, FILE_MODE } from "../permissions.ts";
import type { KeyValue, Store } from "../store.ts";
import type { ValueTransformer } from "../transformer.ts";
import {
  type SnapshotContent,
  SnapshotDecoder,
  SnapshotError,
  type SnapshotHeader,
} from "./format.ts";

/**
 * Every live key of `store` at its current revision, values in their stored form (through
 * `transformer`, the encryption at rest a file store applies, as the snapshot is encoded). The
 * list is read in one step at one revision, so writes that come meanwhile are not waited for,
 * and none is half in.
 */
export async function takeSnapshot(
  store: Store,
  transformer?: ValueTransformer,
): Promise<SnapshotContent> {
  // Every key a server stores is under /registry/ (on etcd, other prefixes may be beside it).
  const list = await store.list("/registry/");
  return {
    revision: list.revision,
    items: list.items,
    takenAt: new Date(),
    // Encrypted as the stream is read, not all at once while requests wait.
    storedValue: transformer && ((kv) => transformer.toStorage(kv.key, kv.value)),
  };
}

/**
 * Writes the snapshot `bytes` to `path` (mode 0600, its directory made 0700): into a
 * temporary file beside it, checked as it is written, synced, then renamed. A stream that
 * breaks off or does not check out leaves nothing at `path`. Refuses an existing `path`.
 */
export async function writeSnapshotFile(
  bytes: ReadableStream<Uint8Array>,
  path: string,
): Promise<SnapshotHeader> {
  const dir = dirname(path);
  await Deno.mkdir(dir, { recursive: true, mode: DIR_MODE });
  if (await exists(path)) throw new Deno.errors.AlreadyExists(`${path} already exists`);
  const tmp = `${dir}/.${basename(path)}.partial-${crypto.randomUUID().slice(0, 8)}`;
  const file = await Deno.open(tmp, { write: true, createNew: true, mode: FILE_MODE });
  try {
    await Deno.chmod(tmp, FILE_MODE);
    const decoder = new SnapshotDecoder();
    for await (const chunk of bytes) {
      decoder.push(chunk);
      await writeAll(file, chunk);
    }
    const header = decoder.finish();
    await file.sync();
    file.close();
    await Deno.link(tmp, path); // fails rather than replace a file made meanwhile
    await Deno.remove(tmp);
    await syncDir(dir);
    return header;
  } catch (err) {
    try {
      file.close();
    } catch { /* closed above */ }
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}

/**
 * Reads and checks the snapshot file at `path`, handing each key to `onEntry` as it is read.
 * Resolves to the header once the whole file checked out; a {@link SnapshotError} names what
 * is wrong (truncated, corrupt, another format or version).
 */
export async function readSnapshotFile(
  path: string,
  onEntry: (kv: KeyValue) => void = () => {},
): Promise<SnapshotHeader> {
  const file = await Deno.open(path, { read: true });
  const decoder = new SnapshotDecoder(onEntry);
  try {
    for await (const chunk of file.readable) decoder.push(chunk);
  } catch (err) {
    if (err instanceof SnapshotError) throw err;
    throw new SnapshotError(`cannot read: ${(err as Error).message}`);
  }
  return decoder.finish();
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
