/**
 * Loading client configuration files and merging several of them as kubectl merges the files
 * of `KUBECONFIG`:
 *
 * - an explicit file (`--platformconfig`) is the only file read, and must exist;
 * - otherwise every file of the list (`$PLATFORMCONFIG`, `:`-separated) that exists, in order;
 * - otherwise the default file (`$HOME/.platform/config`), when it exists;
 * - the first file that names a cluster, user or context wins for that name; `current-context`
 *   comes from the first file that sets it. Entries remember their file: relative paths resolve
 *   against its directory.
 *
 * @module
 */

import { join } from "node:path";
import {
  KubeconfigError,
  type KubeconfigFile,
  type NamedEntry,
  osReason,
  parseKubeconfig,
  quote,
} from "./parse.ts";

/** Several kubeconfig files merged. */
export interface Kubeconfig {
  /** The files read, in order. */
  files: KubeconfigFile[];
  clusters: Map<string, NamedEntry>;
  users: Map<string, NamedEntry>;
  contexts: Map<string, NamedEntry>;
  currentContext?: string;
}

/** Where the client configuration comes from. */
export interface ConfigSources {
  /** `--platformconfig`: the one file, which must exist. */
  explicit?: string;
  /** The environment variable's value (`$PLATFORMCONFIG`): a `:`-separated list. */
  envList?: string;
  /** The default file, read when it exists (`$HOME/.platform/config`). */
  defaultPath?: string;
}

/** The environment variable naming the client configuration files. */
export const CONFIG_ENV = "PLATFORMCONFIG";

/** The sources of the running process: `$PLATFORMCONFIG`, `$HOME/.platform/config`. */
export function defaultConfigSources(explicit?: string): ConfigSources {
  const home = Deno.env.get("HOME");
  return {
    explicit,
    envList: Deno.env.get(CONFIG_ENV),
    defaultPath: home ? join(home, ".platform", "config") : undefined,
  };
}

/**
 * Reads and merges the files of `sources`.
 *
 * @throws {KubeconfigError} `error loading config file "x": <reason>` for a missing explicit
 * file, an unreadable or malformed one.
 */
export async function loadKubeconfig(sources: ConfigSources): Promise<Kubeconfig> {
  const files: KubeconfigFile[] = [];
  if (sources.explicit !== undefined && sources.explicit !== "") {
    files.push(await readFile(sources.explicit, { mustExist: true }));
  } else {
    const list = (sources.envList ?? "").split(":").filter((p) => p !== "");
    const paths = list.length > 0 ? list : sources.defaultPath ? [sources.defaultPath] : [];
    const seen = new Set<string>();
    for (const path of paths) {
      if (seen.has(path)) continue;
      seen.add(path);
      const file = await readFile(path, { mustExist: false });
      if (file) files.push(file);
    }
  }
  return mergeKubeconfigs(files);
}

/** Merges parsed files: first file wins per name and for `current-context`. */
export function mergeKubeconfigs(files: KubeconfigFile[]): Kubeconfig {
  const merged: Kubeconfig = {
    files,
    clusters: new Map(),
    users: new Map(),
    contexts: new Map(),
  };
  for (const file of files) {
    for (
      const [list, map] of [
        [file.clusters, merged.clusters],
        [file.users, merged.users],
        [file.contexts, merged.contexts],
      ] as const
    ) {
      for (const entry of list) if (!map.has(entry.name)) map.set(entry.name, entry);
    }
    merged.currentContext ??= file.currentContext;
  }
  return merged;
}

async function readFile(path: string, opts: { mustExist: true }): Promise<KubeconfigFile>;
async function readFile(
  path: string,
  opts: { mustExist: false },
): Promise<KubeconfigFile | undefined>;
async function readFile(
  path: string,
  opts: { mustExist: boolean },
): Promise<KubeconfigFile | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (!opts.mustExist && err instanceof Deno.errors.NotFound) return undefined;
    throw new KubeconfigError(`error loading config file ${quote(path)}: ${osReason(err)}`);
  }
  try {
    return parseKubeconfig(text, path);
  } catch (err) {
    throw new KubeconfigError(
      `error loading config file ${quote(path)}: ${(err as Error).message}`,
    );
  }
}
