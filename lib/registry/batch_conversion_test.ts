// deno-lint-ignore-file no-explicit-any
/** The storage seam's batch conversion (a CRD's conversion webhook): one call per store read,
 * each stored value converted once, watch events held until converted, writes converted
 * before they are stored, failures leaving nothing behind. */

import { assert, assertEquals } from "../../tests/assert.ts";
import { internalError } from "../api/mod.ts";
import { MemoryStore } from "../storage/memory.ts";
import { Catalogue } from "./catalogue.ts";
import { builtinDefinitions } from "../resources/mod.ts";
import { ResourceRegistry } from "./generic.ts";
import { SchemaSet } from "../schema/schema_set.ts";
import type { BatchStorageConversion, KubeObject } from "./definition.ts";

const ctx = { user: { username: "u", groups: [] } };

function setup() {
  const store = new MemoryStore();
  const schemas = SchemaSet.builtin();
  const v1 = new Catalogue(builtinDefinitions()).lookup("", "v1", "configmaps")!;
  const calls: { to: string; names: string[] }[] = [];
  let failing = false;
  const convert = (objs: KubeObject[], to: string) => {
    calls.push({ to, names: objs.map((o) => o.metadata.name) });
    if (failing) return Promise.reject(internalError("conversion failed"));
    return Promise.resolve(objs.map((o) => ({ ...o, apiVersion: to })));
  };
  const conversion: BatchStorageConversion = {
    fromStorageAll: (objs) => convert(objs, "v2"),
    toStorageAsync: async (obj) => (await convert([obj], "v1"))[0],
  };
  const v2 = { ...v1, version: "v2", storage: { group: "", resource: "configmaps", conversion } };
  return {
    store,
    stored: new ResourceRegistry(v1, { store, schemas }),
    served: new ResourceRegistry(v2, { store, schemas }),
    calls,
    fail: (on: boolean) => (failing = on),
  };
}

Deno.test("batch conversion: a list in one call, each stored value converted once", async () => {
  const { store, stored, served, calls } = setup();
  for (const name of ["a", "b", "c"]) await stored.create("default", { metadata: { name } }, ctx);
  const list = await served.list("default");
  assertEquals(list.items.map((o) => [o.metadata.name, o.apiVersion]), [
    ["a", "v2"],
    ["b", "v2"],
    ["c", "v2"],
  ]);
  assertEquals(calls, [{ to: "v2", names: ["a", "b", "c"] }]);
  assertEquals((await served.get("default", "b")).apiVersion, "v2");
  assertEquals(JSON.parse(await served.getJson("default", "c")).apiVersion, "v2");
  assertEquals(calls.length, 1);
  await store.close();
});

Deno.test("batch conversion: watch events are converted, poll holds them for next", async () => {
  const { store, stored, served } = setup();
  const w = served.watch("default", { afterRevision: 0 });
  await stored.create("default", { metadata: { name: "a" } }, ctx);
  const first = await w.next();
  assertEquals([first.value?.type, first.value?.object.apiVersion], ["ADDED", "v2"]);
  await stored.create("default", { metadata: { name: "b" } }, ctx);
  await stored.create("default", { metadata: { name: "c" } }, ctx);
  await new Promise((r) => setTimeout(r, 0));
  assertEquals(w.poll(), undefined, "not converted yet: held");
  const names: string[] = [];
  for (const _ of [1, 2]) {
    const ev = await w.next();
    assertEquals(ev.value?.object.apiVersion, "v2");
    names.push(ev.value!.object.metadata.name);
  }
  assertEquals(names, ["b", "c"]);
  await w.return(undefined);
  await store.close();
});

Deno.test("batch conversion: writes are converted first; a failure stores nothing", async () => {
  const { store, stored, served, calls, fail } = setup();
  const made = await served.create("default", { metadata: { name: "a" }, data: { k: "1" } }, ctx);
  assertEquals(made.object.apiVersion, "v2");
  assertEquals(calls, [{ to: "v1", names: ["a"] }]);
  assertEquals(JSON.parse((await stored.getStored("default", "a")).value).apiVersion, "v1");

  fail(true);
  const err = await served.create("default", { metadata: { name: "b" } }, ctx).catch((e) => e);
  assertEquals(err.code, 500);
  const put = await served.update(
    "default",
    "a",
    { metadata: { name: "a" }, data: { k: "2" } },
    ctx,
  )
    .catch((e) => e);
  assertEquals(put.code, 500);
  assertEquals((await stored.list("default")).items.map((o: any) => [o.metadata.name, o.data]), [
    ["a", { k: "1" }],
  ]);
  // Nothing was cached by the failed reads: they convert again once the webhook is back.
  const before = calls.length;
  fail(false);
  assertEquals((await served.get("default", "a")).data, { k: "1" });
  assert(calls.length > before);
  await store.close();
});
