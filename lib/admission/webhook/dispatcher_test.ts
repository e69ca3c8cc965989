import assert from "node:assert/strict";
import {
  type AdmissionAttributes,
  AdmissionChain,
  mutatingWebhooks,
  validatingWebhooks,
  WebhookClient,
  type WebhookEnvironment,
  webhooksOf,
  type WebhookType,
} from "../mod.ts";
import { type KubeObject, silentLogger } from "../../api/mod.ts";
import type { Authorizer } from "../../auth/mod.ts";
import { Catalogue, ResourceRegistry } from "../../registry/mod.ts";
import { builtinDefinitions } from "../../resources/mod.ts";
import { SchemaSet } from "../../schema/mod.ts";
import { MemoryStore } from "../../storage/mod.ts";
import { answer, patchOf, rejection, startTestWebhook } from "./webhook_testdata.ts";

const ALICE = { user: { username: "alice", uid: "u-1", groups: ["dev"] } };
const CONFIGMAPS = {
  operations: ["CREATE", "UPDATE", "DELETE"],
  apiGroups: [""],
  apiVersions: ["v1"],
  resources: ["configmaps"],
  scope: "*",
};

async function fixture(opts: { authorizer?: Authorizer } = {}) {
  const hook = await startTestWebhook();
  const configs: Record<WebhookType, KubeObject[]> = { mutating: [], validating: [] };
  const namespaces: Record<string, KubeObject> = {
    prod: { metadata: { name: "prod", labels: { env: "prod" } } },
    dev: { metadata: { name: "dev", labels: { env: "dev" } } },
  };
  const warned: string[] = [];
  const client = new WebhookClient();
  const env: WebhookEnvironment = {
    source: { webhooks: (t) => Promise.resolve(configs[t].flatMap((c) => webhooksOf(t, c))) },
    client,
    namespace: (name) => Promise.resolve(structuredClone(namespaces[name])),
    equivalents: () => [],
    authorizer: opts.authorizer,
    logger: { ...silentLogger, warn: (m: string) => void warned.push(m) },
  };
  const store = new MemoryStore();
  const def = new Catalogue(builtinDefinitions()).lookup("", "v1", "configmaps")!;
  const admission = new AdmissionChain([mutatingWebhooks(env), validatingWebhooks(env)]);
  const registry = new ResourceRegistry(def, { store, schemas: SchemaSet.builtin(), admission });
  /** A webhook at the hook's `path`, trusting the test CA; `over` replaces fields. */
  const webhook = (path: string, over: KubeObject = {}): KubeObject => ({
    name: `${path.slice(1) || "hook"}.example.com`,
    clientConfig: { url: `${hook.url}${path}`, caBundle: hook.caBundle },
    rules: [CONFIGMAPS],
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
    timeoutSeconds: 5,
    ...over,
  });
  const add = (type: WebhookType, ...webhooks: KubeObject[]) =>
    configs[type].push({ metadata: { name: `cfg-${configs[type].length}` }, webhooks });
  return {
    hook,
    registry,
    webhook,
    add,
    configs,
    warned,
    env,
    async [Symbol.asyncDispose]() {
      await hook[Symbol.asyncDispose]();
      client.close();
      await store.close();
    },
  };
}

