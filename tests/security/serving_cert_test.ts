/**
 * The serving certificate is renewed while the server runs (issue 17): a generated one before
 * it expires, one from --tls-cert-file when the file changes. New connections get the new
 * certificate; open ones go on.
 */

import assert from "node:assert/strict";
import * as tls from "node:tls";
import { ensurePki } from "../../lib/certificates/pki.ts";
import { testServer } from "../harness.ts";

/** The fingerprint of the certificate a new TLS connection to `port` is served. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, rejectUnauthorized: false }, () => {
      const fp = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fp);
    });
    socket.on("error", reject);
  });
}

/** Waits for `done`; a connection refused meanwhile (the moment the listener is swapped)
 * counts as not yet. */
async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await done().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const DAY_MS = 86_400_000;

for (const clientCertAuth of [false, true]) {
  Deno.test(
    `a generated serving certificate is renewed while running, 30 days before it expires${
      clientCertAuth ? " (client certificates on)" : ""
    }`,
    async () => {
      let now = Date.now();
      await using t = await testServer({
        clock: () => new Date(now),
        certificateCheckIntervalMs: 100,
        clientCertAuth,
      });
      const before = await servedFingerprint(t.server.port);
      // An open connection made before the renewal.
      const open = await Deno.connectTls({
        hostname: "127.0.0.1",
        port: t.server.port,
        caCerts: [t.server.caCertPem],
      });
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await servedFingerprint(t.server.port), before, "renewed too early");
      now += 340 * DAY_MS; // the one-year certificate now expires within 30 days
      await until(
        "a renewed certificate",
        async () => (await servedFingerprint(t.server.port)) !== before,
      );
      // The renewed certificate is issued at the real time, so back to it (ahead, every check
      // would find the new one expiring too).
      now = Date.now();
      await new Promise((r) => setTimeout(r, 300));
      // Requests still work, with the CA clients already trust, and the old connection too.
      assert.equal((await t.request("GET", "/version")).status, 200);
      await open.write(new TextEncoder().encode("GET /livez HTTP/1.1\r\nHost: x\r\n\r\n"));
      const buf = new Uint8Array(1024);
      const n = await open.read(buf);
      assert.match(new TextDecoder().decode(buf.subarray(0, n ?? 0)), /^HTTP\/1.1 200/);
      open.close();
    },
  );
}

Deno.test("a --tls-cert-file pair is served anew when the files change", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-certs-" });
  try {
    const first = await ensurePki({ dataDir: `${dir}/a`, sans: [], bindAddress: "127.0.0.1" });
    const second = await ensurePki({ dataDir: `${dir}/b`, sans: [], bindAddress: "127.0.0.1" });
    await Deno.writeTextFile(`${dir}/tls.crt`, first.servingCertPem);
    await Deno.writeTextFile(`${dir}/tls.key`, first.servingKeyPem);
    await using t = await testServer({
      tlsCertFile: `${dir}/tls.crt`,
      tlsPrivateKeyFile: `${dir}/tls.key`,
      certificateCheckIntervalMs: 100,
    });
    const before = await servedFingerprint(t.server.port);
    await Deno.writeTextFile(`${dir}/tls.key`, second.servingKeyPem);
    await Deno.writeTextFile(`${dir}/tls.crt`, second.servingCertPem);
    await until("the new pair", async () => (await servedFingerprint(t.server.port)) !== before);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
