import assert from "node:assert/strict";
import { crc32c } from "./crc32c.ts";
import { Journal, JournalCorruptError, MAX_BATCH_BYTES, segmentName } from "./journal.ts";
import { decodeRecord, encodeRecord, HEADER_BYTES, type JournalRecord } from "./record.ts";

function rec(revision: number, value = `value-${revision}`): JournalRecord {
  return {
    type: "put",
    revision,
    key: `/registry/core/configmaps/default/cm-${revision}`,
    value,
    createRevision: revision,
    prevModRevision: 0,
    prevValue: "",
    time: 1_700_000_000_000 + revision,
  };
}

class Warnings {
  lines: string[] = [];
  warn(msg: string) {
    this.lines.push(msg);
  }
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "journal-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function replay(
  dir: string,
  opts: { logger?: Warnings; segmentBytes?: number } = {},
): Promise<{ journal: Journal; records: JournalRecord[] }> {
  const records: JournalRecord[] = [];
  const journal = await Journal.open(dir, {
    logger: opts.logger ?? new Warnings(),
    segmentBytes: opts.segmentBytes,
    onRecord: (r) => records.push(r),
  });
  return { journal, records };
}

/** Offsets of each record in a segment file. */
function recordOffsets(buf: Uint8Array): number[] {
  const out: number[] = [];
  let at = 0;
  for (;;) {
    const r = decodeRecord(buf, at);
    if (!r.ok) return out;
    out.push(at);
    at += r.size;
  }
}

Deno.test("crc32c matches the standard check value", () => {
  assert.equal(crc32c(new TextEncoder().encode("123456789")), 0xe3069283);
  assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa);
});

Deno.test("records round-trip, including non-ASCII text and deletes", () => {
  const put = { ...rec(7, "caf\u00e9 \u{1f600}"), prevModRevision: 3, prevValue: "old" };
  const del: JournalRecord = { ...rec(2 ** 40), type: "delete", value: "", prevModRevision: 5 };
  for (const r of [put, del]) {
    const bytes = encodeRecord(r);
    const out = decodeRecord(bytes, 0);
    assert.ok(out.ok);
    assert.deepEqual(out.record, r);
    assert.equal(out.size, bytes.length);
  }
});

Deno.test("decodeRecord reports damage instead of throwing", () => {
  const bytes = encodeRecord(rec(1));
  const flipped = bytes.slice();
  flipped[HEADER_BYTES + 5] ^= 0x40;
  assert.deepEqual(decodeRecord(flipped, 0), { ok: false, reason: "checksum mismatch" });
  const short = decodeRecord(bytes.subarray(0, bytes.length - 1), 0);
  assert.ok(!short.ok && short.reason.includes("runs past the end"));
  const badLen = bytes.slice();
  badLen[4] = 0xff;
  assert.equal(decodeRecord(badLen, 0).ok, false);
  assert.ok(!decodeRecord(new Uint8Array(3), 0).ok);
});

Deno.test("append then replay returns every record in order", async () => {
  await withDir(async (dir) => {
    const { journal } = await replay(dir);
    for (let i = 1; i <= 5; i++) await journal.append(rec(i));
    assert.equal(journal.lastRevision, 5);
    await journal.close();
    const again = await replay(dir);
    assert.deepEqual(again.records, [1, 2, 3, 4, 5].map((i) => rec(i)));
    assert.equal(again.journal.firstRevision, 1);
    await again.journal.append(rec(6));
    await again.journal.close();
    assert.equal(
      (await replay(dir).then(async (r) => (await r.journal.close(), r))).records.length,
      6,
    );
  });
});

Deno.test("group commit: 100 concurrent appends share a few fdatasyncs", async () => {
  await withDir(async (dir) => {
    const { journal } = await replay(dir);
    await Promise.all(Array.from({ length: 100 }, (_, i) => journal.append(rec(i + 1))));
    const stats = journal.stats;
    assert.equal(stats.appends, 100);
    assert.ok(stats.syncs <= 3, `expected a few syncs, got ${stats.syncs}`);
    // A second wave while the first is syncing joins the next batch.
    const wave1 = Array.from({ length: 50 }, (_, i) => journal.append(rec(101 + i)));
    await Promise.resolve();
    const wave2 = Array.from({ length: 50 }, (_, i) => journal.append(rec(151 + i)));
    await Promise.all([...wave1, ...wave2]);
    assert.ok(journal.stats.syncs - stats.syncs <= 3);
    await journal.close();
    const { records, journal: j2 } = await replay(dir);
    assert.deepEqual(records.map((r) => r.revision), Array.from({ length: 200 }, (_, i) => i + 1));
    await j2.close();
  });
});

Deno.test("batches of large and small records of any text replay byte for byte", async () => {
  await withDir(async (dir) => {
    const { journal } = await replay(dir);
    // 300 KiB and more per batch (past the first encoding buffer), multi-byte and lone
    // surrogate text, empty values, and updates that carry a previous value.
    const sent = Array.from({ length: 120 }, (_, i) => {
      const r = rec(i + 1, i % 3 ? "é€😀".repeat(700 * (i % 5)) : "");
      if (i % 4 === 1) return { ...r, prevModRevision: i, prevValue: `old \ud800 ${i}` };
      return r;
    });
    await Promise.all(sent.slice(0, 60).map((r) => journal.append(r)));
    await Promise.all(sent.slice(60).map((r) => journal.append(r)));
    await journal.close();
    const { records, journal: j2 } = await replay(dir);
    const wellFormed = (r: JournalRecord) => ({ ...r, prevValue: r.prevValue.toWellFormed() });
    assert.deepEqual(records, sent.map(wellFormed));
    await j2.close();
  });
});

