/**
 * A store whose reads and writes are spans of the request they serve: `Create etcd3`,
 * `Get file`, … (kube names its etcd3 spans `<Operation> etcd3`), with the key, children of
 * the current span. Work outside a traced request (controllers, watches) goes straight
 * through; so does everything when tracing is off, where start-up does not wrap the store.
 *
 * @module
 */

import { childSpan, type Span, withSpan } from "../tracing/mod.ts";
import type { KeyValue, ListOptions, ListResult, ReadOptions, Store } from "./store.ts";

/** `store`, its operations traced under the backend's name (`etcd3`, `file`, `memory`). */
export function tracedStore(store: Store, backend: string): Store {
  const names = {
    get: `Get ${backend}`,
    list: `List ${backend}`,
    create: `Create ${backend}`,
    update: `Update ${backend}`,
    delete: `Delete ${backend}`,
  };
  // The span is the current one while the backend works: the etcd client sends its
  // traceparent. A read done before its call returns (`readsAtOnce`) calls nothing that would
  // carry it: the span is not made current.
  const run = <T>(span: Span, op: () => Promise<T>, atOnce = false): Promise<T> => {
    if (!span.recording) return op();
    return (atOnce ? op() : withSpan(span, op)).then(
      (v) => {
        span.end();
        return v;
      },
      (err) => {
        span.fail(err instanceof Error ? err.message : String(err));
        span.end();
        throw err;
      },
    );
  };
  return {
    currentRevision: () => store.currentRevision(),
    oldestRevision: () => store.oldestRevision(),
    count: (prefix) => store.count(prefix),
    watch: (prefix, opts) => store.watch(prefix, opts),
    isStale: store.isStale && ((kv) => store.isStale!(kv)),
    reachable: store.reachable && (() => store.reachable!()),
    compact: (revision) => store.compact(revision),
    close: () => store.close(),
    readsAtOnce: store.readsAtOnce,
    get: (key: string, opts?: ReadOptions): Promise<KeyValue | undefined> =>
      run(childSpan(names.get, { key }), () => store.get(key, opts), store.readsAtOnce),
    list: (prefix: string, opts?: ListOptions): Promise<ListResult> =>
      run(
        childSpan(names.list, { key: prefix, limit: opts?.limit }),
        () => store.list(prefix, opts),
        store.readsAtOnce,
      ),
    create: (key, value) => run(childSpan(names.create, { key }), () => store.create(key, value)),
    update: (key, value, expectedRevision) =>
      run(childSpan(names.update, { key }), () => store.update(key, value, expectedRevision)),
    delete: (key, expectedRevision) =>
      run(childSpan(names.delete, { key }), () => store.delete(key, expectedRevision)),
  };
}
