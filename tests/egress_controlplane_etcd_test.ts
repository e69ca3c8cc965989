/**
 * Egress of the `controlplane` and `etcd` selections end to end: OIDC discovery and the key
 * set of an issuer the test starts go through a CONNECT proxy on a Unix socket (a token of the
 * issuer then signs in); the etcd backend talks to a real etcd member through Debian's
 * tinyproxy (whose log shows the CONNECT). Without etcd or tinyproxy those tests skip, except
 * under CI=true where that fails.
 */

import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { testServer, WITHOUT_NAMESPACE_DEFAULTS } from "./harness.ts";
import { egressConfigFile, recordingLogger, viaProxy } from "./egress_testdata.ts";
import { startServer } from "../mod.ts";
import { EtcdUnavailableError } from "../lib/storage/mod.ts";
import {
  jwtAuthenticationConfig,
  now,
  sign,
  startIssuer,
} from "../lib/auth/oidc_issuer_testdata.ts";
import {
  etcdInstalled,
  requireEtcdUnderCi,
  startEtcdMember,
} from "../lib/storage/testing/etcd_member.ts";
import {
  requireTinyproxyUnderCi,
  startTinyproxy,
  tinyproxyInstalled,
} from "../lib/egress/testing/tinyproxy.ts";
import { startUdsConnectProxy } from "../lib/egress/testing/uds_connect_proxy.ts";

requireTinyproxyUnderCi("tests/egress_controlplane_etcd_test.ts");
requireEtcdUnderCi("tests/egress_controlplane_etcd_test.ts");

const WHOAMI = "/apis/authentication.platform.io/v1/selfsubjectreviews";

Deno.test("egress controlplane: OIDC discovery and keys go through the proxy; the issuer's token signs in", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-egress-oidc-" });
  try {
    const { issuer, pki, key } = await startIssuer(dir, "ES256", "k1");
    await using _issuer = issuer;
    const port = Number(new URL(issuer.url).port);
    await using proxy = await startUdsConnectProxy([port]);
    await using egress = await egressConfigFile({
      // The deprecated name of controlplane, accepted as it.
      master: viaProxy({ udsName: proxy.path }),
    });
    const authenticationConfigFile = join(dir, "authn.yaml");
    await Deno.writeTextFile(authenticationConfigFile, jwtAuthenticationConfig(issuer, pki, "p"));
    const { lines, logger } = recordingLogger();
    await using ts = await testServer({
      egressSelectorConfigFile: egress.path,
      authenticationConfigFile,
      logger,
    });
    assert(
      lines.some((l) =>
        l.includes('egressSelections[0].name: "master" is deprecated, use "controlplane"')
      ),
      lines.join("\n"),
    );
    const token = await sign(key, { iss: issuer.url, aud: "p", sub: "dora", exp: now() + 600 });
    const res = await ts.json("POST", WHOAMI, {
      token,
      body: { apiVersion: "authentication.platform.io/v1", kind: "SelfSubjectReview" },
    });
    assertEquals(res.status, 201, JSON.stringify(res.body));
    assertEquals(res.body.status.userInfo.username, "oidc:dora");
    assert(issuer.jwksFetches > 0);
    // Discovery and the key set: each connection a CONNECT through the socket's proxy.
    assert(proxy.requests.length > 0);
    for (const line of proxy.requests) assertEquals(line, `CONNECT 127.0.0.1:${port} HTTP/1.1`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "egress etcd: the etcd backend reaches etcd through tinyproxy",
  ignore: !etcdInstalled || !tinyproxyInstalled,
  async fn() {
    await using member = await startEtcdMember();
    const etcdPort = Number(new URL(member.clientUrl).port);
    await using proxy = await startTinyproxy({ connectPorts: [etcdPort] });
    await using egress = await egressConfigFile({ etcd: viaProxy(proxy) });
    await using ts = await testServer({
      storage: "etcd3",
      etcdServers: [member.clientUrl],
      controllers: WITHOUT_NAMESPACE_DEFAULTS,
      egressSelectorConfigFile: egress.path,
    });
    const created = await ts.json("POST", "/api/v1/namespaces/default/configmaps", {
      body: { metadata: { name: "in-etcd" }, data: { a: "1" } },
    });
    assertEquals(created.status, 201, JSON.stringify(created.body));
    const got = await ts.json("GET", "/api/v1/namespaces/default/configmaps/in-etcd");
    assertEquals(got.body.data, { a: "1" });
    assertMatch(await proxy.log(), new RegExp(`CONNECT 127\\.0\\.0\\.1:${etcdPort} `));
  },
});

Deno.test({
  name:
    "egress etcd: a proxy refusing the CONNECT is an etcd that cannot be reached; the log names the proxy",
  ignore: !tinyproxyInstalled,
  async fn() {
    const etcdPort = 2379;
    await using proxy = await startTinyproxy({ connectPorts: [etcdPort + 1] });
    await using egress = await egressConfigFile({ etcd: viaProxy(proxy) });
    const { lines, logger } = recordingLogger();
    let failure: unknown;
    try {
      const server = await startServer({
        storage: "etcd3",
        etcdServers: [`http://127.0.0.1:${etcdPort}`],
        egressSelectorConfigFile: egress.path,
        logger,
      });
      await server.close();
    } catch (err) {
      failure = err;
    }
    assert(failure instanceof EtcdUnavailableError, String(failure));
    assertMatch(failure.message, /Cannot reach etcd at http:\/\/127\.0\.0\.1:2379 /);
    assert(
      failure.message.includes(`2379 (through the egress proxy ${proxy.url}): `),
      failure.message,
    );
    // The reason names the configured proxy, not the local relay in front of it.
    assert(
      failure.message.includes(`the egress proxy ${proxy.url} gave no tunnel to 127.0.0.1:2379`),
      failure.message,
    );
    assert(
      lines.some((l) =>
        l.includes(`egress etcd: proxy ${proxy.url} refused CONNECT to 127.0.0.1:${etcdPort}`)
      ),
      lines.join("\n"),
    );
  },
});
