/**
 * Small file-system helpers: directory fsync and atomic file replacement, shared by the
 * journal, the file store and the files the server keeps beside it (certificates, keys,
 * tokens, the admin kubeconfig).
 * @module
 */

import { dirname } from "node:path";
import { DIR_MODE, FILE_MODE } from "./permissions.ts";

/** fsyncs a directory so that entries created, renamed or removed in it are durable. */
export async function syncDir(path: string): Promise<void> {
  const dir = await Deno.open(path, { read: true });
  try {
    await dir.sync();
  } finally {
    dir.close();
  }
}

/** Programs found missing, or not allowed to run: not tried again. */
const unavailable = new Set<string>();

/**
 * Flushes the whole file system that holds `path` in one call: `syncfs(2)`, through
 * coreutils' `sync -f` (Deno has no binding for it). On Linux that is as durable as an fsync
 * of every file and directory on that file system, and costs one process start where a
 * file-by-file pass costs three calls a file (about 45 µs of CPU each file here). Resolves
 * false when it could not be done (not Linux, no `sync`, no permission to run it, or it
 * failed): the caller then syncs file by file, which reports an I/O error as its own.
 */
export async function syncFileSystem(path: string, program = "sync"): Promise<boolean> {
  if (Deno.build.os !== "linux" || unavailable.has(program)) return false;
  try {
    const cmd = new Deno.Command(program, {
      args: ["-f", path],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    });
    return (await cmd.output()).success;
  } catch (err) {
    const missing = err instanceof Deno.errors.NotFound ||
      err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied;
    if (missing) unavailable.add(program);
    return false;
  }
}

/**
 * Replaces `path` with `data` atomically and durably: writes a temporary file beside it with
 * `mode` (whatever the umask; default 0600), fsyncs it, renames it over `path` and fsyncs the
 * directory, which is created (0700) if missing. Readers, and a restart after a crash, see
 * the old or the new content, never a torn one. The temporary file goes if anything fails.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  opts: { mode?: number } = {},
): Promise<void> {
  const mode = opts.mode ?? FILE_MODE;
  const dir = dirname(path);
  await Deno.mkdir(dir, { recursive: true, mode: DIR_MODE });
  const tmp = `${path}.tmp-${crypto.randomUUID().slice(0, 8)}`;
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  try {
    const file = await Deno.open(tmp, { write: true, create: true, truncate: true, mode });
    try {
      if (!WINDOWS) await Deno.chmod(tmp, mode); // umask-proof
      await writeAll(file, bytes);
      await file.sync();
    } finally {
      file.close();
    }
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
  // Windows cannot open a directory to sync it.
  if (!WINDOWS) await syncDir(dir);
}

const WINDOWS = Deno.build.os === "windows";

/** The temporary files {@link writeFileAtomic} names. */
const ATOMIC_TEMP = /\.tmp-[0-9a-f]{8}$/;

/**
 * Removes what a crash in the middle of {@link writeFileAtomic} left in `dir` (not below it);
 * resolves to the names removed. Only for a directory no one else is writing into now.
 */
export async function removeAtomicTemps(dir: string): Promise<string[]> {
  const removed: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (!e.isFile || !ATOMIC_TEMP.test(e.name)) continue;
    await Deno.remove(`${dir}/${e.name}`).catch((err) => {
      if (!isNotFound(err)) throw err;
    });
    removed.push(e.name);
  }
  return removed;
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
