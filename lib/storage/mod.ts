/**
 * The storage layer: the {@link Store} interface, its errors, and the embedded backends.
 *
 * @example
 * ```ts
 * const store = await openStore({ backend: "file", dir: "data/store" });
 * const kv = await store.create("/registry/core/namespaces/default", "{}");
 * await store.close();
 * ```
 * @module
 */

import type { Clock } from "../api/mod.ts";
import type { StoreLogger } from "./logger.ts";
import { FileStore } from "./file.ts";
import { MemoryStore } from "./memory.ts";
import type { Store } from "./store.ts";

export * from "./store.ts";
export { type Clock, systemClock } from "../api/mod.ts";
export { consoleLogger, type StoreLogger } from "./logger.ts";
export { type EngineOptions, MAX_KEY_LENGTH } from "./engine.ts";
export { FileStore, type FileStoreOptions, type FileStoreStats, StoreLockedError } from "./file.ts";
export { MemoryStore, type MemoryStoreOptions } from "./memory.ts";
export { DEFAULT_WATCH_BUFFER } from "./watch/hub.ts";
export { JournalCorruptError, type JournalStats } from "./journal/journal.ts";
export type { ObjectFileStats, ObjectWritePolicy } from "./objects.ts";
export { keyToPath } from "./keypath.ts";
export type { ReadValue, ValueTransformer } from "./transformer.ts";
export { DIR_MODE, FILE_MODE, tightenModes } from "./permissions.ts";

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** `file`: durable, in `dir`. `memory`: throwaway, for tests. */
  backend: "file" | "memory";
  /** The file backend's directory (required for `file`). */
  dir?: string;
  /** How long history is kept for old reads and watches. @default 300_000 */
  historyRetentionMs?: number;
  /** Receives repair and trouble warnings. @default console.warn */
  logger?: StoreLogger;
  /** Source of write times. @default Date.now */
  clock?: Clock;
  /** Undelivered events a watcher may hold before it ends with "Overflow". @default 10_000 */
  watchBufferSize?: number;
}

/** Opens the chosen backend. Throws if `backend` is `file` and `dir` is missing. */
export async function openStore(opts: OpenStoreOptions): Promise<Store> {
  const { backend, dir, ...common } = opts;
  if (backend === "memory") return new MemoryStore(common);
  if (backend !== "file") throw new Error(`Unknown storage backend "${backend}"`);
  if (!dir) throw new Error('The "file" storage backend needs a directory');
  return await FileStore.open({ dir, ...common });
}
export { writeFileAtomic } from "./fsutil.ts";
export { unreadableReason, unreadableStored, unreadableValue } from "./transformer.ts";
