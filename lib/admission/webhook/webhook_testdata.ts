/**
 * Test fixtures: an admission webhook over HTTPS on 127.0.0.1 (Deno.serve with a certificate
 * of an in-process CA) that records every AdmissionReview it is sent and answers as the test
 * says, and helpers to write its answers.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type KubeObject, StatusError } from "../../api/mod.ts";
import { ensurePki } from "../../certificates/pki.ts";

export interface AdmissionHook extends AsyncDisposable {
  /** Every review received (path, query, Authorization and traceparent headers, body), in
   * order. */
  received: {
    path: string;
    query: string;
    authorization: string | null;
    traceparent: string | null;
    review: KubeObject;
  }[];
  /** Answers a review; tests replace it. Default: allowed. */
  respond: (review: KubeObject, path: string) => Response | Promise<Response>;
  /** `https://127.0.0.1:<port>` */
  url: string;
  /** Aborted when the hook stops: slow answers stop waiting. */
  stopping: AbortSignal;
}

export function startAdmissionHook(certPem: string, keyPem: string): AdmissionHook {
  const stopping = new AbortController();
  const hook: AdmissionHook = {
    received: [],
    respond: (review) => answer(review, { allowed: true }),
    url: "",
    stopping: stopping.signal,
    async [Symbol.asyncDispose]() {
      stopping.abort();
      await server.shutdown();
    },
  };
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: certPem,
    key: keyPem,
    onListen: () => {},
  }, async (req) => {
    const url = new URL(req.url);
    const review = await req.json();
    hook.received.push({
      path: url.pathname,
      query: url.search,
      authorization: req.headers.get("authorization"),
      traceparent: req.headers.get("traceparent"),
      review,
    });
    return await hook.respond(review, url.pathname);
  });
  hook.url = `https://127.0.0.1:${server.addr.port}`;
  return hook;
}

/** An AdmissionReview answering `review` with `response` (uid copied unless given). */
export function answer(review: KubeObject, response: KubeObject): Response {
  return Response.json({
    apiVersion: review.apiVersion ?? "admission.platform.io/v1",
    kind: "AdmissionReview",
    response: { uid: review.request?.uid, ...response },
  });
}

/** A JSON Patch, base64 as a response carries it. */
export function patchOf(ops: unknown[]): string {
  return btoa(JSON.stringify(ops));
}

/** A hook with a certificate of a fresh test CA (in a temporary directory removed on
 * dispose); `caBundle` is that CA as a webhook configuration's `caBundle` wants it. */
export async function startTestWebhook(): Promise<AdmissionHook & { caBundle: string }> {
  const dir = await Deno.makeTempDir({ prefix: "admission-webhook-test-" });
  const pki = await ensurePki({
    dataDir: join(dir, "data"),
    sans: [],
    bindAddress: "127.0.0.1",
    logger: { info: () => {} },
  });
  const hook = startAdmissionHook(pki.servingCertPem, pki.servingKeyPem);
  const dispose = hook[Symbol.asyncDispose];
  return Object.assign(hook, {
    caBundle: btoa(pki.caCertPem),
    async [Symbol.asyncDispose]() {
      await dispose();
      await Deno.remove(dir, { recursive: true });
    },
  });
}

/** The StatusError `p` rejects with (fails when it resolves or throws anything else). */
export async function rejection(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof StatusError, `not a StatusError: ${err}`);
    return err;
  }
  assert.fail("expected a rejection");
}

/**
 * A webhook configuration (`kind`: Mutating or Validating) named `name` with one webhook,
 * `<name>.example.com`, called at `<hook.url>/<name>` for creates of configmaps; `extra` adds
 * to (or replaces) the webhook's fields. No apiVersion: the caller adds the group's it posts to.
 */
export function configMapCreateWebhook(
  kind: string,
  name: string,
  hook: { url: string; caBundle: string },
  extra: Record<string, unknown> = {},
): KubeObject {
  return {
    kind,
    metadata: { name },
    webhooks: [{
      name: `${name}.example.com`,
      clientConfig: { url: `${hook.url}/${name}`, caBundle: hook.caBundle },
      rules: [{
        operations: ["CREATE"],
        apiGroups: [""],
        apiVersions: ["v1"],
        resources: ["configmaps"],
      }],
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
      ...extra,
    }],
  };
}
