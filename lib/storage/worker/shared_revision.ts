/**
 * The owner's revision in memory every thread reads (a SharedArrayBuffer), for stores that one
 * process owns (file, memory): a client's consistent read then needs no round trip to the owner
 * thread, only to wait until its cache has the revision it reads here.
 *
 * Correct only when every write to the store goes through {@link publishingRevisions}: the
 * revision is published before the write's promise resolves, so before any thread can
 * acknowledge it. A store other processes also write (etcd) must not use it: their writes are
 * not published here; its clients ask the owner, who reads etcd's revision.
 * @module
 */

import type { KeyValue, Store } from "../store.ts";

/** The cell: one 64-bit integer in shared memory. */
export type RevisionCell = BigInt64Array;

/** A cell holding `revision`. */
export function newRevisionCell(revision: number): RevisionCell {
  const cell = new BigInt64Array(new SharedArrayBuffer(8));
  Atomics.store(cell, 0, BigInt(revision));
  return cell;
}

/** The newest revision published. */
export function readRevisionCell(cell: RevisionCell): number {
  return Number(Atomics.load(cell, 0));
}

/** `store`, publishing the revision of every write into `cell` before the write resolves. */
export function publishingRevisions(store: Store, cell: RevisionCell): Store {
  const publish = (kv: KeyValue) => {
    // Writes may resolve out of revision order; the cell only grows.
    const rev = BigInt(kv.modRevision);
    for (let now = Atomics.load(cell, 0); rev > now; now = Atomics.load(cell, 0)) {
      if (Atomics.compareExchange(cell, 0, now, rev) === now) break;
    }
    return kv;
  };
  const wrapped: Store = {
    currentRevision: () => store.currentRevision(),
    oldestRevision: () => store.oldestRevision(),
    get: (key, opts) => store.get(key, opts),
    list: (prefix, opts) => store.list(prefix, opts),
    count: (prefix) => store.count(prefix),
    create: (key, value) => store.create(key, value).then(publish),
    update: (key, value, expected) => store.update(key, value, expected).then(publish),
    delete: (key, expected) => store.delete(key, expected).then(publish),
    watch: (prefix, opts) => store.watch(prefix, opts),
    compact: (revision) => store.compact(revision),
    close: () => store.close(),
  };
  if (store.isStale) wrapped.isStale = (kv) => store.isStale!(kv);
  if (store.reachable) wrapped.reachable = () => store.reachable!();
  return wrapped;
}
