import { assert, assertEquals } from "../../tests/assert.ts";
import { keyToPath } from "./keypath.ts";
import { ObjectFiles, parseObject } from "./objects.ts";
import type { KeyValue } from "./store.ts";

const kv = (key: string, value: string, rev: number): KeyValue => ({
  key,
  value,
  createRevision: rev,
  modRevision: rev,
});

function objectFiles(dir: string, warnings: string[] = []) {
  return new ObjectFiles(dir, {
    revision: 0,
    logger: { warn: (m) => warnings.push(m) },
    storedValue: (kv) => `stored:${kv.value}`,
  });
}

Deno.test("object files are written and removed by the writer thread, 0600 in new directories", async () => {
  const dir = await Deno.makeTempDir();
  const files = objectFiles(dir);
  const keys = Array.from({ length: 1200 }, (_, i) => `/registry/core/configmaps/ns${i % 7}/c${i}`);
  keys.forEach((key, i) => files.schedule(key, { kv: kv(key, `v${i}`, i + 1), revision: i + 1 }));
  await files.flush();
  assertEquals(files.stats.writes, 1200);
  assertEquals(files.writtenRevision, 1200);
  const path = `${dir}/${keyToPath(keys[5])}`;
  assertEquals(parseObject(await Deno.readTextFile(path))?.value, "stored:v5");
  assertEquals((await Deno.stat(path)).mode! & 0o777, 0o600);
  // A later state of a key replaces its file; a removal takes it away.
  files.schedule(keys[5], { kv: kv(keys[5], "again", 1201), revision: 1201 });
  files.schedule(keys[6], { kv: undefined, revision: 1202 });
  files.schedule("/registry/core/configmaps/ns0/never", { kv: undefined, revision: 1203 });
  await files.flush();
  assertEquals(parseObject(await Deno.readTextFile(path))?.value, "stored:again");
  const gone = await Deno.stat(`${dir}/${keyToPath(keys[6])}`).then(() => false, () => true);
  assert(gone, "the removed key's file is gone");
  assertEquals([files.stats.removes, files.stats.failures], [1, 0]);
  assertEquals(await files.sync(), 1203);
  assertEquals(await files.stop(1_000), 0);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("object files that cannot be written wait for the next flush, then go", async () => {
  const dir = await Deno.makeTempDir();
  const warnings: string[] = [];
  const files = objectFiles(dir, warnings);
  // A file where the namespace's directory should be: its objects cannot be written.
  const blocked = `${dir}/${keyToPath("/registry/core/configmaps/blocked/x")}`;
  const parent = blocked.slice(0, blocked.lastIndexOf("/"));
  await Deno.mkdir(parent.slice(0, parent.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(parent, "not a directory");
  files.schedule("/registry/core/configmaps/blocked/x", {
    kv: kv("/registry/core/configmaps/blocked/x", "1", 1),
    revision: 1,
  });
  files.schedule("/registry/core/configmaps/fine/y", {
    kv: kv("/registry/core/configmaps/fine/y", "2", 2),
    revision: 2,
  });
  const err = await files.flush().then(() => undefined, (e: Error) => e);
  assertEquals(err?.message, "Cannot write 1 object files (see warnings)");
  assertEquals([files.stats.writes, files.stats.failures, files.stats.backlog], [1, 1, 1]);
  assertEquals(files.writtenRevision, 0, "nothing past the failed change counts as written");
  assert(warnings.some((w) => w.includes('cannot write "/registry/core/configmaps/blocked/x"')));
  await Deno.remove(parent);
  await files.flush();
  assertEquals(parseObject(await Deno.readTextFile(blocked))?.value, "stored:1");
  assertEquals(files.writtenRevision, 2);
  await files.stop(1_000);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("many written files are synced by one sync of their file system; few, or without it, file by file", async () => {
  const dir = await Deno.makeTempDir();
  const asked: string[] = [];
  let available = true;
  const files = new ObjectFiles(dir, {
    revision: 0,
    logger: { warn: () => {} },
    fileSystemSync: (path) => {
      asked.push(path);
      return Promise.resolve(available);
    },
  });
  let revision = 0;
  const write = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const key = `/registry/core/configmaps/ns${i % 3}/c${revision}`;
      revision++;
      files.schedule(key, { kv: kv(key, "v", revision), revision });
    }
    await files.flush();
  };
  await write(10);
  assertEquals(await files.sync(), 10);
  assertEquals([files.stats.syncs, files.stats.fileSystemSyncs, asked.length], [1, 0, 0]);
  await write(100);
  assertEquals(await files.sync(), 110);
  assertEquals([files.stats.syncs, files.stats.fileSystemSyncs, asked], [2, 1, [dir]]);
  // The file system cannot be synced at once: the files are, one by one.
  available = false;
  await write(100);
  assertEquals(await files.sync(), 210);
  assertEquals([files.stats.syncs, files.stats.fileSystemSyncs, asked.length], [3, 1, 2]);
  assertEquals(await files.stop(1_000), 0);
  await Deno.remove(dir, { recursive: true });
});
