import assert from "node:assert/strict";
import { type Histogram, MetricsRegistry, REQUEST_DURATION_BUCKETS } from "../metrics/mod.ts";
import { instrumentedStore, keyType, MemoryStore, type Store } from "./mod.ts";

/** `inner` (a new memory store) timed in a registry of its own. */
function timedMemoryStore(
  inner: Store = new MemoryStore(),
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
  const { registry, store } = timedMemoryStore();
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
  const { registry, store } = timedMemoryStore();
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

Deno.test("an instrumented store times a read that settles later until it settles, and one done at once around the call", async () => {
  const memory = new MemoryStore();
  const { registry, durations, store: fast } = timedMemoryStore(memory);
  const key = "/registry/core/configmaps/default/a";
  await memory.create(key, "{}");
  const later = <T>(value: Promise<T>) =>
    new Promise<T>((resolve) => setTimeout(() => resolve(value), 60));
  // A backend whose reads answer 60 ms later, as etcd's: no readsAtOnce.
  const remote: Store = Object.assign(Object.create(memory), {
    readsAtOnce: undefined,
    get: (k: string) => later(memory.get(k)),
    list: (p: string) => later(memory.list(p)),
  });
  try {
    assert.equal(memory.readsAtOnce, true);
    const slow = instrumentedStore(remote, durations);
    assert.equal(slow.readsAtOnce, undefined);
    assert.equal((await slow.get(key))?.value, "{}");
    assert.equal((await slow.list("/registry/core/configmaps/")).items.length, 1);
    let text = registry.expose();
    assert.ok(timedSum(text, "get", "configmaps") >= 0.05, text);
    assert.ok(timedSum(text, "list", "configmaps") >= 0.05, text);
    // Reads done at once: counted, failed ones too.
    assert.equal(fast.readsAtOnce, true);
    await fast.get(key);
    await assert.rejects(fast.get(key, { revision: 1e9 }));
    text = registry.expose();
    assert.equal(timedCount(text, "get", "configmaps"), 3);
  } finally {
    await memory.close();
  }
});
