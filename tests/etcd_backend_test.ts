// deno-lint-ignore-file no-explicit-any
/**
 * The server on etcd (`--storage etcd3`), black box over HTTPS against a real etcd member:
 * creates, gets, lists and watches; values as JSON in etcd under `/registry`; a second server on
 * the same etcd and prefix reads the first one's writes (consistent reads) and sees them in its
 * watches. Without etcd these tests skip, except under CI=true where that fails.
 */

import { assert, assertEquals } from "./assert.ts";
import { createAsAdmin, runPlatform, testServer, WITHOUT_NAMESPACE_DEFAULTS } from "./harness.ts";
import {
  etcdInstalled,
  requireEtcdUnderCi,
  startEtcdMember,
} from "../lib/storage/testing/etcd_member.ts";
import { startServer } from "../mod.ts";
import { EtcdUnavailableError } from "../lib/storage/mod.ts";
import { silentLogger } from "../lib/api/log.ts";

requireEtcdUnderCi("tests/etcd_backend_test.ts");

const CM = "/api/v1/namespaces/default/configmaps";

/** Reads watch events (one JSON object a line) until `n` arrived. */
async function readEvents(res: Response, n: number): Promise<any[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: any[] = [];
  let buf = "";
  const timer = setTimeout(() => reader.cancel(), 10_000);
  try {
    while (events.length < n) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) events.push(JSON.parse(line));
      }
    }
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => {});
  }
  return events;
}

Deno.test({
  name: "etcd3: two servers on one etcd serve one API",
  ignore: !etcdInstalled,
  async fn() {
    await using member = await startEtcdMember();
    // Without --token each server has its own CA: without the root CA publisher they do not
    // take turns rewriting kube-root-ca.crt.
    const opts = {
      storage: "etcd3",
      etcdServers: [member.clientUrl],
      controllers: WITHOUT_NAMESPACE_DEFAULTS,
    };
    await using a = await testServer(opts);
    await using b = await testServer(opts);

    // A write through one server is read back through the other (a consistent read).
    const created = await createAsAdmin(a, CM, {
      metadata: { name: "shared" },
      data: { k: "v" },
    });
    const got = await b.json("GET", `${CM}/shared`);
    assertEquals(got.status, 200);
    assertEquals(got.body.data, { k: "v" });
    assertEquals(got.body.metadata.resourceVersion, created.metadata.resourceVersion);
    assertEquals(got.body.metadata.uid, created.metadata.uid);

    // Lists agree, and a watch on one server sees a write made through the other.
    const listA = await a.json("GET", CM);
    const listB = await b.json("GET", CM);
    const names = (l: any) => l.body.items.map((i: any) => i.metadata.name);
    assertEquals(names(listB), names(listA));
    assert(names(listB).includes("shared"));
    const watch = await b.request(
      "GET",
      `${CM}?watch=1&resourceVersion=${listB.body.metadata.resourceVersion}`,
    );
    assertEquals(watch.status, 200);
    const events = readEvents(watch, 2);
    await createAsAdmin(a, CM, { metadata: { name: "second" } });
    const upd = await a.json("PUT", `${CM}/shared`, {
      body: { ...got.body, data: { k: "v2" } },
    });
    assertEquals(upd.status, 200);
    const evs = await events;
    assertEquals(evs.map((e) => `${e.type} ${e.object.metadata.name}`), [
      "ADDED second",
      "MODIFIED shared",
    ]);
    assertEquals(evs[1].object.metadata.resourceVersion, upd.body.metadata.resourceVersion);

    // Updates with a stale resourceVersion conflict, whichever server gets them.
    const stale = await b.json("PUT", `${CM}/shared`, { body: got.body });
    assertEquals(stale.status, 409);

    // Deletes through B are gone for A.
    assertEquals((await b.json("DELETE", `${CM}/second`)).status, 200);
    assertEquals((await a.json("GET", `${CM}/second`)).status, 404);

    // etcd holds the object as the server's JSON, under /registry.
    const res = await fetch(`${member.clientUrl}/v3/kv/range`, {
      method: "POST",
      body: JSON.stringify({ key: btoa("/registry/core/configmaps/default/shared") }),
    });
    const body = await res.json();
    assertEquals(body.kvs?.length, 1, JSON.stringify(body));
    const stored = JSON.parse(atob(body.kvs[0].value));
    assertEquals(stored.data, { k: "v2" });
    assertEquals(
      Number(body.kvs[0].mod_revision) - 1,
      Number(upd.body.metadata.resourceVersion),
      "resourceVersion is etcd's revision less one",
    );
  },
});

