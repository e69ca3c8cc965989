import assert from "node:assert/strict";
import { FileStore, type FileStoreOptions } from "./file.ts";
import { keyToPath } from "./keypath.ts";
import { parseObject, serializeObject } from "./objects.ts";
import { decodeRecord } from "./journal/record.ts";
import { isStoreError, type KeyValue } from "./store.ts";
import { storeContract, take } from "./testing/contract.ts";
import { openStore } from "./backends.ts";

storeContract("file", async (opts) => {
  const dir = await Deno.makeTempDir({ prefix: "filestore-" });
  const store = await openStore({ backend: "file", dir, ...opts });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
});

class Warnings {
  lines: string[] = [];
  warn(msg: string) {
    this.lines.push(msg);
  }
}

/** A temp directory removed at the end of the scope. */
async function tempDir(): Promise<AsyncDisposable & { path: string }> {
  const path = await Deno.makeTempDir({ prefix: "filestore-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

function open(dir: string, opts: Partial<FileStoreOptions> = {}): Promise<FileStore> {
  return FileStore.open({ dir, logger: new Warnings(), ...opts });
}

/**
 * Copies `src` to `dst` as it is on disk right now: with a store still running in `src`,
 * the copy is what a crash at this instant leaves behind (every acknowledged journal record
 * is in the file; object files and the checkpoint are wherever the background writer got).
 */
/** Object files written only by flush() and close(). */
const PAUSED = { idleMs: 600_000, maxDelayMs: 600_000 };

async function crashCopy(src: string, dst: string): Promise<void> {
  await Deno.mkdir(dst, { recursive: true });
  for await (const e of Deno.readDir(src)) {
    if (e.isDirectory) await crashCopy(`${src}/${e.name}`, `${dst}/${e.name}`);
    else if (e.name !== "lock") await copyIfThere(`${src}/${e.name}`, `${dst}/${e.name}`);
  }
}

/** A file the background writer renamed or removed since the listing is simply not in the
 * copy, as a crash between the two would leave it. */
async function copyIfThere(src: string, dst: string): Promise<void> {
  try {
    await Deno.copyFile(src, dst);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}

async function objectFile(dir: string, key: string): Promise<KeyValue | undefined> {
  try {
    return parseObject(await Deno.readTextFile(`${dir}/objects/${keyToPath(key)}`));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

async function lastSegment(dir: string): Promise<string> {
  const names = [];
  for await (const e of Deno.readDir(`${dir}/journal`)) {
    if (e.name.endsWith(".log")) names.push(e.name);
  }
  return `${dir}/journal/${names.sort().at(-1)}`;
}

function recordOffsets(buf: Uint8Array): number[] {
  const out: number[] = [];
  for (let at = 0;;) {
    const r = decodeRecord(buf, at);
    if (!r.ok) return out;
    out.push(at);
    at += r.size;
  }
}

const P = "/registry/core/configmaps/default/";

Deno.test("file store: a reopened store keeps data, revisions and history", async () => {
  await using dir = await tempDir();
  const a = await open(dir.path);
  await a.create(`${P}a`, "a1"); // 1
  await a.create(`${P}b`, "b1"); // 2
  await a.update(`${P}a`, "a2", 1); // 3
  await a.delete(`${P}b`); // 4
  await a.close();

  const b = await open(dir.path);
  assert.equal(b.currentRevision(), 4);
  assert.equal(b.oldestRevision(), 1);
  assert.deepEqual({ ...(await b.get(`${P}a`))! }, {
    key: `${P}a`,
    value: "a2",
    createRevision: 1,
    modRevision: 3,
  });
  assert.equal(await b.get(`${P}b`), undefined);
  const old = await b.list(P, { revision: 2 });
  assert.deepEqual(old.items.map((kv) => `${kv.key}=${kv.value}`), [`${P}a=a1`, `${P}b=b1`]);
  const w = b.watch(P, { afterRevision: 1 });
  const evs = await take(w[Symbol.asyncIterator](), 3);
  assert.deepEqual(
    evs.map((e) => [e.type, e.revision, e.kv.value, e.prevKv?.value, e.prevKv?.modRevision]),
    [
      ["put", 2, "b1", undefined, undefined],
      ["put", 3, "a2", "a1", 1],
      ["delete", 4, "b1", "b1", 2],
    ],
  );
  w.stop();
  assert.equal((await b.create(`${P}c`, "c1")).modRevision, 5);
  await b.close();
});

Deno.test("file store: the directory is locked while open", async () => {
  await using dir = await tempDir();
  const a = await open(dir.path);
  await assert.rejects(() => open(dir.path), /in use/);
  await a.close();
  const b = await open(dir.path);
  await b.close();
});

Deno.test("file store: a checkpoint write cut short by a crash leaves no file behind", async () => {
  await using dir = await tempDir();
  const a = await open(dir.path);
  await a.create(`${P}a`, "a1");
  await a.close();
  // What a crash between writeFileAtomic's create and rename leaves; and a file of the user's.
  await Deno.writeTextFile(`${dir.path}/checkpoint.tmp-0a1b2c3d`, '{"revision":');
  await Deno.writeTextFile(`${dir.path}/notes.txt`, "mine");
  const warnings = new Warnings();
  const b = await open(dir.path, { logger: warnings });
  assert.equal((await b.get(`${P}a`))?.value, "a1");
  const names = [...Deno.readDirSync(dir.path)].map((e) => e.name);
  assert(!names.includes("checkpoint.tmp-0a1b2c3d"));
  assert(names.includes("notes.txt"));
  assert(warnings.lines.some((l) => l.includes("checkpoint.tmp-0a1b2c3d")), warnings.lines.join());
  await b.close();
});

Deno.test("file store: after a crash every acknowledged write is there and history too", async () => {
  await using dir = await tempDir();
  await using copy = await tempDir();
  // A copy is not an instant, as a crash is: with the background writer running, it could
  // pair a checkpoint with object files older than it. Object files wait for close here.
  const a = await open(dir.path, { objectWrites: PAUSED, checkpointIntervalMs: 600_000 });
  const writes = [];
  for (let i = 0; i < 300; i++) writes.push(a.create(`${P}k${i}`, `v${i}`));
  await Promise.all(writes);
  await a.update(`${P}k0`, "v0b", 1);
  await a.delete(`${P}k1`);
  await crashCopy(dir.path, copy.path);
  await a.close();

  const warnings = new Warnings();
  const b = await open(copy.path, { logger: warnings });
  assert.equal(b.currentRevision(), 302);
  assert.equal(b.count(P), 299);
  assert.equal((await b.get(`${P}k0`))?.value, "v0b");
  assert.equal(await b.get(`${P}k1`), undefined);
  assert.equal((await b.get(`${P}k1`, { revision: 300 }))?.value, "v1");
  const w = b.watch(P, { afterRevision: 299 });
  const evs = await take(w[Symbol.asyncIterator](), 3);
  assert.deepEqual(evs.map((e) => `${e.type}@${e.revision}`), ["put@300", "put@301", "delete@302"]);
  w.stop();
  await b.close();
  // The object files now match the store.
  assert.equal((await objectFile(copy.path, `${P}k0`))?.value, "v0b");
  assert.equal(await objectFile(copy.path, `${P}k1`), undefined);
  assert.equal((await objectFile(copy.path, `${P}k299`))?.modRevision, 300);
});

Deno.test("file store: object files that lag or lead the journal are repaired on open", async () => {
  await using dir = await tempDir();
  await using copy = await tempDir();
  // Object files only at flush(): a loaded machine must not write them behind the test's back.
  const a = await open(dir.path, { objectWrites: PAUSED, checkpointIntervalMs: 600_000 });
  await a.create(`${P}a`, "a1"); // 1
  await a.create(`${P}b`, "b1"); // 2
  await a.create(`${P}c`, "c1"); // 3
  assert.equal(await a.flush(), 3); // object files + checkpoint at 3
  await a.update(`${P}a`, "a2", 1); // 4: file of a is stale
  await a.delete(`${P}b`); // 5: file of b should go
  await a.create(`${P}d`, "d1"); // 6: file of d is missing
  await crashCopy(dir.path, copy.path);
  await a.close();
  assert.equal((await objectFile(copy.path, `${P}a`))?.value, "a1");
  assert.ok(await objectFile(copy.path, `${P}b`));
  assert.equal(await objectFile(copy.path, `${P}d`), undefined);
  // Files ahead of the journal, as a damaged journal would leave them.
  const plant = async (kv: KeyValue) => {
    const path = `${copy.path}/objects/${keyToPath(kv.key)}`;
    await Deno.writeTextFile(path, serializeObject(kv));
  };
  await plant({ key: `${P}c`, value: "c-future", createRevision: 3, modRevision: 99 });
  await plant({ key: `${P}new`, value: "n", createRevision: 98, modRevision: 98 });
  await plant({ key: `${P}orphan`, value: "o", createRevision: 2, modRevision: 97 });
  await Deno.writeTextFile(`${copy.path}/objects/${keyToPath(`${P}torn`)}`, '{"key":"/x","va');

  const warnings = new Warnings();
  const b = await open(copy.path, { logger: warnings });
  assert.equal((await b.get(`${P}a`))?.value, "a2");
  assert.equal(await b.get(`${P}b`), undefined);
  assert.equal((await b.get(`${P}d`))?.value, "d1");
  assert.deepEqual({ ...(await b.get(`${P}c`))! }, {
    key: `${P}c`,
    value: "c1",
    createRevision: 3,
    modRevision: 3,
  });
  assert.equal(await b.get(`${P}new`), undefined);
  assert.equal(await b.get(`${P}torn`), undefined);
  // The orphan's previous value is unknown: it is kept under a fresh revision.
  const orphan = await b.get(`${P}orphan`);
  assert.equal(orphan?.value, "o");
  assert.equal(orphan?.modRevision, 7);
  assert.equal(b.currentRevision(), 7);
  const text = warnings.lines.join("\n");
  assert.match(text, /ahead of the journal/);
  assert.match(text, /unreadable content/);
  await b.close();
  assert.equal((await objectFile(copy.path, `${P}a`))?.value, "a2");
  assert.equal(await objectFile(copy.path, `${P}b`), undefined);
  assert.equal((await objectFile(copy.path, `${P}d`))?.value, "d1");
  assert.equal((await objectFile(copy.path, `${P}c`))?.modRevision, 3);
  assert.equal(await objectFile(copy.path, `${P}new`), undefined);
  // A clean reopen has nothing to say.
  const quiet = new Warnings();
  const c = await open(copy.path, { logger: quiet });
  assert.equal(c.currentRevision(), 7);
  assert.deepEqual(quiet.lines, []);
  await c.close();
});

Deno.test("file store: a torn journal tail is truncated and the store accepts new writes", async () => {
  await using dir = await tempDir();
  await using copy = await tempDir();
  const a = await open(dir.path);
  for (let i = 1; i <= 10; i++) await a.create(`${P}k${i}`, `v${i}`);
  await crashCopy(dir.path, copy.path);
  await a.close();
  const seg = await lastSegment(copy.path);
  const buf = await Deno.readFile(seg);
  const lastAt = recordOffsets(buf)[9];
  await Deno.writeFile(seg, buf.subarray(0, lastAt + 20)); // the 10th record, half written

  const warnings = new Warnings();
  const b = await open(copy.path, { logger: warnings });
  assert.match(warnings.lines.join("\n"), new RegExp(`torn tail of "${seg}" at offset ${lastAt}`));
  assert.equal(b.currentRevision(), 9);
  for (let i = 1; i <= 9; i++) assert.equal((await b.get(`${P}k${i}`))?.value, `v${i}`);
  assert.equal(await b.get(`${P}k10`), undefined);
  assert.equal((await b.create(`${P}k10`, "again")).modRevision, 10);
  await b.close();
  const c = await open(copy.path);
  assert.equal((await c.get(`${P}k10`))?.value, "again");
  await c.close();
});

Deno.test("file store: a corrupt last record is dropped with a warning", async () => {
  await using dir = await tempDir();
  await using copy = await tempDir();
  const a = await open(dir.path);
  for (let i = 1; i <= 5; i++) await a.create(`${P}k${i}`, `v${i}`);
  await crashCopy(dir.path, copy.path);
  await a.close();
  const seg = await lastSegment(copy.path);
  const buf = await Deno.readFile(seg);
  const lastAt = recordOffsets(buf)[4];
  buf[lastAt + 30] ^= 0x10;
  await Deno.writeFile(seg, buf);
  const warnings = new Warnings();
  const b = await open(copy.path, { logger: warnings });
  assert.match(warnings.lines.join("\n"), /checksum mismatch/);
  assert.equal(b.currentRevision(), 4);
  assert.equal(b.count(P), 4);
  await b.close();
});

Deno.test("file store: group commit batches concurrent writes", async () => {
  await using dir = await tempDir();
  const s = await open(dir.path);
  await Promise.all(Array.from({ length: 100 }, (_, i) => s.create(`${P}k${i}`, "v")));
  const { journal } = s.stats();
  assert.equal(journal.appends, 100);
  assert.ok(journal.syncs <= 5, `100 writes took ${journal.syncs} fdatasyncs`);
  await s.close();
});

Deno.test("file store: compaction and checkpoints delete old segments; history floor survives", async () => {
  await using dir = await tempDir();
  const opts = { segmentBytes: 2048, preallocateBytes: 1024 };
  const a = await open(dir.path, opts);
  for (let i = 1; i <= 60; i++) await a.create(`${P}k${i}`, "x".repeat(100));
  const before = a.stats().journal.segments;
  assert.ok(before > 5, `segments: ${before}`);
  await a.flush();
  assert.equal(a.stats().journal.segments, before, "history still needs every segment");
  await a.compact(50);
  await a.flush();
  const after = a.stats().journal.segments;
  assert.ok(after < before && after >= 1, `segments ${before} -> ${after}`);
  await a.close();

  const b = await open(dir.path, opts);
  assert.equal(b.currentRevision(), 60);
  assert.equal(b.count(P), 60);
  assert.equal(b.oldestRevision(), 50);
  await assert.rejects(
    () => b.get(`${P}k1`, { revision: 40 }),
    (e) => isStoreError(e, "Compacted"),
  );
  const w = b.watch(P, { afterRevision: 49 });
  assert.equal((await take(w[Symbol.asyncIterator](), 1))[0].revision, 50);
  w.stop();
  await b.close();
});

Deno.test("file store: history outside the retention window is dropped on reopen", async () => {
  await using dir = await tempDir();
  let now = 1_000_000;
  const clock = { now: () => now };
  const a = await open(dir.path, { clock, historyRetentionMs: 10_000 });
  await a.create(`${P}a`, "1");
  now += 20_000;
  await a.create(`${P}b`, "2");
  await a.create(`${P}c`, "3");
  await a.close();
  const b = await open(dir.path, { clock, historyRetentionMs: 10_000 });
  assert.equal(b.oldestRevision(), 2);
  assert.equal(b.count(P), 3);
  await b.close();
});

Deno.test("file store: SIGKILL loses no acknowledged write", async () => {
  await using dir = await tempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      new URL("./testing/crash_child.ts", import.meta.url).pathname,
      dir.path,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let text = "";
  let killed = false;
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    text += chunk;
    // The first line is the child's greeting; every later complete line is one acknowledgement.
    if (!killed && text.split("\n").length > 402) {
      child.kill("SIGKILL");
      killed = true;
    }
  }
  await child.status;
  const acked = text.split("\n").slice(1, -1).map((line) => line.split(" "));
  assert.ok(acked.length >= 400, `only ${acked.length} writes acknowledged`);
  const s = await open(dir.path);
  for (const [rev, key, what] of acked) {
    const kv = await s.get(key);
    if (what === "deleted") {
      assert.equal(kv, undefined, `${key} should be deleted`);
      continue;
    }
    assert.ok(kv, `acknowledged ${key} (revision ${rev}) is missing`);
    assert.equal(kv.createRevision, Number(rev));
    assert.equal(JSON.parse(kv.value).updated, what === "updated" ? true : undefined);
  }
  assert.ok(s.currentRevision() >= Math.max(...acked.map(([rev]) => Number(rev))));
  await s.close();
});

/** Every file under `dir` that contains `text`. */
async function filesContaining(dir: string, text: string): Promise<string[]> {
  const found: string[] = [];
  const needle = new TextEncoder().encode(text);
  const walk = async (d: string) => {
    for await (const e of Deno.readDir(d)) {
      const path = `${d}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (contains(await Deno.readFile(path), needle)) found.push(path);
    }
  };
  await walk(dir);
  return found;
}

function contains(hay: Uint8Array, needle: Uint8Array): boolean {
  for (let i = hay.indexOf(needle[0]); i >= 0; i = hay.indexOf(needle[0], i + 1)) {
    let j = 1;
    while (j < needle.length && hay[i + j] === needle[j]) j++;
    if (j === needle.length) return true;
  }
  return false;
}

Deno.test("file store: a deleted value leaves the journal once the retention window passes", async () => {
  await using dir = await tempDir();
  let now = 1_000_000;
  const clock = { now: () => now };
  const opts = { clock, historyRetentionMs: 10_000, checkpointIntervalMs: 60_000 };
  const a = await open(dir.path, opts);
  await a.create(`${P}keep`, "kept-value");
  const kv = await a.create(`${P}gone`, "deleted-value-42");
  await a.delete(kv.key);
  await a.flush();
  assert.deepEqual((await filesContaining(dir.path, "deleted-value-42")).length, 1);
  // Within the window the history (and the journal) still hold it.
  now += 5_000;
  await a.flush();
  assert.equal((await filesContaining(dir.path, "deleted-value-42")).length, 1);
  now += 6_000;
  await a.flush();
  assert.deepEqual(await filesContaining(dir.path, "deleted-value-42"), []);
  // Writes go on in a new segment; a reopen finds every key and the current revision.
  await a.create(`${P}later`, "v");
  await a.close();
  const b = await open(dir.path, opts);
  assert.equal(b.currentRevision(), 4);
  assert.equal((await b.get(`${P}keep`))?.value, "kept-value");
  assert.equal(await b.get(`${P}gone`), undefined);
  assert.equal((await b.get(`${P}later`))?.modRevision, 4);
  await b.create(`${P}after`, "v");
  await b.close();
});

Deno.test("file store: under steady writes segments rotate so old values expire", async () => {
  await using dir = await tempDir();
  let now = 1_000_000;
  const clock = { now: () => now };
  const opts = { clock, historyRetentionMs: 10_000, checkpointIntervalMs: 2_000 };
  const a = await open(dir.path, opts);
  const kv = await a.create(`${P}gone`, "deleted-value-43");
  await a.delete(kv.key);
  for (let i = 0; i < 20; i++) {
    now += 1_000;
    await a.create(`${P}k${i}`, "x");
    await a.flush();
  }
  assert.deepEqual(await filesContaining(dir.path, "deleted-value-43"), []);
  assert.ok(a.stats().journal.segments <= 8, `${a.stats().journal.segments} segments`);
  await a.close();
  const b = await open(dir.path, opts);
  assert.equal(b.count(P), 20);
  await b.close();
});

Deno.test("file store: files 0600 and directories 0700 whatever the umask", async () => {
  if (Deno.build.os === "windows") return;
  await using dir = await tempDir();
  const old = Deno.umask(0);
  try {
    const a = await open(`${dir.path}/store`);
    await a.create("/registry/core/secrets/ns/s", "v");
    await a.flush();
    await a.close();
  } finally {
    Deno.umask(old);
  }
  const modes: string[] = [];
  const walk = (d: string) => {
    for (const e of Deno.readDirSync(d)) {
      const path = `${d}/${e.name}`;
      const mode = Deno.statSync(path).mode! & 0o777;
      if (mode !== (e.isDirectory ? 0o700 : 0o600)) modes.push(`${path} ${mode.toString(8)}`);
      if (e.isDirectory) walk(path);
    }
  };
  walk(dir.path);
  assert.deepEqual(modes, []);
});
