import assert from "node:assert/strict";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { join } from "node:path";
import { stringify } from "yaml";
import { ensurePki, issueClientCertificate } from "../certificates/pki.ts";
import { loadAuthorizationConfig } from "./authorization_config.ts";
import type { Attributes } from "./authorizer.ts";
import { WebhookAuthorizer } from "./webhook_authorizer.ts";
import { type Json, review, startWebhook, webhookKubeconfig } from "./webhook_testdata.ts";

const TOKEN = "s3cret-token";

const podRead: Attributes = {
  user: {
    username: "alice",
    uid: "u-1",
    groups: ["dev", "system:authenticated"],
    extra: { "example.io/team": ["blue", "green"] },
  },
  verb: "get",
  resourceRequest: true,
  namespace: "guarded",
  apiGroup: "apps",
  apiVersion: "v1",
  resource: "deployments",
  subresource: "scale",
  name: "web",
};

const healthz: Attributes = {
  user: { username: "bob", groups: [] },
  verb: "get",
  resourceRequest: false,
  path: "/healthz",
};

/** Waits `ms`, or less when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      done();
    }, { once: true });
  });
}

interface Options {
  url: string;
  /** The kubeconfig's user. @default a bearer token */
  user?: Json;
  timeout?: string;
  failurePolicy?: "Deny" | "NoOpinion";
  subjectAccessReviewVersion?: "v1" | "v1beta1";
  matchConditions?: string[];
}

