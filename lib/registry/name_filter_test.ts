// Field selectors on metadata.name and metadata.namespace are decided from the store key:
// objects they rule out are never decoded (a corrupt one among them fails nothing), as kube
// narrows a single-name list to one key.

import { assert, assertEquals } from "../../tests/assert.ts";
import { parseFieldSelector, StatusError } from "../api/mod.ts";
import { MemoryStore } from "../storage/memory.ts";
import { unreadableValue } from "../storage/mod.ts";
import { Catalogue } from "./catalogue.ts";
import { builtinDefinitions } from "../resources/mod.ts";
import { ResourceRegistry } from "./generic.ts";
import { SchemaSet } from "../schema/schema_set.ts";
import { selectableFields } from "./filter.ts";
import type { KubeObject } from "./definition.ts";

const user = { user: { username: "u", groups: [] } };
const catalogue = new Catalogue(builtinDefinitions());

function registry(store: MemoryStore, resource: string): ResourceRegistry {
  const def = catalogue.lookup("", "v1", resource)!;
  return new ResourceRegistry(def, { store, schemas: SchemaSet.builtin() });
}

function fields(r: ResourceRegistry, selector: string) {
  return { fields: parseFieldSelector(selector, selectableFields(r.def)) };
}

const names = (items: KubeObject[]) =>
  items.map((o) => `${o.metadata?.namespace ?? ""}/${o.metadata?.name}`).sort();

Deno.test("a list by name or namespace passes over a corrupt object of another", async () => {
  const store = new MemoryStore();
  const secrets = registry(store, "secrets");
  for (const ns of ["default", "other"]) {
    for (const name of ["a", "b"]) {
      await secrets.create(ns, { metadata: { name }, stringData: { k: "v" } }, user);
    }
  }
  await store.create(
    "/registry/core/secrets/default/bad",
    unreadableValue("k8s:enc:aesgcm:v1:key1:xx", "no key"),
  );
  const list = async (ns: string, selector: string) =>
    names((await secrets.list(ns, { filter: fields(secrets, selector) })).items);

  assertEquals(await list("", "metadata.name=a"), ["default/a", "other/a"]);
  assertEquals(await list("default", "metadata.name=b"), ["default/b"]);
  assertEquals(await list("", "metadata.namespace=other"), ["other/a", "other/b"]);
  assertEquals(await list("", "metadata.name!=bad,metadata.namespace=default"), [
    "default/a",
    "default/b",
  ]);
  // Pages of one: the continue token walks on past the keys passed over.
  const first = await secrets.list("", { filter: fields(secrets, "metadata.name=a"), limit: 1 });
  assertEquals(names(first.items), ["default/a"]);
  const rest = await secrets.list("", {
    filter: fields(secrets, "metadata.name=a"),
    continue: first.continue,
  });
  assertEquals(names(rest.items), ["other/a"]);
  // A selector that needs the object still reads them all, the corrupt one included.
  const err = await secrets.list("default", { filter: fields(secrets, "type=Opaque") }).then(
    () => undefined,
    (e) => e,
  );
  assert(
    err instanceof StatusError && err.code === 500,
    `a list reading the corrupt object: ${err}`,
  );
  await store.close();
});

Deno.test("a watch by name sees its object's events only, and no other's corrupt delete", async () => {
  const store = new MemoryStore();
  const maps = registry(store, "configmaps");
  const watch = maps.watch("", { afterRevision: 0, filter: fields(maps, "metadata.name=x") });
  await maps.create("default", { metadata: { name: "y" } }, user);
  await maps.create("default", { metadata: { name: "x" }, data: { v: "1" } }, user);
  await store.create(
    "/registry/core/configmaps/default/bad",
    unreadableValue("k8s:enc:aesgcm:v1:key1:xx", "no key"),
  );
  // The deletion of an object the server cannot read ends a watch that would see it.
  await store.delete("/registry/core/configmaps/default/bad");
  const current = await maps.get("default", "x");
  await maps.update("default", "x", { ...current, data: { v: "2" } }, user);
  await maps.delete("default", "y");
  await maps.create("other", { metadata: { name: "x" } }, user);
  await maps.delete("default", "x");
  const seen: string[] = [];
  for (let i = 0; i < 4; i++) {
    const ev = (await watch.next()).value;
    seen.push(`${ev.type} ${ev.object.metadata.namespace}/${ev.object.metadata.name}`);
  }
  assertEquals(seen, [
    "ADDED default/x",
    "MODIFIED default/x",
    "ADDED other/x",
    "DELETED default/x",
  ]);
  assertEquals(watch.poll(), undefined);
  await watch.return(undefined);
  await store.close();
});

Deno.test("a cluster-scoped list by name reads that name only", async () => {
  const store = new MemoryStore();
  const namespaces = registry(store, "namespaces");
  for (const name of ["one", "two"]) await namespaces.create("", { metadata: { name } }, user);
  await store.create(
    "/registry/core/namespaces/bad",
    unreadableValue("k8s:enc:aesgcm:v1:key1:xx", "no key"),
  );
  const list = await namespaces.list("", { filter: fields(namespaces, "metadata.name=two") });
  assertEquals(names(list.items), ["/two"]);
  const none = await namespaces.list("", {
    filter: fields(namespaces, "metadata.namespace=default"),
  });
  assertEquals(none.items, []);
  await store.close();
});
