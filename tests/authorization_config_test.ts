/**
 * `--authorization-config` as a user sees it over real HTTPS (and the real kubectl): the
 * configured authorizers are asked in order after system:masters; `AlwaysDeny` forbids what
 * RBAC would allow; a webhook (a fake one over HTTPS, started here) allows, denies outright or
 * leaves the decision to RBAC, receives kube's SubjectAccessReview, is only asked where its
 * match conditions hold, and when it is down its failure policy decides; an invalid file stops
 * `platform` with exit code 2.
 */

import { join } from "node:path";
import { stringify } from "yaml";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import {
  createAsAdmin,
  ownConfigMaps,
  runPlatform,
  type TestServer,
  testServer,
  tokenFile,
} from "./harness.ts";
import { kubectlFor, kubectlInstalled } from "./kubectl.ts";
import { ensurePki } from "../lib/certificates/pki.ts";
import { silentLogger } from "../lib/api/log.ts";
import {
  type Hook,
  type Json,
  review,
  startWebhook,
  webhookKubeconfig,
} from "../lib/auth/webhook_testdata.ts";

const RBAC = "/apis/rbac.authorization.platform.io/v1";
const GROUP = "rbac.authorization.platform.io";
/** What the server presents to the webhooks (their kubeconfig's user). */
const WEBHOOK_CLIENT_TOKEN = "apiserver-to-webhook";

/**
 * The policy of the fake webhook: alice may get configmaps (anywhere), secrets are denied to
 * everyone, everything else is left to the next authorizer.
 */
function policy(body: Json): Response {
  const spec = body.spec as Json;
  const resource = spec.resourceAttributes as Json | undefined;
  if (resource?.resource === "secrets") {
    return review({ allowed: false, denied: true, reason: "secrets are off limits" });
  }
  if (spec.user === "alice" && resource?.resource === "configmaps" && resource.verb === "get") {
    return review({ allowed: true, reason: "alice reads configmaps" });
  }
  return review({ allowed: false });
}

interface WebhookOptions {
  url: string;
  failurePolicy?: "Deny" | "NoOpinion";
  matchConditions?: string[];
}

