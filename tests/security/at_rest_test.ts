/**
 * Secrets at rest (issue 17, deliverable 5), black-box against a real server on the file
 * store: file modes on disk, encryption of Secret values with every provider, key rotation as
 * kube documents it, configuration errors, and deleted values leaving the journal.
 */

import { assert, assertEquals, assertMatch } from "../assert.ts";
import { runPlatform, type TestServer, testServer } from "../harness.ts";
import type { StartOptions } from "../../mod.ts";
import { createLogger } from "../../lib/api/log.ts";

const KEY_A = btoa("0123456789abcdef0123456789abcdef");
const KEY_B = btoa("fedcba9876543210fedcba9876543210");
const KEY_16 = btoa("0123456789abcdef");

/** A temporary data directory, removed at the end of the scope. */
async function dataDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "platform-at-rest-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

/** An EncryptionConfiguration for secrets with these providers, written next to the data. */
async function encryptionConfig(
  dir: string,
  providers: unknown[],
  name = "encryption.yaml",
): Promise<string> {
  const path = `${dir}-${name}`;
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      apiVersion: "apiserver.config.k8s.io/v1",
      kind: "EncryptionConfiguration",
      resources: [{ resources: ["secrets"], providers }],
    }),
  );
  return path;
}

const keys = (...ks: [string, string][]) => ({
  keys: ks.map(([name, secret]) => ({ name, secret })),
});

function start(dir: string, opts: Partial<StartOptions> = {}): Promise<TestServer> {
  return testServer({ dataDir: dir, storage: "file", ...opts });
}

async function createSecret(ts: TestServer, name: string, value: string): Promise<void> {
  const res = await ts.json("POST", "/api/v1/namespaces/default/secrets", {
    body: { apiVersion: "v1", kind: "Secret", metadata: { name }, data: { v: btoa(value) } },
  });
  assertEquals(res.status, 201, JSON.stringify(res.body));
}

async function readSecret(ts: TestServer, name: string): Promise<string> {
  const res = await ts.json("GET", `/api/v1/namespaces/default/secrets/${name}`);
  assertEquals(res.status, 200, JSON.stringify(res.body));
  return atob(res.body.data.v);
}