Deno.test("webhooks: a mutating webhook's patch is stored; the review carries every request field", async () => {
  await using fx = await fixture();
  fx.add("mutating", fx.webhook("/mutate"));
  fx.hook.respond = (review) =>
    answer(review, {
      allowed: true,
      patchType: "JSONPatch",
      patch: patchOf([{ op: "add", path: "/metadata/labels", value: { injected: "yes" } }]),
    });
  const made = await fx.registry.create(
    "prod",
    { metadata: { name: "a" }, data: { k: "v" } },
    ALICE,
  );
  assert.deepEqual(made.object.metadata.labels, { injected: "yes" });
  assert.deepEqual((await fx.registry.get("prod", "a")).metadata.labels, { injected: "yes" });
  const [{ path, query, review }] = fx.hook.received;
  assert.equal(path, "/mutate");
  assert.equal(query, "?timeout=5s");
  assert.equal(review.apiVersion, "admission.platform.io/v1");
  assert.equal(review.kind, "AdmissionReview");
  const r = review.request;
  assert.match(r.uid, /^[0-9a-f-]{36}$/);
  assert.deepEqual(r.kind, { group: "", version: "v1", kind: "ConfigMap" });
  assert.deepEqual(r.resource, { group: "", version: "v1", resource: "configmaps" });
  assert.equal(r.requestKind, undefined, "no equivalence: no requestKind");
  assert.deepEqual([r.name, r.namespace, r.operation], ["a", "prod", "CREATE"]);
  assert.deepEqual(r.userInfo, { username: "alice", uid: "u-1", groups: ["dev"] });
  assert.deepEqual(r.object.data, { k: "v" });
  assert.equal(r.oldObject, null);
  assert.equal(r.dryRun, false);
  assert.deepEqual(r.options, { kind: "CreateOptions", apiVersion: "meta.platform.io/v1" });
});

Deno.test("webhooks: a configuration written as admissionregistration.k8s.io gets admission.k8s.io reviews", async () => {
  await using fx = await fixture();
  fx.configs.validating.push({
    metadata: {
      name: "kube",
      annotations: { "admissionregistration.platform.io/review-group": "admission.k8s.io" },
    },
    webhooks: [fx.webhook("/kube")],
  });
  await fx.registry.create("prod", { metadata: { name: "a" } }, ALICE);
  const { review } = fx.hook.received[0];
  assert.equal(review.apiVersion, "admission.k8s.io/v1");
  assert.equal(review.request.options.apiVersion, "meta.k8s.io/v1");
});

Deno.test("webhooks: a denial is the webhook's status with kube's message; nothing is stored", async () => {
  await using fx = await fixture();
  fx.add("validating", fx.webhook("/deny"));
  fx.hook.respond = (review) =>
    answer(review, {
      allowed: false,
      status: { code: 403, reason: "Forbidden", message: "no thanks" },
    });
  const err = await rejection(fx.registry.create("prod", { metadata: { name: "a" } }, ALICE));
  assert.equal(err.code, 403);
  assert.equal(err.message, 'admission webhook "deny.example.com" denied the request: no thanks');
  await rejection(fx.registry.get("prod", "a"));
  fx.hook.respond = (review) => answer(review, { allowed: false });
  const bare = await rejection(fx.registry.create("prod", { metadata: { name: "b" } }, ALICE));
  assert.equal(bare.code, 400);
  assert.equal(
    bare.message,
    'admission webhook "deny.example.com" denied the request without explanation',
  );
});

Deno.test("webhooks: failurePolicy decides for a webhook that is down, slow, talks nonsense or answers another uid", async () => {
  await using fx = await fixture();
  const down = { url: "https://127.0.0.1:1/down" };
  const cases: [string, (review: KubeObject) => Response | Promise<Response>, RegExp][] = [
    ["garbage", () => new Response("not json"), /the answer is not JSON/],
    [
      "wrong-uid",
      (review) => answer({ ...review, request: { uid: "other" } }, { allowed: true }),
      /received invalid webhook response: expected response\.uid="[0-9a-f-]+", got "other"/,
    ],
    ["status-500", () => new Response("boom", { status: 500 }), /status code 500/],
    ["slow", async () => {
      await new Promise((r) => setTimeout(r, 3000));
      return new Response("late");
    }, /context deadline exceeded/],
  ];
  for (const [name, respond, message] of cases) {
    fx.configs.validating.length = 0;
    fx.add("validating", fx.webhook(`/${name}`, { timeoutSeconds: 1 }));
    fx.hook.respond = respond;
    const started = Date.now();
    const err = await rejection(
      fx.registry.create("prod", { metadata: { name: `x-${name}` } }, ALICE),
    );
    assert.equal(err.code, 500, name);
    assert.match(
      err.message,
      new RegExp(`^Internal error occurred: failed calling webhook "${name}.example.com": `),
    );
    assert.match(err.message, message);
    assert.ok(Date.now() - started < 2500, `${name}: bounded by the 1 s timeout`);
    // Ignore: allowed, and the server says which webhook failed and why.
    fx.configs.validating.length = 0;
    fx.add("validating", fx.webhook(`/${name}`, { timeoutSeconds: 1, failurePolicy: "Ignore" }));
    await fx.registry.create("prod", { metadata: { name: `y-${name}` } }, ALICE);
    assert.match(
      fx.warned.at(-1)!,
      new RegExp(`failed calling webhook "${name}.example.com".*failurePolicy Ignore`),
    );
  }
  fx.configs.validating.length = 0;
  fx.add("validating", fx.webhook("/down", { clientConfig: down }));
  const err = await rejection(fx.registry.create("prod", { metadata: { name: "z" } }, ALICE));
  assert.match(
    err.message,
    /failed calling webhook "down.example.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:1\/down\?timeout=5s"/,
  );
});

