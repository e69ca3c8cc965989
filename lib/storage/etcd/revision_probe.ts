/**
 * etcd's current revision, for consistent reads: a read must see every write acknowledged
 * before it began, so it needs a revision etcd reported after that moment. Concurrent readers
 * share the probes: one is in flight at a time, and the readers that arrive meanwhile share the
 * next one (the one in flight may have been answered before they arrived). Under load that is
 * two etcd round trips per burst of reads instead of one per read.
 *
 * The probe reads one key (`key`, which need not exist): etcd 3.4 walks a whole range to count
 * it, so a probe over the store's prefix would cost as much as the prefix is large.
 */

import type { EtcdClient } from "./client.ts";

export class RevisionProbe {
  readonly #client: EtcdClient;
  readonly #key: Uint8Array;
  #inFlight: Promise<number> | undefined;
  #next: Promise<number> | undefined;

  constructor(client: EtcdClient, key: Uint8Array) {
    this.#client = client;
    this.#key = key;
  }

  /** etcd's revision as of some moment after this call. */
  current(): Promise<number> {
    if (this.#next) return this.#next;
    if (!this.#inFlight) return this.#start();
    this.#next = this.#inFlight.catch(() => {}).then(() => {
      this.#next = undefined;
      return this.#start();
    });
    return this.#next;
  }

  #start(): Promise<number> {
    const probe = this.#client.range({ key: this.#key, keys_only: true })
      .then((res) => res.header.revision)
      .finally(() => {
        if (this.#inFlight === probe) this.#inFlight = undefined;
      });
    this.#inFlight = probe;
    return probe;
  }
}
