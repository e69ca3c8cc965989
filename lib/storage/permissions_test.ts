import assert from "node:assert/strict";
import { tightenModes } from "./permissions.ts";

Deno.test("tightenModes: looser modes become 0700/0600, one warning per kind with a count", () => {
  if (Deno.build.os === "windows") return;
  const dir = Deno.makeTempDirSync();
  try {
    Deno.chmodSync(dir, 0o755);
    Deno.mkdirSync(`${dir}/a/b`, { recursive: true });
    Deno.chmodSync(`${dir}/a`, 0o755);
    Deno.chmodSync(`${dir}/a/b`, 0o700);
    for (let i = 0; i < 5; i++) Deno.writeTextFileSync(`${dir}/a/b/f${i}`, "x", { mode: 0o644 });
    Deno.writeTextFileSync(`${dir}/ok`, "x");
    Deno.chmodSync(`${dir}/ok`, 0o400);
    Deno.symlinkSync("/etc/hostname", `${dir}/link`);
    for (let i = 0; i < 5; i++) Deno.chmodSync(`${dir}/a/b/f${i}`, 0o644);
    const lines: string[] = [];
    const result = tightenModes(dir, { warn: (m) => lines.push(m) });
    assert.deepEqual(result, { dirs: 2, files: 5 });
    assert.deepEqual(lines, [
      `data dir: 2 directories were open to other users; set to 0700 under "${dir}"`,
      `data dir: 5 files were readable by other users; set to 0600 under "${dir}"`,
    ]);
    const mode = (p: string) => Deno.statSync(p).mode! & 0o777;
    assert.equal(mode(dir), 0o700);
    assert.equal(mode(`${dir}/a`), 0o700);
    assert.equal(mode(`${dir}/a/b/f3`), 0o600);
    assert.equal(mode(`${dir}/ok`), 0o400, "a tighter mode stays");
    assert.deepEqual(tightenModes(dir, { warn: (m) => lines.push(m) }), { dirs: 0, files: 0 });
    assert.equal(lines.length, 2);

    // Only the named entries: the rest keeps its mode (the directory itself is closed).
    Deno.chmodSync(dir, 0o750);
    Deno.chmodSync(`${dir}/a/b/f1`, 0o755);
    Deno.writeTextFileSync(`${dir}/mine`, "x");
    Deno.chmodSync(`${dir}/mine`, 0o644);
    assert.deepEqual(tightenModes(dir, { warn: () => {} }, { entries: ["mine", "missing"] }), {
      dirs: 1,
      files: 1,
    });
    assert.equal(mode(dir), 0o700);
    assert.equal(mode(`${dir}/mine`), 0o600);
    assert.equal(mode(`${dir}/a/b/f1`), 0o755);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