/** A temp dir, token users alice and bob, the webhooks' PKI, and configuration files. */
async function authzFixture() {
  const dir = await Deno.makeTempDir({ prefix: "platform-authz-test-" });
  const pki = await ensurePki({
    dataDir: join(dir, "webhook-pki"),
    sans: [],
    bindAddress: "127.0.0.1",
    logger: silentLogger,
  });
  const tokens = await tokenFile({
    "alice-token": { name: "alice", uid: "alice-uid", groups: ["dev"] },
    "bob-token": { name: "bob" },
  });
  const hooks: Hook[] = [];
  let files = 0;
  return {
    dir,
    tokens,
    /** A fake webhook answering with {@link policy}. */
    startWebhook(): Hook {
      const hook = startWebhook(pki);
      hook.respond = policy;
      hooks.push(hook);
      return hook;
    },
    /** A `type: Webhook` entry naming the webhook at `url` through a kubeconfig file. */
    async webhook(o: WebhookOptions): Promise<Json> {
      const kubeconfig = `webhook-${++files}.kubeconfig`;
      await Deno.writeTextFile(
        join(dir, kubeconfig),
        webhookKubeconfig(o.url, pki.caCertPem, { token: WEBHOOK_CLIENT_TOKEN }),
      );
      return {
        type: "Webhook",
        name: "policy",
        webhook: {
          timeout: "3s",
          authorizedTTL: "5m",
          unauthorizedTTL: "30s",
          subjectAccessReviewVersion: "v1",
          matchConditionSubjectAccessReviewVersion: "v1",
          failurePolicy: o.failurePolicy ?? "NoOpinion",
          // Relative: resolved against the configuration file's directory.
          connectionInfo: { type: "KubeConfigFile", kubeConfigFile: kubeconfig },
          matchConditions: (o.matchConditions ?? []).map((expression) => ({ expression })),
        },
      };
    },
    /** Writes an AuthorizationConfiguration with `authorizers`; returns its path. */
    async config(authorizers: Json[]): Promise<string> {
      const path = join(dir, `authorization-config-${++files}.yaml`);
      await Deno.writeTextFile(
        path,
        stringify({
          apiVersion: "apiserver.platform.io/v1beta1",
          kind: "AuthorizationConfiguration",
          authorizers,
        }),
      );
      return path;
    },
    /** A server with the token users and the configuration at `path`. */
    server(authorizationConfigFile: string): Promise<TestServer> {
      return testServer({ tokenAuthFile: tokens.path, authorizationConfigFile });
    },
    async [Symbol.asyncDispose]() {
      for (const hook of hooks) await hook[Symbol.asyncDispose]();
      await tokens[Symbol.asyncDispose]();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Binds `clusterRole` to user `user`: in `namespace`, or cluster-wide without one. */
async function bind(ts: TestServer, user: string, clusterRole: string, namespace?: string) {
  const name = `${user}-${clusterRole}`;
  await createAsAdmin(
    ts,
    namespace ? `${RBAC}/namespaces/${namespace}/rolebindings` : `${RBAC}/clusterrolebindings`,
    {
      metadata: { name },
      roleRef: { apiGroup: GROUP, kind: "ClusterRole", name: clusterRole },
      subjects: [{ kind: "User", apiGroup: GROUP, name: user }],
    },
  );
}

const CM = (ns: string, name = "") => `/api/v1/namespaces/${ns}/configmaps${name && `/${name}`}`;
const SECRET = (ns: string, name: string) => `/api/v1/namespaces/${ns}/secrets/${name}`;

// ---------------------------------------------------------------------------------------
// AlwaysDeny

Deno.test("authorization config: AlwaysDeny forbids what RBAC grants; system:masters still may", async () => {
  await using fx = await authzFixture();
  await using ts = await fx.server(await fx.config([{ type: "AlwaysDeny", name: "deny" }]));
  await bind(ts, "bob", "view", "default");
  await createAsAdmin(ts, CM("default"), { metadata: { name: "settings" } });

  const bob = await ts.json("GET", CM("default"), { token: "bob-token" });
  assertEquals(bob.status, 403);
  assertEquals(bob.body.reason, "Forbidden");
  assertEquals(
    bob.body.message,
    'configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" ' +
      'in the namespace "default": Everything is forbidden.',
  );
  // Even what every signed-in user may do elsewhere (system:basic-user) is forbidden.
  const whoami = await ts.json("POST", "/apis/authentication.platform.io/v1/selfsubjectreviews", {
    token: "bob-token",
    body: { apiVersion: "authentication.platform.io/v1", kind: "SelfSubjectReview" },
  });
  assertEquals(whoami.status, 403);

  const admin = await ts.json("GET", CM("default"));
  assertEquals(admin.status, 200);
  assertEquals(ownConfigMaps(admin.body.items).map((i: Json) => (i.metadata as Json).name), [
    "settings",
  ]);
  await createAsAdmin(ts, CM("default"), { metadata: { name: "more" } });
});

Deno.test("authorization config: AlwaysDeny has no opinion, so an RBAC after it decides", async () => {
  await using fx = await authzFixture();
  await using ts = await fx.server(
    await fx.config([{ type: "AlwaysDeny", name: "deny" }, { type: "RBAC", name: "rbac" }]),
  );
  assertEquals((await ts.json("GET", CM("default"), { token: "bob-token" })).status, 403);
  await bind(ts, "bob", "view", "default");
  assertEquals((await ts.json("GET", CM("default"), { token: "bob-token" })).status, 200);
});

// ---------------------------------------------------------------------------------------
// A webhook before RBAC

Deno.test({
  name: "authorization config: a webhook allows, denies or leaves the decision to RBAC",
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  await using fx = await authzFixture();
  const hook = fx.startWebhook();
  await using ts = await fx.server(
    await fx.config([await fx.webhook({ url: hook.url }), { type: "RBAC", name: "rbac" }]),
  );
  await createAsAdmin(ts, CM("default"), {
    metadata: { name: "settings" },
    data: { color: "blue" },
  });
  await createAsAdmin(ts, "/api/v1/namespaces/default/secrets", {
    metadata: { name: "password" },
    stringData: { password: "hunter2" },
  });

  await t.step("the webhook's allow is enough: RBAC grants alice nothing", async () => {
    const alice = await ts.json("GET", CM("default", "settings"), { token: "alice-token" });
    assertEquals(alice.status, 200, JSON.stringify(alice.body));
    assertEquals(alice.body.data, { color: "blue" });
    // Only get: the webhook has no opinion on list, and RBAC says no.
    const list = await ts.json("GET", CM("default"), { token: "alice-token" });
    assertEquals(list.status, 403);
    assertEquals(
      list.body.message,
      'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" ' +
        'in the namespace "default"',
    );
    // Nor is bob allowed.
    const bob = await ts.json("GET", CM("default", "settings"), { token: "bob-token" });
    assertEquals(bob.status, 403);
  });

  await t.step("the webhook receives kube's SubjectAccessReview v1", () => {
    const received = hook.received.find((r) =>
      (r.body.spec as Json).user === "alice" &&
      ((r.body.spec as Json).resourceAttributes as Json | undefined)?.verb === "get"
    );
    assert(received, JSON.stringify(hook.received.map((r) => r.body)));
    assertEquals(received.body, {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: "alice",
        groups: ["dev", "system:authenticated"],
        uid: "alice-uid",
        resourceAttributes: {
          namespace: "default",
          verb: "get",
          version: "v1",
          resource: "configmaps",
          name: "settings",
        },
      },
    });
    assertEquals(received.authorization, `Bearer ${WEBHOOK_CLIENT_TOKEN}`);
    assertEquals(received.path, "/authorize");
    // system:masters is allowed before any configured authorizer: the admin is never asked.
    assert(hook.received.every((r) => (r.body.spec as Json).user !== "platform-admin"));
  });

  await t.step("the webhook's explicit deny wins over what RBAC allows", async () => {
    await bind(ts, "alice", "edit", "default");
    const secret = await ts.json("GET", SECRET("default", "password"), { token: "alice-token" });
    assertEquals(secret.status, 403);
    assertEquals(
      secret.body.message,
      'secrets "password" is forbidden: User "alice" cannot get resource "secrets" in API ' +
        'group "" in the namespace "default": secrets are off limits',
    );
    // system:masters comes before the webhook: the admin still reads it.
    assertEquals((await ts.json("GET", SECRET("default", "password"))).status, 200);
    // Where the webhook has no opinion, the new binding now counts.
    assertEquals((await ts.json("GET", CM("default"), { token: "alice-token" })).status, 200);
  });

  await t.step("no opinion falls through: RBAC decides on namespaces", async () => {
    const asked = hook.received.length;
    const before = await ts.json("GET", "/api/v1/namespaces", { token: "alice-token" });
    assertEquals(before.status, 403);
    assertMatch(before.body.message, /User "alice" cannot list resource "namespaces"/);
    assertEquals(hook.received.length, asked + 1, "the webhook was asked first");
    await createAsAdmin(ts, `${RBAC}/clusterroles`, {
      metadata: { name: "namespace-reader" },
      rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["list"] }],
    });
    await bind(ts, "alice", "namespace-reader");
    const after = await ts.json("GET", "/api/v1/namespaces", { token: "alice-token" });
    assertEquals(after.status, 200);
  });

  await t.step({
    name: "kubectl auth can-i for alice reflects the webhook",
    ignore: !kubectlInstalled,
    fn: async () => {
      await using k = await kubectlFor(ts.server);
      const canI = async (...args: string[]) =>
        (await k.kubectl(["--token", "alice-token", "auth", "can-i", ...args])).stdout;
      // Allowed by the webhook alone (alice's RBAC binding is in default only).
      assertEquals(await canI("get", "configmaps", "-n", "kube-public"), "yes\n");
      assertEquals(await canI("list", "configmaps", "-n", "kube-public"), "no\n");
      // Denied by the webhook although RBAC (edit) would allow; kubectl shows its reason.
      assertEquals(await canI("get", "secrets"), "no - secrets are off limits\n");
      // Left to RBAC.
      assertEquals(await canI("list", "configmaps"), "yes\n");
      assertEquals(await canI("delete", "namespaces"), "no\n");
      const get = await k.kubectl(["--token", "alice-token", "get", "secret", "password"]);
      assertEquals(get.code, 1);
      assertMatch(get.stderr, /Error from server \(Forbidden\): .*: secrets are off limits\n$/);
    },
  });
});

