import assert from "node:assert/strict";
import {
  type BackendOptions,
  openStore,
  registerStorageBackend,
  storageBackend,
  storageBackendNames,
} from "./backends.ts";
import { MemoryStore } from "./memory.ts";

const quiet = { warn: () => {} };

Deno.test("the built-in backends are file (durable) and memory (not)", () => {
  assert.deepEqual(storageBackendNames().slice(0, 2), ["file", "memory"]);
  assert.equal(storageBackend("file").durable, true);
  assert.equal(storageBackend("memory").durable, false);
});

Deno.test("openStore opens the memory backend: a put reads back", async () => {
  const store = await openStore({ backend: "memory" });
  try {
    const kv = await store.create("/registry/core/namespaces/a", "{}");
    assert.equal(kv.modRevision, 1);
    assert.equal((await store.get("/registry/core/namespaces/a"))?.value, "{}");
  } finally {
    await store.close();
  }
});

Deno.test("openStore opens the file backend in dir: a put survives a reopen", async () => {
  const dir = await Deno.makeTempDir({ prefix: "backends-" });
  try {
    const store = await openStore({ backend: "file", dir, logger: quiet });
    await store.create("/registry/core/namespaces/a", '{"x":1}');
    await store.close();
    const again = await openStore({ backend: "file", dir, logger: quiet });
    try {
      assert.equal((await again.get("/registry/core/namespaces/a"))?.value, '{"x":1}');
    } finally {
      await again.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the file backend needs a directory", async () => {
  await assert.rejects(openStore({ backend: "file" }), /needs a directory/);
});

Deno.test("an unknown backend is an error listing the known ones", async () => {
  await assert.rejects(
    openStore({ backend: "etcd2" }),
    (err: Error) => {
      assert.match(err.message, /Unknown storage backend "etcd2"/);
      assert.match(err.message, /file, memory, etcd3/);
      return true;
    },
  );
  assert.throws(() => storageBackend("nope"), /the known backends are file, memory, etcd3/);
});

Deno.test("the etcd3 backend needs servers", async () => {
  await assert.rejects(openStore({ backend: "etcd3" }), /needs etcd servers/);
});

Deno.test("a registered backend is found by name and opened with the options", async () => {
  let given: BackendOptions | undefined;
  registerStorageBackend({
    name: "test-backend",
    description: "a memory store that records its options",
    durable: false,
    open: (opts) => {
      given = opts;
      return Promise.resolve(new MemoryStore(opts));
    },
  });
  assert.ok(storageBackendNames().includes("test-backend"));
  assert.equal(
    storageBackend("test-backend").description,
    "a memory store that records its options",
  );
  const store = await openStore({
    backend: "test-backend",
    dir: "/nowhere",
    historyRetentionMs: 1,
  });
  try {
    assert.deepEqual(given, { dir: "/nowhere", historyRetentionMs: 1 });
    await store.create("/k", "v");
    assert.equal((await store.get("/k"))?.value, "v");
  } finally {
    await store.close();
  }
  assert.throws(
    () => registerStorageBackend({ ...storageBackend("test-backend") }),
    /already registered/,
  );
});
