/**
 * Test helper, run as a subprocess by file_test.ts: opens a FileStore in `Deno.args[0]` and
 * writes from 32 concurrent writers until killed, printing `<revision> <key>` for every write
 * once it is acknowledged. The parent SIGKILLs it and checks that every printed write
 * survived.
 * @module
 */

import { FileStore } from "../file.ts";

const store = await FileStore.open({ dir: Deno.args[0], logger: { warn: () => {} } });
const out = Deno.stdout.writable.getWriter();
const enc = new TextEncoder();
await out.write(enc.encode("ready\n"));
await Promise.all(Array.from({ length: 32 }, async (_, w) => {
  for (let i = 0;; i++) {
    const key = `/registry/core/configmaps/w${w}/cm-${i}`;
    const kv = await store.create(key, JSON.stringify({ w, i, pad: "p".repeat(200) }));
    if (i % 3 === 1) await store.update(key, `{"w":${w},"i":${i},"updated":true}`, kv.modRevision);
    if (i % 5 === 4) await store.delete(key);
    await out.write(
      enc.encode(
        `${kv.modRevision} ${key} ${
          i % 5 === 4 ? "deleted" : i % 3 === 1 ? "updated" : "created"
        }\n`,
      ),
    );
  }
}));
