import { openStore } from "./backends.ts";
import { storeContract } from "./testing/contract.ts";

storeContract("memory", async (opts) => {
  const store = await openStore({ backend: "memory", ...opts });
  return { store, cleanup: () => store.close() };
});
