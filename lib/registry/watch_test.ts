import { assert, assertEquals } from "../../tests/assert.ts";
import { MemoryStore } from "../storage/memory.ts";
import { Catalogue } from "./catalogue.ts";
import { builtinDefinitions } from "../resources/mod.ts";
import { ResourceRegistry } from "./generic.ts";
import { SchemaSet } from "../schema/schema_set.ts";

Deno.test("watchers share one decoded object per event; progress follows delivery", async () => {
  const store = new MemoryStore();
  const def = new Catalogue(builtinDefinitions()).lookup("", "v1", "configmaps")!;
  const registry = new ResourceRegistry(def, { store, schemas: SchemaSet.builtin() });
  const user = { user: { username: "u", groups: [] } };
  const a = registry.watch("default", { afterRevision: 0 });
  const b = registry.watch("", { afterRevision: 0 });
  const created = await registry.create("default", { metadata: { name: "x" } }, user);
  const [ea, eb] = [(await a.next()).value, (await b.next()).value];
  assertEquals([ea.type, eb.type], ["ADDED", "ADDED"]);
  assert(ea.object === eb.object, "the same object for both watchers");
  assertEquals(ea.object.metadata.resourceVersion, created.object.metadata.resourceVersion);
  assertEquals(a.progress(), Number(created.object.metadata.resourceVersion));
  await a.return(undefined);
  await b.return(undefined);
  await store.close();
});
