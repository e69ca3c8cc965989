/**
 * Egress of webhook calls (the `cluster` selection) end to end: a server started with
 * `--egress-selector-config-file` calls its admission and authorization webhooks through
 * Debian's tinyproxy (whose log shows each CONNECT) or a test-owned CONNECT proxy on a Unix
 * socket; a proxy that refuses the CONNECT fails the call as an unreachable webhook does, and
 * the server's log names the proxy. Without tinyproxy the tinyproxy tests skip, except under
 * CI=true where that fails.
 */

import { join } from "node:path";
import { stringify } from "yaml";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { testServer, tokenFile } from "./harness.ts";
import { egressConfigFile, recordingLogger, viaProxy } from "./egress_testdata.ts";
import { startTestWebhook } from "../lib/admission/webhook/webhook_testdata.ts";
import { startWebhook, webhookKubeconfig } from "../lib/auth/webhook_testdata.ts";
import { ensurePki } from "../lib/certificates/pki.ts";
import { silentLogger } from "../lib/api/log.ts";
import {
  requireTinyproxyUnderCi,
  startTinyproxy,
  tinyproxyInstalled,
} from "../lib/egress/testing/tinyproxy.ts";
import { startUdsConnectProxy } from "../lib/egress/testing/uds_connect_proxy.ts";

requireTinyproxyUnderCi("tests/egress_webhooks_test.ts");

const CM = "/api/v1/namespaces/default/configmaps";
const VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";

/** A validating webhook configuration for configmap creates, calling `url`. */
function validating(name: string, url: string, caBundle: string) {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name },
    webhooks: [{
      name: `${name}.example.com`,
      clientConfig: { url, caBundle },
      rules: [{
        operations: ["CREATE"],
        apiGroups: [""],
        apiVersions: ["v1"],
        resources: ["configmaps"],
      }],
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
      failurePolicy: "Fail",
    }],
  };
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

Deno.test({
  name: "egress cluster: admission and authorization webhooks are called through tinyproxy",
  ignore: !tinyproxyInstalled,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "platform-egress-authz-" });
    const pki = await ensurePki({
      dataDir: join(dir, "pki"),
      sans: [],
      bindAddress: "127.0.0.1",
      logger: silentLogger,
    });
    await using authzHook = startWebhook(pki);
    await using admissionHook = await startTestWebhook();
    await using proxy = await startTinyproxy({
      connectPorts: [portOf(authzHook.url), portOf(admissionHook.url)],
    });
    await using egress = await egressConfigFile({ cluster: viaProxy(proxy) });
    await using tokens = await tokenFile({ "carol-token": { name: "carol" } });
    const kubeconfig = join(dir, "authz.kubeconfig");
    await Deno.writeTextFile(kubeconfig, webhookKubeconfig(authzHook.url, pki.caCertPem));
    const authorizationConfigFile = join(dir, "authz.yaml");
    await Deno.writeTextFile(
      authorizationConfigFile,
      stringify({
        apiVersion: "apiserver.platform.io/v1beta1",
        kind: "AuthorizationConfiguration",
        authorizers: [{
          type: "Webhook",
          name: "policy",
          webhook: {
            timeout: "5s",
            authorizedTTL: "5m",
            unauthorizedTTL: "30s",
            subjectAccessReviewVersion: "v1",
            matchConditionSubjectAccessReviewVersion: "v1",
            failurePolicy: "Deny",
            connectionInfo: { type: "KubeConfigFile", kubeConfigFile: kubeconfig },
            matchConditions: [],
          },
        }],
      }),
    );
    try {
      await using ts = await testServer({
        egressSelectorConfigFile: egress.path,
        authorizationConfigFile,
        tokenAuthFile: tokens.path,
      });
      const made = await ts.json("POST", VWC, {
        body: validating("check", `${admissionHook.url}/check`, admissionHook.caBundle),
      });
      assertEquals(made.status, 201, JSON.stringify(made.body));
      // carol is no admin: the authorization webhook decides, then the admission webhook.
      const created = await ts.json("POST", CM, {
        token: "carol-token",
        body: { metadata: { name: "via-proxy" } },
      });
      assertEquals(created.status, 201, JSON.stringify(created.body));
      assertEquals(authzHook.received[0].body.spec, {
        user: "carol",
        groups: ["system:authenticated"],
        uid: "carol",
        resourceAttributes: {
          namespace: "default",
          verb: "create",
          version: "v1",
          resource: "configmaps",
        },
      } as unknown);
      assertEquals(admissionHook.received.map((r) => r.path), ["/check"]);
      const log = await proxy.log();
      assertMatch(log, new RegExp(`CONNECT 127\\.0\\.0\\.1:${portOf(authzHook.url)} `));
      assertMatch(log, new RegExp(`CONNECT 127\\.0\\.0\\.1:${portOf(admissionHook.url)} `));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "egress cluster: a CONNECT the proxy refuses fails the call as an unreachable webhook does; the log names the proxy",
  ignore: !tinyproxyInstalled,
  async fn() {
    await using hook = await startTestWebhook();
    // Allowed: some other port only, so tinyproxy answers 403 to the webhook's.
    await using proxy = await startTinyproxy({ connectPorts: [portOf(hook.url) + 1] });
    await using egress = await egressConfigFile({ cluster: viaProxy(proxy) });
    const { lines, logger } = recordingLogger();
    const refused = await (async () => {
      await using ts = await testServer({ egressSelectorConfigFile: egress.path, logger });
      await ts.json("POST", VWC, { body: validating("check", `${hook.url}/x`, hook.caBundle) });
      return await ts.json("POST", CM, { body: { metadata: { name: "refused" } } });
    })();
    const unreachable = await (async () => {
      await using ts = await testServer();
      const url = `https://127.0.0.1:${portOf(hook.url) + 1}/x`;
      await ts.json("POST", VWC, { body: validating("check", url, hook.caBundle) });
      return await ts.json("POST", CM, { body: { metadata: { name: "refused" } } });
    })();
    assertEquals(hook.received.length, 0);
    const shape = (r: { status: number; body: Record<string, unknown> }) => ({
      status: r.status,
      reason: r.body.reason,
      // The message up to the transport's own words.
      message: String(r.body.message).replace(
        /"https:\/\/127\.0\.0\.1:\d+\/x\?timeout=\d+s":.*/,
        "",
      ),
    });
    assertEquals(shape(refused), shape(unreachable));
    assertEquals(refused.status, 500);
    assertMatch(String(refused.body.message), /failed calling webhook "check\.example\.com"/);
    const line = lines.find((l) => l.includes(`CONNECT to 127.0.0.1:${portOf(hook.url)}`));
    assert(line !== undefined, lines.join("\n"));
    assertMatch(line, new RegExp(`WARN +egress cluster: proxy ${proxy.url} refused CONNECT`));
  },
});

