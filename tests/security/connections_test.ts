/**
 * Connections and time (issue 17): the server outlives clients that open more connections
 * than it has file descriptors, closes idle, silent and trickling connections, limits
 * connections per client, answers requests past their deadline with 504, keeps in-flight
 * limits fair between users, and stops on SIGTERM within its grace period.
 */

import assert from "node:assert/strict";
import { freePort, testServer, tokenFile } from "../harness.ts";
import { liveOutput } from "../kubectl.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves with how long (ms) until the peer closes `conn` (reads EOF or fails). */
async function closedAfter(conn: Deno.Conn, limitMs: number): Promise<number> {
  const start = Date.now();
  const buf = new Uint8Array(1024);
  const timer = setTimeout(() => conn.close(), limitMs);
  try {
    while ((await conn.read(buf)) !== null) { /* keep reading */ }
  } catch { /* reset or closed by the timer */ }
  clearTimeout(timer);
  try {
    conn.close();
  } catch { /* closed already */ }
  return Date.now() - start;
}

/**
 * A raw HTTP/1.1 request on `conn`; resolves with what was read once `done` holds of it
 * (by default: the response head is complete).
 */
async function rawRequest(
  conn: Deno.Conn,
  head: string,
  done = (text: string) => text.includes("\r\n\r\n"),
): Promise<string> {
  await conn.write(new TextEncoder().encode(head));
  const buf = new Uint8Array(64 * 1024);
  let text = "";
  while (!done(text)) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return text;
}

for (const clientCertAuth of [false, true]) {
  Deno.test(`a silent TCP connection, a silent TLS connection and trickled headers are closed after the header timeout${clientCertAuth ? " (client certificates on: the TLS front)" : ""}`, async () => {
    await using t = await testServer({
      clientCertAuth,
      connectionLimits: { headerTimeoutMs: 1000 },
    });
    const { port } = t.server;
    // Plain TCP that never starts TLS.
    const tcp = await Deno.connect({ hostname: "127.0.0.1", port });
    // TLS done, nothing sent.
    const tls = await Deno.connectTls({
      hostname: "127.0.0.1",
      port,
      caCerts: [t.server.caCertPem],
    });
    await tls.handshake();
    // A request head sent a byte at a time, never finished.
    const slow = await Deno.connectTls({
      hostname: "127.0.0.1",
      port,
      caCerts: [t.server.caCertPem],
    });
    let trickling = true;
    const trickle = (async () => {
      const head = new TextEncoder().encode(
        "GET /version HTTP/1.1\r\nHost: x\r\nX-Slow: " + "a".repeat(100),
      );
      for (const byte of head) {
        if (!trickling) return;
        try {
          await slow.write(new Uint8Array([byte]));
        } catch {
          return;
        }
        await sleep(100);
      }
    })();
    const [a, b, c] = await Promise.all([
      closedAfter(tcp, 10_000),
      closedAfter(tls, 10_000),
      closedAfter(slow, 10_000),
    ]);
    trickling = false;
    await trickle;
    for (const [what, ms] of [["TCP", a], ["TLS", b], ["trickled headers", c]] as const) {
      assert.ok(ms >= 900 && ms < 5000, `${what} closed after ${ms} ms (header timeout 1 s)`);
    }
    // The server still serves.
    assert.equal((await t.request("GET", "/version")).status, 200);
  });
}

