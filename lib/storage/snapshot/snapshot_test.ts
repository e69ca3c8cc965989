/**
 * Snapshots of a file store: taken while it is open, written whole, restored into a directory
 * a file store opens at the same revision with the same keys; truncated, corrupt and foreign
 * files refused without leaving a half-restored directory; retention of scheduled files.
 */

import assert from "node:assert/strict";
import { FileStore } from "../file.ts";
import {
  encodeSnapshot,
  pruneSnapshots,
  readSnapshotFile,
  RestoreRefusedError,
  restoreStoreDir,
  scheduleSnapshots,
  SnapshotError,
  takeSnapshot,
  writeSnapshotFile,
} from "../mod.ts";

const quiet = { warn: () => {} };

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A snapshot file of a store with three keys, one updated and one deleted. */
async function sampleSnapshot(dir: string): Promise<{ path: string; revision: number }> {
  const store = await FileStore.open({ dir: `${dir}/src`, logger: quiet });
  try {
    await store.create("/registry/core/configmaps/ns/a", '{"v":1}');
    const b = await store.create("/registry/core/configmaps/ns/b", '{"v":1}');
    await store.update(b.key, '{"v":2}', b.modRevision);
    await store.create("/registry/core/configmaps/ns/c", '{"v":1}');
    await store.delete("/registry/core/configmaps/ns/c");
    const path = `${dir}/snap/one.snap`;
    const header = await writeSnapshotFile(encodeSnapshot(await takeSnapshot(store)), path);
    assert.deepEqual((await Deno.stat(path)).mode! & 0o777, 0o600);
    return { path, revision: header.revision };
  } finally {
    await store.close();
  }
}

Deno.test("snapshot: a restored store has the keys, revisions and next revision", async () => {
  await withDir(async (dir) => {
    const { path, revision } = await sampleSnapshot(dir);
    assert.deepEqual(revision, 5);
    const header = await restoreStoreDir(path, `${dir}/data/store`, { logger: quiet });
    assert.deepEqual(header.keys, 2);
    const store = await FileStore.open({ dir: `${dir}/data/store`, logger: quiet });
    try {
      assert.deepEqual(store.currentRevision(), 5);
      const list = await store.list("/");
      assert.deepEqual(list.items.map((kv) => [kv.key, kv.value, kv.modRevision]), [
        ["/registry/core/configmaps/ns/a", '{"v":1}', 1],
        ["/registry/core/configmaps/ns/b", '{"v":2}', 3],
      ]);
      const next = await store.create("/registry/core/configmaps/ns/d", "{}");
      assert.deepEqual(next.modRevision, 6);
    } finally {
      await store.close();
    }
    // And again after a restart: the journal now starts after the checkpoint.
    const again = await FileStore.open({ dir: `${dir}/data/store`, logger: quiet });
    assert.deepEqual(again.currentRevision(), 6);
    assert.deepEqual(again.count("/"), 3);
    await again.close();
  });
});

Deno.test("snapshot: a non-empty target is refused unless forced", async () => {
  await withDir(async (dir) => {
    const { path } = await sampleSnapshot(dir);
    const target = `${dir}/data/store`;
    const other = await FileStore.open({ dir: target, logger: quiet });
    await other.create("/registry/core/namespaces/x", "{}");
    // Held by an open store: refused even with force.
    await assert.rejects(
      () => restoreStoreDir(path, target, { force: true, logger: quiet }),
      (e) => e instanceof RestoreRefusedError && /in use/.test(e.message),
    );
    await other.close();
    await assert.rejects(
      () => restoreStoreDir(path, target, { logger: quiet }),
      (e) => e instanceof RestoreRefusedError && /--force/.test(e.message),
    );
    await restoreStoreDir(path, target, { force: true, logger: quiet });
    const store = await FileStore.open({ dir: target, logger: quiet });
    assert.deepEqual(store.count("/registry/core/namespaces/"), 0);
    assert.deepEqual(store.count("/"), 2);
    await store.close();
    assert.deepEqual([...Deno.readDirSync(`${dir}/data`)].map((e) => e.name), ["store"]);
  });
});

