// deno-lint-ignore-file no-explicit-any
/**
 * The client's etcd messages against protobuf.js reading etcd's own `.proto` files: requests
 * we write decode there to what we meant, and responses protobuf.js writes decode here to what
 * it decodes them to itself (with the options the client had when it used protobuf.js).
 */

import assert from "node:assert/strict";
import { loadEtcdProtos } from "./protos_testdata.ts";
import { METHODS } from "./messages.ts";

const def = loadEtcdProtos() as any;
const reference = (path: string) => {
  const [service, method] = path.slice(1).split("/");
  return def[service][method];
};

/** Buffers as plain Uint8Arrays, so that both sides compare. */
function plain(v: unknown): unknown {
  if (v instanceof Uint8Array) return Uint8Array.from(v);
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  }
  return v;
}

const enc = new TextEncoder();
const key = enc.encode("/registry/core/configmaps/default/a");
const kv = (n: number) => ({
  key: enc.encode(`/registry/k${n}`),
  create_revision: 5 + n,
  mod_revision: 2 ** 40 + n,
  version: n,
  value: enc.encode(`{"n":${n}}`),
  lease: 0,
});

Deno.test("etcd messages: requests decode in protobuf.js to what was meant", () => {
  const cases: [string, unknown, unknown][] = [
    ["/etcdserverpb.KV/Range", {
      key,
      range_end: new Uint8Array([0]),
      limit: 500,
      revision: 2 ** 41,
      count_only: true,
      serializable: true,
    }, undefined],
    ["/etcdserverpb.KV/Txn", {
      compare: [
        { key, target: "CREATE", result: "EQUAL", create_revision: 0 },
        { key, target: "MOD", result: "EQUAL", mod_revision: 77 },
      ],
      success: [{ request_put: { key, value: enc.encode("{}"), prev_kv: true } }],
      failure: [{ request_range: { key } }, { request_delete_range: { key, prev_kv: true } }],
    }, undefined],
    ["/etcdserverpb.KV/DeleteRange", { key, range_end: enc.encode("/registry0") }, undefined],
    ["/etcdserverpb.KV/Compact", { revision: 1234, physical: false }, undefined],
    ["/etcdserverpb.Watch/Watch", {
      create_request: {
        key,
        range_end: enc.encode("/registry0"),
        start_revision: 9,
        prev_kv: true,
      },
    }, undefined],
    ["/etcdserverpb.Watch/Watch", { progress_request: {} }, undefined],
    ["/etcdserverpb.Watch/Watch", { cancel_request: { watch_id: 3 } }, undefined],
  ];
  for (const [path, req] of cases) {
    const ours = METHODS.get(path)!.encode(req);
    const theirs = plain(reference(path).requestDeserialize(ours)) as any;
    const sent = req as any;
    if (path.endsWith("Txn")) {
      assert.equal(theirs.compare[0].create_revision, 0, "a oneof operand of 0 is sent");
      assert.equal(theirs.compare[0].target, "CREATE");
      assert.equal(theirs.compare[1].mod_revision, 77);
      assert.deepEqual(theirs.success[0].request_put.value, enc.encode("{}"));
      assert.equal(theirs.success[0].request_put.prev_kv, true);
      assert.deepEqual(theirs.failure[0].request_range.key, key);
      assert.equal(theirs.failure[1].request_delete_range.prev_kv, true);
    } else if (sent.progress_request) {
      assert.ok(theirs.progress_request, "an empty progress request is still sent");
    } else {
      // Every field we set reads back as set.
      const flat = sent.create_request ?? sent.cancel_request ?? sent;
      const got = theirs.create_request ?? theirs.cancel_request ?? theirs;
      for (const [k, v] of Object.entries(flat)) assert.deepEqual(got[k], plain(v), `${path} ${k}`);
    }
  }
});

Deno.test("etcd messages: responses decode as protobuf.js decodes them", () => {
  const header = { cluster_id: 11, member_id: 12, revision: 2 ** 45 + 3, raft_term: 4 };
  const cases: [string, unknown][] = [
    ["/etcdserverpb.KV/Range", { header, kvs: [kv(1), kv(2), kv(3)], more: true, count: 3 }],
    ["/etcdserverpb.KV/Range", { header, kvs: [], more: false, count: 0 }],
    ["/etcdserverpb.KV/Txn", {
      header,
      succeeded: false,
      responses: [
        { response_range: { header, kvs: [kv(4)], more: false, count: 1 } },
        { response_put: { header, prev_kv: kv(5) } },
        { response_put: { header } },
        { response_delete_range: { header, deleted: 1, prev_kvs: [kv(6)] } },
      ],
    }],
    ["/etcdserverpb.KV/DeleteRange", { header, deleted: 2, prev_kvs: [kv(7), kv(8)] }],
    ["/etcdserverpb.KV/Compact", { header }],
    ["/etcdserverpb.Watch/Watch", {
      header,
      watch_id: 1,
      created: false,
      canceled: true,
      compact_revision: 99,
      cancel_reason: "mvcc: required revision has been compacted ✓",
      events: [
        { type: "PUT", kv: kv(9), prev_kv: kv(8) },
        { type: "DELETE", kv: { key: kv(10).key, mod_revision: 20 } },
      ],
    }],
  ];
  for (const [path, res] of cases) {
    const m = reference(path);
    const bytes = Uint8Array.from(m.responseSerialize(res));
    const theirs = plain(m.responseDeserialize(bytes)) as any;
    const ours = plain(METHODS.get(path)!.decode(bytes)) as any;
    // protobuf.js leaves unset oneof members out; so do we.
    assert.deepEqual(ours, theirs, path);
  }
});
