/**
 * MemoryStore: the {@link Store} kept entirely in memory, for unit tests and throwaway
 * servers (`--storage=memory`). Same rules as the file backend: revisions, history
 * retention, reads at older revisions, watches from a revision, compaction. Nothing survives
 * `close()`.
 *
 * @example
 * ```ts
 * const store = new MemoryStore();
 * const kv = await store.create("/registry/core/pods/default/a", "{}"); // revision 1
 * await store.close();
 * ```
 * @module
 */

import { EMPTY_STATE, Engine, type EngineOptions } from "./engine.ts";
import type { StoreEvent } from "./store.ts";

/** Options of {@link MemoryStore}. */
export type MemoryStoreOptions = EngineOptions;

/** An in-memory {@link Store}; a write is "durable" as soon as it is applied. */
export class MemoryStore extends Engine {
  constructor(opts: MemoryStoreOptions = {}) {
    super(EMPTY_STATE, opts);
  }

  protected persist(_event: StoreEvent, _time: number): Promise<void> {
    return Promise.resolve();
  }
}
