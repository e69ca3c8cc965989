/**
 * Start-up step 4: the store, opened by the configured backend's name through lib/storage's
 * `openStore` (the file backend in `<dataDir>/store`, or in memory), and the key that signs
 * continue tokens.
 */

import { ensureContinueKey } from "../../certificates/mod.ts";
import { ConfigError } from "../../config/mod.ts";
import {
  type BackendOptions,
  etcdKeyPrefix,
  EtcdUnavailableError,
  instrumentedStore,
  openStore,
  storageBackend,
  type Store,
  StoreLockedError,
  tracedStore,
} from "../../storage/mod.ts";
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
  if (backend.name === "etcd3" && !opts.etcdServers?.length) {
    throw new ConfigError("--storage: etcd3 needs --etcd-servers (etcd client URLs)");
  }
  const opened: Store = await openStore({
    backend: backend.name,
    dir: `${dataDir}/store`,
    historyRetentionMs,
    logger,
    transformer: config.encryption,
    ...await etcdOptions(opts),
    etcdRoute: (hostPort) => config.egress.tcpRoute("etcd", hostPort),
  }).catch((err) => {
    // A start-up problem of the user's, said in one line (main exits 2).
    if (err instanceof StoreLockedError) {
      throw new ConfigError(`--data-dir: ${dataDir} is in use by another platform server`);
    }
    // An etcd that does not answer is not a configuration error (the same flags may work a
    // minute later): it goes to main as it is, which says so in one line and exits 1.
    if (err instanceof EtcdUnavailableError) {
      throw new EtcdUnavailableError(`--etcd-servers: ${err.message}`);
    }
    throw err;
  });
  resources.add("the store", () => opened.close());
  const measured = config.metrics
    ? instrumentedStore(opened, config.metrics.storageDuration)
    : opened;
  // Traced, the store's operations are spans of the requests they serve.
  const store = config.tracer.enabled ? tracedStore(measured, backend.name) : measured;
  const continueKey = backend.durable ? await ensureContinueKey(dataDir) : undefined;
  return { store, continueKey };
}

/** The etcd3 backend's options from the start options (nothing for other backends). */
async function etcdOptions(opts: StartOptions): Promise<BackendOptions> {
  if (opts.storage !== "etcd3") return {};
  return {
    etcdServers: opts.etcdServers,
    etcdKeyPrefix: etcdKeyPrefix(opts.etcdPrefix ?? "/registry"),
    etcdTls: await etcdTls(opts),
    etcdCompactionIntervalMs: opts.etcdCompactionIntervalMs,
  };
}

/** The TLS material for etcd the flags name (a file that cannot be read is a ConfigError). */
export async function etcdTls(
  opts: StartOptions,
): Promise<{ ca?: Uint8Array; cert?: Uint8Array; key?: Uint8Array }> {
  const read = async (path: string | undefined, flag: string) => {
    if (path === undefined) return undefined;
    try {
      return await Deno.readFile(path);
    } catch (err) {
      throw new ConfigError(`--${flag}: cannot read ${path}: ${(err as Error).message}`);
    }
  };
  return {
    ca: await read(opts.etcdCAFile, "etcd-cafile"),
    cert: await read(opts.etcdCertFile, "etcd-certfile"),
    key: await read(opts.etcdKeyFile, "etcd-keyfile"),
  };
}
