/**
 * `--workers=2` (the real `platform serve`, a child process) and the limits that hold for the
 * process, not per thread.
 *
 * In-flight: the threads count in the same seats, so `--max-mutating-requests-inflight=4` holds
 * for the process. Six users each send one create on a connection of its own (both threads get some:
 * 2^-5 that one gets all); the creates hang in a validating webhook until the test lets them
 * go. Four reach the webhook; the other two get 429 at once, whichever thread they reached.
 * (Counted per thread, a thread with three or fewer would let all of its own through.)
 *
 * EventRateLimit: a worker asks the main thread's buckets, so a `Server` limit's burst is the
 * process's: of 16 events sent at once over both threads, the burst and what the bucket
 * refilled meanwhile are stored, the rest get 429. (With a bucket per thread, up to twice the
 * burst.)
 */

import {
  answer,
  configMapCreateWebhook,
  startTestWebhook,
} from "../lib/admission/webhook/webhook_testdata.ts";
import { join } from "node:path";
import { assert, assertEquals } from "./assert.ts";
import { tokenFile } from "./harness.ts";
import { onNewConnection } from "./threads.ts";
import { startPlatform } from "./platform_process.ts";
import { CONFIGMAPS } from "./workers_writers.ts";

const USERS = 6;
const LIMIT = 4;

Deno.test("--workers=2: --max-mutating-requests-inflight holds for the process, not per thread", async () => {
  await using hook = await startTestWebhook();
  const release = Promise.withResolvers<void>();
  let reviews = 0;
  hook.respond = async (review) => {
    reviews++;
    await release.promise;
    return answer(review, { allowed: true });
  };
  await using tokens = await tokenFile(
    Object.fromEntries(Array.from({ length: USERS }, (_, i) => [`t${i}`, { name: `u${i}` }])),
  );
  const dir = await Deno.makeTempDir({ prefix: "platform-workers-inflight-" });
  try {
    const authz = `${dir}/allow.yaml`;
    await Deno.writeTextFile(
      authz,
      "apiVersion: apiserver.platform.io/v1beta1\nkind: AuthorizationConfiguration\n" +
        "authorizers:\n  - {type: AlwaysAllow, name: allow}\n",
    );
    await using server = await startPlatform(`${dir}/data`, [
      "--workers=2",
      `--max-mutating-requests-inflight=${LIMIT}`,
      `--token-auth-file=${tokens.path}`,
      `--authorization-config=${authz}`,
    ]);
    const call = (token: string, path: string, body: unknown) =>
      onNewConnection(
        { url: server.url, caCertPem: server.caCertPem, adminToken: token },
        "POST",
        path,
        body,
      );
    const made = await call(
      server.token,
      "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
      {
        apiVersion: "admissionregistration.k8s.io/v1",
        ...configMapCreateWebhook("ValidatingWebhookConfiguration", "hold", hook),
      },
    );
    assertEquals(made.status, 201, made.text);
    // A consistent list waits until the thread that serves it has the latest revision: 16 on
    // new connections, so both threads have the configuration (2^-15 that one serves all).
    const admin = { url: server.url, caCertPem: server.caCertPem, adminToken: server.token };
    for (let i = 0; i < 16; i++) {
      await onNewConnection(
        admin,
        "GET",
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
      );
    }
    const statuses: number[] = [];
    const creates = Array.from(
      { length: USERS },
      (_, i) =>
        call(`t${i}`, CONFIGMAPS, { metadata: { name: `held-${i}` } }).then((r) => {
          statuses.push(r.status);
          return r;
        }, (err) => ({ status: 0, text: String(err) })),
    );
    while (reviews + statuses.filter((s) => s === 429).length < USERS) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assertEquals(reviews, LIMIT, "creates let through to the webhook");
    assertEquals(statuses, [429, 429], "the creates past the limit, answered at once");
    release.resolve();
    const answered = (await Promise.all(creates)).map((r) => r.status).sort();
    assertEquals(answered, [201, 201, 201, 201, 429, 429]);
  } finally {
    release.resolve();
    await Deno.remove(dir, { recursive: true });
  }
});

const BURST = 5;
const EVENTS = 16;

Deno.test("--workers=2: an EventRateLimit burst holds for the process, not per thread", async () => {
  const dir = await Deno.makeTempDir({ prefix: "platform-workers-eventrate-" });
  try {
    await Deno.writeTextFile(
      join(dir, "eventratelimit.yaml"),
      "apiVersion: eventratelimit.admission.platform.io/v1alpha1\nkind: Configuration\n" +
        `limits:\n- {type: Server, qps: 1, burst: ${BURST}}\n`,
    );
    await Deno.writeTextFile(
      join(dir, "admission.yaml"),
      "apiVersion: apiserver.config.platform.io/v1\nkind: AdmissionConfiguration\nplugins:\n" +
        "- name: EventRateLimit\n  path: eventratelimit.yaml\n",
    );
    await using server = await startPlatform(`${dir}/data`, [
      "--workers=2",
      "--enable-admission-plugins=EventRateLimit",
      `--admission-control-config-file=${join(dir, "admission.yaml")}`,
    ]);
    const admin = { url: server.url, caCertPem: server.caCertPem, adminToken: server.token };
    const create = async (i: number) => {
      const res = await onNewConnection(admin, "POST", "/api/v1/namespaces/default/events", {
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: `e${i}` },
        involvedObject: { kind: "Pod", namespace: "default", name: "web", apiVersion: "v1" },
        reason: "Started",
        message: "started",
        type: "Normal",
      });
      return { status: res.status, message: (res.body as { message?: string }).message };
    };
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: EVENTS }, (_, i) => create(i)));
    const tookS = (performance.now() - started) / 1000;
    const created = answers.filter((a) => a.status === 201).length;
    const refused = answers.filter((a) => a.status === 429);
    assertEquals(created + refused.length, EVENTS, JSON.stringify(answers));
    // The bucket starts full and gains one token a second.
    assert(
      created >= BURST && created <= BURST + Math.ceil(tookS),
      `${created} events stored in ${tookS.toFixed(2)}s: ${JSON.stringify(answers)}`,
    );
    for (const r of refused) {
      assertEquals(r.message, "Too many requests: limit reached on type Server for key ");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
