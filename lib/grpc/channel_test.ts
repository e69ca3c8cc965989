// deno-lint-ignore-file no-explicit-any
/**
 * The gRPC channel against grpc-js's server (the peer, on Deno's `node:http2`, on loopback):
 * unary calls small and larger than every flow-control window, statuses and their messages,
 * deadlines, bidirectional streams and their cancellation, a server that is down (fail fast, or
 * wait for it), and one that restarts.
 */

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
// @ts-types="../../tests/grpc_server_types.d.ts"
import * as grpc from "@grpc/grpc-js";
import { GrpcChannel, type GrpcError, Status } from "./mod.ts";
import { grpcTimeout } from "./channel.ts";

const bytes = (b: Buffer | Uint8Array) => b as Buffer;
const method = (name: string, stream = false) => ({
  path: `/test.Echo/${name}`,
  requestStream: stream,
  responseStream: stream,
  requestSerialize: bytes,
  requestDeserialize: bytes,
  responseSerialize: bytes,
  responseDeserialize: bytes,
});
const SERVICE = {
  Echo: method("Echo"),
  Fail: method("Fail"),
  Never: method("Never"),
  Chat: method("Chat", true),
};

interface TestServer {
  port: number;
  cancelled: number;
  metadata: unknown[];
  stop(): void;
}

async function startServer(port = 0): Promise<TestServer> {
  const server = new (grpc.Server as any)();
  const state = { cancelled: 0, metadata: [] as unknown[] };
  server.addService(SERVICE, {
    Echo(call: any, done: any) {
      state.metadata.push(call.metadata.get("x-test")[0]);
      const req = call.request as Buffer;
      // The answer is the request, reversed: not merely reflected bytes.
      done(null, Buffer.from(Uint8Array.from(req).reverse()));
    },
    Fail(_call: any, done: any) {
      done({ code: 9, details: "précondition 100% échouée" });
    },
    Never(call: any) {
      call.on("cancelled", () => state.cancelled++);
    },
    Chat(call: any) {
      call.on("data", (m: Buffer) => call.write(Buffer.concat([Buffer.from("re:"), m])));
      call.on("end", () => call.end());
      call.on("cancelled", () => state.cancelled++);
    },
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `127.0.0.1:${port}`,
      grpc.ServerCredentials.createInsecure(),
      (err: Error | null, p: number) => err ? reject(err) : resolve(p),
    )
  );
  return {
    port: bound,
    get cancelled() {
      return state.cancelled;
    },
    metadata: state.metadata,
    stop: () => server.forceShutdown(),
  };
}

function channelTo(port: number): GrpcChannel {
  return new GrpcChannel({
    authority: `127.0.0.1:${port}`,
    secure: false,
    initialBackoffMs: 50,
    maxBackoffMs: 200,
    dial: async () => ({ conn: await Deno.connect({ hostname: "127.0.0.1", port }) }),
  });
}

const enc = new TextEncoder();
const dec = new TextDecoder();

Deno.test("grpc channel: unary calls, small and larger than every window, with metadata", async () => {
  const server = await startServer();
  const channel = channelTo(server.port);
  try {
    const small = await channel.unary("/test.Echo/Echo", enc.encode("hello"), {
      timeoutMs: 5_000,
      metadata: [["x-test", "m1"]],
    });
    assert.equal(dec.decode(small), "olleh");
    assert.deepEqual(server.metadata, ["m1"]);
    // 3 MiB each way: past the server's 64 KiB windows and our 4 MiB stream window's half.
    const big = crypto.getRandomValues(new Uint8Array(3 << 20).subarray(0, 65_536));
    const large = new Uint8Array(3 << 20);
    for (let i = 0; i < large.length; i += big.length) large.set(big, i);
    const answers = await Promise.all(
      [1, 2, 3].map(() => channel.unary("/test.Echo/Echo", large, { timeoutMs: 20_000 })),
    );
    for (const answer of answers) {
      assert.equal(answer.length, large.length);
      assert.deepEqual(answer.slice(0, 100), large.slice(-100).reverse());
    }
  } finally {
    channel.close();
    server.stop();
  }
});