Deno.test("webhooks: a patch from a validating webhook, or of another type, is an invalid answer", async () => {
  await using fx = await fixture();
  fx.add("validating", fx.webhook("/v"));
  fx.hook.respond = (review) =>
    answer(review, { allowed: true, patchType: "JSONPatch", patch: patchOf([]) });
  const err = await rejection(fx.registry.create("prod", { metadata: { name: "a" } }, ALICE));
  assert.match(err.message, /validating webhook may not return a patch/);
  fx.configs.validating.length = 0;
  fx.add("mutating", fx.webhook("/m"));
  fx.hook.respond = (review) =>
    answer(review, { allowed: true, patchType: "Merge", patch: patchOf([]) });
  const merge = await rejection(fx.registry.create("prod", { metadata: { name: "b" } }, ALICE));
  assert.match(merge.message, /unsupported patch type "Merge"/);
});

Deno.test("webhooks: dry run is refused before any call for a webhook with side effects", async () => {
  await using fx = await fixture();
  fx.add("validating", fx.webhook("/effects", { sideEffects: "Some" }));
  const err = await rejection(
    fx.registry.create("prod", { metadata: { name: "a" } }, ALICE, { dryRun: true }),
  );
  assert.equal(err.code, 400);
  assert.equal(err.message, 'admission webhook "effects.example.com" does not support dry run');
  assert.equal(fx.hook.received.length, 0);
  fx.configs.validating.length = 0;
  fx.add("validating", fx.webhook("/safe", { sideEffects: "NoneOnDryRun" }));
  await fx.registry.create("prod", { metadata: { name: "a" } }, ALICE, { dryRun: true });
  assert.equal(fx.hook.received[0].review.request.dryRun, true);
  assert.deepEqual(fx.hook.received[0].review.request.options.dryRun, ["All"]);
});

Deno.test("webhooks: warnings and audit annotations of the answer are kept", async () => {
  await using fx = await fixture();
  fx.add("validating", fx.webhook("/warn"));
  fx.hook.respond = (review) =>
    answer(review, { allowed: true, warnings: ["careful"], auditAnnotations: { reason: "x" } });
  const warnings: string[] = [];
  const made = await fx.registry.create("prod", { metadata: { name: "a" } }, {
    ...ALICE,
    warnings,
  });
  assert.deepEqual(warnings, ["careful"]);
  assert.deepEqual(made.warnings, []);
  // Without the request's list (the server's own writes) they come back in the result.
  const own = await fx.registry.create("prod", { metadata: { name: "b" } }, ALICE);
  assert.deepEqual(own.warnings, ["careful"]);
});

