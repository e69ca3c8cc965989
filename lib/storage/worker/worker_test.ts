import assert from "node:assert/strict";
import { openStore } from "../backends.ts";
import type { KeyValue } from "../store.ts";
import { MemoryStore } from "../memory.ts";
import { storeContract } from "../testing/contract.ts";
import { newRevisionCell, publishingRevisions, StoreOwner, WorkerStoreClient } from "./mod.ts";

// The contract over a MessageChannel in one thread: a memory store served by its owner, the
// client's cache fed by the owner's event stream.
storeContract("worker client (memory owner)", async (opts) => {
  const store = new MemoryStore(opts);
  const owner = new StoreOwner(store);
  const { port1, port2 } = new MessageChannel();
  owner.connect(port1);
  const client = await WorkerStoreClient.connect(port2, { ...opts, logger: { warn: () => {} } });
  return {
    store: client,
    cleanup: async () => {
      await client.close();
      owner.close();
      await store.close();
    },
  };
});

// The same with the owner's revision in shared memory: consistent reads read it there.
storeContract("worker client (memory owner, shared revision)", async (opts) => {
  const store = new MemoryStore(opts);
  const revisionCell = newRevisionCell(store.currentRevision());
  const owner = new StoreOwner(publishingRevisions(store, revisionCell));
  const { port1, port2 } = new MessageChannel();
  owner.connect(port1);
  const client = await WorkerStoreClient.connect(port2, {
    ...opts,
    logger: { warn: () => {} },
    revisionCell,
  });
  return {
    store: client,
    cleanup: async () => {
      await client.close();
      owner.close();
      await store.close();
    },
  };
});

/** Posts one command to the test worker and waits for its answer. */
function ask(w: Worker, cmd: Record<string, unknown>, transfer: Transferable[] = []) {
  return new Promise<unknown>((resolve, reject) => {
    w.onmessage = (ev) =>
      ev.data.error ? reject(new Error(ev.data.error)) : resolve(ev.data.result);
    w.postMessage(cmd, transfer);
  });
}

for (const shared of [false, true]) {
  Deno.test(
    `worker client in a real Worker over a durable file store${
      shared ? ", revision in shared memory" : ""
    }`,
    () => realWorker(shared),
  );
}

async function realWorker(shared: boolean): Promise<void> {
  const dir = await Deno.makeTempDir();
  const opened = await openStore({ backend: "file", dir, logger: { warn: () => {} } });
  const revisionCell = shared ? newRevisionCell(0) : undefined;
  // Every write of this thread goes through `store` (publishing its revision when shared).
  const store = revisionCell ? publishingRevisions(opened, revisionCell) : opened;
  const owner = new StoreOwner(store);
  const worker = new Worker(new URL("./worker_testdata.ts", import.meta.url), { type: "module" });
  try {
    await store.create("/registry/a/before", "0");
    const { port1, port2 } = new MessageChannel();
    owner.connect(port1);
    assert.equal(await ask(worker, { t: "connect", port: port2, revisionCell }, [port2]), 1);
    // The worker's watch from revision 0 sees the write made before it connected (history),
    // then everything written on either side, each once, in order.
    await ask(worker, { t: "watch", prefix: "/registry/a/", after: 0, n: 41 });
    const keys = Array.from({ length: 20 }, (_, i) => `/registry/a/w${i}`);
    const created = await ask(worker, { t: "create", keys, value: "w" }) as KeyValue[];
    // Acknowledged to the worker means durable in the owner's store.
    for (const kv of created) assert.equal((await store.get(kv.key))?.modRevision, kv.modRevision);
    for (let i = 0; i < 20; i++) await store.create(`/registry/a/m${i}`, "m");
    // A consistent read in the worker sees the owner's last write at once.
    const last = await ask(worker, { t: "get", key: "/registry/a/m19" }) as KeyValue;
    assert.equal(last.modRevision, store.currentRevision());
    const revs = await ask(worker, { t: "watched" }) as number[];
    assert.deepEqual(revs, Array.from({ length: 41 }, (_, i) => i + 1));
    assert.equal(await ask(worker, { t: "close" }), true);
  } finally {
    worker.terminate();
    owner.close();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
}
