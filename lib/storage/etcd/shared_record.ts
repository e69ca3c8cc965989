/**
 * One etcd key outside the store's objects that replicas on the same etcd share: the first
 * to arrive writes it (a transaction that succeeds only while the key does not exist), every
 * later one reads what the first wrote. Start-up keeps the replicas' shared secrets there
 * (`lib/server/start/bootstrap.ts`), sealed with a key only the replicas know.
 */

import { EtcdClient, type EtcdRoute, type EtcdTls } from "./client.ts";

const enc = new TextEncoder();

/** The key's value, read and written by whole. */
export interface SharedRecord {
  /** The value, or undefined while nobody has written it. */
  get(): Promise<Uint8Array | undefined>;
  /** Writes `value` unless the key exists; whether it was written. */
  createIfAbsent(value: Uint8Array): Promise<boolean>;
  close(): void;
}

export interface SharedRecordOptions {
  endpoints: string[];
  tls?: EtcdTls;
  /** The etcd key, whole (the caller adds its prefix). */
  key: string;
  /** How long connecting may take. @default 5000 */
  timeoutMs?: number;
  /** How each endpoint is reached (the egress dialer's `etcd` selection). @default direct */
  route?: EtcdRoute;
}

/**
 * Connects to etcd for one key.
 *
 * @throws {EtcdUnavailableError} naming the endpoints when none answers.
 */
export async function openSharedRecord(opts: SharedRecordOptions): Promise<SharedRecord> {
  const client = await EtcdClient.connect(opts.endpoints, {
    tls: opts.tls,
    timeoutMs: opts.timeoutMs,
    route: opts.route,
  });
  const key = enc.encode(opts.key);
  return {
    async get() {
      const res = await client.range({ key, limit: 1 });
      return res.kvs[0]?.value;
    },
    async createIfAbsent(value) {
      const res = await client.txn({
        compare: [{ key, target: "CREATE", result: "EQUAL", create_revision: 0 }],
        success: [{ request_put: { key, value } }],
        failure: [],
      });
      return res.succeeded;
    },
    close: () => client.close(),
  };
}