Deno.test("webhooks: IfNeeded webhooks are called again when a later webhook changed the object", async () => {
  await using fx = await fixture();
  fx.add(
    "mutating",
    fx.webhook("/first", { reinvocationPolicy: "IfNeeded" }),
    fx.webhook("/second"),
  );
  fx.hook.respond = (review, path) => {
    const labels = review.request.object.metadata.labels ?? {};
    const key = path.slice(1);
    if (labels[key]) return answer(review, { allowed: true });
    const op = labels && Object.keys(labels).length
      ? { op: "add", path: `/metadata/labels/${key}`, value: "1" }
      : { op: "add", path: "/metadata/labels", value: { [key]: "1" } };
    return answer(review, { allowed: true, patchType: "JSONPatch", patch: patchOf([op]) });
  };
  const made = await fx.registry.create("prod", { metadata: { name: "a" } }, ALICE);
  assert.deepEqual(made.object.metadata.labels, { first: "1", second: "1" });
  assert.deepEqual(fx.hook.received.map((r) => r.path), ["/first", "/second", "/first"]);
  // The reinvoked webhook saw the second one's change.
  assert.deepEqual(fx.hook.received[2].review.request.object.metadata.labels, {
    first: "1",
    second: "1",
  });
});

Deno.test("webhooks: rules, selectors and match conditions decide who is called", async () => {
  const checks: string[] = [];
  const authorizer: Authorizer = {
    authorize: (a) => {
      checks.push(`${a.user.username} ${a.verb} ${a.resource}`);
      return { decision: a.user.username === "alice" ? "Allow" : "NoOpinion" };
    },
    rulesFor: () => Promise.reject(new Error("unused")),
  };
  await using fx = await fixture({ authorizer });
  fx.add(
    "validating",
    fx.webhook("/secrets-only", { rules: [{ ...CONFIGMAPS, resources: ["secrets"] }] }),
    fx.webhook("/status-only", { rules: [{ ...CONFIGMAPS, resources: ["configmaps/status"] }] }),
    fx.webhook("/prod", { namespaceSelector: { matchLabels: { env: "prod" } } }),
    fx.webhook("/labelled", {
      objectSelector: { matchExpressions: [{ key: "watch", operator: "Exists" }] },
    }),
    fx.webhook("/named", {
      matchConditions: [{ name: "not-skipped", expression: "object.metadata.name != 'skip'" }],
    }),
    fx.webhook("/authorized", {
      matchConditions: [{
        name: "may-read-secrets",
        expression: "authorizer.group('').resource('secrets').check('get').allowed()",
      }],
    }),
    fx.webhook("/cluster", { rules: [{ ...CONFIGMAPS, scope: "Cluster" }] }),
  );
  const called = () => fx.hook.received.splice(0).map((r) => r.path).sort();
  await fx.registry.create("prod", { metadata: { name: "a" } }, ALICE);
  assert.deepEqual(called(), ["/authorized", "/named", "/prod"]);
  await fx.registry.create("dev", { metadata: { name: "skip", labels: { watch: "1" } } }, {
    user: { username: "bob", groups: [] },
  });
  assert.deepEqual(called(), ["/labelled"]);
  assert.deepEqual(checks, ["alice get secrets", "bob get secrets"]);
});

Deno.test("webhooks: a match condition that errors follows failurePolicy", async () => {
  await using fx = await fixture();
  fx.add(
    "validating",
    fx.webhook("/cond", {
      matchConditions: [{ name: "bad", expression: "object.spec.missing == 1" }],
    }),
  );
  const err = await rejection(fx.registry.create("prod", { metadata: { name: "a" } }, ALICE));
  assert.equal(err.code, 500);
  assert.match(
    err.message,
    /failed calling webhook "cond.example.com": failed to evaluate match conditions: bad: /,
  );
  assert.equal(fx.hook.received.length, 0);
});