Deno.test("grpc channel: a status is the server's code and its decoded message; a deadline ends a call", async () => {
  const server = await startServer();
  const channel = channelTo(server.port);
  try {
    await assert.rejects(
      channel.unary("/test.Echo/Fail", enc.encode("x")),
      (err: GrpcError) => err.code === 9 && err.details === "précondition 100% échouée",
    );
    await assert.rejects(
      channel.unary("/test.Echo/Nope", enc.encode("x")),
      (err: GrpcError) => err.code === Status.UNIMPLEMENTED,
    );
    const started = Date.now();
    await assert.rejects(
      channel.unary("/test.Echo/Never", enc.encode("x"), { timeoutMs: 200 }),
      (err: GrpcError) => err.code === Status.DEADLINE_EXCEEDED,
    );
    assert.ok(Date.now() - started < 2_000);
    // The connection goes on serving.
    assert.equal(dec.decode(await channel.unary("/test.Echo/Echo", enc.encode("ab"))), "ba");
  } finally {
    channel.close();
    server.stop();
  }
});

Deno.test("grpc channel: a bidirectional stream echoes in order, ends, and is cancelled", async () => {
  const server = await startServer();
  const channel = channelTo(server.port);
  try {
    const got: string[] = [];
    let ended: GrpcError | null | undefined;
    const done = Promise.withResolvers<void>();
    const stream = channel.stream("/test.Echo/Chat", {
      message: (m) => {
        got.push(dec.decode(m));
        if (got.length === 3) done.resolve();
      },
      end: (err) => {
        ended = err;
        done.resolve();
      },
    });
    for (const m of ["a", "b", "c"]) stream.write(enc.encode(m));
    await done.promise;
    assert.deepEqual(got, ["re:a", "re:b", "re:c"]);
    assert.equal(ended, undefined, "still open");
    stream.cancel();
    assert.equal((ended as GrpcError | undefined)?.code, Status.CANCELLED);
    for (let i = 0; i < 50 && server.cancelled === 0; i++) await delay(20);
    assert.equal(server.cancelled, 1, "the server saw the stream reset");
  } finally {
    channel.close();
    server.stop();
  }
});

Deno.test("grpc channel: a down server fails calls at once, unless they wait; a restart is reconnected", async () => {
  const port = freePort();
  const channel = channelTo(port);
  try {
    await assert.rejects(
      channel.unary("/test.Echo/Echo", enc.encode("x"), { timeoutMs: 5_000 }),
      (err: GrpcError) => err.code === Status.UNAVAILABLE && /connect/.test(err.details),
    );
    // A waiting call is answered once the server comes up.
    const waiting = channel.unary("/test.Echo/Echo", enc.encode("xy"), {
      timeoutMs: 10_000,
      waitForReady: true,
    });
    await delay(300);
    let server = await startServer(port);
    assert.equal(dec.decode(await waiting), "yx");

    // A call in flight when the server goes fails UNAVAILABLE; after its return calls work.
    const inflight = channel.unary("/test.Echo/Never", enc.encode("x"), { timeoutMs: 10_000 });
    await delay(100);
    server.stop();
    await assert.rejects(inflight, (err: GrpcError) => err.code === Status.UNAVAILABLE);
    server = await startServer(port);
    try {
      const answer = await channel.unary("/test.Echo/Echo", enc.encode("ok"), {
        timeoutMs: 5_000,
        waitForReady: true,
      });
      assert.equal(dec.decode(answer), "ko");
    } finally {
      server.stop();
    }
  } finally {
    channel.close();
  }
});

Deno.test("grpc channel: close fails calls still waiting for a connection", async () => {
  const channel = channelTo(freePort());
  const waiting = channel.unary("/test.Echo/Echo", enc.encode("x"), {
    timeoutMs: 10_000,
    waitForReady: true,
  });
  await delay(50);
  channel.close();
  await assert.rejects(waiting, (err: GrpcError) => err.code === Status.CANCELLED);
});

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

Deno.test("grpc-timeout: at most eight digits, milliseconds then seconds", () => {
  assert.equal(grpcTimeout(30_000), "30000m");
  assert.equal(grpcTimeout(0.2), "1m");
  assert.equal(grpcTimeout(99_999_999), "99999999m");
  assert.equal(grpcTimeout(100_000_000), "100000S");
  assert.equal(grpcTimeout(Number.MAX_SAFE_INTEGER), "99999999S");
});