Deno.test("a kept-alive connection is closed after the idle timeout, not while a watch streams", async () => {
  await using t = await testServer({ connectionLimits: { idleTimeoutMs: 1000 } });
  const opts = { hostname: "127.0.0.1", port: t.server.port, caCerts: [t.server.caCertPem] };
  const idle = await Deno.connectTls(opts);
  const res = await rawRequest(idle, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
  assert.match(res, /^HTTP\/1.1 200/);
  const idleMs = await closedAfter(idle, 10_000);
  assert.ok(idleMs >= 900 && idleMs < 5000, `idle connection closed after ${idleMs} ms`);

  const watching = await Deno.connectTls(opts);
  const head = await rawRequest(
    watching,
    "GET /api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=3 HTTP/1.1\r\n" +
      `Host: x\r\nAuthorization: Bearer ${t.server.adminToken}\r\n\r\n`,
  );
  assert.match(head, /^HTTP\/1.1 200/);
  // The watch ends at its timeoutSeconds (3 s); idle closing starts only after that.
  const watchMs = await closedAfter(watching, 15_000);
  assert.ok(watchMs >= 2500, `a streaming watch was cut after ${watchMs} ms`);
});

for (const clientCertAuth of [false, true]) {
  Deno.test(`connections over the per-client limit are closed at once; the others are served${clientCertAuth ? " (client certificates on: the TLS front)" : ""}`, async () => {
    await using t = await testServer({
      clientCertAuth,
      connectionLimits: { maxConnectionsPerClient: 4 },
    });
    const opts = { hostname: "127.0.0.1", port: t.server.port, caCerts: [t.server.caCertPem] };
    const held: Deno.TlsConn[] = [];
    for (let i = 0; i < 4; i++) {
      const c = await Deno.connectTls(opts);
      await c.handshake();
      held.push(c);
    }
    const fifth = await Deno.connect({ hostname: "127.0.0.1", port: t.server.port });
    const ms = await closedAfter(fifth, 5000);
    assert.ok(ms < 2000, `the fifth connection stayed open ${ms} ms`);
    // The four open ones still work.
    const res = await rawRequest(held[0], "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
    assert.match(res, /^HTTP\/1.1 200/);
    for (const c of held) c.close();
    await sleep(200);
    assert.equal((await t.request("GET", "/livez")).status, 200);
  });
}

Deno.test("a request past --request-timeout gets kube's 504 Timeout; ?timeout= may only shorten it", async () => {
  await using t = await testServer({ requestTimeoutMs: 1000 });
  const conn = await Deno.connectTls({
    hostname: "127.0.0.1",
    port: t.server.port,
    caCerts: [t.server.caCertPem],
  });
  // A body announced and never sent: the request cannot finish.
  const started = Date.now();
  const res = await rawRequest(
    conn,
    "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n" +
      `Authorization: Bearer ${t.server.adminToken}\r\nContent-Type: application/json\r\n` +
      "Content-Length: 1000\r\n\r\n{",
    (text) => text.includes("}"),
  );
  const ms = Date.now() - started;
  conn.close();
  assert.match(res, /^HTTP\/1.1 504/);
  const status = JSON.parse(
    res.slice(res.indexOf("\r\n\r\n") + 4).trim().split("\r\n").find((l) => l.startsWith("{"))!,
  );
  assert.equal(status.reason, "Timeout");
  assert.equal(
    status.message,
    "Timeout: request did not complete within requested timeout - context deadline exceeded",
  );
  assert.ok(ms >= 900 && ms < 5000, `answered after ${ms} ms`);

  const bad = await t.json("GET", "/api/v1/namespaces?timeout=soon");
  assert.equal(bad.status, 400);
  assert.match(bad.body.message, /invalid timeout/);
  // A future resourceVersion waits up to 3 s; ?timeout=200ms cuts it short.
  const t0 = Date.now();
  const short = await t.json("GET", "/api/v1/namespaces?resourceVersion=99999999&timeout=200ms");
  assert.equal(short.status, 504);
  assert.ok(Date.now() - t0 < 2000);
});

Deno.test("in-flight limits: 429 with Retry-After past the limit, and one user cannot take every seat", async () => {
  await using tokens = await tokenFile({
    "alice-token": { name: "alice", groups: ["readers"] },
    "bob-token": { name: "bob", groups: ["readers"] },
  });
  await using t = await testServer({ tokenAuthFile: tokens.path, maxRequestsInflight: 4 });
  const binding = await t.json(
    "POST",
    "/apis/rbac.authorization.platform.io/v1/clusterrolebindings",
    {
      body: {
        metadata: { name: "readers-view" },
        roleRef: { apiGroup: "rbac.authorization.platform.io", kind: "ClusterRole", name: "view" },
        subjects: [{ kind: "Group", name: "readers", apiGroup: "rbac.authorization.platform.io" }],
      },
    },
  );
  assert.equal(binding.status, 201);
  // Each of these waits ~3 s for a revision that never comes, holding a read-only seat.
  const slow = (token: string) =>
    t.request("GET", "/api/v1/namespaces/default/configmaps?resourceVersion=99999999", { token });
  const aliceSlow = [slow("alice-token"), slow("alice-token")];
  await sleep(300);
  // Alice alone may hold half of the 4 seats: her third request is refused.
  const refused = await t.request("GET", "/api/v1/namespaces/default/configmaps", {
    token: "alice-token",
  });
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get("Retry-After"), "1");
  const status = await refused.json();
  assert.equal(status.reason, "TooManyRequests");
  assert.equal(status.details.retryAfterSeconds, 1);
  // Bob still gets a seat.
  const bob = await t.request("GET", "/api/v1/namespaces/default/configmaps", {
    token: "bob-token",
  });
  assert.equal(bob.status, 200);
  await bob.body?.cancel();
  // The admin (system:masters) is never limited.
  const admin = await t.request("GET", "/api/v1/namespaces/default/configmaps");
  assert.equal(admin.status, 200);
  await admin.body?.cancel();
  for (const r of await Promise.all(aliceSlow)) await r.body?.cancel();
  // Seats are given back.
  const again = await t.request("GET", "/api/v1/namespaces/default/configmaps", {
    token: "alice-token",
  });
  assert.equal(again.status, 200);
  await again.body?.cancel();
});

Deno.test("a watch without timeoutSeconds ends between --min-request-timeout and twice that", async () => {
  await using t = await testServer({ minRequestTimeoutSeconds: 1 });
  const started = Date.now();
  const client = Deno.createHttpClient({ caCerts: [t.server.caCertPem] });
  const res = await fetch(`${t.server.url}/api/v1/namespaces/default/configmaps?watch=1`, {
    headers: { Authorization: `Bearer ${t.server.adminToken}` },
    client,
    signal: AbortSignal.timeout(10_000), // a watch the server does not end fails the test
  });
  assert.equal(res.status, 200);
  await res.text(); // ends when the server ends the watch
  client.close();
  const ms = Date.now() - started;
  assert.ok(ms >= 900 && ms < 4000, `the watch lasted ${ms} ms`);
});

/** Starts `platform serve` under `ulimit -n <files>`; resolves once it serves. */
async function serveWithFileLimit(files: number, args: string[]) {
  const dataDir = await Deno.makeTempDir({ prefix: "platform-fd-" });
  const port = freePort();
  const cmd = `ulimit -n ${files} && exec "$0" run --allow-all "$1" serve --storage memory ` +
    `--data-dir "$2" --secure-port "$3" ${args.join(" ")}`;
  const child = new Deno.Command("bash", {
    args: ["-c", cmd, Deno.execPath(), MAIN, dataDir, String(port)],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = liveOutput(child);
  await out.until(() => out.stderr().includes("serving on"), "serving on", 30_000);
  const ca = await Deno.readTextFile(`${dataDir}/pki/ca.crt`);
  const token = (await Deno.readTextFile(`${dataDir}/pki/admin.token`)).trim();
  const client = Deno.createHttpClient({ caCerts: [ca] });
  return {
    port,
    out,
    /** `bash` exec'd into the server: its pid is the server's. */
    child,
    get: (path: string) =>
      fetch(`https://127.0.0.1:${port}${path}`, {
        client,
        headers: { Authorization: `Bearer ${token}` },
      }),
    async [Symbol.asyncDispose]() {
      client.close();
      await out[Symbol.asyncDispose]();
      await Deno.remove(dataDir, { recursive: true });
    },
  };
}

async function openConnections(port: number, n: number): Promise<Deno.Conn[]> {
  const conns: Deno.Conn[] = [];
  for (let i = 0; i < n; i++) {
    try {
      conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    } catch {
      break;
    }
  }
  return conns;
}

for (
  const [name, args] of [["the default connection limit", []], [
    "a connection limit above the file limit (accept fails with EMFILE and is retried)",
    ["--max-connections=2000"],
  ]] as const
) {
  Deno.test(`more connections than the file limit (ulimit -n 256), ${name}: the server keeps serving`, async () => {
    await using s = await serveWithFileLimit(256, [...args]);
    const flood = await openConnections(s.port, 600);
    await sleep(500);
    assert.ok(s.out.running(), `the server exited: ${s.out.stderr()}`);
    for (const c of flood) c.close();
    // Once the flood is gone, requests are served again.
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      try {
        const res = await s.get("/api/v1/namespaces");
        status = res.status;
        await res.body?.cancel();
      } catch {
        await sleep(200);
      }
    }
    assert.equal(status, 200, `not serving after the flood: ${s.out.stderr()}`);
    assert.ok(s.out.running());
  });
}

Deno.test("SIGTERM stops the server within its grace period, a request hanging or not", async () => {
  await using s = await serveWithFileLimit(1024, ["--shutdown-timeout=1s"]);
  // A request whose body never comes.
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: s.port });
  await conn.write(new TextEncoder().encode("x"));
  const started = Date.now();
  s.child.kill("SIGTERM");
  const status = await s.out.status;
  conn.close();
  const ms = Date.now() - started;
  assert.equal(status.code, 0);
  assert.ok(ms < 10_000, `stopped after ${ms} ms`);
});
