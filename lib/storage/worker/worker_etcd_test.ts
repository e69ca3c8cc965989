import { openStore } from "../backends.ts";
import { storeContract } from "../testing/contract.ts";
import { etcdInstalled, requireEtcdUnderCi, startEtcdMember } from "../testing/etcd_member.ts";
import { StoreOwner, WorkerStoreClient } from "./mod.ts";

requireEtcdUnderCi("lib/storage/worker/worker_etcd_test.ts");

if (etcdInstalled) {
  // The contract over a MessageChannel with the etcd backend owning (a fresh member per test):
  // the client's cache is fed by the owner's, which etcd's watch feeds.
  storeContract("worker client (etcd3 owner)", async (opts) => {
    const member = await startEtcdMember();
    try {
      const store = await openStore({
        backend: "etcd3",
        etcdServers: [member.clientUrl],
        logger: { warn: () => {} },
        ...opts,
      });
      const owner = new StoreOwner(store);
      const { port1, port2 } = new MessageChannel();
      owner.connect(port1);
      const client = await WorkerStoreClient.connect(port2, {
        ...opts,
        logger: { warn: () => {} },
      });
      return {
        store: client,
        cleanup: async () => {
          await client.close();
          owner.close();
          await store.close();
          await member.stop();
        },
      };
    } catch (err) {
      await member.stop();
      throw err;
    }
  });
}
