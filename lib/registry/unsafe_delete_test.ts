import { assert, assertEquals } from "../../tests/assert.ts";
import { StatusError } from "../api/mod.ts";
import { MemoryStore } from "../storage/memory.ts";
import { unreadableValue } from "../storage/mod.ts";
import { Catalogue } from "./catalogue.ts";
import { builtinDefinitions } from "../resources/mod.ts";
import { ResourceRegistry } from "./generic.ts";
import { SchemaSet } from "../schema/schema_set.ts";

const PREFIX = "/registry/core/secrets/default/";

function secrets(store: MemoryStore, corruptObjectErrors: boolean): ResourceRegistry {
  const def = new Catalogue(builtinDefinitions()).lookup("", "v1", "secrets")!;
  return new ResourceRegistry(def, { store, schemas: SchemaSet.builtin(), corruptObjectErrors });
}

async function thrown(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
  throw new Error("expected a StatusError");
}

Deno.test("a list names at most 100 corrupt objects, then a TooMany cause (gate on)", async () => {
  const store = new MemoryStore();
  for (let i = 0; i < 102; i++) {
    const key = `${PREFIX}s${String(i).padStart(3, "0")}`;
    await store.create(key, unreadableValue("k8s:enc:aesgcm:v1:key1:xx", "no key"));
  }
  const on = await thrown(secrets(store, true).list("default"));
  assertEquals([on.code, on.reason], [500, "StorageReadError"]);
  assertEquals(on.message, "failed to read one or more secrets from the storage");
  const causes = on.details!.causes!;
  assertEquals(causes.length, 101);
  assertEquals(causes[0].field, `${PREFIX}s000`);
  assertEquals(causes[0].reason, "UnexpectedServerResponse");
  assert(causes[0].message!.endsWith(": no key"), causes[0].message);
  assertEquals(causes[100], {
    reason: "TooMany",
    message: "too many errors, the list is truncated",
  });
  // Gate off: the first unreadable value is the answer, as before.
  const off = await thrown(secrets(store, false).list("default"));
  assertEquals([off.code, off.reason], [500, "InternalError"]);
  assertEquals(
    off.message,
    `Internal error occurred: unable to transform key "${PREFIX}s000": no key`,
  );
  await store.close();
});

Deno.test("deleteCorrupt removes an unreadable value unread; a readable one is refused", async () => {
  const store = new MemoryStore();
  const registry = secrets(store, true);
  await store.create(`${PREFIX}bad`, unreadableValue("k8s:enc:aesgcm:v1:key1:xx", "no key"));
  const ctx = { user: { username: "u", groups: [] } };
  await registry.create("default", { metadata: { name: "good" } }, ctx);

  assertEquals(await registry.deleteCorrupt("default", "bad", true), store.currentRevision());
  assert(await store.get(`${PREFIX}bad`), "a dry run removes nothing");
  const revision = await registry.deleteCorrupt("default", "bad");
  assertEquals(revision, store.currentRevision());
  assertEquals(await store.get(`${PREFIX}bad`), undefined);

  const readable = await thrown(registry.deleteCorrupt("default", "good"));
  assertEquals(readable.code, 422);
  assertEquals(readable.details?.kind, "secrets");
  assert(await store.get(`${PREFIX}good`), "the readable object stays");
  assertEquals((await thrown(registry.deleteCorrupt("default", "gone"))).code, 404);
  await store.close();
});
