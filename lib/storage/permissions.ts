/**
 * The data directory is private to the server's user: directories 0700, files 0600. New files
 * and directories are created with these modes (explicitly: the process umask can only take
 * bits away), and {@link tightenModes} enforces them on what is already there at start.
 * @module
 */

import type { StoreLogger } from "./logger.ts";

/** Mode of every file the server writes under its data directory. */
export const FILE_MODE = 0o600;
/** Mode of every directory under (and including) the data directory. */
export const DIR_MODE = 0o700;

/** What {@link tightenModes} changed. */
export interface TightenResult {
  dirs: number;
  files: number;
}

/**
 * Takes group and other permissions away from `dir`, every directory under it (to 0700) and
 * every file (to 0600), without following symbolic links. With `opts.entries`, only those
 * entries of `dir` are walked (what the server itself keeps there; anything else a user put
 * in the directory keeps its mode, and `dir` being 0700 already closes it to others). Logs one
 * warning per kind of fix, with the count. A no-op on Windows. Throws if a mode cannot be
 * changed (a file of another user): the server must not run on a directory others can read.
 */
export function tightenModes(
  dir: string,
  logger: StoreLogger,
  opts: { entries?: string[] } = {},
): TightenResult {
  const result = { dirs: 0, files: 0 };
  if (Deno.build.os === "windows") return result;
  const visit = (path: string, info: Deno.FileInfo, children = true) => {
    const mode = info.mode ?? 0;
    if (info.isDirectory) {
      if ((mode & 0o777) !== DIR_MODE && (mode & 0o077) !== 0) {
        Deno.chmodSync(path, DIR_MODE);
        result.dirs++;
      }
      if (!children) return;
      for (const entry of Deno.readDirSync(path)) {
        if (entry.isSymlink) continue;
        const child = `${path}/${entry.name}`;
        visit(child, Deno.lstatSync(child));
      }
    } else if (info.isFile && (mode & 0o077) !== 0) {
      Deno.chmodSync(path, FILE_MODE);
      result.files++;
    }
  };
  if (opts.entries) {
    visit(dir, Deno.lstatSync(dir), false);
    for (const name of opts.entries) {
      let info: Deno.FileInfo;
      try {
        info = Deno.lstatSync(`${dir}/${name}`);
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) continue;
        throw err;
      }
      if (!info.isSymlink) visit(`${dir}/${name}`, info);
    }
  } else visit(dir, Deno.lstatSync(dir));
  if (result.dirs > 0) {
    logger.warn(
      `data dir: ${result.dirs} ${
        result.dirs === 1 ? "directory was" : "directories were"
      } open to other users; set to 0700 under "${dir}"`,
    );
  }
  if (result.files > 0) {
    logger.warn(
      `data dir: ${result.files} ${
        result.files === 1 ? "file was" : "files were"
      } readable by other users; set to 0600 under "${dir}"`,
    );
  }
  return result;
}
