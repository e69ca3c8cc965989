/**
 * The dialer against real proxies: Debian's tinyproxy on loopback and a test-owned CONNECT
 * proxy on a Unix socket, in front of a real HTTPS (and a plain HTTP) server.
 */

import assert from "node:assert/strict";
import { createLogger } from "../api/mod.ts";
import { startTestWebhook } from "../admission/webhook/webhook_testdata.ts";
import { EgressDialer } from "./dialer.ts";
import { ConnectRelay } from "./relay.ts";
import {
  requireTinyproxyUnderCi,
  startTinyproxy,
  tinyproxyInstalled,
} from "./testing/tinyproxy.ts";
import { startUdsConnectProxy } from "./testing/uds_connect_proxy.ts";

requireTinyproxyUnderCi("lib/egress/dialer_test.ts");

/** A logger that keeps its lines. */
function recordingLogger() {
  const lines: string[] = [];
  return { lines, logger: createLogger("debug", (line) => lines.push(line)) };
}

/** What fetch rejects with, as the clients report it: the cause's message. */
async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    const cause = (err as Error).cause as Error | undefined;
    return cause?.message ?? (err as Error).message;
  }
  assert.fail("the call succeeded");
}

function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

Deno.test({
  name:
    "egress: HTTPConnect over tcp through tinyproxy: https calls tunnel, tinyproxy logs each CONNECT",
  ignore: !tinyproxyInstalled,
  async fn() {
    await using hook = await startTestWebhook();
    const port = Number(new URL(hook.url).port);
    await using proxy = await startTinyproxy({ connectPorts: [port] });
    const dialer = new EgressDialer({
      cluster: { protocol: "HTTPConnect", proxy: { transport: "tcp", url: proxy.url } },
    });
    const client = dialer.httpClientFactory("cluster")({ caCerts: [atob(hook.caBundle)] });
    try {
      const res = await fetch(`${hook.url}/hello`, {
        client,
        method: "POST",
        body: JSON.stringify({ request: { uid: "1" } }),
      });
      assert.equal(res.status, 200);
      assert.equal((await res.json()).response.allowed, true);
      assert.equal(hook.received[0].path, "/hello");
      assert.match(await proxy.log(), new RegExp(`CONNECT 127\\.0\\.0\\.1:${port} `));
    } finally {
      client.close();
      dialer.close();
    }
  },
});

Deno.test({
  name:
    "egress: a CONNECT tinyproxy refuses fails like an endpoint it cannot reach; the log names the proxy",
  ignore: !tinyproxyInstalled,
  async fn() {
    await using hook = await startTestWebhook();
    const port = Number(new URL(hook.url).port);
    await using proxy = await startTinyproxy({ connectPorts: [port + 1] });
    const { lines, logger } = recordingLogger();
    const dialer = new EgressDialer({
      cluster: { protocol: "HTTPConnect", proxy: { transport: "tcp", url: proxy.url } },
    }, { logger });
    const client = dialer.httpClientFactory("cluster")({ caCerts: [atob(hook.caBundle)] });
    try {
      const refused = await failure(fetch(`${hook.url}/x`, { client }));
      const unreachable = await failure(fetch(`https://127.0.0.1:${port + 1}/x`, { client }));
      assert.equal(refused.replace(/\(.*?\)/g, ""), unreachable.replace(/\(.*?\)/g, ""));
      assert.equal(hook.received.length, 0);
      const line = lines.find((l) => l.includes(`CONNECT to 127.0.0.1:${port}`));
      assert.ok(line, lines.join("\n"));
      assert.ok(line.includes(`egress cluster: proxy ${proxy.url} refused`), line);
      assert.ok(line.includes("403"), line);
    } finally {
      client.close();
      dialer.close();
    }
  },
});

Deno.test({
  name: "egress: a plain http:// URL goes through the proxy too, one request per tunnel",
  ignore: !tinyproxyInstalled,
  async fn() {
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (req) => new Response(`${req.method} ${new URL(req.url).pathname}`),
    );
    await using proxy = await startTinyproxy({ connectPorts: [server.addr.port] });
    const dialer = new EgressDialer({
      controlplane: { protocol: "HTTPConnect", proxy: { transport: "tcp", url: proxy.url } },
    });
    const client = dialer.httpClientFactory("controlplane")({});
    try {
      for (const path of ["/a", "/b?x=1"]) {
        const res = await fetch(`http://127.0.0.1:${server.addr.port}${path}`, { client });
        assert.equal(await res.text(), `GET ${path.split("?")[0]}`);
      }
      const log = await proxy.log();
      assert.equal(log.split(`CONNECT 127.0.0.1:${server.addr.port} `).length - 1, 2, log);
    } finally {
      client.close();
      dialer.close();
      await server.shutdown();
    }
  },
});

Deno.test("egress: HTTPConnect over uds: calls tunnel through the socket's proxy", async () => {
  await using hook = await startTestWebhook();
  const port = Number(new URL(hook.url).port);
  await using proxy = await startUdsConnectProxy([port]);
  const { lines, logger } = recordingLogger();
  const dialer = new EgressDialer({
    cluster: { protocol: "HTTPConnect", proxy: { transport: "uds", udsName: proxy.path } },
  }, { logger });
  const client = dialer.httpClientFactory("cluster")({ caCerts: [atob(hook.caBundle)] });
  try {
    const res = await fetch(`${hook.url}/uds`, { client, method: "POST", body: "{}" });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    assert.deepEqual(proxy.requests, [`CONNECT 127.0.0.1:${port} HTTP/1.1`]);
    const other = closedPort();
    await failure(fetch(`https://127.0.0.1:${other}/`, { client }));
    assert.ok(
      lines.some((l) =>
        l.includes(`proxy unix://${proxy.path} refused CONNECT to 127.0.0.1:${other}`)
      ),
      lines.join("\n"),
    );
  } finally {
    client.close();
    dialer.close();
  }
});

Deno.test("egress: a missing uds proxy is named in the log; the call fails", async () => {
  const { lines, logger } = recordingLogger();
  const dialer = new EgressDialer({
    cluster: {
      protocol: "HTTPConnect",
      proxy: { transport: "uds", udsName: "/nonexistent/p.sock" },
    },
  }, { logger });
  const client = dialer.httpClientFactory("cluster")({});
  try {
    await failure(fetch(`https://127.0.0.1:${closedPort()}/`, { client }));
    assert.ok(
      lines.some((l) => l.includes("cannot reach proxy unix:///nonexistent/p.sock")),
      lines.join("\n"),
    );
  } finally {
    client.close();
    dialer.close();
  }
});

Deno.test("egress: the relay serves only its own clients (407 without its password)", async () => {
  const relay = new ConnectRelay(
    { transport: "uds", udsName: "/nonexistent/p.sock" },
    "egress test",
    createLogger("error", () => {}),
  );
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: relay.port });
    await conn.write(new TextEncoder().encode("CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: x\r\n\r\n"));
    const buf = new Uint8Array(200);
    const n = await conn.read(buf);
    conn.close();
    assert.match(new TextDecoder().decode(buf.subarray(0, n ?? 0)), /^HTTP\/1\.1 407 /);
  } finally {
    relay.close();
  }
});

Deno.test("egress: Direct selections give clients as they are", () => {
  const dialer = new EgressDialer({});
  assert.deepEqual(dialer.connection("etcd"), { protocol: "Direct" });
  assert.equal(dialer.tcpRoute("etcd", "10.0.0.1:2379").via, undefined);
  dialer.httpClientFactory("cluster")({}).close();
  dialer.close();
});