/** The files under `dir` whose bytes contain any of `texts`. */
async function filesContaining(dir: string, ...texts: string[]): Promise<string[]> {
  const found: string[] = [];
  const walk = async (d: string) => {
    for await (const e of Deno.readDir(d)) {
      const path = `${d}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (e.isFile) {
        // A running store renames its temporary files away (the checkpoint's): one gone between
        // listing and reading holds nothing the renamed file does not.
        const bytes = await Deno.readFile(path).catch((err) => {
          if (err instanceof Deno.errors.NotFound) return undefined;
          throw err;
        });
        if (!bytes) continue;
        const text = new TextDecoder("latin1").decode(bytes);
        if (texts.some((t) => text.includes(t))) found.push(path);
      }
    }
  };
  await walk(dir);
  return found;
}

/** Paths under `dir` (and `dir`) whose mode is not 0700 (directories) or 0600 (files). */
function wrongModes(dir: string): string[] {
  const out: string[] = [];
  const check = (path: string, info: Deno.FileInfo) => {
    const mode = info.mode! & 0o777;
    const want = info.isDirectory ? 0o700 : 0o600;
    if (!info.isSymlink && mode !== want) out.push(`${path}: ${mode.toString(8)}`);
    if (info.isDirectory) {
      for (const e of Deno.readDirSync(path)) {
        // A temporary file renamed away since the listing (see filesContaining) is skipped.
        let entry: Deno.FileInfo;
        try {
          entry = Deno.lstatSync(`${path}/${e.name}`);
        } catch (err) {
          if (err instanceof Deno.errors.NotFound) continue;
          throw err;
        }
        check(`${path}/${e.name}`, entry);
      }
    }
  };
  check(dir, Deno.lstatSync(dir));
  return out;
}

Deno.test({
  name: "at rest: the data dir is 0700 and every file 0600; looser modes are tightened at start",
  ignore: Deno.build.os === "windows",
  async fn() {
    await using dir = await dataDir();
    {
      await using ts = await start(dir.path);
      await createSecret(ts, "modes", "mode-check");
    }
    assertEquals(wrongModes(dir.path), []);

    // Someone loosens the modes; the next start puts them back and says so, once per kind.
    Deno.chmodSync(dir.path, 0o755);
    Deno.chmodSync(`${dir.path}/store`, 0o755);
    let loosened = 0;
    const loosen = (d: string) => {
      for (const e of Deno.readDirSync(d)) {
        if (e.isDirectory) loosen(`${d}/${e.name}`);
        else if (e.isFile) {
          Deno.chmodSync(`${d}/${e.name}`, 0o644);
          loosened++;
        }
      }
    };
    loosen(dir.path);
    const lines: string[] = [];
    {
      await using ts = await start(dir.path, {
        logger: createLogger("info", (l) => lines.push(l)),
      });
      assertEquals(await readSecret(ts, "modes"), "mode-check");
    }
    assertEquals(wrongModes(dir.path), []);
    const fixes = lines.filter((l) => l.includes("data dir:"));
    assertEquals(fixes.length, 2, fixes.join("\n"));
    assertMatch(fixes[0], /data dir: 2 directories were open to other users; set to 0700/);
    assertMatch(fixes[1], new RegExp(`data dir: ${loosened} files were readable by other users`));
  },
});

for (const provider of ["aesgcm", "aescbc", "secretbox"]) {
  Deno.test(`at rest: with ${provider}, a Secret's value is in no file and reads back after restart`, async () => {
    await using dir = await dataDir();
    const secret = provider === "secretbox" ? KEY_A : KEY_16;
    const config = await encryptionConfig(dir.path, [{ [provider]: keys(["key1", secret]) }]);
    const value = `distinctive-${provider}-value-7f3a`;
    {
      await using ts = await start(dir.path, { encryptionProviderConfigFile: config });
      await createSecret(ts, "s1", value);
      await createSecret(ts, "s2", "other");
      const cur = await ts.json("GET", "/api/v1/namespaces/default/secrets/s2");
      cur.body.data = { v: btoa(`${value}-updated`) };
      assertEquals(
        (await ts.json("PUT", "/api/v1/namespaces/default/secrets/s2", { body: cur.body })).status,
        200,
      );
      // A ConfigMap is not in the configuration: stored as it is.
      await ts.json("POST", "/api/v1/namespaces/default/configmaps", {
        body: { metadata: { name: "plain" }, data: { v: "configmap-in-clear-9c1d" } },
      });
    }
    assertEquals(await filesContaining(dir.path, value, btoa(value)), []);
    assert((await filesContaining(dir.path, "configmap-in-clear-9c1d")).length > 0);
    assert((await filesContaining(dir.path, `k8s:enc:${provider}:v1:key1:`)).length > 0);
    {
      await using ts = await start(dir.path, { encryptionProviderConfigFile: config });
      assertEquals(await readSecret(ts, "s1"), value);
      assertEquals(await readSecret(ts, "s2"), `${value}-updated`);
    }
    await Deno.remove(config);
  });
}

