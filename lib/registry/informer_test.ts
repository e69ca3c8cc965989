import { assertEquals } from "../../tests/assert.ts";
import { MemoryStore } from "../storage/memory.ts";
import { silentLogger } from "../api/log.ts";
import { Catalogue } from "./catalogue.ts";
import { builtinDefinitions } from "../resources/mod.ts";
import { ResourceRegistry, type WatchEvent } from "./generic.ts";
import { Informer } from "./informer.ts";
import { SchemaSet } from "../schema/schema_set.ts";

const ctx = { user: { username: "u", groups: [] } };
const settle = () => new Promise((r) => setTimeout(r, 0));

function setup(watchBufferSize?: number) {
  const store = new MemoryStore({ watchBufferSize });
  const def = new Catalogue(builtinDefinitions()).lookup("", "v1", "configmaps")!;
  const registry = new ResourceRegistry(def, { store, schemas: SchemaSet.builtin() });
  const events: string[] = [];
  const warnings: string[] = [];
  const informer = new Informer(registry, {
    logger: { ...silentLogger, warn: (message: string) => warnings.push(message) },
    onEvent: (ev: WatchEvent) => events.push(`${ev.type} ${ev.object.metadata.name}`),
  });
  const names = () => [...informer.objects()].map((o) => o.metadata.name).sort();
  return { store, registry, informer, events, warnings, names };
}

Deno.test("Informer: lists, then follows every change", async () => {
  const { store, registry, informer, events, names } = setup();
  await registry.create("default", { metadata: { name: "a" } }, ctx);
  await informer.start();
  assertEquals(events, ["ADDED a"]);
  await registry.create("default", { metadata: { name: "b" } }, ctx);
  await registry.update("default", "a", { metadata: { name: "a" }, data: { k: "v" } }, ctx);
  await registry.delete("default", "b");
  await settle();
  assertEquals(events, ["ADDED a", "ADDED b", "MODIFIED a", "DELETED b"]);
  assertEquals(names(), ["a"]);
  assertEquals([...informer.objects()][0].data, { k: "v" });
  await informer.stop();
  await store.close();
});

Deno.test("Informer: a watch that overflows is replaced by a fresh list", async () => {
  const { store, registry, informer, events, warnings, names } = setup(2);
  await registry.create("default", { metadata: { name: "gone" } }, ctx);
  await informer.start();
  // More writes at once than the watch may buffer: it fails, and a new list catches up.
  await Promise.all(
    ["a", "b", "c", "d", "e"].map((name) =>
      registry.create("default", { metadata: { name } }, ctx)
    ),
  );
  await registry.delete("default", "gone");
  for (let i = 0; i < 50 && names().join() !== "a,b,c,d,e"; i++) await settle();
  assertEquals(names(), ["a", "b", "c", "d", "e"]);
  assertEquals(events.at(-1), "DELETED gone");
  assertEquals(warnings, ["configmaps informer: watch failed, listing again"]);
  await informer.stop();
  await store.close();
});