Deno.test("snapshot: truncated, corrupt and foreign files are refused, nothing restored", async () => {
  await withDir(async (dir) => {
    const { path } = await sampleSnapshot(dir);
    const bytes = await Deno.readFile(path);
    const text = new TextDecoder().decode(bytes);
    const cases: [string, Uint8Array | string, RegExp][] = [
      ["truncated", bytes.slice(0, bytes.length - 20), /truncated/],
      ["cut after a line", text.split("\n").slice(0, 2).join("\n") + "\n", /truncated/],
      ["flipped", text.replace('{\\"v\\":2}', '{\\"v\\":3}'), /checksum/],
      ["foreign", "hello\n", /not a platform snapshot/],
      ["future", text.replace('"version":1', '"version":9'), /version 9 is not supported/],
      ["empty", "", /empty/],
    ];
    for (const [name, content, message] of cases) {
      const bad = `${dir}/${name}.snap`;
      if (typeof content === "string") await Deno.writeTextFile(bad, content);
      else await Deno.writeFile(bad, content);
      await assert.rejects(
        () => restoreStoreDir(bad, `${dir}/${name}/store`, { logger: quiet }),
        (e) => e instanceof SnapshotError && message.test(e.message),
        name,
      );
      // Nothing is left behind: no store, no temporary directory.
      assert.deepEqual([...Deno.readDirSync(`${dir}/${name}`)], []);
      await assert.rejects(() => readSnapshotFile(bad), SnapshotError);
    }
  });
});

Deno.test("snapshot: a stream that breaks off leaves no file", async () => {
  await withDir(async (dir) => {
    const { path } = await sampleSnapshot(dir);
    const bytes = await Deno.readFile(path);
    const cut = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.slice(0, 40));
        c.close();
      },
    });
    await assert.rejects(() => writeSnapshotFile(cut, `${dir}/out/x.snap`), SnapshotError);
    assert.deepEqual([...Deno.readDirSync(`${dir}/out`)], []);
  });
});

Deno.test("snapshot: retention keeps the newest scheduled files only", async () => {
  await withDir(async (dir) => {
    const names = [
      "platform-snapshot-20260101T000000000Z-r5.snap",
      "platform-snapshot-20260101T000001000Z-r9.snap",
      "platform-snapshot-20260101T000002000Z-r12.snap",
      "my-own.snap",
    ];
    for (const n of names) await Deno.writeTextFile(`${dir}/${n}`, "");
    const removed = await pruneSnapshots(dir, 2);
    assert.deepEqual(removed, [names[0]]);
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), names.slice(1).sort());
  });
});

Deno.test("snapshot: a scheduled round is skipped while the store is unchanged", async () => {
  await withDir(async (dir) => {
    const store = await FileStore.open({ dir: `${dir}/src`, logger: quiet });
    let asked = 0;
    const until = async (cond: () => boolean) => {
      while (!cond()) await new Promise((r) => setTimeout(r, 5));
    };
    // Only finished files: a round writes a temporary file first.
    const files = () =>
      [...Deno.readDirSync(`${dir}/snaps`)].map((e) => e.name).filter((n) => n.endsWith(".snap"))
        .sort();
    await Deno.mkdir(`${dir}/snaps`);
    await store.create("/registry/core/configmaps/ns/a", '{"v":1}');
    const schedule = scheduleSnapshots({
      dir: `${dir}/snaps`,
      intervalMs: 10,
      retention: 5,
      take: () => takeSnapshot(store),
      currentRevision: () => (asked++, store.currentRevision()),
      logger: quiet,
    });
    try {
      await until(() => files().length === 1);
      const seen = asked;
      await until(() => asked >= seen + 3); // three more rounds, nothing changed
      assert.equal(files().length, 1);
      await store.create("/registry/core/configmaps/ns/b", '{"v":1}');
      await until(() => files().length === 2);
      assert.match(files()[1], new RegExp(`-r${store.currentRevision()}\\.snap$`));
    } finally {
      await schedule.stop();
      await store.close();
    }
  });
});
