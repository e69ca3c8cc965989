/**
 * Encryption at rest on the etcd3 backend: with `--encryption-provider-config`, etcd holds a
 * Secret's value encrypted (`k8s:enc:aesgcm:v1:key1:…`) and every server with the same
 * configuration reads it; a replica without the key gets kube's error, not the ciphertext.
 */

import { assert, assertEquals } from "./assert.ts";
import { createAsAdmin, testServer, WITHOUT_NAMESPACE_DEFAULTS } from "./harness.ts";
import { encryptionConfig } from "./storage_testdata.ts";
import {
  etcdInstalled,
  requireEtcdUnderCi,
  startEtcdMember,
} from "../lib/storage/testing/etcd_member.ts";

requireEtcdUnderCi("tests/etcd_encryption_test.ts");

const SECRETS = "/api/v1/namespaces/default/secrets";

Deno.test({
  name: "etcd3: --encryption-provider-config encrypts Secrets in etcd; replicas with the key " +
    "read them",
  ignore: !etcdInstalled,
  async fn() {
    await using member = await startEtcdMember();
    const dir = await Deno.makeTempDir({ prefix: "platform-etcd-enc-" });
    try {
      const encryption = await encryptionConfig(dir);
      const opts = {
        storage: "etcd3",
        etcdServers: [member.clientUrl],
        controllers: WITHOUT_NAMESPACE_DEFAULTS,
        encryptionProviderConfigFile: encryption,
      };
      await using a = await testServer(opts);
      await using b = await testServer(opts);
      await createAsAdmin(a, SECRETS, { metadata: { name: "s" }, data: { v: btoa("hush") } });

      const raw = await fetch(`${member.clientUrl}/v3/kv/range`, {
        method: "POST",
        body: JSON.stringify({ key: btoa("/registry/core/secrets/default/s") }),
      }).then((r) => r.json());
      const stored = atob(raw.kvs[0].value);
      assert(stored.startsWith("k8s:enc:aesgcm:v1:key1:"), stored.slice(0, 40));
      assert(!stored.includes("aHVzaA"), "the value is in clear in etcd");

      for (const s of [a, b]) {
        const got = await s.json("GET", `${SECRETS}/s`);
        assertEquals(got.status, 200);
        assertEquals(atob(got.body.data.v), "hush");
      }

      // A replica without the key: an error naming the key, never the ciphertext.
      await using c = await testServer({ ...opts, encryptionProviderConfigFile: undefined });
      const unreadable = await c.json("GET", `${SECRETS}/s`);
      assertEquals(unreadable.status, 500);
      assertEquals(unreadable.body.kind, "Status");
      assert(!JSON.stringify(unreadable.body).includes("k8s:enc"), unreadable.body.message);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
