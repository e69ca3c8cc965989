/**
 * HTTPConnect over tcp to an `https://` proxy: the relay speaks TLS to the proxy with the
 * configured CA bundle and client certificate (spec 03's tlsConfig), the target's own TLS goes
 * end to end inside the tunnel.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createLogger, silentLogger } from "../api/mod.ts";
import { startTestWebhook } from "../admission/webhook/webhook_testdata.ts";
import { ensurePki, issueClientCertificate } from "../certificates/pki.ts";
import { EgressDialer } from "./dialer.ts";
import { startTlsConnectProxy } from "./testing/tls_connect_proxy.ts";

Deno.test("egress: an https:// proxy gets the configured client certificate and is verified by the CA bundle", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-egress-tls-" });
  try {
    const proxyPki = await ensurePki({
      dataDir: join(dir, "proxy"),
      sans: [],
      bindAddress: "127.0.0.1",
      logger: silentLogger,
    });
    const client = await issueClientCertificate({
      caCertPem: proxyPki.caCertPem,
      caKeyPem: proxyPki.caKeyPem,
      user: "platform-egress",
    });
    await using hook = await startTestWebhook();
    const hookPort = Number(new URL(hook.url).port);
    await using proxy = await startTlsConnectProxy({
      certPem: proxyPki.servingCertPem,
      keyPem: proxyPki.servingKeyPem,
      clientCaPem: proxyPki.caCertPem,
      allowedPorts: [hookPort],
    });
    const lines: string[] = [];
    const dialerWith = (caBundle: string | undefined) =>
      new EgressDialer({
        cluster: {
          protocol: "HTTPConnect",
          proxy: {
            transport: "tcp",
            url: proxy.url,
            tls: { caBundle, clientCert: client.certPem, clientKey: client.keyPem },
          },
        },
      }, { logger: createLogger("warn", (l) => lines.push(l)) });

    const dialer = dialerWith(proxyPki.caCertPem);
    const http = dialer.httpClientFactory("cluster")({ caCerts: [atob(hook.caBundle)] });
    try {
      const res = await fetch(`${hook.url}/tls`, { client: http, method: "POST", body: "{}" });
      assert.equal(res.status, 200);
      await res.body?.cancel();
      assert.deepEqual(proxy.requests, [`platform-egress CONNECT 127.0.0.1:${hookPort} HTTP/1.1`]);
    } finally {
      http.close();
      dialer.close();
    }

    // Without the proxy's CA its certificate is not trusted: the call fails, the log says why.
    const untrusting = dialerWith(undefined);
    const http2 = untrusting.httpClientFactory("cluster")({ caCerts: [atob(hook.caBundle)] });
    try {
      await assert.rejects(fetch(`${hook.url}/tls`, { client: http2 }));
      assert.ok(
        lines.some((l) => l.includes(`egress cluster: cannot reach proxy ${proxy.url}`)),
        lines.join("\n"),
      );
      assert.equal(hook.received.length, 1);
    } finally {
      http2.close();
      untrusting.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
