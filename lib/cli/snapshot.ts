/**
 * `platform storage snapshot`: fetches `GET /storage/snapshot` from a running server (as the
 * user of a kubeconfig, by default the admin's) into a file, checked as it arrives and renamed
 * into place only whole. `platform storage restore`: brings a data directory's store back to a
 * snapshot file.
 * @module
 */

import { connectionFromKubeconfig } from "../auth/mod.ts";
import {
  readSnapshotFile,
  RestoreRefusedError,
  restoreStoreDir,
  SnapshotError,
  writeSnapshotFile,
} from "../storage/mod.ts";
import { type CommandFlag, optional, type ParsedFlags, required, UsageError } from "./args.ts";

/** Where the server serves snapshots (lib/server's snapshot endpoint). */
const SNAPSHOT_PATH = "storage/snapshot";

/** The flags of `platform storage snapshot`. */
export const SNAPSHOT_FLAGS: readonly CommandFlag[] = [
  {
    name: "kubeconfig",
    kind: "string",
    value: "FILE",
    help: "How to reach the server and as whom (system:masters, or granted get on the " +
      "non-resource URL /storage/snapshot). Default: $KUBECONFIG, else data/admin.kubeconfig.",
  },
  {
    name: "output",
    kind: "string",
    value: "FILE",
    help: "Where the snapshot goes (0600; never overwritten). Default: " +
      "platform-snapshot-<UTC time>.snap in the current directory.",
  },
];

/** The flags of `platform storage restore`. */
export const RESTORE_FLAGS: readonly CommandFlag[] = [
  { name: "snapshot", kind: "string", value: "FILE", help: "The snapshot file." },
  {
    name: "data-dir",
    kind: "string",
    value: "DIR",
    help: "The data directory whose store/ is restored (made if missing).",
  },
  {
    name: "force",
    kind: "bool",
    help: "Replace a store the data directory already holds (never one a server is running on).",
  },
];

/** A failure that is not the user's input (the server refused, the stream broke off). */
export class CommandFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CommandFailedError";
  }
}

/** Takes a snapshot of the server the kubeconfig names. */
export async function runSnapshot(flags: ParsedFlags, out: (line: string) => void): Promise<void> {
  const kubeconfig = optional(flags, "kubeconfig") ??
    Deno.env.get("KUBECONFIG")?.split(":").find((p) => p) ?? "data/admin.kubeconfig";
  const output = optional(flags, "output") ??
    `platform-snapshot-${new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+/, "")}.snap`;
  if (await exists(output)) throw new UsageError(`--output: ${output} already exists`);
  let conn;
  try {
    conn = await connectionFromKubeconfig(kubeconfig);
  } catch (err) {
    throw new UsageError(`--kubeconfig: ${(err as Error).message}`);
  }
  const client = Deno.createHttpClient({
    caCerts: conn.caCerts,
    ...(conn.clientCertificate ?? {}),
  });
  try {
    const url = new URL(SNAPSHOT_PATH, conn.url.endsWith("/") ? conn.url : `${conn.url}/`);
    const headers: Record<string, string> = {};
    if (conn.authorization) headers["Authorization"] = await conn.authorization();
    let res: Response;
    try {
      res = await fetch(url, { headers, client });
    } catch (err) {
      throw new CommandFailedError(`cannot reach ${url.origin}: ${(err as Error).message}`);
    }
    if (!res.ok || !res.body) {
      const text = await res.text().catch(() => "");
      let message = text.slice(0, 200);
      try {
        message = JSON.parse(text).message ?? message;
      } catch { /* not a Status */ }
      throw new CommandFailedError(`${url.href}: ${res.status} ${message}`.trim());
    }
    let header;
    try {
      header = await writeSnapshotFile(res.body, output);
    } catch (err) {
      if (err instanceof Deno.errors.AlreadyExists) {
        throw new UsageError(`--output: ${output} already exists`);
      }
      const why = err instanceof SnapshotError ? err.message : (err as Error).message;
      throw new CommandFailedError(`the snapshot did not arrive whole (${why}); nothing written`);
    }
    out(`snapshot of revision ${header.revision} (${header.keys} keys) written to ${output}`);
  } finally {
    client.close();
  }
}

/** Restores `--data-dir`'s store from `--snapshot`. */
export async function runRestore(flags: ParsedFlags, out: (line: string) => void): Promise<void> {
  const snapshot = required(flags, "snapshot");
  const dataDir = required(flags, "data-dir");
  try {
    await Deno.stat(snapshot);
  } catch (err) {
    throw new UsageError(`--snapshot: cannot read ${snapshot}: ${(err as Error).message}`);
  }
  // Checked whole before anything in the data directory is touched.
  try {
    await readSnapshotFile(snapshot);
  } catch (err) {
    if (err instanceof SnapshotError) {
      throw new UsageError(`--snapshot: ${snapshot}: ${err.message}; nothing was restored`);
    }
    throw err;
  }
  let header;
  try {
    header = await restoreStoreDir(snapshot, `${dataDir}/store`, {
      force: flags.get("force") === true,
      logger: { warn: (m) => console.error(`platform: ${m}`) },
    });
  } catch (err) {
    if (err instanceof RestoreRefusedError) throw new UsageError(`--data-dir: ${err.message}`);
    if (err instanceof SnapshotError) {
      throw new UsageError(`--snapshot: ${snapshot}: ${err.message}; nothing was restored`);
    }
    throw err;
  }
  out(
    `restored revision ${header.revision} (${header.keys} keys, taken ${header.takenAt}) into ` +
      `${dataDir}/store; objects keep the resourceVersions they had`,
  );
  if (!await exists(`${dataDir}/pki`)) {
    out(
      `${dataDir} has no pki/: a server started on it makes a new CA and admin token; copy ` +
        "pki/ from the old data directory first to keep them",
    );
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
