/**
 * The etcd client against real etcd members: clients of one process close independently, a closed client's calls fail, watch
 * streams deliver, and an unavailable endpoint moves the next calls to the next one (as the
 * client says).
 */

import assert from "node:assert/strict";
import { EtcdClient, EtcdError, prefixEnd, type WatchResponse } from "./client.ts";
import { etcdInstalled, requireEtcdUnderCi, startEtcdMember } from "../testing/etcd_member.ts";

requireEtcdUnderCi("lib/storage/etcd/client_test.ts");

const enc = new TextEncoder();
const dec = new TextDecoder();

async function put(client: EtcdClient, key: string, value: string): Promise<boolean> {
  const k = enc.encode(key);
  const res = await client.txn({
    compare: [{ key: k, target: "CREATE", result: "EQUAL", create_revision: 0 }],
    success: [{ request_put: { key: k, value: enc.encode(value) } }],
    failure: [],
  });
  return res.succeeded;
}

async function get(client: EtcdClient, key: string): Promise<string | undefined> {
  const res = await client.range({ key: enc.encode(key) });
  return res.kvs[0] ? dec.decode(res.kvs[0].value) : undefined;
}

if (etcdInstalled) {
  const mode = "own HTTP/2";
  const connect = (endpoints: string[]) => EtcdClient.connect(endpoints);

  Deno.test(`etcd client (${mode}): two clients at once close on their own, and one opened after they closed works`, async () => {
    await using member = await startEtcdMember();
    const a = await connect([member.clientUrl]);
    const b = await connect([member.clientUrl]);
    // 64 concurrent creates from both: each answered once, to the client that made it.
    const results = await Promise.all(
      Array.from({ length: 64 }, (_, i) => put(i % 2 ? a : b, `/k/${i}`, `v${i}`)),
    );
    assert.deepEqual(results, Array(64).fill(true));
    assert.equal(await put(a, "/k/3", "again"), false, "create-if-absent of an existing key");
    assert.equal(await get(b, "/k/3"), "v3");

    a.close();
    await assert.rejects(get(a, "/k/1"), (err) => err instanceof EtcdError);
    assert.equal(await get(b, "/k/1"), "v1", "the other client goes on");
    b.close();

    const c = await connect([member.clientUrl]);
    try {
      assert.equal(await get(c, "/k/63"), "v63");
    } finally {
      c.close();
    }
  });

  Deno.test(`etcd client (${mode}): a watch stream delivers the events after its start revision, with previous values`, async () => {
    await using member = await startEtcdMember();
    const client = await connect([member.clientUrl]);
    try {
      const prefix = enc.encode("/w/");
      const stream = client.watchStream();
      const got: WatchResponse[] = [];
      const created = Promise.withResolvers<void>();
      const three = Promise.withResolvers<void>();
      let events = 0;
      stream.on("data", (res) => {
        got.push(res);
        if (res.created) created.resolve();
        events += res.events.length;
        if (events >= 3) three.resolve();
      });
      stream.write({
        create_request: { key: prefix, range_end: prefixEnd(prefix), prev_kv: true },
      });
      await created.promise;
      await put(client, "/w/a", "1");
      await put(client, "/other", "x");
      const k = enc.encode("/w/a");
      await client.txn({
        compare: [],
        success: [{ request_put: { key: k, value: enc.encode("2") } }],
        failure: [],
      });
      await client.deleteRange({ key: k });
      await three.promise;
      stream.cancel();
      const evs = got.flatMap((r) => r.events);
      assert.deepEqual(
        evs.map((e) => [e.type, dec.decode(e.kv.key), dec.decode(e.kv.value)]),
        [["PUT", "/w/a", "1"], ["PUT", "/w/a", "2"], ["DELETE", "/w/a", ""]],
      );
      assert.equal(evs[0].prev_kv, null);
      assert.equal(dec.decode(evs[1].prev_kv!.value), "1");
      assert.equal(dec.decode(evs[2].prev_kv!.value), "2");
    } finally {
      client.close();
    }
  });

  Deno.test(`etcd client (${mode}): when its endpoint goes away, the call fails and the next calls go to the next endpoint`, async () => {
    await using first = await startEtcdMember({ name: "first" });
    await using second = await startEtcdMember({ name: "second" });
    const client = await connect([first.clientUrl, second.clientUrl]);
    try {
      assert.equal(client.endpoint, first.clientUrl);
      assert.equal(await put(client, "/on", "first"), true);
      await first.stop();
      await assert.rejects(get(client, "/on"), (err) => {
        assert.ok(err instanceof EtcdError, String(err));
        assert.equal(err.grpcCode, 14, err.message); // UNAVAILABLE
        return true;
      });
      assert.equal(client.endpoint, second.clientUrl);
      // The second member is another cluster: it has no /on, and takes writes.
      assert.equal(await get(client, "/on"), undefined);
      assert.equal(await put(client, "/on", "second"), true);
      assert.equal(await get(client, "/on"), "second");
    } finally {
      client.close();
    }
  });
}
