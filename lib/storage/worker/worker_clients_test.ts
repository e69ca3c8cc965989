/**
 * The Store contract over N worker clients of one owner (`--workers=N` has N-1 clients and
 * the owner's thread; here every call goes through a client): a {@link SpreadStore} sends each
 * write and each get/list to the next client in turn, so the contract's read-after-write,
 * revision and conflict checks cross clients. Watches and the synchronous reads
 * (`currentRevision`, `oldestRevision`, `count`, which read one cache and have no "wait for the
 * revision" in the interface) go to one home client, so a watch sees writes made through the
 * others; a write resolves once the home client has it too (a consistent get there), as a
 * caller reading the home cache next would need.
 */

import assert from "node:assert/strict";
import { MemoryStore } from "../memory.ts";
import type {
  KeyValue,
  ListOptions,
  ListResult,
  ReadOptions,
  Store,
  Watch,
  WatchOptions,
} from "../store.ts";
import { storeContract } from "../testing/contract.ts";
import { newRevisionCell, publishingRevisions, StoreOwner, WorkerStoreClient } from "./mod.ts";

/** One `Store` over several clients: writes round-robin, reads on another client than the
 * last write's, the rest on the first. */
class SpreadStore implements Store {
  #next = 0;
  #lastWriter = 0;
  #closing = false;
  constructor(readonly clients: WorkerStoreClient[]) {}

  /** The next client in turn, for a write. */
  #writer(): WorkerStoreClient {
    this.#lastWriter = this.#next++ % this.clients.length;
    return this.clients[this.#lastWriter];
  }
  /** For a get or list: the client after the last write's. */
  #reader(): WorkerStoreClient {
    return this.clients[(this.#lastWriter + 1) % this.clients.length];
  }
  get #home(): WorkerStoreClient {
    return this.clients[0];
  }
  async #write(p: Promise<KeyValue>): Promise<KeyValue> {
    const kv = await p;
    // A consistent read: home has applied kv's revision (a write in flight at close finishes
    // without it: home is closed).
    if (!this.#closing) await this.#home.get(kv.key);
    return kv;
  }

  currentRevision(): number {
    return this.#home.currentRevision();
  }
  oldestRevision(): number {
    return this.#home.oldestRevision();
  }
  count(prefix: string): number {
    return this.#home.count(prefix);
  }
  get(key: string, opts?: ReadOptions): Promise<KeyValue | undefined> {
    return this.#reader().get(key, opts);
  }
  list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    return this.#reader().list(prefix, opts);
  }
  create(key: string, value: string): Promise<KeyValue> {
    return this.#write(this.#writer().create(key, value));
  }
  update(key: string, value: string, expectedRevision: number): Promise<KeyValue> {
    return this.#write(this.#writer().update(key, value, expectedRevision));
  }
  delete(key: string, expectedRevision?: number): Promise<KeyValue> {
    return this.#write(this.#writer().delete(key, expectedRevision));
  }
  watch(prefix: string, opts: WatchOptions): Watch {
    return this.#home.watch(prefix, opts);
  }
  isStale(kv: KeyValue): boolean {
    return this.#home.isStale(kv);
  }
  async compact(revision: number): Promise<void> {
    await this.#home.compact(revision);
  }
  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all(this.clients.map((c) => c.close()));
  }
}

/** N clients of a memory store's owner, each over its own MessageChannel. */
function spreadContract(n: number, sharedRevision: boolean): void {
  storeContract(
    `${n} worker clients (memory owner${sharedRevision ? ", shared revision" : ""})`,
    async (opts) => {
      const store = new MemoryStore(opts);
      const revisionCell = sharedRevision ? newRevisionCell(store.currentRevision()) : undefined;
      const owner = new StoreOwner(revisionCell ? publishingRevisions(store, revisionCell) : store);
      const clients: WorkerStoreClient[] = [];
      for (let i = 0; i < n; i++) {
        const { port1, port2 } = new MessageChannel();
        owner.connect(port1);
        clients.push(
          await WorkerStoreClient.connect(port2, {
            ...opts,
            logger: { warn: () => {} },
            revisionCell,
          }),
        );
      }
      const spread = new SpreadStore(clients);
      return {
        store: spread,
        cleanup: async () => {
          await spread.close();
          owner.close();
          await store.close();
        },
      };
    },
  );
}

// The consistent read's two paths: the owner's revision asked over the port (as on etcd) and
// read from shared memory (the file and memory stores).
spreadContract(2, false);
spreadContract(4, true);

Deno.test("4 worker clients: a write through each is read through every other, in order", async () => {
  const store = new MemoryStore();
  const revisionCell = newRevisionCell(0);
  const owner = new StoreOwner(publishingRevisions(store, revisionCell));
  const clients: WorkerStoreClient[] = [];
  for (let i = 0; i < 4; i++) {
    const { port1, port2 } = new MessageChannel();
    owner.connect(port1);
    clients.push(
      await WorkerStoreClient.connect(port2, { logger: { warn: () => {} }, revisionCell }),
    );
  }
  const spread = new SpreadStore(clients);
  try {
    const watches = clients.map((c) => c.watch("/x/", { afterRevision: 0 }));
    for (let i = 0; i < 16; i++) {
      const kv = await clients[i % 4].create(`/x/${i}`, String(i));
      // At once (no retry): a consistent read on every client has the write.
      for (const c of clients) assert.equal((await c.get(`/x/${i}`))?.modRevision, kv.modRevision);
    }
    for (const w of watches) {
      const revs: number[] = [];
      for await (const ev of w) {
        revs.push(ev.revision);
        if (revs.length === 16) break;
      }
      assert.deepEqual(revs, Array.from({ length: 16 }, (_, i) => i + 1));
    }
    assert.equal((await spread.list("/x/")).items.length, 16);
  } finally {
    await spread.close();
    owner.close();
    await store.close();
  }
});
