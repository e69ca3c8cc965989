import assert from "node:assert/strict";
import { join } from "node:path";
import { silentLogger } from "../api/mod.ts";
import { atStage, newEvent } from "./event.ts";
import { openLogBackend } from "./log_backend.ts";
import { backupName, ReusedBytes } from "./rotating_file.ts";

function event(i: number, padding = 0) {
  return atStage(
    newEvent({
      level: "Metadata",
      auditID: `id-${i}`,
      requestURI: `/version?pad=${"x".repeat(padding)}`,
      verb: "get",
      user: { username: "u", groups: [] },
      sourceIPs: [],
      annotations: {},
    }),
    "ResponseComplete",
  );
}

async function lines(path: string): Promise<string[]> {
  return (await Deno.readTextFile(path)).split("\n").filter((l) => l !== "");
}

Deno.test("audit log: backups are named with the UTC time, as lumberjack's", () => {
  const t = Date.parse("2026-11-27T10:00:00.123Z");
  assert.equal(backupName("/var/log/audit.log", t), "/var/log/audit-2026-11-27T10-00-00.123.log");
  assert.equal(backupName("/var/log/audit", t), "/var/log/audit-2026-11-27T10-00-00.123");
});

Deno.test("audit log: JSON lines in a 0600 file, rotated by size, backups kept by count and age", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "audit.log");
    let now = Date.parse("2026-11-20T10:00:00Z");
    const backend = openLogBackend({
      path,
      maxSizeBytes: 1000,
      maxBackups: 2,
      maxAgeDays: 3,
      logger: silentLogger,
      now: () => now,
    });
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    for (let i = 0; i < 4; i++) backend.process(event(i, 200));
    // A backup far older than maxage, and one of another log.
    await Deno.writeTextFile(join(dir, "audit-2026-01-01T00-00-00.000.log"), "old\n");
    await Deno.writeTextFile(join(dir, "other-2026-01-01T00-00-00.000.log"), "keep\n");
    for (let i = 4; i < 12; i++) {
      now += 1000;
      backend.process(event(i, 200));
    }
    await backend.close();
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    const backups = names.filter((n) => n.startsWith("audit-"));
    assert.equal(backups.length, 2, names.join(", "));
    assert.ok(!backups.includes("audit-2026-01-01T00-00-00.000.log"));
    assert.ok(names.includes("other-2026-01-01T00-00-00.000.log"));
    for (const name of [...backups, "audit.log"]) {
      assert.ok((await Deno.stat(join(dir, name))).size <= 1000, name);
    }
    const last = await lines(path);
    assert.equal(JSON.parse(last[last.length - 1]).auditID, "id-11");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("audit log: appends to an existing log", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "audit.log");
    await Deno.writeTextFile(path, '{"before":true}\n');
    const backend = openLogBackend({ path, logger: silentLogger });
    backend.process(event(1));
    await backend.close();
    assert.equal((await lines(path)).length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("audit log: batch mode drops and counts what overflows its buffer, logged once per burst", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "audit.log");
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (m: string) => void warnings.push(m) };
    const backend = openLogBackend({ path, mode: "batch", batchBufferSize: 3, logger });
    for (let i = 0; i < 10; i++) backend.process(event(i));
    assert.equal(backend.dropped(), 7);
    assert.equal(warnings.length, 1);
    // Written in the background.
    for (let i = 0; i < 200 && (await lines(path)).length < 3; i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.deepEqual((await lines(path)).map((l) => JSON.parse(l).auditID), [
      "id-0",
      "id-1",
      "id-2",
    ]);
    assert.match(warnings[1], /dropped 7 events/);
    for (let i = 10; i < 15; i++) backend.process(event(i));
    assert.equal(backend.dropped(), 9);
    await backend.close();
    assert.equal((await lines(path)).length, 6);
    assert.equal(warnings.filter((w) => w.includes("is full")).length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("audit log: batch mode writes in the background, rotating; a failed write is counted and logged", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "audit.log");
    const backend = openLogBackend({
      path,
      mode: "batch",
      maxSizeBytes: 1000,
      logger: silentLogger,
    });
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    // Three batches, each of more than the limit: each after the first goes to a new file.
    for (let batch = 0; batch < 3; batch++) {
      for (let i = 0; i < 4; i++) backend.process(event(batch * 4 + i, 200));
      await new Promise((r) => setTimeout(r, 30));
    }
    await backend.close();
    const files = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert.ok(files.length >= 2, files.join(", "));
    const ids = (await Promise.all(files.map((f) => lines(join(dir, f))))).flat()
      .map((l) => JSON.parse(l).auditID).sort();
    assert.deepEqual(ids, Array.from({ length: 12 }, (_, i) => `id-${i}`).sort());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }

  const lost: [string, number][] = [];
  const errors: string[] = [];
  const full = openLogBackend({
    path: "/dev/full",
    mode: "batch",
    logger: { ...silentLogger, error: (m: string) => void errors.push(m) },
    onError: (plugin, n) => void lost.push([plugin, n]),
  });
  full.process(event(1));
  full.process(event(2));
  await full.close();
  assert.deepEqual(lost, [["log", 2]]);
  assert.match(errors[0], /audit log: cannot write 2 events: .*space/i);
});

Deno.test("audit log: blocking-strict throws for a RequestReceived event it cannot write, blocking does not", () => {
  for (const mode of ["blocking", "blocking-strict"] as const) {
    const backend = openLogBackend({ path: "/dev/full", mode, logger: silentLogger });
    const ev = event(1);
    backend.process(ev);
    const received = { ...ev, stage: "RequestReceived" as const };
    if (mode === "blocking") backend.process(received);
    else assert.throws(() => backend.process(received));
    backend.close();
  }
});

Deno.test("ReusedBytes: texts joined, growing past the buffer and past what is kept", () => {
  const bytes = new ReusedBytes();
  const decoder = new TextDecoder();
  for (
    const texts of [
      ["a", "b"],
      Array.from({ length: 3_000 }, (_, i) => `é€😀 ${i} `.repeat(10)), // past 64 kB
      ["short again", ""],
      Array.from({ length: 6 }, () => "x".repeat(1024 * 1024)), // past the 4 MB kept
      [],
      ["é".repeat(100_000)],
    ]
  ) {
    const expected = texts.map((t) => t + "\n").join("");
    assert.equal(
      decoder.decode(bytes.join(texts, (t) => t, "\n")),
      expected,
      `${texts.length} texts`,
    );
  }
});
