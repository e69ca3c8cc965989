/**
 * The storage layer: the {@link Store} interface, its errors, and the embedded backends,
 * opened by name through {@link openStore} (the backend registry of `backends.ts`).
 *
 * @example
 * ```ts
 * const store = await openStore({ backend: "file", dir: "data/store" });
 * const kv = await store.create("/registry/core/namespaces/default", "{}");
 * await store.close();
 * ```
 * @module
 */

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
export {
  type BackendOptions,
  openStore,
  type OpenStoreOptions,
  registerStorageBackend,
  type StorageBackend,
  storageBackend,
  storageBackendNames,
} from "./backends.ts";

export { writeFileAtomic } from "./fsutil.ts";
export { instrumentedStore, keyType } from "./instrumented.ts";
export { etcdKeyPrefix, EtcdStore, type EtcdStoreOptions } from "./etcd/store.ts";
export { type EtcdRoute, EtcdUnavailableError } from "./etcd/client.ts";
export { openSharedRecord, type SharedRecord } from "./etcd/shared_record.ts";
export { unreadableReason, unreadableStored, unreadableValue } from "./transformer.ts";
export { tracedStore } from "./traced_store.ts";
export {
  encodeSnapshot,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  type SnapshotContent,
  SnapshotDecoder,
  SnapshotError,
  type SnapshotHeader,
} from "./snapshot/format.ts";
export { readSnapshotFile, takeSnapshot, writeSnapshotFile } from "./snapshot/files.ts";
export {
  isEmptyDir,
  RestoreRefusedError,
  restoreStoreDir,
  storeDirLocked,
} from "./snapshot/restore.ts";
export {
  pruneSnapshots,
  scheduleSnapshots,
  snapshotRound,
  type SnapshotSchedule,
  type SnapshotScheduleOptions,
} from "./snapshot/schedule.ts";
export {
  newRevisionCell,
  type Port as StorePort,
  publishingRevisions,
  type RevisionCell,
  StoreOwner,
  WorkerStoreClient,
  type WorkerStoreClientOptions,
} from "./worker/mod.ts";
