import { MemoryStore } from "./memory.ts";
import { storeContract } from "./testing/contract.ts";

storeContract("memory", (opts) => {
  const store = new MemoryStore(opts);
  return Promise.resolve({ store, cleanup: () => store.close() });
});
