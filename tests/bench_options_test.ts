/**
 * `deno task bench`'s options: `--help` lists them, and a mistyped one is a usage error before
 * anything starts, not a full run of half an hour.
 */

import assert from "node:assert/strict";

const main = new URL("../bench/main.ts", import.meta.url).pathname;

async function bench(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", main, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("bench options: --help lists every group of figures and exits 0", async () => {
  const r = await bench("--help");
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^usage: deno task bench /);
  for (const name of ["auth", "audit", "metrics", "tracing", "workers", "crd-rules"]) {
    assert.ok(r.stdout.includes(name), `${name} missing from:\n${r.stdout}`);
  }
  assert.match(r.stdout, /--backend etcd/);
});

Deno.test("bench options: an unknown group, option, backend or round count, or two groups, are refused with exit 2", async () => {
  for (
    const [args, message] of [
      [["--only=audti"], /--only: no figures named "audti"/],
      [["--quick", "--frob"], /unknown argument "--frob"/],
      [["--backend", "etcd", "extra"], /unknown argument "extra"/],
      [["--backend", "file"], /--backend: only "etcd"/],
      [["--only=audit", "--only=metrics"], /one group of figures at a time/],
      [["--only=audit", "--backend=etcd"], /one group of figures at a time/],
      [["--rounds=0"], /the rounds must be a whole number from 1 to 99/],
    ] as const
  ) {
    const r = await bench(...args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stdout, "", "nothing ran");
  }
});
