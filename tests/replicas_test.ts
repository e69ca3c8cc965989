/**
 * Replicas on one etcd with a shared `--token`: the first keeps its CA, service-account key and
 * admin token in etcd sealed with the token; the next takes them from there, so a kubeconfig,
 * a service-account token and a CA bundle made by one replica work against any other. A wrong
 * token, and a data directory of another cluster, are refused at start.
 */

import { assert, assertEquals } from "./assert.ts";
import { assertConfigError, createAsAdmin, runPlatform, testServer } from "./harness.ts";
import {
  etcdInstalled,
  requireEtcdUnderCi,
  startEtcdMember,
} from "../lib/storage/testing/etcd_member.ts";
import { startServer } from "../mod.ts";
import { ConfigError } from "../lib/config/mod.ts";
import { silentLogger } from "../lib/api/log.ts";

requireEtcdUnderCi("tests/replicas_test.ts");

const TOKEN = "correct horse battery staple";
const WHOAMI = "/apis/authentication.platform.io/v1/selfsubjectreviews";

/** A data directory a lone file-store server has made its secrets in. */
async function standaloneDataDir(): Promise<string> {
  const dataDir = await Deno.makeTempDir({ prefix: "platform-replica-" });
  const server = await startServer({ dataDir, storage: "file", logger: silentLogger });
  await server.close();
  return dataDir;
}

/** What etcd holds at `key`, through its JSON gateway. */
async function etcdValue(clientUrl: string, key: string): Promise<string | undefined> {
  const res = await fetch(`${clientUrl}/v3/kv/range`, {
    method: "POST",
    body: JSON.stringify({ key: btoa(key) }),
  });
  const body = await res.json();
  return body.kvs?.[0] ? atob(body.kvs[0].value) : undefined;
}

Deno.test({
  name: "replicas: --token shares the CA, admin token and service-account key through etcd",
  ignore: !etcdInstalled,
  async fn() {
    await using member = await startEtcdMember();
    // A single node moving to etcd: the first replica keeps the CA it already had.
    const dirA = await standaloneDataDir();
    const caBefore = await Deno.readTextFile(`${dirA}/pki/ca.crt`);
    const opts = { storage: "etcd3", etcdServers: [member.clientUrl], token: TOKEN };
    try {
      await using a = await testServer({ ...opts, dataDir: dirA });
      await using b = await testServer(opts);
      assertEquals(a.server.caCertPem, caBefore);
      assertEquals(b.server.caCertPem, caBefore, "the second replica took the cluster's CA");
      assertEquals(b.server.adminToken, a.server.adminToken);

      // A's kubeconfig (its CA and admin token) works against B: TLS to B verifies with A's CA.
      const client = Deno.createHttpClient({ caCerts: [a.server.caCertPem] });
      try {
        const res = await fetch(`${b.server.url}/api/v1/namespaces`, {
          headers: { Authorization: `Bearer ${a.server.adminToken}` },
          client,
        });
        assertEquals(res.status, 200, await res.text());
      } finally {
        client.close();
      }

      // A service-account token issued by A authenticates on B.
      await createAsAdmin(a, "/api/v1/namespaces/default/serviceaccounts", {
        metadata: { name: "robot" },
      });
      const issued = await createAsAdmin(
        a,
        "/api/v1/namespaces/default/serviceaccounts/robot/token",
        { spec: { expirationSeconds: 3600 } },
      );
      const who = await b.json("POST", WHOAMI, {
        token: issued.status.token,
        body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
      });
      assertEquals(who.status, 201, JSON.stringify(who.body));
      assertEquals(who.body.status.userInfo.username, "system:serviceaccount:default:robot");

      // etcd holds the secrets sealed: no key, token or passphrase in the clear.
      const sealed = await etcdValue(member.clientUrl, "/platform/bootstrap");
      assert(sealed !== undefined, "no bootstrap record in etcd");
      const record = JSON.parse(sealed);
      assertEquals(record.format, "platform-bootstrap/v1");
      for (const secret of ["PRIVATE KEY", a.server.adminToken, TOKEN, "BEGIN CERTIFICATE"]) {
        assert(!sealed.includes(secret), `the record shows ${secret.slice(0, 12)}… in the clear`);
      }

      // Two fresh replicas starting at once (on another prefix): one is first, both agree.
      const fresh = { ...opts, etcdPrefix: "/other/registry" };
      const [c, d] = await Promise.all([testServer(fresh), testServer(fresh)]);
      try {
        assertEquals(c.server.caCertPem, d.server.caCertPem);
        assertEquals(c.server.adminToken, d.server.adminToken);
        assert(c.server.caCertPem !== caBefore, "another prefix is another cluster");
      } finally {
        await c[Symbol.asyncDispose]();
        await d[Symbol.asyncDispose]();
      }
    } finally {
      await Deno.remove(dirA, { recursive: true });
    }
  },
});

Deno.test({
  name: "replicas: a wrong --token and another cluster's data directory are refused at start",
  ignore: !etcdInstalled,
  async fn() {
    await using member = await startEtcdMember();
    const opts = { storage: "etcd3", etcdServers: [member.clientUrl], logger: silentLogger };
    await using _first = await testServer({ ...opts, token: TOKEN });

    const wrongDir = await Deno.makeTempDir({ prefix: "platform-replica-" });
    const otherDir = await standaloneDataDir();
    try {
      const wrong = await startServer({ ...opts, token: "not it", dataDir: wrongDir })
        .then(() => undefined, (e) => e);
      assert(wrong instanceof ConfigError, String(wrong));
      assert(wrong.message.startsWith("--token: not the token"), wrong.message);

      const other = await startServer({ ...opts, token: TOKEN, dataDir: otherDir })
        .then(() => undefined, (e) => e);
      assert(other instanceof ConfigError, String(other));
      assert(other.message.includes("belongs to another cluster"), other.message);

      // Through the command: exit 2, one line.
      const run = await runPlatform(
        "serve",
        "--data-dir",
        wrongDir,
        "--secure-port",
        "0",
        "--storage",
        "etcd3",
        "--etcd-servers",
        member.clientUrl,
        "--token",
        "not it",
      );
      assertConfigError(run, /--token: not the token this cluster was started with/);
    } finally {
      await Deno.remove(wrongDir, { recursive: true });
      await Deno.remove(otherDir, { recursive: true });
    }
  },
});

Deno.test("replicas: --token without etcd3 storage is a configuration error", async () => {
  const run = await runPlatform("check-config", "--token", "x");
  assertConfigError(run, /--token: only with etcd3 storage/);
});
