import assert from "node:assert/strict";
import { ensurePki, issueClientCertificate, type Pki } from "../certificates/pki.ts";
import { ClientCAVerifier } from "../auth/x509.ts";
import { silentLogger } from "../api/log.ts";
import { TlsFront } from "./tls_front.ts";

/** A front on a free port before a loopback Deno.serve that echoes who the client is. */
async function setup(pki: Pki) {
  const front = new TlsFront({
    certPem: pki.servingCertPem,
    keyPem: pki.servingKeyPem,
    clientCAPem: pki.caCertPem,
    verifier: ClientCAVerifier.fromPem(pki.caCertPem),
    logger: silentLogger,
  });
  const inner = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    front.handler((req) => new Response(front.clientOf(req)?.user.username ?? "anonymous")),
  );
  const port = await front.listen("127.0.0.1", 0, inner);
  return {
    front,
    inner,
    port,
    async [Symbol.asyncDispose]() {
      front.stopAccepting();
      await inner.shutdown();
      front.terminate();
    },
  };
}

async function withPki<T>(fn: (pki: Pki) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "tls_front_test_" });
  try {
    return await fn(
      await ensurePki({
        dataDir: dir,
        sans: [],
        bindAddress: "127.0.0.1",
        logger: { info: () => {} },
      }),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function get(url: string, opts: Parameters<typeof Deno.createHttpClient>[0] = {}) {
  const client = Deno.createHttpClient(opts);
  try {
    const res = await fetch(url, { client });
    return { status: res.status, text: await res.text() };
  } finally {
    client.close();
  }
}

Deno.test("the front passes each connection's verified client to the loopback server", async () => {
  await withPki(async (pki) => {
    await using s = await setup(pki);
    const url = `https://127.0.0.1:${s.port}/`;
    assert.deepEqual(await get(url, { caCerts: [pki.caCertPem] }), {
      status: 200,
      text: "anonymous",
    });
    const alice = await issueClientCertificate({ ...pki, user: "alice" });
    for (const http2 of [true, false]) {
      const res = await get(url, {
        caCerts: [pki.caCertPem],
        cert: alice.certPem,
        key: alice.keyPem,
        http1: !http2,
        http2,
      });
      assert.deepEqual(res, { status: 200, text: "alice" }, `http2: ${http2}`);
    }
  });
});

Deno.test("the loopback server refuses connections that did not come through the front", async () => {
  await withPki(async (pki) => {
    await using s = await setup(pki);
    const res = await get(`http://127.0.0.1:${s.inner.addr.port}/`);
    assert.equal(res.status, 421);
  });
});

Deno.test("a port in use is Deno's AddrInUse, and the loopback server is shut down", async () => {
  await withPki(async (pki) => {
    const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const front = new TlsFront({
        certPem: pki.servingCertPem,
        keyPem: pki.servingKeyPem,
        clientCAPem: pki.caCertPem,
        verifier: ClientCAVerifier.fromPem(pki.caCertPem),
        logger: silentLogger,
      });
      const inner = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen: () => {} },
        front.handler(() => new Response("x")),
      );
      await assert.rejects(
        front.listen("127.0.0.1", (taken.addr as Deno.NetAddr).port, inner),
        Deno.errors.AddrInUse,
      );
      await inner.finished;
    } finally {
      taken.close();
    }
  });
});
