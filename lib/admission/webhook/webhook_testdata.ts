/**
 * Test fixtures: an admission webhook over HTTPS on 127.0.0.1 (Deno.serve with a certificate
 * of an in-process CA) that records every AdmissionReview it is sent and answers as the test
 * says, and helpers to write its answers.
 *
 * @module
 */

import type { KubeObject } from "../../api/mod.ts";

export interface AdmissionHook extends AsyncDisposable {
  /** Every review received (path, query, Authorization header and body), in order. */
  received: { path: string; query: string; authorization: string | null; review: KubeObject }[];
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