Deno.test("authorization config: the webhook is asked only where its match conditions hold", async () => {
  await using fx = await authzFixture();
  const hook = fx.startWebhook();
  await using ts = await fx.server(
    await fx.config([
      await fx.webhook({
        url: hook.url,
        matchConditions: [
          "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'webhooked'",
        ],
      }),
      { type: "RBAC", name: "rbac" },
    ]),
  );
  await createAsAdmin(ts, "/api/v1/namespaces", { metadata: { name: "webhooked" } });
  for (const ns of ["default", "webhooked"]) {
    await createAsAdmin(ts, CM(ns), { metadata: { name: "settings" } });
  }

  const outside = await ts.json("GET", CM("default", "settings"), { token: "alice-token" });
  assertEquals(outside.status, 403, "RBAC alone decides outside webhooked");
  assertEquals((await ts.json("GET", "/api", { token: "alice-token" })).status, 200);
  assertEquals((await ts.json("GET", "/version", { token: "alice-token" })).status, 200);
  assertEquals(hook.received.length, 0, "not asked outside the namespace nor for paths");

  const inside = await ts.json("GET", CM("webhooked", "settings"), { token: "alice-token" });
  assertEquals(inside.status, 200);
  assertEquals(hook.received.length, 1);
  assertEquals(
    ((hook.received[0].body.spec as Json).resourceAttributes as Json).namespace,
    "webhooked",
  );
});

