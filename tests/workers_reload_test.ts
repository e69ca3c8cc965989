/**
 * What the server takes up while it runs reaches every thread of `--workers`: a changed
 * `--tls-cert-file` pair or a renewed generated certificate (the main thread checks it and hands
 * it to the workers, which serve it without a restart) and a changed `--authentication-config` (each thread reads it again).
 * Each is judged over many new connections (the kernel picks the thread of each): once one
 * sees the new behaviour, 16 in a row must, which a thread keeping the old one would break.
 */

import { assert, assertEquals } from "./assert.ts";
import * as tls from "node:tls";
import { ensurePki } from "../lib/certificates/pki.ts";
import { testServer } from "./harness.ts";

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

/** Tries new connections until `sees` holds for 16 in a row (a failed try counts as not). */
async function sixteenInARow(what: string, sees: () => Promise<boolean>): Promise<void> {
  let inARow = 0;
  for (let tries = 0; inARow < 16; tries++) {
    assert(tries < 400, `${what}: never 16 new connections in a row`);
    if (await sees().catch(() => false)) {
      inARow++;
    } else {
      inARow = 0;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

Deno.test("--workers=2: a changed --tls-cert-file pair is served by every thread", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-workers-certs-" });
  try {
    const first = await ensurePki({ dataDir: `${dir}/a`, sans: [], bindAddress: "127.0.0.1" });
    const second = await ensurePki({ dataDir: `${dir}/b`, sans: [], bindAddress: "127.0.0.1" });
    await Deno.writeTextFile(`${dir}/tls.crt`, first.servingCertPem);
    await Deno.writeTextFile(`${dir}/tls.key`, first.servingKeyPem);
    await using t = await testServer({
      workers: 2,
      tlsCertFile: `${dir}/tls.crt`,
      tlsPrivateKeyFile: `${dir}/tls.key`,
      certificateCheckIntervalMs: 100,
    });
    const before = await servedFingerprint(t.server.port);
    for (let i = 0; i < 8; i++) assertEquals(await servedFingerprint(t.server.port), before);
    await Deno.writeTextFile(`${dir}/tls.key`, second.servingKeyPem);
    await Deno.writeTextFile(`${dir}/tls.crt`, second.servingCertPem);
    await sixteenInARow(
      "the new pair",
      async () => (await servedFingerprint(t.server.port)) !== before,
    );
    // Requests go on over the new certificate, trusted through the second CA.
    const client = Deno.createHttpClient({ caCerts: [second.caCertPem] });
    try {
      for (let i = 0; i < 4; i++) {
        const res = await fetch(`${t.server.url}/version`, { client });
        assertEquals(res.status, 200);
        await res.body?.cancel();
      }
    } finally {
      client.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const DAY_MS = 86_400_000;

Deno.test("--workers=2: a renewed generated serving certificate is served by every thread", async () => {
  let now = Date.now();
  await using t = await testServer({
    workers: 2,
    clock: () => new Date(now),
    certificateCheckIntervalMs: 100,
  });
  const before = await servedFingerprint(t.server.port);
  for (let i = 0; i < 8; i++) assertEquals(await servedFingerprint(t.server.port), before);
  now += 340 * DAY_MS; // the one-year certificate now expires within 30 days
  await sixteenInARow(
    "the renewed certificate",
    async () => (await servedFingerprint(t.server.port)) !== before,
  );
  // Issued at the real time: back to it, or every check would renew again.
  now = Date.now();
  // A check that began before the clock went back may still renew once more, and a listener
  // being replaced can reset a connection (README): wait until the certificate holds still.
  let settled = await servedFingerprint(t.server.port).catch(() => "");
  await sixteenInARow("the certificate holding still", async () => {
    const fp = await servedFingerprint(t.server.port);
    const same = fp === settled;
    settled = fp;
    return same;
  });
  // The same CA: clients that trusted it before still do, on every thread.
  for (let i = 0; i < 8; i++) {
    const res = await t.request("GET", "/version");
    assertEquals(res.status, 200);
    await res.body?.cancel();
  }
});

const AUTHN = (anonymous: boolean) =>
  "apiVersion: apiserver.platform.io/v1beta1\nkind: AuthenticationConfiguration\n" +
  `anonymous:\n  enabled: ${anonymous}\n`;

/** An unauthenticated request on a connection of its own; its status. */
async function anonymousStatus(server: { url: string; caCertPem: string }): Promise<number> {
  const client = Deno.createHttpClient({ caCerts: [server.caCertPem] });
  try {
    const res = await fetch(`${server.url}/api/v1/namespaces`, { client });
    await res.body?.cancel();
    return res.status;
  } finally {
    client.close();
  }
}

Deno.test("--workers=2: a changed --authentication-config is in force on every thread", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-workers-authn-" });
  try {
    const file = `${dir}/authn.yaml`;
    await Deno.writeTextFile(file, AUTHN(false));
    await using t = await testServer({ workers: 2, authenticationConfigFile: file });
    for (let i = 0; i < 8; i++) assertEquals(await anonymousStatus(t.server), 401);
    // Anonymous requests on: authenticated as system:anonymous, then forbidden by RBAC.
    await Deno.writeTextFile(file, AUTHN(true));
    await sixteenInARow("anonymous access", async () => (await anonymousStatus(t.server)) === 403);
    await Deno.writeTextFile(file, AUTHN(false));
    await sixteenInARow(
      "anonymous access off",
      async () => (await anonymousStatus(t.server)) === 401,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
