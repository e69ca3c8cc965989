/**
 * Small file-system helpers shared by the journal and the file store: directory fsync and
 * atomic file replacement.
 * @module
 */

import { FILE_MODE } from "./permissions.ts";

/** fsyncs a directory so that entries created, renamed or removed in it are durable. */
export async function syncDir(path: string): Promise<void> {
  const dir = await Deno.open(path, { read: true });
  try {
    await dir.sync();
  } finally {
    dir.close();
  }
}

/**
 * Replaces `path` with `data` atomically: writes `path.tmp`, fdatasyncs it, renames it over
 * `path` and fsyncs the directory. Readers see either the old or the new content.
 */
export async function writeFileDurably(path: string, data: Uint8Array): Promise<void> {
  const tmp = `${path}.tmp`;
  const file = await Deno.open(tmp, { write: true, create: true, truncate: true, mode: FILE_MODE });
  try {
    await writeAll(file, data);
    await file.syncData();
  } finally {
    file.close();
  }
  await Deno.rename(tmp, path);
  await syncDir(parentDir(path));
}

/** Writes every byte of `data` (a single `write` may be partial). */
export async function writeAll(file: Deno.FsFile, data: Uint8Array): Promise<void> {
  let at = 0;
  while (at < data.length) at += await file.write(data.subarray(at));
}

/** {@link writeAll} without leaving the thread: for small writes that the page cache takes in
 * microseconds. */
export function writeAllSync(file: Deno.FsFile, data: Uint8Array): void {
  let at = 0;
  while (at < data.length) at += file.writeSync(data.subarray(at));
}

/** The directory part of a `/`-separated path ("." for a bare name). */
export function parentDir(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "." : i === 0 ? "/" : path.slice(0, i);
}

/** True for the error Deno throws when a path does not exist. */
export function isNotFound(err: unknown): boolean {
  return err instanceof Deno.errors.NotFound;
}
