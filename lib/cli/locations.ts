/**
 * Where `platform storage copy` reads and writes: a data directory (its `store/`, the file
 * backend) or `etcd://host:port[,host:port]/prefix` (the etcd3 backend; `http://` unless an
 * etcd TLS flag is given, then `https://`). Opening one is checked the way the command needs
 * it: a source that holds objects and no running server, a target that holds nothing.
 * @module
 */

import {
  etcdKeyPrefix,
  EtcdStore,
  EtcdUnavailableError,
  FileStore,
  isEmptyDir,
  type Store,
  StoreLockedError,
  type ValueTransformer,
} from "../storage/mod.ts";
import { UsageError } from "./args.ts";

/** The key prefix of every object a server stores. */
export const OBJECTS = "/registry/";

/** A data directory or an etcd prefix. */
export type Location =
  | { kind: "dir"; dataDir: string; shown: string }
  | { kind: "etcd"; endpoints: string[]; prefix: string; shown: string };

/** The etcd TLS files (`--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`). */
export interface EtcdTlsFiles {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

/** Parses `--from`/`--to` (`flag` names it in errors). */
export function parseLocation(text: string, flag: string, tls: EtcdTlsFiles): Location {
  if (!text.startsWith("etcd://")) {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
      throw new UsageError(
        `--${flag}: ${JSON.stringify(text)}: expected a data directory or etcd://host:port/prefix`,
      );
    }
    return { kind: "dir", dataDir: text, shown: text };
  }
  const rest = text.slice("etcd://".length);
  const slash = rest.indexOf("/");
  const hosts = (slash < 0 ? rest : rest.slice(0, slash)).split(",").filter((h) => h);
  const prefix = slash < 0 || rest.slice(slash) === "/" ? "/registry" : rest.slice(slash);
  if (hosts.length === 0) throw new UsageError(`--${flag}: ${text}: no etcd host:port`);
  const scheme = tls.caFile || tls.certFile ? "https" : "http";
  const endpoints = hosts.map((h) => {
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):\d{1,5}$/i.test(h)) {
      throw new UsageError(`--${flag}: ${JSON.stringify(h)} is not an etcd host:port`);
    }
    return `${scheme}://${h}`;
  });
  if (!/^\/[^\s]*[^/\s]$|^\/$/.test(prefix)) {
    throw new UsageError(`--${flag}: ${JSON.stringify(prefix)} is not an etcd prefix`);
  }
  return { kind: "etcd", endpoints, prefix, shown: `etcd://${hosts.join(",")}${prefix}` };
}

/** What a store is opened with. */
export interface OpenOptions {
  tls: EtcdTlsFiles;
  transformer?: ValueTransformer;
  logger: { warn(message: string): void };
}

/** Opens the source: it must hold objects, and no running server may hold a data dir. */
export async function openSource(loc: Location, opts: OpenOptions): Promise<Store> {
  if (loc.kind === "dir" && await isEmptyDir(`${loc.dataDir}/store`)) {
    throw new UsageError(`--from: ${loc.shown} holds no store (${loc.dataDir}/store is missing)`);
  }
  const store = await openLocation(loc, `${loc.kind === "dir" ? loc.dataDir : ""}/store`, {
    ...opts,
    flag: "from",
  });
  if (store.count(OBJECTS) === 0) {
    await store.close();
    throw new UsageError(`--from: ${loc.shown} holds no objects`);
  }
  return store;
}

/** Opens a target for writing: it must hold no objects. A data dir is written at `storeDir`. */
export async function openTarget(
  loc: Location,
  storeDir: string,
  opts: OpenOptions,
): Promise<Store> {
  if (loc.kind === "dir" && !await isEmptyDir(`${loc.dataDir}/store`)) {
    throw new UsageError(
      `--to: ${loc.shown} already holds a store (${loc.dataDir}/store): copy into a new data ` +
        `directory`,
    );
  }
  const store = await openLocation(loc, storeDir, { ...opts, flag: "to" });
  const count = store.count(OBJECTS);
  if (count > 0) {
    await store.close();
    throw new UsageError(
      `--to: ${loc.shown} is not empty (${count} keys under ${
        loc.kind === "etcd" ? loc.prefix : "it"
      }): copy into an empty prefix`,
    );
  }
  return store;
}

async function openLocation(
  loc: Location,
  storeDir: string,
  opts: OpenOptions & { flag: string },
): Promise<Store> {
  if (loc.kind === "dir") {
    try {
      return await FileStore.open({
        dir: storeDir,
        transformer: opts.transformer,
        logger: opts.logger,
      });
    } catch (err) {
      if (err instanceof StoreLockedError) {
        throw new UsageError(
          `--${opts.flag}: ${loc.shown} is in use by a running server: stop it first ` +
            `(a running server is backed up with platform storage snapshot)`,
        );
      }
      throw err;
    }
  }
  const read = async (path: string | undefined, flag: string) => {
    if (path === undefined) return undefined;
    try {
      return await Deno.readFile(path);
    } catch (err) {
      throw new UsageError(`--${flag}: cannot read ${path}: ${(err as Error).message}`);
    }
  };
  const tls = {
    ca: await read(opts.tls.caFile, "etcd-cafile"),
    cert: await read(opts.tls.certFile, "etcd-certfile"),
    key: await read(opts.tls.keyFile, "etcd-keyfile"),
  };
  try {
    return await EtcdStore.open({
      endpoints: loc.endpoints,
      keyPrefix: etcdKeyPrefix(loc.prefix),
      tls,
      etcdCompactionIntervalMs: 0,
      logger: opts.logger,
      transformer: opts.transformer,
    });
  } catch (err) {
    if (err instanceof EtcdUnavailableError) {
      throw new EtcdUnavailableError(`--${opts.flag}: ${err.message}`);
    }
    throw err;
  }
}
