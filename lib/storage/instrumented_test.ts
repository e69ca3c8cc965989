import assert from "node:assert/strict";
import { type Histogram, MetricsRegistry, REQUEST_DURATION_BUCKETS } from "../metrics/mod.ts";
import { instrumentedStore, keyType, MemoryStore, type Store } from "./mod.ts";

/** `memory` as a backend that sends its reads elsewhere (as etcd does): no `readsAtOnce`, and
 * each read answers `delayMs` later. */
function remoteStore(memory: Store, delayMs = 0): Store {
  const later = <T>(value: Promise<T>) =>
    new Promise<T>((resolve) => setTimeout(() => resolve(value), delayMs));
  return {
    currentRevision: () => memory.currentRevision(),
    oldestRevision: () => memory.oldestRevision(),
    get: (key, opts) => later(memory.get(key, opts)),
    list: (prefix, opts) => later(memory.list(prefix, opts)),
    count: (prefix) => memory.count(prefix),
    create: (key, value) => memory.create(key, value),
    update: (key, value, expected) => memory.update(key, value, expected),
    delete: (key, expected) => memory.delete(key, expected),
    watch: (prefix, opts) => memory.watch(prefix, opts),
    compact: (revision) => memory.compact(revision),
    close: () => memory.close(),
  };
}

/** `inner` (by default a backend that reads elsewhere) timed in a registry of its own. */
function timedStore(
  inner: Store = remoteStore(new MemoryStore()),
): { registry: MetricsRegistry; durations: Histogram; store: Store } {
  const registry = new MetricsRegistry({ version: "1.32" });
  const durations = registry.histogram({
    name: "etcd_request_duration_seconds",
    help: "Etcd request latency.",
    labels: ["operation", "type"],
    buckets: REQUEST_DURATION_BUCKETS,
  });
  return { registry, durations, store: instrumentedStore(inner, durations) };
}

/** Calls timed with this operation and type, from the registry's text (0: none). */
function timedCount(text: string, operation: string, type: string): number {
  const line = new RegExp(
    `^etcd_request_duration_seconds_count\\{operation="${operation}",type="${type}"\\} (\\d+)$`,
    "m",
  );
  return Number(line.exec(text)?.[1] ?? 0);
}

Deno.test("keyType: the group-resource of a key, as kube's type label", () => {
  assert.equal(keyType("/registry/core/configmaps/default/a"), "configmaps");
  assert.equal(keyType("/registry/core/namespaces/"), "namespaces");
  assert.equal(
    keyType("/registry/coordination.platform.io/leases/ns/l"),
    "leases.coordination.platform.io",
  );
  assert.equal(keyType("/elsewhere/x"), "other");
});

Deno.test("an instrumented store times each operation, failed ones too, and works as the store", async () => {
  const { registry, store } = timedStore();
  try {
    const key = "/registry/core/configmaps/default/a";
    const kv = await store.create(key, "{}");
    assert.equal((await store.get(key))?.value, "{}");
    await store.update(key, '{"a":1}', kv.modRevision);
    await assert.rejects(store.create(key, "{}"));
    assert.equal((await store.list("/registry/core/configmaps/")).items.length, 1);
    assert.equal(store.count("/registry/core/configmaps/"), 1);
    await store.delete(key);
    const text = registry.expose();
    const count = (op: string) => timedCount(text, op, "configmaps");
    assert.deepEqual(
      ["create", "get", "update", "list", "delete"].map(count),
      [2, 1, 1, 1, 1],
    );
  } finally {
    await store.close();
  }
});

Deno.test("an instrumented store has the optional methods of the store it wraps, and only those", () => {
  const registry = new MetricsRegistry({ version: "1.32" });
  const durations = registry.histogram({
    name: "d",
    help: "D.",
    labels: ["operation", "type"],
    buckets: [1],
  });
  const inner: Store = new MemoryStore();
  const wrapped = instrumentedStore(inner, durations);
  for (const method of ["isStale", "reachable"] as const) {
    assert.equal(typeof wrapped[method], typeof inner[method], method);
  }
  const reachable = instrumentedStore(
    Object.assign(Object.create(inner), { reachable: () => false }),
    durations,
  );
  assert.equal(reachable.reachable?.(), false);
  return inner.close();
});

Deno.test("an instrumented store labels each call by its own key's type, calls of several resources interleaved", async () => {
  const { registry, store } = timedStore();
  try {
    const keys = [
      "/registry/core/configmaps/default/a",
      "/registry/core/configmaps/default/b",
      "/registry/core/configmapsx/default/a",
      "/registry/core",
      "/registry/core/configmaps/default/a",
      "/registry/coordination.platform.io/leases/ns/l",
      "/registry/core/secrets/default/s",
    ];
    for (const key of keys) await store.get(key);
    const text = registry.expose();
    const count = (type: string) => timedCount(text, "get", type);
    assert.deepEqual(
      ["configmaps", "configmapsx", "other", "leases.coordination.platform.io", "secrets"].map(
        count,
      ),
      [3, 1, 1, 1, 1],
    );
  } finally {
    await store.close();
  }
});

/** The sum of the times recorded for this operation and type, seconds. */
function timedSum(text: string, operation: string, type: string): number {
  const line = new RegExp(
    `^etcd_request_duration_seconds_sum\\{operation="${operation}",type="${type}"\\} (\\S+)$`,
    "m",
  );
  return Number(line.exec(text)?.[1] ?? 0);
}

Deno.test("an instrumented store times a backend's reads until they settle, and not the reads a store answers from memory", async () => {
  const memory = new MemoryStore();
  const key = "/registry/core/configmaps/default/a";
  const created = await memory.create(key, "{}");
  // A backend whose reads answer 60 ms later, as etcd's.
  const { registry, durations, store: remote } = timedStore(remoteStore(memory, 60));
  try {
    assert.equal(remote.readsAtOnce, undefined);
    assert.equal((await remote.get(key))?.value, "{}");
    assert.equal((await remote.list("/registry/core/configmaps/")).items.length, 1);
    let text = registry.expose();
    assert.ok(timedSum(text, "get", "configmaps") >= 0.05, text);
    assert.ok(timedSum(text, "list", "configmaps") >= 0.05, text);
    // The memory store reads from its index: its reads are served, not timed; writes are.
    const local = instrumentedStore(memory, durations);
    assert.equal(local.readsAtOnce, true);
    assert.equal((await local.get(key))?.value, "{}");
    assert.equal((await local.list("/registry/core/configmaps/")).items.length, 1);
    await assert.rejects(local.get(key, { revision: 1e9 }));
    await local.update(key, '{"b":1}', created.modRevision);
    text = registry.expose();
    assert.equal(timedCount(text, "get", "configmaps"), 1);
    assert.equal(timedCount(text, "list", "configmaps"), 1);
    assert.equal(timedCount(text, "update", "configmaps"), 1);
  } finally {
    await memory.close();
  }
});
