import assert from "node:assert/strict";
import { unreadableReason } from "../storage/transformer.ts";
import { parseEncryptionConfig } from "./config.ts";
import { EncryptionTransformer } from "./transformer.ts";

const K1 = btoa("0123456789abcdef0123456789abcdef");
const K2 = btoa("fedcba9876543210fedcba9876543210");
const SECRET = "/registry/core/secrets/default/s1";
const CONFIGMAP = "/registry/core/configmaps/default/c1";
const LEASE = "/registry/coordination.platform.io/leases/default/l1";
const VALUE = '{"kind":"Secret","data":{"k":"c2VjcmV0LXZhbHVl"}}';

function transformer(resources: string[], providers: string[]): EncryptionTransformer {
  return new EncryptionTransformer(parseEncryptionConfig(
    JSON.stringify({
      apiVersion: "apiserver.config.k8s.io/v1",
      kind: "EncryptionConfiguration",
      resources: [{ resources, providers: providers.map((p) => JSON.parse(p)) }],
    }),
    "enc.yaml",
  ));
}

const provider = (type: string, ...keys: [string, string][]) =>
  JSON.stringify({ [type]: { keys: keys.map(([name, secret]) => ({ name, secret })) } });
const IDENTITY = '{"identity":{}}';

for (const type of ["aesgcm", "aescbc", "secretbox"]) {
  Deno.test(`${type}: kube's prefix, round trip, nothing of the value in clear`, () => {
    const t = transformer(["secrets"], [provider(type, ["key1", K1])]);
    const stored = t.toStorage(SECRET, VALUE);
    assert.ok(stored.startsWith(`k8s:enc:${type}:v1:key1:`), stored);
    assert.ok(!stored.includes("c2VjcmV0LXZhbHVl") && !stored.includes("Secret"));
    assert.notEqual(t.toStorage(SECRET, VALUE), stored, "a fresh nonce per write");
    assert.deepEqual(t.fromStorage(SECRET, stored), { value: VALUE, stale: false });
    // Other resources are untouched.
    assert.equal(t.toStorage(CONFIGMAP, VALUE), VALUE);
    assert.deepEqual(t.fromStorage(CONFIGMAP, VALUE), { value: VALUE, stale: false });
  });
}

Deno.test("aesgcm: a value moved under another key does not decrypt", () => {
  const t = transformer(["secrets"], [provider("aesgcm", ["key1", K1])]);
  const stored = t.toStorage(SECRET, VALUE);
  const moved = t.fromStorage("/registry/core/secrets/default/s2", stored);
  assert.match(moved.error!, /no configured provider key can decrypt/);
});

Deno.test("rotation: old keys and identity read (stale), the first key writes", () => {
  const before = transformer(["secrets"], [provider("aesgcm", ["old", K1]), IDENTITY]);
  const oldStored = before.toStorage(SECRET, VALUE);
  const after = transformer(["secrets"], [provider("aesgcm", ["new", K2], ["old", K1])]);
  assert.deepEqual(after.fromStorage(SECRET, oldStored), { value: VALUE, stale: true });
  const newStored = after.toStorage(SECRET, VALUE);
  assert.ok(newStored.startsWith("k8s:enc:aesgcm:v1:new:"));
  assert.deepEqual(after.fromStorage(SECRET, newStored), { value: VALUE, stale: false });
  // Plain values read through identity, stale while another provider writes.
  assert.deepEqual(before.fromStorage(SECRET, VALUE), { value: VALUE, stale: true });
  // Without identity, a plain value is an error, as kube's.
  assert.match(after.fromStorage(SECRET, VALUE).error!, /identity provider is not configured/);
  // Decrypting: identity first writes in clear, encrypted values are stale.
  const off = transformer(["secrets"], [IDENTITY, provider("aesgcm", ["new", K2])]);
  assert.equal(off.toStorage(SECRET, VALUE), VALUE);
  assert.deepEqual(off.fromStorage(SECRET, newStored), { value: VALUE, stale: true });
});

Deno.test("a removed key: the value is unreadable, and written back unchanged", () => {
  const before = transformer(["secrets"], [provider("secretbox", ["gone", K1])]);
  const stored = before.toStorage(SECRET, VALUE);
  const after = transformer(["secrets"], [provider("secretbox", ["new", K2])]);
  const read = after.fromStorage(SECRET, stored);
  assert.equal(read.stale, false);
  assert.equal(
    unreadableReason(read.value),
    'no configured provider key can decrypt the value (stored with "k8s:enc:secretbox:v1:gone:")',
  );
  assert.equal(after.toStorage(SECRET, read.value), stored);
  assert.deepEqual(before.fromStorage(SECRET, after.toStorage(SECRET, read.value)), {
    value: VALUE,
    stale: false,
  });
});

Deno.test("resource matching: core names, groups, both spellings of built-in groups, wildcards", () => {
  const gcm = provider("aesgcm", ["k", K1]);
  const enc = (t: EncryptionTransformer, key: string) => t.encrypts(key);
  assert.ok(enc(transformer(["secrets"], [gcm]), SECRET));
  assert.ok(!enc(transformer(["secrets"], [gcm]), LEASE));
  assert.ok(enc(transformer(["leases.coordination.platform.io"], [gcm]), LEASE));
  assert.ok(enc(transformer(["leases.coordination.k8s.io"], [gcm]), LEASE));
  assert.ok(!enc(transformer(["leases.coordination.k8s.io"], [gcm]), SECRET));
  assert.ok(enc(transformer(["*.coordination.k8s.io"], [gcm]), LEASE));
  assert.ok(enc(transformer(["*."], [gcm]), CONFIGMAP));
  assert.ok(!enc(transformer(["*."], [gcm]), LEASE));
  const all = transformer(["*.*"], [gcm]);
  assert.ok(enc(all, SECRET) && enc(all, LEASE));
  assert.ok(enc(all, "/registry/example.com/widgets/ns/w"));
  assert.ok(!enc(transformer(["secrets"], [IDENTITY]), SECRET));
});