Deno.test({
  name: "etcd3: --etcd-prefix keeps two clusters apart on one etcd",
  ignore: !etcdInstalled,
  async fn() {
    await using member = await startEtcdMember();
    await using a = await testServer({
      storage: "etcd3",
      etcdServers: [member.clientUrl],
      etcdPrefix: "/a/registry",
    });
    await using b = await testServer({
      storage: "etcd3",
      etcdServers: [member.clientUrl],
      etcdPrefix: "/b/registry",
    });
    await createAsAdmin(a, CM, { metadata: { name: "only-a" } });
    assertEquals((await b.json("GET", `${CM}/only-a`)).status, 404);
    // B's consistent reads still answer although etcd's revision moved through A's writes.
    const list = await b.json("GET", CM);
    assertEquals(list.status, 200);
    const res = await fetch(`${member.clientUrl}/v3/kv/range`, {
      method: "POST",
      body: JSON.stringify({ key: btoa("/a/registry/core/configmaps/default/only-a") }),
    });
    assertEquals((await res.json()).kvs?.length, 1);
  },
});

Deno.test({
  name: "etcd3: an unreachable etcd stops the start naming the endpoints; platform serve exits 1",
  ignore: !etcdInstalled,
  async fn() {
    const dataDir = await Deno.makeTempDir();
    try {
      const err = await startServer({
        dataDir,
        storage: "etcd3",
        etcdServers: ["http://127.0.0.1:1"],
        logger: silentLogger,
      }).then(() => undefined, (e) => e);
      assert(err instanceof EtcdUnavailableError, String(err));
      assert(err.message.startsWith("--etcd-servers: "), err.message);
      assert(err.message.includes("http://127.0.0.1:1"), err.message);
      const run = await runPlatform(
        "serve",
        "--data-dir",
        dataDir,
        "--secure-port",
        "0",
        "--storage",
        "etcd3",
        "--etcd-servers",
        "http://127.0.0.1:1",
      );
      assertEquals(run.code, 1, run.stderr);
      const lines = run.stderr.trim().split("\n");
      assertEquals(lines.length, 1, run.stderr);
      assert(lines[0].startsWith("platform: cannot start: --etcd-servers: "), lines[0]);
      assert(lines[0].includes("http://127.0.0.1:1"), lines[0]);
    } finally {
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});

Deno.test({
  name: "etcd3: with etcd gone, resourceVersion=0 reads answer from the watch-fed copy; " +
    "consistent reads and writes fail with 5xx, /readyz fails; never a crash",
  ignore: !etcdInstalled,
  async fn() {
    const member = await startEtcdMember();
    try {
      await using s = await testServer({
        storage: "etcd3",
        etcdServers: [member.clientUrl],
        controllers: WITHOUT_NAMESPACE_DEFAULTS,
      });
      await createAsAdmin(s, CM, { metadata: { name: "kept" }, data: { k: "v" } });
      await member.stop();

      const cached = await s.json("GET", `${CM}/kept?resourceVersion=0`);
      assertEquals(cached.status, 200, JSON.stringify(cached.body));
      assertEquals(cached.body.data, { k: "v" });
      const list = await s.json("GET", `${CM}?resourceVersion=0`);
      assertEquals(list.status, 200);
      assert(list.body.items.some((i: any) => i.metadata.name === "kept"));

      const consistent = await s.json("GET", `${CM}/kept`);
      assert(consistent.status >= 500, `consistent GET: ${consistent.status}`);
      assertEquals(consistent.body.kind, "Status");
      const write = await s.json("POST", CM, { body: { metadata: { name: "lost" } } });
      assert(write.status >= 500, `create: ${write.status} ${JSON.stringify(write.body)}`);
      assertEquals(write.body.kind, "Status");
      const ready = await s.request("GET", "/readyz");
      await ready.body?.cancel();
      assertEquals(ready.status, 500);
    } finally {
      await member.stop();
    }
  },
});