/** A temp dir with the cluster PKI; `authorizer()` loads a configuration naming a webhook. */
async function fixture() {
  const dir = await Deno.makeTempDir({ prefix: "webhook-authorizer-test-" });
  const pki = await ensurePki({
    dataDir: join(dir, "data"),
    sans: [],
    bindAddress: "127.0.0.1",
    logger: { info: () => {} },
  });
  const clock = { now: 0 };
  const made: WebhookAuthorizer[] = [];
  return {
    pki,
    clock,
    /** A WebhookAuthorizer loaded through the configuration file, as the server does. */
    async authorizer(o: Options): Promise<WebhookAuthorizer> {
      await Deno.writeTextFile(
        join(dir, "webhook.kubeconfig"),
        webhookKubeconfig(o.url, pki.caCertPem, o.user ?? { token: TOKEN }),
      );
      await Deno.writeTextFile(
        join(dir, "authz.yaml"),
        stringify({
          apiVersion: "apiserver.platform.io/v1beta1",
          kind: "AuthorizationConfiguration",
          authorizers: [{
            type: "Webhook",
            name: "guard",
            webhook: {
              timeout: o.timeout ?? "5s",
              authorizedTTL: "5m",
              unauthorizedTTL: "30s",
              subjectAccessReviewVersion: o.subjectAccessReviewVersion ?? "v1",
              matchConditionSubjectAccessReviewVersion: "v1",
              failurePolicy: o.failurePolicy ?? "Deny",
              connectionInfo: { type: "KubeConfigFile", kubeConfigFile: "webhook.kubeconfig" },
              matchConditions: (o.matchConditions ?? []).map((expression) => ({ expression })),
            },
          }],
        }),
      );
      const cfg = await loadAuthorizationConfig("authz.yaml", { cwd: dir });
      const entry = cfg.authorizers[0];
      assert.ok(entry.type === "Webhook");
      const authorizer = new WebhookAuthorizer({
        name: entry.name,
        config: entry.webhook,
        now: () => clock.now,
      });
      made.push(authorizer);
      return authorizer;
    },
    async [Symbol.asyncDispose]() {
      for (const a of made) a.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** A fixture with a running Deno.serve webhook. */
async function withWebhook() {
  const fx = await fixture();
  const hook = startWebhook(fx.pki);
  return {
    fx,
    hook,
    async [Symbol.asyncDispose]() {
      await hook[Symbol.asyncDispose]();
      await fx[Symbol.asyncDispose]();
    },
  };
}

// ---------------------------------------------------------------------------------------
// Decisions

Deno.test("allowed, denied and neither become Allow, Deny and NoOpinion", async () => {
  await using t = await withWebhook();
  const authorizer = await t.fx.authorizer({ url: t.hook.url });

  t.hook.respond = () => review({ allowed: true, reason: "team blue may" });
  assert.deepStrictEqual(await authorizer.authorize(podRead), {
    decision: "Allow",
    reason: "team blue may",
  });
  t.hook.respond = () => review({ allowed: false, denied: true, reason: "frozen" });
  assert.deepStrictEqual(await authorizer.authorize({ ...podRead, verb: "delete" }), {
    decision: "Deny",
    reason: "frozen",
  });
  t.hook.respond = () =>
    review({ allowed: false, reason: "not mine", evaluationError: "policy missing" });
  assert.deepStrictEqual(await authorizer.authorize({ ...podRead, verb: "patch" }), {
    decision: "NoOpinion",
    reason: "not mine",
    evaluationError: "policy missing",
  });
  t.hook.respond = () => review({ allowed: true, denied: true });
  assert.deepStrictEqual(await authorizer.authorize({ ...podRead, verb: "list" }), {
    decision: "Deny",
    evaluationError: "webhook subject access review returned both allow and deny response",
  });
  assert.equal(t.hook.received.length, 4);
  assert.ok(t.hook.received.every((r) => r.authorization === `Bearer ${TOKEN}`));
  assert.ok(t.hook.received.every((r) => r.path === "/authorize"));
});

Deno.test("the webhook receives kube's SubjectAccessReview v1", async () => {
  await using t = await withWebhook();
  const authorizer = await t.fx.authorizer({ url: t.hook.url });
  await authorizer.authorize(podRead);
  await authorizer.authorize(healthz);
  assert.deepStrictEqual(t.hook.received.map((r) => r.body), [
    {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: "alice",
        groups: ["dev", "system:authenticated"],
        uid: "u-1",
        extra: { "example.io/team": ["blue", "green"] },
        resourceAttributes: {
          namespace: "guarded",
          verb: "get",
          group: "apps",
          version: "v1",
          resource: "deployments",
          subresource: "scale",
          name: "web",
        },
      },
    },
    {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: { user: "bob", nonResourceAttributes: { path: "/healthz", verb: "get" } },
    },
  ]);
});

Deno.test("v1beta1 reviews spell groups as group", async () => {
  await using t = await withWebhook();
  const authorizer = await t.fx.authorizer({
    url: t.hook.url,
    subjectAccessReviewVersion: "v1beta1",
  });
  const core = { ...podRead, apiGroup: "", subresource: undefined, name: undefined };
  await authorizer.authorize(core);
  assert.deepStrictEqual(t.hook.received[0].body, {
    apiVersion: "authorization.k8s.io/v1beta1",
    kind: "SubjectAccessReview",
    spec: {
      user: "alice",
      group: ["dev", "system:authenticated"],
      uid: "u-1",
      extra: { "example.io/team": ["blue", "green"] },
      resourceAttributes: {
        namespace: "guarded",
        verb: "get",
        version: "v1",
        resource: "deployments",
      },
    },
  });
});

Deno.test("rulesFor is incomplete and lists nothing", async () => {
  await using t = await withWebhook();
  const authorizer = await t.fx.authorizer({ url: t.hook.url });
  assert.deepStrictEqual(await authorizer.rulesFor(podRead.user, "default"), {
    resourceRules: [],
    nonResourceRules: [],
    incomplete: true,
    evaluationError: "webhook authorizer does not support user rule resolution",
  });
});

// ---------------------------------------------------------------------------------------
// Failures and the failure policy

Deno.test("a slow webhook is given up after the timeout; the failure policy answers", async () => {
  await using t = await withWebhook();
  t.hook.respond = async () => {
    await sleep(3000, t.hook.stopping.signal);
    return review({ allowed: true });
  };
  for (const failurePolicy of ["Deny", "NoOpinion"] as const) {
    const authorizer = await t.fx.authorizer({ url: t.hook.url, timeout: "300ms", failurePolicy });
    const start = performance.now();
    const result = await authorizer.authorize(podRead);
    const took = performance.now() - start;
    assert.ok(took >= 250 && took < 1500, `took ${took}ms`);
    assert.deepStrictEqual(result, {
      decision: failurePolicy,
      reason: 'authorization webhook "guard" failed',
      evaluationError: 'authorization webhook "guard": no answer within 0.3s',
    });
  }
});

Deno.test("malformed answers get the failure policy, under both policies", async () => {
  await using t = await withWebhook();
  const cases: [() => Response, string][] = [
    [() => new Response("<html>ok</html>"), "the answer is not JSON"],
    [() => new Response("oops", { status: 500 }), "answered HTTP 500"],
    [() => new Response("{}", { status: 403 }), "answered HTTP 403"],
    [() => Response.json([1]), "the answer is not a JSON object"],
    [
      () => review({ allowed: true }, "TokenReview"),
      'the answer is not a SubjectAccessReview (kind "TokenReview")',
    ],
    [
      () => Response.json({ apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview" }),
      "the answer has no status",
    ],
    [() => review({ allowed: "yes" }), "the answer's status.allowed is not a boolean"],
    [() => review({ allowed: false, reason: 7 }), "the answer's status.reason is not a string"],
  ];
  for (const failurePolicy of ["Deny", "NoOpinion"] as const) {
    const authorizer = await t.fx.authorizer({ url: t.hook.url, failurePolicy });
    for (const [respond, cause] of cases) {
      t.hook.respond = respond;
      assert.deepStrictEqual(await authorizer.authorize(podRead), {
        decision: failurePolicy,
        reason: 'authorization webhook "guard" failed',
        evaluationError: `authorization webhook "guard": ${cause}`,
      });
    }
  }
});

Deno.test("an unreachable webhook gets the failure policy and no credential is shown", async () => {
  await using t = await withWebhook();
  const url = t.hook.url;
  await t.hook.server.shutdown();
  const authorizer = await t.fx.authorizer({ url, failurePolicy: "NoOpinion" });
  const result = await authorizer.authorize(podRead);
  assert.equal(result.decision, "NoOpinion");
  assert.match(result.evaluationError!, /^authorization webhook "guard": request failed: /);
  assert.ok(!JSON.stringify(result).includes(TOKEN));
});

// ---------------------------------------------------------------------------------------
// Caching

Deno.test("answers are cached per review: allowed for authorizedTTL, others for unauthorizedTTL", async () => {
  await using t = await withWebhook();
  t.hook.respond = (body) =>
    review((body.spec as Json).user === "alice" ? { allowed: true } : { denied: true });
  const authorizer = await t.fx.authorizer({ url: t.hook.url });
  const mallory = { ...podRead, user: { username: "mallory", groups: [] } };
  const calls = () => t.hook.received.length;

  assert.equal((await authorizer.authorize(podRead)).decision, "Allow");
  assert.equal((await authorizer.authorize(mallory)).decision, "Deny");
  assert.equal(calls(), 2);
  assert.equal((await authorizer.authorize(podRead)).decision, "Allow");
  assert.equal((await authorizer.authorize(mallory)).decision, "Deny");
  assert.equal(calls(), 2, "both answers come from the cache");

  // Any difference in the review is another entry.
  await authorizer.authorize({ ...podRead, name: "other" });
  assert.equal(calls(), 3);

  t.fx.clock.now += 30_000; // unauthorizedTTL: the denial expires, the allowance stays
  await authorizer.authorize(mallory);
  await authorizer.authorize(podRead);
  assert.equal(calls(), 4);
  assert.equal(
    t.hook.received[3].body.spec && (t.hook.received[3].body.spec as Json).user,
    "mallory",
  );

  t.fx.clock.now += 270_000; // authorizedTTL (5m) since the first allowance
  await authorizer.authorize(podRead);
  assert.equal(calls(), 5);
});

Deno.test("failures are not cached", async () => {
  await using t = await withWebhook();
  const authorizer = await t.fx.authorizer({ url: t.hook.url });
  t.hook.respond = () => new Response("down", { status: 503 });
  assert.equal((await authorizer.authorize(podRead)).decision, "Deny");
  t.hook.respond = () => review({ allowed: true });
  assert.equal((await authorizer.authorize(podRead)).decision, "Allow");
  assert.equal(t.hook.received.length, 2);
});

// ---------------------------------------------------------------------------------------
// Match conditions

Deno.test("match conditions: the webhook is asked only when all hold", async () => {
  await using t = await withWebhook();
  const authorizer = await t.fx.authorizer({
    url: t.hook.url,
    matchConditions: [
      "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'guarded'",
      "!('system:masters' in request.groups)",
    ],
  });
  assert.deepStrictEqual(await authorizer.authorize({ ...podRead, namespace: "open" }), {
    decision: "NoOpinion",
  });
  assert.deepStrictEqual(await authorizer.authorize(healthz), { decision: "NoOpinion" });
  const admin = { ...podRead, user: { ...podRead.user, groups: ["system:masters"] } };
  assert.deepStrictEqual(await authorizer.authorize(admin), { decision: "NoOpinion" });
  assert.equal(t.hook.received.length, 0);
  assert.equal((await authorizer.authorize(podRead)).decision, "Allow");
  assert.equal(t.hook.received.length, 1);
});

Deno.test("match conditions: an evaluation error gets the failure policy; a false wins", async () => {
  await using t = await withWebhook();
  const failing = "request.extra['missing'][0] == 'x'";
  const deny = await t.fx.authorizer({ url: t.hook.url, matchConditions: [failing] });
  const result = await deny.authorize(podRead);
  assert.equal(result.decision, "Deny");
  assert.equal(result.reason, 'authorization webhook "guard" failed');
  assert.ok(
    result.evaluationError?.startsWith(
      `authorization webhook "guard": match condition ${JSON.stringify(failing)}: `,
    ),
    result.evaluationError,
  );
  const noOpinion = await t.fx.authorizer({
    url: t.hook.url,
    failurePolicy: "NoOpinion",
    matchConditions: [failing],
  });
  assert.equal((await noOpinion.authorize(podRead)).decision, "NoOpinion");

  const falseWins = await t.fx.authorizer({
    url: t.hook.url,
    matchConditions: [failing, "request.user == 'nobody'"],
  });
  assert.deepStrictEqual(await falseWins.authorize(podRead), { decision: "NoOpinion" });
  assert.equal(t.hook.received.length, 0);
});

// ---------------------------------------------------------------------------------------
// Client certificates

Deno.test("the kubeconfig's client certificate authenticates the server to the webhook", async () => {
  await using fx = await fixture();
  const subjects: string[] = [];
  const server = createServer({
    cert: fx.pki.servingCertPem,
    key: fx.pki.servingKeyPem,
    ca: fx.pki.caCertPem,
    requestCert: true,
    rejectUnauthorized: true,
  }, (req, res) => {
    subjects.push(String((req.socket as TLSSocket).getPeerCertificate().subject?.CN));
    req.resume();
    req.on("end", () => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ kind: "SubjectAccessReview", status: { allowed: true } }));
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  try {
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const client = await issueClientCertificate({
      caCertPem: fx.pki.caCertPem,
      caKeyPem: fx.pki.caKeyPem,
      user: "platform-apiserver",
    });
    const withCert = await fx.authorizer({
      url,
      user: {
        "client-certificate-data": btoa(client.certPem),
        "client-key-data": btoa(client.keyPem),
      },
    });
    assert.equal((await withCert.authorize(podRead)).decision, "Allow");
    assert.deepStrictEqual(subjects, ["platform-apiserver"]);

    const without = await fx.authorizer({ url, user: {} });
    assert.equal((await without.authorize(podRead)).decision, "Deny");
    assert.deepStrictEqual(subjects, ["platform-apiserver"]);
  } finally {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});