Deno.test("egress cluster: HTTPConnect over uds reaches the webhook through the socket's proxy", async () => {
  await using hook = await startTestWebhook();
  await using proxy = await startUdsConnectProxy([portOf(hook.url)]);
  await using egress = await egressConfigFile({ cluster: viaProxy({ udsName: proxy.path }) });
  await using ts = await testServer({ egressSelectorConfigFile: egress.path });
  await ts.json("POST", VWC, { body: validating("check", `${hook.url}/uds`, hook.caBundle) });
  const created = await ts.json("POST", CM, { body: { metadata: { name: "via-uds" } } });
  assertEquals(created.status, 201, JSON.stringify(created.body));
  assertEquals(hook.received.map((r) => r.path), ["/uds"]);
  assertEquals(proxy.requests, [`CONNECT 127.0.0.1:${portOf(hook.url)} HTTP/1.1`]);
});

Deno.test({
  name: "egress cluster: audit events reach a plain-http:// audit webhook through tinyproxy",
  ignore: !tinyproxyInstalled,
  async fn() {
    const lists: { items: { requestURI: string }[] }[] = [];
    const receiver = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (req) => {
        lists.push(await req.json());
        return new Response("{}");
      },
    );
    const dir = await Deno.makeTempDir({ prefix: "platform-egress-audit-" });
    try {
      await using proxy = await startTinyproxy({ connectPorts: [receiver.addr.port] });
      await using egress = await egressConfigFile({ cluster: viaProxy(proxy) });
      const webhookConfigFile = join(dir, "audit.kubeconfig");
      await Deno.writeTextFile(
        webhookConfigFile,
        stringify({
          apiVersion: "v1",
          kind: "Config",
          clusters: [{
            name: "audit",
            cluster: { server: `http://127.0.0.1:${receiver.addr.port}/audit` },
          }],
          users: [{ name: "apiserver", user: {} }],
          contexts: [{ name: "audit", context: { cluster: "audit", user: "apiserver" } }],
          "current-context": "audit",
        }),
      );
      const policyFile = join(dir, "policy.yaml");
      await Deno.writeTextFile(
        policyFile,
        "apiVersion: audit.platform.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n",
      );
      await using ts = await testServer({
        egressSelectorConfigFile: egress.path,
        audit: { policyFile, webhookConfigFile, webhookMode: "blocking" },
      });
      const res = await ts.json("GET", `${CM}?audited=1`);
      assertEquals(res.status, 200);
      const uris = lists.flatMap((l) => l.items.map((e) => e.requestURI));
      assert(uris.includes(`${CM}?audited=1`), JSON.stringify(uris));
      assertMatch(await proxy.log(), new RegExp(`CONNECT 127\\.0\\.0\\.1:${receiver.addr.port} `));
    } finally {
      await receiver.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