Deno.test("authorization config: a webhook that is down gets its failure policy", async () => {
  await using fx = await authzFixture();
  const down = fx.startWebhook();
  const url = down.url;
  await down[Symbol.asyncDispose]();

  {
    await using ts = await fx.server(
      await fx.config([
        await fx.webhook({ url, failurePolicy: "Deny" }),
        { type: "RBAC", name: "rbac" },
      ]),
    );
    await bind(ts, "alice", "view", "default");
    const alice = await ts.json("GET", CM("default"), { token: "alice-token" });
    assertEquals(alice.status, 403);
    assertEquals(
      alice.body.message,
      'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" ' +
        'in the namespace "default": authorization webhook "policy" failed',
    );
    assertEquals((await ts.json("GET", CM("default"))).status, 200, "system:masters first");
  }
  {
    await using ts = await fx.server(
      await fx.config([
        await fx.webhook({ url, failurePolicy: "NoOpinion" }),
        { type: "RBAC", name: "rbac" },
      ]),
    );
    await bind(ts, "alice", "view", "default");
    assertEquals((await ts.json("GET", CM("default"), { token: "alice-token" })).status, 200);
    assertEquals((await ts.json("GET", CM("kube-public"), { token: "alice-token" })).status, 403);
  }
});

// ---------------------------------------------------------------------------------------
// Invalid files

Deno.test("authorization config: an invalid file stops platform with exit code 2", async () => {
  await using fx = await authzFixture();
  const entry = await fx.webhook({ url: "https://127.0.0.1:1/authorize" });
  (entry.webhook as Json).timeout = "45s";
  const path = await fx.config([entry, { type: "RBAC", name: "rbac" }]);
  const expected = `platform: ${path}: authorizers[0].webhook.timeout: "45s" must be > 0s and ` +
    "<= 30s\n";

  const dataDir = join(fx.dir, "data");
  const serve = await runPlatform(
    "serve",
    "--authorization-config",
    path,
    "--data-dir",
    dataDir,
    "--secure-port",
    "0",
  );
  assertEquals(serve.code, 2, serve.stderr);
  assertEquals(serve.stderr, expected);
  let exists = true;
  await Deno.stat(dataDir).catch(() => exists = false);
  assert(!exists, "the data directory was created");

  const check = await runPlatform("check-config", "--authorization-config", path);
  assertEquals([check.code, check.stderr], [2, expected]);
});
