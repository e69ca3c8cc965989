/**
 * `--workers=2` with client certificates: every thread has its own TLS front (a node:tls
 * server in a worker of that thread, listening on the secure port with SO_REUSEPORT) and its
 * own connection registry, so a certificate authenticates whichever thread the kernel gives
 * the connection to; a certificate of another CA does not, on any thread.
 */

import "reflect-metadata";
import { join } from "node:path";
import { startServer } from "../mod.ts";
import { silentLogger } from "../lib/api/log.ts";
import { ensurePki, issueClientCertificate } from "../lib/certificates/pki.ts";
import { assert, assertEquals } from "./assert.ts";
import { requestsByThread } from "./threads.ts";

const REVIEW = "/apis/authentication.platform.io/v1/selfsubjectreviews";

Deno.test("--workers=2: client certificates authenticate on every thread", async () => {
  const server = await startServer({
    storage: "memory",
    logger: silentLogger,
    clientCertAuth: true,
    workers: 2,
  });
  try {
    const ca = {
      caCertPem: await Deno.readTextFile(join(server.dataDir, "pki", "ca.crt")),
      caKeyPem: await Deno.readTextFile(join(server.dataDir, "pki", "ca.key")),
    };
    // An admin by certificate: its scrapes of /metrics show which threads served it.
    const alice = await issueClientCertificate({
      ...ca,
      user: "alice",
      groups: ["system:masters"],
    });
    let byThread = new Map<string, number>();
    for (let i = 0; i < 24; i++) {
      // One connection per round: the kernel picks the thread (and so the front).
      const client = Deno.createHttpClient({
        caCerts: [server.caCertPem],
        cert: alice.certPem,
        key: alice.keyPem,
      });
      try {
        const metrics = await fetch(server.url + "/metrics", { client });
        assertEquals(metrics.status, 200, `round ${i}: /metrics with alice's certificate`);
        byThread = requestsByThread(await metrics.text());
        const review = await fetch(server.url + REVIEW, {
          method: "POST",
          client,
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({
            apiVersion: "authentication.platform.io/v1",
            kind: "SelfSubjectReview",
          }),
        });
        const body = await review.json();
        assertEquals(review.status, 201, JSON.stringify(body));
        assertEquals(body.status.userInfo.username, "alice");
        assert(body.status.userInfo.groups.includes("system:masters"), JSON.stringify(body));
      } finally {
        client.close();
      }
    }
    // Both threads served certificate-authenticated requests (every request here is one).
    assertEquals(byThread.size, 2, `${[...byThread]}`);
    assert([...byThread.values()].every((n) => n > 0), `one thread served all: ${[...byThread]}`);

    // A certificate of another CA is not a user on any thread (401 Unauthorized).
    const otherCa = await otherAuthority();
    const mallory = await issueClientCertificate({
      ...otherCa,
      user: "mallory",
      groups: ["system:masters"],
    });
    for (let i = 0; i < 12; i++) {
      const client = Deno.createHttpClient({
        caCerts: [server.caCertPem],
        cert: mallory.certPem,
        key: mallory.keyPem,
      });
      try {
        const res = await fetch(server.url + "/metrics", { client });
        await res.body?.cancel();
        assertEquals(res.status, 401, `round ${i}: a foreign CA's certificate`);
      } finally {
        client.close();
      }
    }
  } finally {
    await server.close();
  }
});

/** A CA of its own (the PKI of a second data directory, removed at once). */
async function otherAuthority(): Promise<{ caCertPem: string; caKeyPem: string }> {
  const dir = await Deno.makeTempDir({ prefix: "platform-other-ca-" });
  try {
    const pki = await ensurePki({
      dataDir: dir,
      sans: [],
      bindAddress: "127.0.0.1",
      logger: { info: () => {} },
    });
    return { caCertPem: pki.caCertPem, caKeyPem: pki.caKeyPem };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
