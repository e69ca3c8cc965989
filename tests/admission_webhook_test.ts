/**
 * Admission webhooks end to end: configurations written over HTTPS (and applied by kubectl),
 * a real HTTPS webhook the test starts (its certificate from a test CA), and what clients see:
 * the mutated object in the answer, the store and the watch; a denial in kubectl's words; the
 * webhook's warnings on kubectl's stderr; the review's spelling following the configuration's.
 */

import { join } from "node:path";
import { assert, assertEquals } from "./assert.ts";
import { testServer } from "./harness.ts";
import { kubectlEnv, kubectlInstalled } from "./kubectl.ts";
import {
  answer,
  configMapCreateWebhook,
  patchOf,
  startTestWebhook,
} from "../lib/admission/webhook/webhook_testdata.ts";

const GROUP_PATH = "/apis/admissionregistration.platform.io/v1";
const KUBE_GROUP_PATH = "/apis/admissionregistration.k8s.io/v1";

const configuration = configMapCreateWebhook;

Deno.test("admission webhooks: a mutation is in the answer, the store and the watch; the review follows the configuration's spelling", async () => {
  await using hook = await startTestWebhook();
  await using ts = await testServer();
  hook.respond = (review) =>
    answer(review, {
      allowed: true,
      patchType: "JSONPatch",
      patch: patchOf([{ op: "add", path: "/data", value: { injected: "by-webhook" } }]),
    });
  const made = await ts.json("POST", `${GROUP_PATH}/mutatingwebhookconfigurations`, {
    body: {
      apiVersion: "admissionregistration.platform.io/v1",
      ...configuration("MutatingWebhookConfiguration", "inject", hook),
    },
  });
  assertEquals(made.status, 201, JSON.stringify(made.body));
  const watch = await ts.request(
    "GET",
    "/api/v1/namespaces/default/configmaps?watch=1&fieldSelector=metadata.name%3Dx",
  );
  const created = await ts.json("POST", "/api/v1/namespaces/default/configmaps", {
    body: { metadata: { name: "x" } },
  });
  assertEquals(created.status, 201, JSON.stringify(created.body));
  assertEquals(created.body.data, { injected: "by-webhook" });
  assertEquals((await ts.json("GET", "/api/v1/namespaces/default/configmaps/x")).body.data, {
    injected: "by-webhook",
  });
  const reader = watch.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) text += (await reader.read()).value ?? "";
  const event = JSON.parse(text.split("\n")[0]);
  assertEquals([event.type, event.object.data], ["ADDED", { injected: "by-webhook" }]);
  await reader.cancel();
  assertEquals(hook.received[0].review.apiVersion, "admission.platform.io/v1");
  // Written again under Kubernetes' group name: the next request is reviewed in that spelling.
  const replaced = await ts.json("PUT", `${KUBE_GROUP_PATH}/mutatingwebhookconfigurations/inject`, {
    body: {
      apiVersion: "admissionregistration.k8s.io/v1",
      ...configuration("MutatingWebhookConfiguration", "inject", hook),
      metadata: { name: "inject", resourceVersion: made.body.metadata.resourceVersion },
    },
  });
  assertEquals(replaced.status, 200, JSON.stringify(replaced.body));
  await ts.json("POST", "/api/v1/namespaces/default/configmaps", {
    body: { metadata: { name: "y" } },
  });
  const last = hook.received.at(-1)!.review;
  assertEquals(last.apiVersion, "admission.k8s.io/v1");
  assertEquals(last.request.options.apiVersion, "meta.k8s.io/v1");
  assertEquals(last.request.name, "y");
});

Deno.test("admission webhooks: a webhook that is down fails creates with kube's message until it is deleted", async () => {
  await using ts = await testServer();
  const down = {
    ...configuration("ValidatingWebhookConfiguration", "down", {
      url: "https://127.0.0.1:1",
      caBundle: "",
    }),
  };
  delete (down.webhooks[0].clientConfig as { caBundle?: string }).caBundle;
  const made = await ts.json("POST", `${GROUP_PATH}/validatingwebhookconfigurations`, {
    body: down,
  });
  assertEquals(made.status, 201, JSON.stringify(made.body));
  const refused = await ts.json("POST", "/api/v1/namespaces/default/configmaps", {
    body: { metadata: { name: "x" } },
  });
  assertEquals(refused.status, 500);
  assert(
    refused.body.message.startsWith(
      'Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: Post "https://127.0.0.1:1/down?timeout=10s": ',
    ),
    refused.body.message,
  );
  assertEquals(
    (await ts.json("DELETE", `${GROUP_PATH}/validatingwebhookconfigurations/down`)).status,
    200,
  );
  assertEquals(
    (await ts.json("POST", "/api/v1/namespaces/default/configmaps", {
      body: { metadata: { name: "x" } },
    })).status,
    201,
  );
});

