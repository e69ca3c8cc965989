import { assert, assertEquals } from "../../../tests/assert.ts";
import { MemoryStore } from "../../storage/memory.ts";
import { Catalogue } from "../../registry/catalogue.ts";
import { builtinDefinitions } from "../../resources/mod.ts";
import { ResourceRegistry } from "../../registry/generic.ts";
import { SchemaSet } from "../../schema/schema_set.ts";
import { requestInfoOf } from "../request_info.ts";
import { watchHandler } from "./watch.ts";
import { WatchPacer } from "./watch_pacing.ts";

Deno.test("a watcher that falls behind is ended cleanly, without an ERROR event", async () => {
  const store = new MemoryStore({ watchBufferSize: 3 });
  const def = new Catalogue(builtinDefinitions()).lookup("", "v1", "configmaps")!;
  const registry = new ResourceRegistry(def, { store, schemas: SchemaSet.builtin() });
  const user = { username: "u", groups: [] };
  const url = new URL("https://x/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1");
  await store.create("/registry/core/configmaps/default/seed", "{}"); // revision 1
  const res = await watchHandler({
    req: new Request(url),
    url,
    info: requestInfoOf("GET", url),
    warnings: [],
    signal: new AbortController().signal,
    user,
  }, {
    registry,
    maxBodyBytes: 1 << 20,
    watchList: false,
    unsafeDelete: false,
    minRequestTimeoutS: 1800,
    protobuf: true,
    watchPacer: new WatchPacer(),
  });
  // Nobody reads the stream while 20 objects are written: the watcher's buffer overflows.
  for (let i = 0; i < 20; i++) {
    await registry.create("default", { metadata: { name: `cm-${i}` } }, { user });
  }
  const lines = (await res.text()).trim().split("\n").map((l) => JSON.parse(l));
  assert(lines.length > 0 && lines.length < 20, `${lines.length} events before the end`);
  assertEquals(lines.map((l) => l.type), lines.map(() => "ADDED"));
  assertEquals(lines[0].object.metadata.name, "cm-0");
  await store.close();
});

Deno.test("with many streams open, events that come within the window go out in one write", async () => {
  const store = new MemoryStore();
  const def = new Catalogue(builtinDefinitions()).lookup("", "v1", "configmaps")!;
  const registry = new ResourceRegistry(def, { store, schemas: SchemaSet.builtin() });
  const user = { username: "u", groups: [] };
  const url = new URL("https://x/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1");
  await store.create("/registry/core/configmaps/default/seed", "{}"); // revision 1
  // 999 other streams: with this one, a window of 40 ms.
  const watchPacer = new WatchPacer();
  for (let i = 0; i < 999; i++) watchPacer.opened();
  const abort = new AbortController();
  try {
    const res = await watchHandler({
      req: new Request(url),
      url,
      info: requestInfoOf("GET", url),
      warnings: [],
      signal: abort.signal,
      user,
    }, {
      registry,
      maxBodyBytes: 1 << 20,
      watchList: false,
      unsafeDelete: false,
      minRequestTimeoutS: 1800,
      protobuf: true,
      watchPacer,
    });
    assertEquals(watchPacer.window(), 40);
    const reader = res.body!.getReader();
    const names = (chunk: Uint8Array) =>
      new TextDecoder().decode(chunk).trim().split("\n").map((l) =>
        JSON.parse(l).object.metadata.name
      );
    const create = (name: string) => registry.create("default", { metadata: { name } }, { user });

    await create("first");
    const first = await reader.read();
    const sentAt = performance.now();
    assertEquals(names(first.value!), ["first"], "a stream that was quiet sends at once");
    for (const name of ["a", "b", "c"]) await create(name);
    const next = await reader.read();
    assertEquals(names(next.value!), ["a", "b", "c"], "the events of the window in one write");
    const held = performance.now() - sentAt;
    assert(held >= 30, `the second write came ${held.toFixed(1)} ms after the first`);
    await reader.cancel();
  } finally {
    for (let i = 0; i < 999; i++) watchPacer.closed();
    abort.abort();
    await store.close();
  }
  assertEquals(watchPacer.open, 0, "every stream is counted out when it ends");
});
