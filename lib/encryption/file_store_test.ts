import assert from "node:assert/strict";
import { FileStore } from "../storage/file.ts";
import { keyToPath } from "../storage/keypath.ts";
import { unreadableReason } from "../storage/transformer.ts";
import { parseEncryptionConfig } from "./config.ts";
import { EncryptionTransformer } from "./transformer.ts";

const OLD = btoa("0123456789abcdef0123456789abcdef");
const NEW = btoa("fedcba9876543210fedcba9876543210");
const S1 = "/registry/core/secrets/default/s1";
const S2 = "/registry/core/secrets/default/s2";
const CM = "/registry/core/configmaps/default/c1";

function encryption(...keys: [string, string][]): EncryptionTransformer {
  return new EncryptionTransformer(parseEncryptionConfig(
    JSON.stringify({
      apiVersion: "apiserver.config.platform.io/v1",
      kind: "EncryptionConfiguration",
      resources: [{
        resources: ["secrets"],
        providers: [{ aesgcm: { keys: keys.map(([name, secret]) => ({ name, secret })) } }],
      }],
    }),
    "enc.yaml",
  ));
}

async function grep(dir: string, text: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for await (const e of Deno.readDir(d)) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory) await walk(p);
      else if (new TextDecoder().decode(await Deno.readFile(p)).includes(text)) out.push(p);
    }
  };
  await walk(dir);
  return out;
}

Deno.test("file store with aesgcm: no secret value on disk in clear; reads back after reopen", async () => {
  const dir = await Deno.makeTempDir();
  const warnings: string[] = [];
  const logger = { warn: (m: string) => warnings.push(m) };
  try {
    const a = await FileStore.open({ dir, logger, transformer: encryption(["old", OLD]) });
    await a.create(S1, '{"data":"first-plain-value"}');
    const kv = await a.create(S2, '{"data":"second-plain-value"}');
    await a.update(S2, '{"data":"third-plain-value"}', kv.modRevision);
    await a.create(CM, '{"data":"configmap-plain-value"}');
    await a.flush();
    for (const v of ["first-plain-value", "second-plain-value", "third-plain-value"]) {
      assert.deepEqual(await grep(dir, v), [], v);
    }
    assert.ok((await grep(dir, "configmap-plain-value")).length > 0);
    const file = await Deno.readTextFile(`${dir}/objects/${keyToPath(S1)}`);
    assert.match(JSON.parse(file).value, /^k8s:enc:aesgcm:v1:old:/);
    await a.close();

    // Reopen: object files (written) and the journal after the checkpoint (not written).
    const b = await FileStore.open({
      dir,
      logger,
      transformer: encryption(["old", OLD]),
      closeFlushMs: 0,
    });
    assert.equal((await b.get(S1))?.value, '{"data":"first-plain-value"}');
    await b.create("/registry/core/secrets/default/s3", '{"data":"journal-only"}');
    const kv2 = await b.get(S2);
    assert.equal(kv2?.value, '{"data":"third-plain-value"}');
    await b.close();
    const c = await FileStore.open({ dir, logger, transformer: encryption(["old", OLD]) });
    assert.equal(
      (await c.get("/registry/core/secrets/default/s3"))?.value,
      '{"data":"journal-only"}',
    );
    assert.equal(c.isStale((await c.get(S1))!), false);
    await c.close();
    assert.deepEqual(warnings.filter((w) => w.includes("cannot be read")), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("file store rotation: old-key values are stale until rewritten; a removed key is an error, not a crash", async () => {
  const dir = await Deno.makeTempDir();
  const warnings: string[] = [];
  const logger = { warn: (m: string) => warnings.push(m) };
  try {
    const a = await FileStore.open({ dir, logger, transformer: encryption(["old", OLD]) });
    await a.create(S1, '{"data":"one"}');
    await a.create(S2, '{"data":"two"}');
    await a.close();

    const b = await FileStore.open({
      dir,
      logger,
      transformer: encryption(["new", NEW], ["old", OLD]),
    });
    const kv = (await b.get(S1))!;
    assert.equal(kv.value, '{"data":"one"}');
    assert.equal(b.isStale(kv), true);
    const next = await b.update(S1, kv.value, kv.modRevision);
    assert.equal(b.isStale(next), false);
    assert.equal(b.isStale((await b.get(S2))!), true);
    await b.flush();
    const file = JSON.parse(await Deno.readTextFile(`${dir}/objects/${keyToPath(S1)}`));
    assert.match(file.value, /^k8s:enc:aesgcm:v1:new:/);
    await b.close();

    // The old key removed before s2 was rewritten: s2 cannot be read, s1 can.
    const c = await FileStore.open({ dir, logger, transformer: encryption(["new", NEW]) });
    assert.equal((await c.get(S1))?.value, '{"data":"one"}');
    const s2 = (await c.get(S2))!;
    assert.equal(
      unreadableReason(s2.value),
      'no configured provider key can decrypt the value (stored with "k8s:enc:aesgcm:v1:old:")',
    );
    assert.equal(warnings.filter((w) => w.includes("cannot be read")).length, 1);
    // Deleting it keeps the stored form in the journal record (nothing is decrypted).
    await c.delete(S2);
    await c.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
