/**
 * The storage backends by name: the seam through which the server opens its {@link Store}.
 * A backend is a {@link StorageBackend} (a name, a one-line description, whether it is
 * durable, and how to open it); {@link openStore} opens the one a configuration names. The
 * built-in `file` (durable, in a directory) and `memory` (throwaway) backends are registered
 * here; another backend (etcd, say) implements `Store`, passes the contract suite
 * (`testing/contract.ts`) and calls {@link registerStorageBackend}. See "Adding a storage
 * backend" in this folder's README.
 *
 * @module
 */

import type { Clock } from "../api/mod.ts";
import { FileStore } from "./file.ts";
import type { StoreLogger } from "./logger.ts";
import { MemoryStore } from "./memory.ts";
import { EtcdStore } from "./etcd/store.ts";
import type { EtcdRoute } from "./etcd/client.ts";
import type { Store } from "./store.ts";
import type { ValueTransformer } from "./transformer.ts";

/** What a backend is opened with; each backend takes what it needs and ignores the rest. */
export interface BackendOptions {
  /** The backend's data directory (the `file` backend's store; required there). */
  dir?: string;
  /** How long history is kept for old reads and watches. @default 300_000 */
  historyRetentionMs?: number;
  /** How often history older than the retention window is compacted.
   * @default min(30_000, max(1_000, historyRetentionMs / 10)) */
  compactionIntervalMs?: number;
  /** Receives repair and trouble warnings. @default console.warn */
  logger?: StoreLogger;
  /** Source of write times. @default Date.now */
  clock?: Clock;
  /** Undelivered events a watcher may hold before it ends with "Overflow". @default 10_000 */
  watchBufferSize?: number;
  /** Encryption at rest: how values are stored and read back. Durable backends apply it;
   * the memory backend keeps values as given. @default values stored in clear */
  transformer?: ValueTransformer;
  /** The `etcd3` backend: client URLs (`--etcd-servers`); required there. */
  etcdServers?: string[];
  /** The `etcd3` backend: prepended to every store key to make the etcd key. @default "" */
  etcdKeyPrefix?: string;
  /** The `etcd3` backend: TLS material (PEM) for `https://` servers. */
  etcdTls?: { ca?: Uint8Array; cert?: Uint8Array; key?: Uint8Array };
  /** The `etcd3` backend: how often etcd is compacted; 0 disables. @default 300_000 */
  etcdCompactionIntervalMs?: number;
  /** The `etcd3` backend: how each server is reached (the egress dialer's `etcd`
   * selection). @default direct */
  etcdRoute?: EtcdRoute;
}

/** A storage backend the server can be configured to use (`--storage=<name>`). */
export interface StorageBackend {
  /** The name configurations use, e.g. `file`. */
  name: string;
  /** One line for help and messages. */
  description: string;
  /** Whether what is written survives a restart (the server then keeps its continue-token
   * key across restarts too). */
  durable: boolean;
  /** Opens a store; the caller closes it. */
  open(opts: BackendOptions): Promise<Store>;
}

const BACKENDS = new Map<string, StorageBackend>();

/**
 * Makes a backend available by its name. Registering a name twice is an error.
 *
 * @example
 * ```ts
 * registerStorageBackend({
 *   name: "scratch",
 *   description: "in memory, for a demo",
 *   durable: false,
 *   open: (opts) => Promise.resolve(new MemoryStore(opts)),
 * });
 * ```
 */
export function registerStorageBackend(backend: StorageBackend): void {
  if (BACKENDS.has(backend.name)) {
    throw new Error(`Storage backend "${backend.name}" is already registered`);
  }
  BACKENDS.set(backend.name, backend);
}

/** The names of the registered backends, in registration order (the built-ins first). */
export function storageBackendNames(): string[] {
  return [...BACKENDS.keys()];
}

/**
 * The registered backend of this name.
 *
 * @throws {Error} naming the known backends when there is none.
 */
export function storageBackend(name: string): StorageBackend {
  const backend = BACKENDS.get(name);
  if (backend === undefined) {
    throw new Error(
      `Unknown storage backend "${name}"; the known backends are ` +
        storageBackendNames().join(", "),
    );
  }
  return backend;
}

/** Options of {@link openStore}: the backend's name and what it is opened with. */
export interface OpenStoreOptions extends BackendOptions {
  /** A registered backend: `file` (durable, in `dir`), `memory` (throwaway), or another. */
  backend: string;
}

/**
 * Opens a store with the named backend.
 *
 * @throws {Error} for an unknown backend (naming the known ones), or whatever the backend
 * throws (the file backend: a missing `dir`, `StoreLockedError`, `JournalCorruptError`).
 * @example
 * ```ts
 * const store = await openStore({ backend: "memory" });
 * await store.create("/registry/core/namespaces/default", "{}");
 * await store.close();
 * ```
 */
export async function openStore(opts: OpenStoreOptions): Promise<Store> {
  const { backend, ...options } = opts;
  return await storageBackend(backend).open(options);
}

registerStorageBackend({
  name: "file",
  description: "durable, in a directory: a journal and one file per object",
  durable: true,
  open: async ({ dir, ...options }) => {
    if (!dir) throw new Error('The "file" storage backend needs a directory');
    return await FileStore.open({ dir, ...options });
  },
});

registerStorageBackend({
  name: "memory",
  description: "in memory, lost on exit",
  durable: false,
  open: ({ historyRetentionMs, compactionIntervalMs, watchBufferSize, clock }) =>
    Promise.resolve(
      new MemoryStore({ historyRetentionMs, compactionIntervalMs, watchBufferSize, clock }),
    ),
});

registerStorageBackend({
  name: "etcd3",
  description: "etcd v3 (--etcd-servers): durable, shared by every server on the same prefix",
  durable: true,
  open: async (opts) => {
    if (!opts.etcdServers?.length) {
      throw new Error('The "etcd3" storage backend needs etcd servers (--etcd-servers)');
    }
    return await EtcdStore.open({
      endpoints: opts.etcdServers,
      keyPrefix: opts.etcdKeyPrefix,
      tls: opts.etcdTls,
      route: opts.etcdRoute,
      historyRetentionMs: opts.historyRetentionMs,
      compactionIntervalMs: opts.compactionIntervalMs,
      etcdCompactionIntervalMs: opts.etcdCompactionIntervalMs,
      watchBufferSize: opts.watchBufferSize,
      clock: opts.clock,
      logger: opts.logger,
      transformer: opts.transformer,
    });
  },
});
