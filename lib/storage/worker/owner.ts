/**
 * The owner side of the store seam: serves one real {@link Store} (file, etcd, memory) to
 * clients in other threads, each over its own MessagePort. Per client: the state at the oldest
 * revision the store can replay from, then every event after it (one store watch of all keys,
 * drained in batches), and the answers to its writes, revision probes and compactions.
 *
 * A reply to a write is sent when the store's promise resolves, so a client is acknowledged
 * only once the write is durable. A revision probe is answered with the store's current
 * revision; the client then waits until its cache has applied it.
 * @module
 */

import { isStoreError, type KeyValue, type Store, type StoreEvent, type Watch } from "../store.ts";
import {
  type Notice,
  Outbox,
  type Port,
  received,
  type Request,
  toWire,
  type WireKeyValue,
} from "./protocol.ts";

/** A key no object has, read to make sure of the store's current revision. */
const REVISION_PROBE_KEY = "/registry/";

/** Serves a store to clients; {@link StoreOwner.connect} adds one. */
export class StoreOwner {
  readonly #store: Store;
  readonly #clients = new Set<OwnerConnection>();

  constructor(store: Store) {
    this.#store = store;
  }

  /** Serves the store over `port` until the client says goodbye, `end()` or
   * {@link close}. */
  connect(port: Port): { end(): void } {
    const conn = new OwnerConnection(this.#store, port, {
      onCompact: (revision) => {
        for (const c of this.#clients) c.send({ t: "compacted", revision });
      },
      onEnd: () => this.#clients.delete(conn),
    });
    this.#clients.add(conn);
    conn.start();
    return { end: () => conn.end() };
  }

  /** Number of connected clients. */
  get size(): number {
    return this.#clients.size;
  }

  /** Ends every connection (the store itself stays open: its opener closes it). */
  close(): void {
    for (const c of [...this.#clients]) c.end();
  }
}

interface ConnectionHooks {
  onCompact(revision: number): void;
  onEnd(): void;
}

class OwnerConnection {
  readonly #store: Store;
  readonly #port: Port;
  readonly #hooks: ConnectionHooks;
  readonly #out: Outbox;
  #feed: Watch | undefined;
  #ended = false;

  constructor(store: Store, port: Port, hooks: ConnectionHooks) {
    this.#store = store;
    this.#port = port;
    this.#hooks = hooks;
    this.#out = new Outbox(port);
  }

  start(): void {
    this.#port.onmessage = (ev) => {
      for (const req of received<Request>(ev.data)) this.#onRequest(req);
    };
    void this.#run();
  }

  send(n: Notice): void {
    if (!this.#ended) this.#out.send(n);
  }

  end(): void {
    if (this.#ended) return;
    this.send({ t: "closed" });
    this.#out.flush();
    this.#ended = true;
    this.#feed?.stop();
    this.#port.onmessage = null;
    this.#port.close?.();
    this.#hooks.onEnd();
  }

  /** Sends the first state, then the events; starts over after Overflow (from where it
   * was) or Compacted (with the keys as they are now). */
  async #run(): Promise<void> {
    let after: number;
    let first: StoreEvent[] = [];
    try {
      ({ after, first } = await this.#sendInit());
    } catch (err) {
      if (isStoreError(err, "Closed")) return this.end();
      throw err;
    }
    while (!this.#ended) {
      try {
        this.#feed ??= this.#store.watch("", { afterRevision: after });
        const feed = this.#feed;
        const it = feed[Symbol.asyncIterator]();
        for (;;) {
          const batch: StoreEvent[] = first;
          first = [];
          if (batch.length === 0) {
            const r = await it.next();
            if (r.done || this.#ended) break;
            batch.push(r.value);
          }
          for (let ev = feed.poll(); ev; ev = feed.poll()) batch.push(ev);
          after = batch[batch.length - 1].revision;
          this.send({ t: "events", events: batch.map((e) => this.#wireEvent(e)) });
        }
        return this.end(); // the store closed
      } catch (err) {
        this.#feed = undefined;
        if (this.#ended) return;
        if (isStoreError(err, "Overflow")) continue;
        if (isStoreError(err, "Compacted")) {
          const res = await this.#store.list("");
          this.send({
            t: "resync",
            kvs: res.items.map((kv) => this.#wireKv(kv)),
            revision: res.revision,
          });
          after = res.revision;
          continue;
        }
        if (isStoreError(err, "Closed")) return this.end();
        throw err;
      }
    }
  }

  /**
   * Sends the keys as they were just before the oldest retained revision F, so that the
   * client's cache holds the whole retained history: the state at F with F's event undone
   * (its previous value put back, or its key removed for a create). Resolves to F - 1 and
   * the feed's first event(s), to be sent next.
   */
  async #sendInit(): Promise<{ after: number; first: StoreEvent[] }> {
    const oldest = this.#store.oldestRevision();
    const current = this.#store.currentRevision();
    if (oldest > 0 && oldest <= current) {
      const feed = this.#store.watch("", { afterRevision: oldest - 1 });
      try {
        const ev = await feed[Symbol.asyncIterator]().next();
        const res = ev.done ? undefined : await this.#store.list("", { revision: oldest });
        if (!ev.done && ev.value.revision === oldest && res) {
          const kvs = new Map(res.items.map((kv) => [kv.key, kv]));
          const e = ev.value;
          if (e.prevKv) kvs.set(e.prevKv.key, e.prevKv);
          else if (e.type === "put") kvs.delete(e.kv.key);
          const wire = [...kvs.values()].map((kv) => this.#wireKv(kv));
          this.send({ t: "init", kvs: wire, revision: oldest - 1, current });
          this.#feed = feed;
          return { after: oldest, first: [e] };
        }
      } catch (err) {
        if (!isStoreError(err, "Compacted")) {
          feed.stop();
          throw err;
        }
      }
      feed.stop();
    }
    // Nothing retained (or compacted meanwhile): the keys as they are now.
    const res = await this.#store.list("");
    this.send({
      t: "init",
      kvs: res.items.map((kv) => this.#wireKv(kv)),
      revision: res.revision,
      current: res.revision,
    });
    return { after: res.revision, first: [] };
  }

  #wireKv(kv: KeyValue): WireKeyValue {
    return this.#store.isStale?.(kv) ? { ...kv, stale: true } : kv;
  }

  #wireEvent(e: StoreEvent): StoreEvent {
    const kv = this.#wireKv(e.kv);
    return kv === e.kv ? e : { ...e, kv };
  }

  #onRequest(req: Request): void {
    if (req.t === "bye") return this.end();
    if (req.t === "revision") {
      // A consistent read first: on a store shared with other processes (etcd) the revision
      // must include what they acknowledged, which this one's copy may not have yet.
      this.#store.get(REVISION_PROBE_KEY).then(
        () => this.send({ t: "reply", id: req.id, result: this.#store.currentRevision() }),
        (err) => this.send({ t: "reply", id: req.id, error: toWire(err) }),
      );
      return;
    }
    let p: Promise<unknown>;
    try {
      switch (req.t) {
        case "create":
          p = this.#store.create(req.key, req.value);
          break;
        case "update":
          p = this.#store.update(req.key, req.value, req.expected);
          break;
        case "delete":
          p = this.#store.delete(req.key, req.expected);
          break;
        case "compact":
          p = this.#store.compact(req.revision).then(() => this.#hooks.onCompact(req.revision));
          break;
      }
    } catch (err) {
      p = Promise.reject(err);
    }
    p.then(
      (result) => this.send({ t: "reply", id: req.id, result }),
      (err) => this.send({ t: "reply", id: req.id, error: toWire(err) }),
    );
  }
}
