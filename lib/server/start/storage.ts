/**
 * Start-up step 4: the store, opened by the configured backend's name through lib/storage's
 * `openStore` (the file backend in `<dataDir>/store`, or in memory), and the key that signs
 * continue tokens.
 */

import { ensureContinueKey } from "../../certificates/mod.ts";
import { ConfigError } from "../../config/mod.ts";
import { openStore, storageBackend, type Store, StoreLockedError } from "../../storage/mod.ts";
import type { Logger } from "../../api/mod.ts";
import type { Configuration } from "./configuration.ts";
import type { OpenResources } from "./open_resources.ts";
import type { StartOptions } from "./options.ts";

/** The opened store and the key of its continue tokens. */
export interface Storage {
  store: Store;
  /** Continue tokens outlive a restart with the data they page through: only a durable
   * backend has a key (none in memory). */
  continueKey?: Uint8Array;
}

/** Opens the store; a data directory another server holds is a ConfigError. */
export async function openStorage(
  opts: StartOptions,
  dataDir: string,
  config: Configuration,
  logger: Logger,
  resources: OpenResources,
): Promise<Storage> {
  const historyRetentionMs = opts.historyRetentionMs ?? 5 * 60_000;
  const backend = storageBackend(opts.storage ?? "file");
  const store: Store = await openStore({
    backend: backend.name,
    dir: `${dataDir}/store`,
    historyRetentionMs,
    logger,
    transformer: config.encryption,
  }).catch((err) => {
    // A start-up problem of the user's, said in one line (main exits 2).
    if (err instanceof StoreLockedError) {
      throw new ConfigError(`--data-dir: ${dataDir} is in use by another platform server`);
    }
    throw err;
  });
  resources.add("the store", () => store.close());
  const continueKey = backend.durable ? await ensureContinueKey(dataDir) : undefined;
  return { store, continueKey };
}