Deno.test("segments rotate at the size threshold and are named by first revision", async () => {
  await withDir(async (dir) => {
    const { journal } = await replay(dir, { segmentBytes: 1000 });
    for (let i = 1; i <= 40; i++) await journal.append(rec(i, "x".repeat(100)));
    await journal.close();
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    names.sort();
    assert.ok(names.length >= 4, `segments: ${names}`);
    assert.equal(names[0], segmentName(1));
    const again = await replay(dir, { segmentBytes: 1000 });
    assert.equal(again.records.length, 40);
    assert.equal(again.journal.stats.segments, names.length);
    // Prune keeps every segment holding a revision ≥ 20, and always the active one.
    const removed = await again.journal.prune(20);
    assert.ok(removed > 0);
    assert.ok(again.journal.firstRevision <= 20 && again.journal.firstRevision > 1);
    await again.journal.append(rec(41));
    await again.journal.close();
    const third = await replay(dir, { segmentBytes: 1000 });
    assert.equal(third.records.at(-1)!.revision, 41);
    assert.equal(third.records[0].revision, third.journal.firstRevision);
    await third.journal.close();
  });
});

async function lastSegment(dir: string): Promise<string> {
  const names = [];
  for await (const e of Deno.readDir(dir)) if (e.name.endsWith(".log")) names.push(e.name);
  return `${dir}/${names.sort().at(-1)}`;
}

Deno.test("a torn tail is truncated with a warning naming file and offset", async () => {
  await withDir(async (dir) => {
    const { journal } = await replay(dir, {});
    for (let i = 1; i <= 10; i++) await journal.append(rec(i));
    await journal.close();
    const path = await lastSegment(dir);
    const buf = await Deno.readFile(path);
    const offsets = recordOffsets(buf);
    const lastAt = offsets[9];
    await Deno.writeFile(path, buf.subarray(0, lastAt + 15));
    const warnings = new Warnings();
    const { journal: j2, records } = await replay(dir, { logger: warnings });
    assert.equal(records.length, 9);
    assert.equal(warnings.lines.length, 1);
    assert.match(warnings.lines[0], new RegExp(`${path}.*offset ${lastAt}`));
    assert.equal((await Deno.stat(path)).size, lastAt);
    await j2.append(rec(10, "rewritten"));
    await j2.close();
    const quiet = new Warnings();
    const third = await replay(dir, { logger: quiet });
    assert.equal(third.records.at(-1)!.value, "rewritten");
    assert.deepEqual(quiet.lines, []);
    await third.journal.close();
  });
});

Deno.test("a corrupt last record is truncated with a warning", async () => {
  await withDir(async (dir) => {
    const { journal } = await replay(dir);
    for (let i = 1; i <= 5; i++) await journal.append(rec(i));
    await journal.close();
    const path = await lastSegment(dir);
    const buf = await Deno.readFile(path);
    const lastAt = recordOffsets(buf)[4];
    buf[lastAt + HEADER_BYTES + 40] ^= 0x01;
    await Deno.writeFile(path, buf);
    const warnings = new Warnings();
    const { journal: j2, records } = await replay(dir, { logger: warnings });
    assert.equal(records.length, 4);
    assert.match(warnings.lines[0], /checksum mismatch/);
    assert.match(warnings.lines[0], new RegExp(`offset ${lastAt}`));
    await j2.close();
  });
});

Deno.test("preallocated zeros after the last record are not damage", async () => {
  await withDir(async (dir) => {
    const { journal } = await replay(dir);
    await journal.append(rec(1));
    await journal.close();
    const path = await lastSegment(dir);
    assert.ok((await Deno.stat(path)).size > 1000, "segment is preallocated");
    const warnings = new Warnings();
    const { journal: j2, records } = await replay(dir, { logger: warnings });
    assert.equal(records.length, 1);
    assert.deepEqual(warnings.lines, []);
    await j2.close();
  });
});

Deno.test("damage in an earlier segment refuses to open", async () => {
  await withDir(async (dir) => {
    const { journal } = await replay(dir, { segmentBytes: 500 });
    for (let i = 1; i <= 20; i++) await journal.append(rec(i, "y".repeat(100)));
    await journal.close();
    const first = `${dir}/${segmentName(1)}`;
    const buf = await Deno.readFile(first);
    buf[HEADER_BYTES + 50] ^= 0xff;
    await Deno.writeFile(first, buf);
    await assert.rejects(
      () => replay(dir, { segmentBytes: 500 }),
      (err: unknown) =>
        err instanceof JournalCorruptError && err.message.includes(first) &&
        err.message.includes("offset 0") && err.message.includes("not the last segment"),
    );
  });
});

Deno.test("damage deep inside the last segment with valid records after it refuses to open", async () => {
  await withDir(async (dir) => {
    const { journal } = await replay(dir);
    const big = "z".repeat(64 * 1024);
    const n = Math.ceil(MAX_BATCH_BYTES / big.length) + 4;
    for (let i = 1; i <= n; i++) await journal.append(rec(i, big));
    await journal.close();
    const path = await lastSegment(dir);
    const buf = await Deno.readFile(path);
    buf[HEADER_BYTES + 100] ^= 0xff;
    await Deno.writeFile(path, buf);
    await assert.rejects(
      () => replay(dir),
      (err: unknown) =>
        err instanceof JournalCorruptError && /valid record after it/.test(err.message),
    );
  });
});

Deno.test("a gap before the next append starts a new segment", async () => {
  await withDir(async (dir) => {
    const { journal } = await replay(dir);
    await journal.append(rec(1));
    await journal.append(rec(5));
    await journal.close();
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepEqual(names.sort(), [segmentName(1), segmentName(5)]);
    const again = await replay(dir);
    assert.deepEqual(again.records.map((r) => r.revision), [1, 5]);
    await again.journal.close();
  });
});