Deno.test("at rest: key rotation as kube documents it; a value whose key is gone is a clear error", async () => {
  await using dir = await dataDir();
  const gcm = (...ks: [string, string][]) => [{ aesgcm: keys(...ks) }];
  const only1 = await encryptionConfig(dir.path, gcm(["key1", KEY_A]), "1.yaml");
  const second2 = await encryptionConfig(dir.path, gcm(["key1", KEY_A], ["key2", KEY_B]), "2.yaml");
  const first2 = await encryptionConfig(dir.path, gcm(["key2", KEY_B], ["key1", KEY_A]), "3.yaml");
  const only2 = await encryptionConfig(dir.path, gcm(["key2", KEY_B]), "4.yaml");
  const run = async (config: string, fn: (ts: TestServer) => Promise<void>) => {
    await using ts = await start(dir.path, { encryptionProviderConfigFile: config });
    await fn(ts);
  };
  await run(only1, async (ts) => {
    await createSecret(ts, "a", "rotate-a");
    await createSecret(ts, "b", "rotate-b");
  });
  // 1. The new key second: everything still reads; new writes still use key1.
  await run(second2, async (ts) => assertEquals(await readSecret(ts, "a"), "rotate-a"));
  // 2. The new key first: new writes use key2. 3. Rewrite the objects (kubectl replace): an
  // unchanged object is written again, re-encrypted, under a new resourceVersion.
  await run(first2, async (ts) => {
    const a = await ts.json("GET", "/api/v1/namespaces/default/secrets/a");
    const put = await ts.json("PUT", "/api/v1/namespaces/default/secrets/a", { body: a.body });
    assertEquals(put.status, 200);
    assert(
      put.body.metadata.resourceVersion !== a.body.metadata.resourceVersion,
      "a stale value is rewritten",
    );
    const again = await ts.json("PUT", "/api/v1/namespaces/default/secrets/a", {
      body: put.body,
    });
    assertEquals(again.body.metadata.resourceVersion, put.body.metadata.resourceVersion);
  });
  // 4. The old key removed: "a" was rewritten and reads; "b" was not, and fails clearly.
  await run(only2, async (ts) => {
    assertEquals(await readSecret(ts, "a"), "rotate-a");
    const b = await ts.json("GET", "/api/v1/namespaces/default/secrets/b");
    assertEquals(b.status, 500);
    assertEquals(
      b.body.message,
      'Internal error occurred: unable to transform key "/registry/core/secrets/default/b": ' +
        'no configured provider key can decrypt the value (stored with "k8s:enc:aesgcm:v1:key1:")',
    );
    assertEquals((await ts.json("GET", "/api/v1/namespaces/default/configmaps")).status, 200);
  });
  // The old key back (second): "b" reads again and can be rewritten.
  await run(first2, async (ts) => assertEquals(await readSecret(ts, "b"), "rotate-b"));
  for (const f of [only1, second2, first2, only2]) await Deno.remove(f);
});

Deno.test("at rest: a bad encryption configuration is refused with the file, the field and status 2", async () => {
  await using dir = await dataDir();
  const bad = await encryptionConfig(dir.path, [
    { aesgcm: keys(["key1", btoa("too short")]) },
    { identity: {}, secretbox: keys(["k", KEY_A]) },
  ]);
  const run = await runPlatform("check-config", "--encryption-provider-config", bad);
  assertEquals(run.code, 2, run.stderr);
  assertEquals(
    run.stderr.trim(),
    `platform: ${bad}: resources[0].providers[0].aesgcm.keys[0].secret: must be the base64 ` +
      `of 16, 24 or 32 bytes, got 9 bytes\n` +
      `${bad}: resources[0].providers[1]: exactly one provider may be given per entry, got ` +
      `identity, secretbox`,
  );
  // The server refuses to start on it, before touching the data dir.
  let error: unknown;
  await start(`${dir.path}/data`, { encryptionProviderConfigFile: bad }).catch((e) => error = e);
  assertMatch(String(error), /must be the base64 of 16, 24 or 32 bytes/);
  assert(!(await Deno.stat(`${dir.path}/data`).catch(() => undefined)), "no data dir made");
  await Deno.remove(bad);
});

Deno.test("at rest: a deleted Secret's value leaves the journal once the retention passes", async () => {
  await using dir = await dataDir();
  const value = "deleted-secret-value-5e2b";
  await using ts = await start(dir.path, { historyRetentionMs: 1_000 });
  await createSecret(ts, "gone", value);
  await createSecret(ts, "kept", "kept-value");
  assertEquals(
    (await ts.json("DELETE", "/api/v1/namespaces/default/secrets/gone")).status,
    200,
  );
  assert((await filesContaining(dir.path, value, btoa(value))).length > 0);
  // Retention (1 s) plus at most three checkpoint intervals (1 s each at this retention).
  const deadline = Date.now() + 15_000;
  let left = await filesContaining(dir.path, value, btoa(value));
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    left = await filesContaining(dir.path, value, btoa(value));
  }
  assertEquals(left, []);
  assertEquals(await readSecret(ts, "kept"), "kept-value");
});