Deno.test({
  name:
    "admission webhooks with kubectl: apply the configuration from YAML, see the denial and the warnings",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using hook = await startTestWebhook();
  await using env = await kubectlEnv();
  hook.respond = (review) =>
    review.request.name === "forbidden"
      ? answer(review, {
        allowed: false,
        status: { code: 403, reason: "Forbidden", message: "not this name" },
      })
      : answer(review, { allowed: true, warnings: ["configmaps are watched"] });
  const yaml = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: names
webhooks:
- name: names.example.com
  clientConfig:
    url: ${hook.url}/names
    caBundle: ${hook.caBundle}
  rules:
  - operations: ["CREATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["configmaps"]
  sideEffects: None
  admissionReviewVersions: ["v1"]
`;
  assert(
    /validatingwebhookconfiguration\.admissionregistration\.k8s\.io\/names created/.test(
      await env.ok(["apply", "-f", "-"], yaml),
    ),
  );
  const denied = await env.kubectl(["create", "configmap", "forbidden"]);
  assert(denied.code !== 0);
  assert(
    denied.stderr.includes(
      'admission webhook "names.example.com" denied the request: not this name',
    ),
    denied.stderr,
  );
  const allowed = await env.kubectl(["create", "configmap", "fine"]);
  assertEquals(allowed.code, 0, allowed.stderr);
  assert(allowed.stderr.includes("Warning: configmaps are watched"), allowed.stderr);
  // kubectl sent reviews in the Kubernetes spelling, as the configuration was written.
  assertEquals(hook.received.at(-1)!.review.apiVersion, "admission.k8s.io/v1");
});

Deno.test("admission webhooks: matchPolicy Equivalent sends a core v1 Event as events.platform.io/v1 and takes its patch back", async () => {
  await using hook = await startTestWebhook();
  await using ts = await testServer();
  hook.respond = (review) =>
    answer(review, {
      allowed: true,
      patchType: "JSONPatch",
      patch: patchOf([{ op: "replace", path: "/note", value: "rewritten by the webhook" }]),
    });
  const config = configuration("MutatingWebhookConfiguration", "events", hook);
  config.webhooks[0].rules = [{
    operations: ["CREATE"],
    apiGroups: ["events.k8s.io"],
    apiVersions: ["v1"],
    resources: ["events"],
  }];
  assertEquals(
    (await ts.json("POST", `${GROUP_PATH}/mutatingwebhookconfigurations`, { body: config })).status,
    201,
  );
  const created = await ts.json("POST", "/api/v1/namespaces/default/events", {
    body: {
      metadata: { name: "e1" },
      involvedObject: { kind: "ConfigMap", namespace: "default", name: "x" },
      reason: "Tested",
      message: "as sent",
      type: "Normal",
    },
  });
  assertEquals(created.status, 201, JSON.stringify(created.body));
  assertEquals(created.body.message, "rewritten by the webhook");
  const { request } = hook.received[0].review;
  assertEquals(request.resource, {
    group: "events.platform.io",
    version: "v1",
    resource: "events",
  });
  assertEquals(request.kind, { group: "events.platform.io", version: "v1", kind: "Event" });
  assertEquals(request.requestResource, { group: "", version: "v1", resource: "events" });
  assertEquals(request.requestKind, { group: "", version: "v1", kind: "Event" });
  assertEquals([request.object.apiVersion, request.object.note], [
    "events.platform.io/v1",
    "as sent",
  ]);
  // An Exact policy would not have matched.
  const current = (await ts.json("GET", `${GROUP_PATH}/mutatingwebhookconfigurations/events`)).body;
  current.webhooks[0].matchPolicy = "Exact";
  assertEquals(
    (await ts.json("PUT", `${GROUP_PATH}/mutatingwebhookconfigurations/events`, { body: current }))
      .status,
    200,
  );
  const plain = await ts.json("POST", "/api/v1/namespaces/default/events", {
    body: {
      metadata: { name: "e2" },
      involvedObject: { kind: "ConfigMap", namespace: "default", name: "x" },
      message: "as sent",
    },
  });
  assertEquals([plain.status, plain.body.message], [201, "as sent"]);
  assertEquals(hook.received.length, 1);
});

Deno.test("admission webhooks: the WebhookAdmission kubeconfig's token for the webhook's host is sent", async () => {
  await using hook = await startTestWebhook();
  const dir = await Deno.makeTempDir({ prefix: "admission-credentials-" });
  try {
    const port = new URL(hook.url).port;
    await Deno.writeTextFile(
      join(dir, "webhooks.kubeconfig"),
      `users:\n- name: "127.0.0.1:${port}"\n  user: {token: the-host-token}\n- name: "*"\n  user: {token: any}\n`,
    );
    await Deno.writeTextFile(
      join(dir, "admission.yaml"),
      [
        "apiVersion: apiserver.config.k8s.io/v1",
        "kind: AdmissionConfiguration",
        "plugins:",
        "- name: ValidatingAdmissionWebhook",
        "  configuration:",
        "    apiVersion: apiserver.config.k8s.io/v1",
        "    kind: WebhookAdmissionConfiguration",
        `    kubeConfigFile: ${join(dir, "webhooks.kubeconfig")}`,
        "",
      ].join("\n"),
    );
    await using ts = await testServer({ admissionControlConfigFile: join(dir, "admission.yaml") });
    assertEquals(
      (await ts.json("POST", `${GROUP_PATH}/validatingwebhookconfigurations`, {
        body: configuration("ValidatingWebhookConfiguration", "creds", hook),
      })).status,
      201,
    );
    await ts.json("POST", "/api/v1/namespaces/default/configmaps", {
      body: { metadata: { name: "x" } },
    });
    assertEquals(hook.received[0].authorization, "Bearer the-host-token");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
