/**
 * `--workers=2` (the real `platform serve`, a child process) and the in-flight limits: the
 * threads count in the same seats, so `--max-mutating-requests-inflight=4` holds for the
 * process. Six users each send one create on a connection of its own (both threads get some:
 * 2^-5 that one gets all); the creates hang in a validating webhook until the test lets them
 * go. Four reach the webhook; the other two get 429 at once, whichever thread they reached.
 * (Counted per thread, a thread with three or fewer would let all of its own through.)
 */

import {
  answer,
  configMapCreateWebhook,
  startTestWebhook,
} from "../lib/admission/webhook/webhook_testdata.ts";
import { assertEquals } from "./assert.ts";
import { tokenFile } from "./harness.ts";
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
    const call = async (token: string, path: string, body: unknown) => {
      const client = Deno.createHttpClient({ caCerts: [server.caCertPem] });
      try {
        const res = await fetch(server.url + path, {
          method: "POST",
          client,
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: JSON.stringify(body),
        });
        return { status: res.status, text: await res.text() };
      } finally {
        client.close();
      }
    };
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
    for (let i = 0; i < 16; i++) {
      const client = Deno.createHttpClient({ caCerts: [server.caCertPem] });
      const res = await fetch(
        `${server.url}/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations`,
        { client, headers: { Authorization: `Bearer ${server.token}` } },
      );
      await res.arrayBuffer();
      client.close();
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
