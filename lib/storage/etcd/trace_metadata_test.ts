// deno-lint-ignore-file no-explicit-any
/**
 * The etcd client sends the current span's `traceparent` as gRPC metadata (what etcd's own
 * tracing continues from), and nothing when nothing is traced: checked against a gRPC server
 * of etcd's KV service on loopback that records what each Range receives. (Debian's etcd 3.4
 * has no tracing of its own to check it against.)
 */

import assert from "node:assert/strict";
// @ts-types="../../../tests/grpc_server_types.d.ts"
import * as grpc from "@grpc/grpc-js";
import { loadEtcdProtos } from "./protos_testdata.ts";
import { EtcdClient } from "./client.ts";
import { createLogger } from "../../api/mod.ts";
import { openTracer, withSpan } from "../../tracing/mod.ts";

Deno.test("etcd client: a traced request's calls carry its traceparent as gRPC metadata", async () => {
  const def = loadEtcdProtos();
  const pkg = grpc.loadPackageDefinition(def) as any;
  const received: (string | undefined)[] = [];
  const server = new grpc.Server();
  server.addService(pkg.etcdserverpb.KV.service, {
    Range(call: grpc.ServerUnaryCall<unknown>, done: (e: null, r: unknown) => void) {
      received.push(call.metadata.get("traceparent")[0] as string | undefined);
      done(null, { header: { revision: 1 }, kvs: [], more: false, count: 0 });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      "127.0.0.1:0",
      grpc.ServerCredentials.createInsecure(),
      (err, p) => err ? reject(err) : resolve(p),
    )
  );
  // Nothing listens on the collector's port: spans are dropped, the test reads the metadata.
  const tracer = await openTracer(
    { endpoint: "127.0.0.1:9", samplingRatePerMillion: 1_000_000 },
    { logger: createLogger("error") },
  );
  const client = await EtcdClient.connect([`http://127.0.0.1:${port}`]);
  try {
    const span = tracer.startRequest("GET /api/v1/namespaces/{:namespace}/configmaps/{:name}", {});
    const sent = span.traceparent();
    await withSpan(span, () => client.range({ key: new TextEncoder().encode("/registry/a") }));
    span.end();
    // connect()'s own Range was made outside any request.
    assert.equal(received.length, 2);
    assert.equal(received[0], undefined);
    assert.match(sent!, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    assert.equal(received[1], sent);
  } finally {
    client.close();
    await tracer.close();
    server.forceShutdown();
  }
});
