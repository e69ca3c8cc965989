/**
 * The store seam across threads: one thread owns the real {@link Store} (file, etcd) and
 * serves it with a {@link StoreOwner}; every worker thread holds a {@link WorkerStoreClient},
 * a `Store` whose writes go to the owner and whose reads and watches come from a local cache
 * fed by the owner's event stream. The design (what crosses the port, the consistency rules)
 * is in this folder's README.
 *
 * @example
 * ```ts
 * const store = await openStore({ backend: "memory" });
 * const { port1, port2 } = new MessageChannel();
 * const owner = new StoreOwner(store);
 * owner.connect(port1); // in the owning thread
 * const client = await WorkerStoreClient.connect(port2); // in a worker (port2 transferred)
 * await client.create("/registry/x", "{}");
 * ```
 * @module
 */

export { StoreOwner } from "./owner.ts";
export { WorkerStoreClient, type WorkerStoreClientOptions } from "./client.ts";
export type { Port } from "./protocol.ts";
export {
  newRevisionCell,
  publishingRevisions,
  readRevisionCell,
  type RevisionCell,
} from "./shared_revision.ts";
