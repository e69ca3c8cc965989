/**
 * `platform storage copy` as a user runs it: a stopped single-node server's objects into an
 * empty etcd prefix (with a real etcd member) and back into a new data directory, servers
 * started on each target serving the objects (on etcd, as the README's walk to three replicas
 * starts them: the old data dir with --token first, then a new one); encrypted secrets
 * decrypted with the encryption configuration; refusals of non-empty targets, a running server's data dir and bad input.
 * Without etcd the etcd test skips, except under CI=true where that fails.
 */

import { assert, assertEquals, assertMatch } from "./assert.ts";
import { assertConfigError, createAsAdmin, testServer } from "./harness.ts";
import { encryptionConfig, runWithin } from "./storage_testdata.ts";
import {
  etcdInstalled,
  requireEtcdUnderCi,
  startEtcdMember,
} from "../lib/storage/testing/etcd_member.ts";

requireEtcdUnderCi("tests/storage_copy_test.ts");

const CM = "/api/v1/namespaces/default/configmaps";
const SECRETS = "/api/v1/namespaces/default/secrets";

/** An EncryptionConfiguration encrypting secrets with aesgcm. */
const copy = (...args: string[]) => runWithin(120_000, "storage", "copy", ...args);

Deno.test({
  name: "copy: one node's data dir to etcd and back, each target served by a new server",
  ignore: !etcdInstalled,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "platform-copy-" });
    try {
      await using member = await startEtcdMember();
      const etcd = `etcd://${new URL(member.clientUrl).host}/registry`;
      const encryption = await encryptionConfig(dir);
      const enc = ["--encryption-provider-config", encryption];

      let uid: string, oneCa: string, oneToken: string;
      {
        await using one = await testServer({
          storage: "file",
          dataDir: `${dir}/one`,
          encryptionProviderConfigFile: encryption,
        });
        const cm = await createAsAdmin(one, CM, { metadata: { name: "moved" }, data: { k: "v" } });
        uid = cm.metadata.uid;
        oneCa = one.server.caCertPem;
        oneToken = one.server.adminToken;
        await createAsAdmin(one, SECRETS, { metadata: { name: "s" }, data: { v: btoa("hush") } });
        // A running server's data dir is refused.
        assertConfigError(
          await copy("--from", `${dir}/one`, "--to", etcd, ...enc),
          /--from: .*one is in use by a running server/,
        );
      }

      const toEtcd = await copy("--from", `${dir}/one`, "--to", etcd, ...enc);
      assertEquals(toEtcd.code, 0, toEtcd.stderr);
      assertMatch(toEtcd.stdout, /^copied \d+ objects from .*one \(at revision \d+\) to etcd:/);
      assertMatch(toEtcd.stdout, /core\/configmaps +\d+/);
      assertMatch(toEtcd.stdout, /resourceVersions changed/);
      // The prefix is no longer empty.
      assertConfigError(
        await copy("--from", `${dir}/one`, "--to", etcd, ...enc),
        /--to: etcd:.* is not empty .*copy into an empty prefix/,
      );

      // Encrypted at rest in etcd too: the copy encrypted the Secret again.
      const raw = await fetch(`${member.clientUrl}/v3/kv/range`, {
        method: "POST",
        body: JSON.stringify({ key: btoa("/registry/core/secrets/default/s") }),
      }).then((r) => r.json());
      assert(atob(raw.kvs[0].value).startsWith("k8s:enc:"), "the Secret is in clear in etcd");

      // The README's walk: the first replica on the old node's data dir with --token, the
      // others on new data dirs with the same token: every one has the node's CA and admin token.
      const etcdOpts = {
        storage: "etcd3",
        etcdServers: [member.clientUrl],
        token: "walk-token",
        encryptionProviderConfigFile: encryption,
      };
      {
        await using first = await testServer({ ...etcdOpts, dataDir: `${dir}/one` });
        await using replica = await testServer({ ...etcdOpts, dataDir: `${dir}/replica` });
        for (const r of [first, replica]) {
          assertEquals(r.server.caCertPem, oneCa);
          assertEquals(r.server.adminToken, oneToken);
        }
        const got = await replica.json("GET", `${CM}/moved`);
        assertEquals(got.status, 200);
        assertEquals(got.body.data, { k: "v" });
        assertEquals(got.body.metadata.uid, uid);
        const secret = await replica.json("GET", `${SECRETS}/s`);
        assertEquals(atob(secret.body.data.v), "hush");
        await createAsAdmin(first, CM, { metadata: { name: "on-etcd" } });
      }

      const back = await copy("--from", etcd, "--to", `${dir}/two`, ...enc);
      assertEquals(back.code, 0, back.stderr);
      assertConfigError(
        await copy("--from", etcd, "--to", `${dir}/two`, ...enc),
        /--to: .*two already holds a store/,
      );
      assertEquals(Deno.statSync(`${dir}/two`).mode! & 0o777, 0o700);
      assertEquals(
        [...Deno.readDirSync(`${dir}/two`)].map((e) => e.name),
        ["store"],
        "no staging directory left",
      );
      await using two = await testServer({
        storage: "file",
        dataDir: `${dir}/two`,
        encryptionProviderConfigFile: encryption,
      });
      assertEquals((await two.json("GET", `${CM}/moved`)).body.metadata.uid, uid);
      assertEquals((await two.json("GET", `${CM}/on-etcd`)).status, 200);
      assertEquals(atob((await two.json("GET", `${SECRETS}/s`)).body.data.v), "hush");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("copy: bad input and unusable locations exit 2 in one line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-copy-" });
  try {
    assertConfigError(await copy("--from", `${dir}/none`), /--to is required/);
    assertConfigError(
      await copy("--from", `${dir}/none`, "--to", `${dir}/x`),
      /--from: .*none holds no store/,
    );
    assertConfigError(
      await copy("--from", `${dir}/a`, "--to", "http://127.0.0.1:2379"),
      /--to: .*expected a data directory or etcd:\/\/host:port\/prefix/,
    );
    assertConfigError(
      await copy("--from", `${dir}/a`, "--to", "etcd://no port/registry"),
      /is not an etcd host:port/,
    );
    assertConfigError(await copy("--frm", "x"), /unknown flag --frm/);
    assertConfigError(
      await runWithin(60_000, "storage", "backup"),
      /storage: unknown command "backup" \(copy, snapshot or restore\)/,
    );
    const help = await runWithin(60_000, "storage", "copy", "--help");
    assertEquals(help.code, 0);
    for (const flag of ["--from", "--to", "--etcd-cafile", "--encryption-provider-config"]) {
      assert(help.stdout.includes(flag), flag);
    }
    // From a data dir into itself, or into one that holds a store.
    {
      await using ts = await testServer({ storage: "file", dataDir: `${dir}/a` });
      await createAsAdmin(ts, CM, { metadata: { name: "x" } });
    }
    {
      await using ts = await testServer({ storage: "file", dataDir: `${dir}/b` });
      await createAsAdmin(ts, CM, { metadata: { name: "y" } });
    }
    assertConfigError(await copy("--from", `${dir}/a`, "--to", `${dir}/a`), /the same data dir/);
    assertConfigError(
      await copy("--from", `${dir}/a`, "--to", `${dir}/b`),
      /--to: .*b already holds a store/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
