import assert from "node:assert/strict";
import { ConfigError } from "../config/mod.ts";
import { loadEncryptionConfig, parseEncryptionConfig } from "./config.ts";

const K16 = btoa("0123456789abcdef");
const K32 = btoa("0123456789abcdef0123456789abcdef");

function errorsOf(text: string): string[] {
  try {
    parseEncryptionConfig(text, "enc.yaml");
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.message.split("\n");
  }
  assert.fail("no error");
}

Deno.test("encryption config: kube's file and ours load, providers and keys in order", () => {
  for (const apiVersion of ["apiserver.config.k8s.io/v1", "apiserver.config.platform.io/v1"]) {
    const cfg = parseEncryptionConfig(
      `apiVersion: ${apiVersion}
kind: EncryptionConfiguration
resources:
- resources: [secrets, configmaps, "*.apps"]
  providers:
  - aesgcm: {keys: [{name: new, secret: ${K32}}, {name: old, secret: ${K16}}]}
  - secretbox: {keys: [{name: box, secret: ${K32}}]}
  - identity: {}
- resources: ["*.*"]
  providers: [{aescbc: {keys: [{name: k, secret: ${K16}}]}}]
`,
      "enc.yaml",
    );
    assert.deepEqual(cfg.rules.map((r) => r.resources), [
      ["secrets", "configmaps", "*.apps"],
      ["*.*"],
    ]);
    const p = cfg.rules[0].providers;
    assert.deepEqual(p.map((x) => x.type), ["aesgcm", "secretbox", "identity"]);
    assert.deepEqual(p[0].type !== "identity" && p[0].keys.map((k) => k.name), ["new", "old"]);
  }
});

Deno.test("encryption config: every problem is reported with its field path", () => {
  const errors = errorsOf(`apiVersion: apiserver.config.k8s.io/v2
kind: EncryptionConfig
extra: 1
resources:
- resources: [Secrets, "*", "*.*", secrets]
  providers:
  - aesgcm: {keys: [{name: a, secret: ${btoa("short")}}, {name: a, secret: ${K16}}]}
  - secretbox: {keys: [{name: "b:c", secret: ${K16}}]}
  - aescbc: {keys: []}
  - {identity: {}, aescbc: {keys: []}}
  - kms: {name: x}
- resources: [configmaps]
`);
  assert.deepEqual(errors, [
    "enc.yaml: extra: unknown field",
    'enc.yaml: apiVersion: "apiserver.config.k8s.io/v2" is not one of ' +
    "apiserver.config.platform.io/v1, apiserver.config.k8s.io/v1",
    'enc.yaml: kind: expected "EncryptionConfiguration", got "EncryptionConfig"',
    'enc.yaml: resources[0].resources[0]: "Secrets": resource names must be lower-case',
    'enc.yaml: resources[0].resources[1]: "*": use "*." for every resource of the core group ' +
    'or "*.*" for every resource',
    'enc.yaml: resources[0].resources[3]: "secrets" is already covered by ' +
    "resources[0].resources[2]; an entry after it would never apply (list specific resources " +
    "before wildcards)",
    "enc.yaml: resources[0].providers[0].aesgcm.keys[0].secret: must be the base64 of 16, 24 " +
    "or 32 bytes, got 5 bytes",
    'enc.yaml: resources[0].providers[0].aesgcm.keys[1].name: "a" is already the name of keys[0]',
    'enc.yaml: resources[0].providers[1].secretbox.keys[0].name: "b:c" must not contain ":"',
    "enc.yaml: resources[0].providers[1].secretbox.keys[0].secret: must be the base64 of 32 " +
    "bytes, got 16 bytes",
    "enc.yaml: resources[0].providers[2].aescbc.keys: must not be empty",
    "enc.yaml: resources[0].providers[3]: exactly one provider may be given per entry, got " +
    "identity, aescbc",
    "enc.yaml: resources[0].providers[4].kms: the kms provider is not supported by this server",
    'enc.yaml: resources[1].resources[0]: "configmaps" is already covered by ' +
    "resources[0].resources[2]; an entry after it would never apply (list specific resources " +
    "before wildcards)",
    "enc.yaml: resources[1].providers: required",
  ]);
});

Deno.test("encryption config: secrets must be base64; an unreadable or empty file is named", async () => {
  assert.deepEqual(
    errorsOf(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources: [{resources: [secrets], providers: [{aescbc: {keys: [{name: k, secret: "not base64!"}]}}]}]
`),
    ["enc.yaml: resources[0].providers[0].aescbc.keys[0].secret: is not valid base64"],
  );
  assert.deepEqual(errorsOf(""), [
    "enc.yaml: the file is empty; expected apiVersion: apiserver.config.platform.io/v1 and " +
    "kind: EncryptionConfiguration",
  ]);
  await assert.rejects(
    () => loadEncryptionConfig("/nonexistent/enc.yaml"),
    (e) =>
      e instanceof ConfigError &&
      e.message ===
        '--encryption-provider-config: cannot read "/nonexistent/enc.yaml": No such file or directory',
  );
});

Deno.test("the documented example config/encryption-config.yaml loads", async () => {
  const example = new URL("../../config/encryption-config.yaml", import.meta.url).pathname;
  const cfg = await loadEncryptionConfig(example);
  assert.deepEqual(cfg.rules[0].resources, ["secrets"]);
  assert.deepEqual(cfg.rules[0].providers.map((p) => p.type), ["aesgcm", "identity"]);
});
