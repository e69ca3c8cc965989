/**
 * A store whose requests are timed in kube's `etcd_request_duration_seconds`, by operation
 * (`get`, `list`, `create`, `update`, `delete`) and type: the group-resource of the key
 * (`configmaps`, `leases.coordination.platform.io`). Every request of a backend (etcd) is timed;
 * of a store that reads from its own index in memory (file, memory), only the writes.
 */

import type { Histogram, HistogramChild } from "../metrics/mod.ts";
import type { Store } from "./store.ts";

const PREFIX = "/registry/";

/** The group-resource a key belongs to: `/registry/<group|core>/<resource>/…`. */
export function keyType(key: string): string {
  if (!key.startsWith(PREFIX)) return "other";
  const groupEnd = key.indexOf("/", PREFIX.length);
  if (groupEnd < 0) return "other";
  const resourceEnd = key.indexOf("/", groupEnd + 1);
  const group = key.slice(PREFIX.length, groupEnd);
  const resource = key.slice(groupEnd + 1, resourceEnd < 0 ? undefined : resourceEnd);
  return group === "core" ? resource : `${resource}.${group}`;
}

/** Whether `key` is `prefix` or below it (`prefix/…`). */
function underPrefix(key: string, prefix: string): boolean {
  const n = prefix.length;
  return key.startsWith(prefix) && (key.length === n || key.charCodeAt(n) === 47);
}

export function instrumentedStore(store: Store, durations: Histogram): Store {
  // Children by operation and key prefix (the part up to the resource). Each operation
  // remembers its last prefix: while calls keep to one resource, no key is built and looked up.
  const children = new Map<string, HistogramChild>();
  const last = new Map<string, { prefix: string; child: HistogramChild }>();
  const childOf = (operation: string, key: string): HistogramChild => {
    const seen = last.get(operation);
    if (seen && underPrefix(key, seen.prefix)) return seen.child;
    const resourceEnd = key.indexOf("/", key.indexOf("/", PREFIX.length) + 1);
    const prefix = resourceEnd < 0 ? key : key.slice(0, resourceEnd);
    const id = `${operation} ${prefix}`;
    let child = children.get(id);
    if (!child) children.set(id, child = durations.child(operation, keyType(key)));
    // Only a whole resource's prefix: keys below a shorter one belong to other types.
    if (resourceEnd > PREFIX.length) last.set(operation, { prefix, child });
    return child;
  };
  const timed = <T>(operation: string, key: string, work: Promise<T>): Promise<T> => {
    const started = performance.now();
    const child = childOf(operation, key);
    const observe = () => child.observe((performance.now() - started) / 1000);
    return work.then((v) => {
      observe();
      return v;
    }, (err) => {
      observe();
      throw err;
    });
  };
  // A store that reads from its own index in memory (`readsAtOnce`: the file and memory
  // stores) sends no request to a backend for a read, as kube's reads served by its watch cache
  // send none to etcd: only its writes are timed. The reads of other backends (etcd) are.
  const untimedReads = store.readsAtOnce === true;
  const out: Store = {
    currentRevision: () => store.currentRevision(),
    oldestRevision: () => store.oldestRevision(),
    readsAtOnce: store.readsAtOnce,
    get: untimedReads
      ? (key, opts) => store.get(key, opts)
      : (key, opts) => timed("get", key, store.get(key, opts)),
    list: untimedReads
      ? (prefix, opts) => store.list(prefix, opts)
      : (prefix, opts) => timed("list", prefix, store.list(prefix, opts)),
    count: (prefix) => store.count(prefix),
    create: (key, value) => timed("create", key, store.create(key, value)),
    update: (key, value, expected) => timed("update", key, store.update(key, value, expected)),
    delete: (key, expected) => timed("delete", key, store.delete(key, expected)),
    watch: (prefix, opts) => store.watch(prefix, opts),
    compact: (revision) => store.compact(revision),
    close: () => store.close(),
  };
  // The optional methods, present only when the store has them (readiness asks `reachable`).
  if (store.isStale) out.isStale = (kv) => store.isStale!(kv);
  if (store.reachable) out.reachable = () => store.reachable!();
  return out;
}
