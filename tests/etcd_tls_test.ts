/**
 * The etcd client against an etcd member that serves TLS and asks for client certificates
 * (`--client-cert-auth`), at an IP address (`https://127.0.0.1:…`, which grpc-js under Deno
 * could not reach before: the TLS layer refuses an IP as the SNI server name) and at a DNS name:
 * calls and the watch stream present the client certificate and check etcd's against the CA
 * and the address; a certificate not made for the address, or no client certificate, is
 * refused, and the error says where the client tried.
 */

import assert from "node:assert/strict";
import { EtcdClient, EtcdUnavailableError, prefixEnd } from "../lib/storage/etcd/client.ts";
import {
  etcdInstalled,
  freePort,
  requireEtcdUnderCi,
  spawnEtcd,
} from "../lib/storage/testing/etcd_member.ts";
import { ensurePki, issueClientCertificate } from "../lib/certificates/pki.ts";
import { EgressDialer } from "../lib/egress/mod.ts";
import {
  requireTinyproxyUnderCi,
  startTinyproxy,
  tinyproxyInstalled,
} from "../lib/egress/testing/tinyproxy.ts";

requireEtcdUnderCi("tests/etcd_tls_test.ts");
requireTinyproxyUnderCi("tests/etcd_tls_test.ts");

const enc = new TextEncoder();
const dec = new TextDecoder();

Deno.test({
  name:
    "etcd client over TLS with a client certificate: calls and watches work; without one, etcd refuses",
  ignore: !etcdInstalled || !tinyproxyInstalled,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "etcd-tls-" });
    const pki = await ensurePki({
      dataDir: dir,
      sans: ["127.0.0.1"],
      bindAddress: "127.0.0.1",
      logger: { info() {} },
    });
    const client = await issueClientCertificate({
      caCertPem: pki.caCertPem,
      caKeyPem: pki.caKeyPem,
      user: "root",
    });
    await Deno.writeTextFile(`${dir}/server.crt`, pki.servingCertPem);
    await Deno.writeTextFile(`${dir}/server.key`, pki.servingKeyPem);
    await Deno.writeTextFile(`${dir}/ca.crt`, pki.caCertPem);
    const port = freePort();
    const secureUrl = `https://127.0.0.1:${port}`;
    // The same member at another loopback address its certificate does not name.
    const otherIpUrl = `https://127.0.0.2:${freePort()}`;
    // A plain listener beside it, for the readiness probe only.
    const plainUrl = `http://127.0.0.1:${freePort()}`;
    const peerUrl = `http://127.0.0.1:${freePort()}`;
    const etcd = await spawnEtcd(
      [
        "--name=tls",
        `--data-dir=${dir}/data`,
        `--listen-client-urls=${secureUrl},${otherIpUrl},${plainUrl}`,
        `--advertise-client-urls=${secureUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=tls=${peerUrl}`,
        `--cert-file=${dir}/server.crt`,
        `--key-file=${dir}/server.key`,
        `--trusted-ca-file=${dir}/ca.crt`,
        "--client-cert-auth",
        "--log-level=warn",
      ],
      plainUrl,
      20_000,
    );
    try {
      const tls = {
        ca: enc.encode(pki.caCertPem),
        cert: enc.encode(client.certPem),
        key: enc.encode(client.keyPem),
      };
      let key = new Uint8Array();
      const c = await EtcdClient.connect([secureUrl], { tls });
      try {
        const stream = c.watchStream();
        const created = Promise.withResolvers<void>();
        const event = Promise.withResolvers<string>();
        stream.on("data", (res) => {
          if (res.created) created.resolve();
          for (const e of res.events) event.resolve(dec.decode(e.kv.value));
        });
        stream.on("error", (err) => event.reject(err));
        const prefix = enc.encode("/tls/");
        stream.write({ create_request: { key: prefix, range_end: prefixEnd(prefix) } });
        await created.promise;
        key = enc.encode("/tls/a");
        const res = await c.txn({
          compare: [{ key, target: "CREATE", result: "EQUAL", create_revision: 0 }],
          success: [{ request_put: { key, value: enc.encode("over TLS") } }],
          failure: [],
        });
        assert.equal(res.succeeded, true);
        assert.equal(dec.decode((await c.range({ key })).kvs[0].value), "over TLS");
        assert.equal(await event.promise, "over TLS");
        stream.cancel();
      } finally {
        c.close();
      }

      // By name: the certificate names localhost too.
      const byName = await EtcdClient.connect([`https://localhost:${port}`], { tls });
      try {
        assert.equal(dec.decode((await byName.range({ key })).kvs[0].value), "over TLS");
      } finally {
        byName.close();
      }

      const refused = async (url: string, t: typeof tls | { ca: Uint8Array }, why: RegExp) => {
        await assert.rejects(EtcdClient.connect([url], { tls: t, timeoutMs: 2_000 }), (err) => {
          assert.ok(err instanceof EtcdUnavailableError, String(err));
          assert.ok(err.message.startsWith(`Cannot reach etcd at ${url} (`), err.message);
          assert.match(err.message, why);
          return true;
        });
      };
      // A certificate for other addresses than the one dialled.
      await refused(otherIpUrl, tls, /\(https:\/\/127\.0\.0\.2:\d+: .*cert/i);
      // Trusting etcd's CA but without a client certificate.
      await refused(secureUrl, { ca: tls.ca }, /No connection established|certificate/i);

      // Through an egress proxy (tinyproxy): TLS with the client certificate rides the tunnel
      // (node:tls there, as Deno.startTls takes no client certificate), still checked.
      const otherPort = Number(new URL(otherIpUrl).port);
      await using proxy = await startTinyproxy({ connectPorts: [port, otherPort] });
      const dialer = new EgressDialer({
        etcd: { protocol: "HTTPConnect", proxy: { transport: "tcp", url: proxy.url } },
      });
      try {
        const route = (hostPort: string) => dialer.tcpRoute("etcd", hostPort);
        const proxied = await EtcdClient.connect([secureUrl], { tls, route });
        try {
          assert.equal(dec.decode((await proxied.range({ key })).kvs[0].value), "over TLS");
        } finally {
          proxied.close();
        }
        assert.match(await proxy.log(), new RegExp(`CONNECT 127\\.0\\.0\\.1:${port} `));
        await assert.rejects(
          EtcdClient.connect([otherIpUrl], { tls, route, timeoutMs: 2_000 }),
          (err) => {
            assert.ok(err instanceof EtcdUnavailableError, String(err));
            assert.match(err.message, /through the egress proxy .*127\.0\.0\.2.* cert/);
            return true;
          },
        );
      } finally {
        dialer.close();
      }
    } finally {
      await etcd.stop("SIGTERM");
      await Deno.remove(dir, { recursive: true });
    }
  },
});