Deno.test("webhooks: writes of admission configuration objects are never sent to webhooks", async () => {
  await using fx = await fixture();
  fx.add(
    "validating",
    fx.webhook("/all", {
      rules: [{ operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"] }],
    }),
  );
  const def = new Catalogue(builtinDefinitions()).lookup(
    "admissionregistration.platform.io",
    "v1",
    "validatingwebhookconfigurations",
  )!;
  const configs = new ResourceRegistry(def, {
    store: new MemoryStore(),
    schemas: SchemaSet.builtin(),
    admission: new AdmissionChain([validatingWebhooks({
      source: {
        webhooks: () => Promise.resolve(webhooksOf("validating", fx.configs.validating[0])),
      },
      client: new WebhookClient(),
      namespace: () => Promise.resolve(undefined),
      equivalents: () => [],
      logger: silentLogger,
    })]),
  });
  await configs.create("", { metadata: { name: "c" } }, ALICE);
  assert.equal(fx.hook.received.length, 0);
  await fx.registry.create("prod", { metadata: { name: "a" } }, ALICE);
  assert.equal(fx.hook.received.length, 1);
});

Deno.test("webhooks: a mutation that makes the object invalid is refused with the validation error, naming the webhook", async () => {
  await using fx = await fixture();
  fx.add("mutating", fx.webhook("/breaker"));
  fx.hook.respond = (review) =>
    answer(review, {
      allowed: true,
      patchType: "JSONPatch",
      patch: patchOf([{ op: "add", path: "/data", value: { k: 5 } }]),
    });
  const err = await rejection(fx.registry.create("prod", { metadata: { name: "a" } }, ALICE));
  assert.equal(err.code, 422);
  assert.match(err.message, /data\[k\]: Invalid value: "integer": must be of type string/);
  assert.match(
    err.message,
    /\(the object was changed by admission webhook "breaker\.example\.com"\)$/,
  );
  await rejection(fx.registry.get("prod", "a"));
  // On update too.
  fx.configs.mutating.length = 0;
  await fx.registry.create("prod", { metadata: { name: "b" } }, ALICE);
  fx.add(
    "mutating",
    fx.webhook("/breaker", { rules: [{ ...CONFIGMAPS, operations: ["UPDATE"] }] }),
  );
  const update = await rejection(
    fx.registry.update("prod", "b", { metadata: { name: "b" }, data: { x: "y" } }, ALICE, {}),
  );
  assert.match(update.message, /changed by admission webhook "breaker\.example\.com"/);
});

Deno.test("webhooks: every mutating call leaves kube's audit annotations, the patch with it", async () => {
  await using fx = await fixture();
  fx.add("mutating", fx.webhook("/noop"), fx.webhook("/label"));
  fx.hook.respond = (review, path) =>
    path === "/label"
      ? answer(review, {
        allowed: true,
        patchType: "JSONPatch",
        patch: patchOf([{ op: "add", path: "/metadata/labels", value: { a: "b" } }]),
      })
      : answer(review, { allowed: true });
  const a: AdmissionAttributes = {
    operation: "CREATE",
    resource: { group: "", version: "v1", resource: "configmaps" },
    kind: { group: "", version: "v1", kind: "ConfigMap" },
    subresource: "",
    namespace: "prod",
    name: "x",
    object: { metadata: { name: "x" } },
    user: ALICE.user,
    dryRun: false,
    warnings: [],
    auditAnnotations: {},
  };
  await mutatingWebhooks(fx.env).admit!(a);
  assert.deepEqual(
    JSON.parse(a.auditAnnotations["mutation.webhook.admission.platform.io/round_0_index_0"]),
    {
      configuration: "cfg-0",
      webhook: "noop.example.com",
      mutated: false,
    },
  );
  assert.deepEqual(
    JSON.parse(a.auditAnnotations["mutation.webhook.admission.platform.io/round_0_index_1"]),
    {
      configuration: "cfg-0",
      webhook: "label.example.com",
      mutated: true,
    },
  );
  assert.deepEqual(
    JSON.parse(a.auditAnnotations["patch.webhook.admission.platform.io/round_0_index_1"]),
    {
      configuration: "cfg-0",
      webhook: "label.example.com",
      patch: [{ op: "add", path: "/metadata/labels", value: { a: "b" } }],
      patchType: "JSONPatch",
    },
  );
  assert.equal(
    a.auditAnnotations["patch.webhook.admission.platform.io/round_0_index_0"],
    undefined,
  );
});
