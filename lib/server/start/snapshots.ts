/**
 * Start-up step 4b: snapshots of the store on a schedule (`--snapshot-interval`,
 * `--snapshot-retention`, `--snapshot-dir`), taken as `GET /storage/snapshot` takes them, into
 * `<data-dir>/snapshots` by default. Stopped before the store closes.
 */

import { ConfigError, osReason, quote } from "../../config/mod.ts";
import { DIR_MODE, scheduleSnapshots, type Store, takeSnapshot } from "../../storage/mod.ts";
import type { Logger } from "../../api/mod.ts";
import type { Configuration } from "./configuration.ts";
import type { OpenResources } from "./open_resources.ts";
import type { StartOptions } from "./options.ts";

/** Starts the schedule when `opts.snapshotIntervalMs` is set; its directory is made now. */
export async function startSnapshotSchedule(
  opts: StartOptions,
  dataDir: string,
  store: Store,
  config: Configuration,
  logger: Logger,
  resources: OpenResources,
): Promise<void> {
  const intervalMs = opts.snapshotIntervalMs ?? 0;
  if (intervalMs <= 0) return;
  const dir = opts.snapshotDir ?? `${dataDir}/snapshots`;
  try {
    await Deno.mkdir(dir, { recursive: true, mode: DIR_MODE });
  } catch (err) {
    throw new ConfigError(`--snapshot-dir: cannot create ${quote(dir)}: ${osReason(err)}`);
  }
  const schedule = scheduleSnapshots({
    dir,
    intervalMs,
    retention: opts.snapshotRetention ?? 5,
    take: () => takeSnapshot(store, config.encryption),
    currentRevision: () => store.currentRevision(),
    logger,
  });
  resources.add("the snapshot schedule", () => schedule.stop());
}
