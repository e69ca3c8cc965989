import { openStore } from "../backends.ts";
import { storeContract } from "../testing/contract.ts";
import { etcdInstalled, requireEtcdUnderCi, startEtcdMember } from "../testing/etcd_member.ts";

requireEtcdUnderCi("lib/storage/etcd/etcd_test.ts");

if (etcdInstalled) {
  // A fresh member per test: the suite counts revisions from an empty store (etcd's revision 1).
  storeContract("etcd3", async (opts) => {
    const member = await startEtcdMember();
    try {
      const store = await openStore({
        backend: "etcd3",
        etcdServers: [member.clientUrl],
        logger: { warn: () => {} },
        ...opts,
      });
      return {
        store,
        cleanup: async () => {
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
