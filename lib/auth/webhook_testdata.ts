/**
 * Test fixtures: a fake authorization webhook over HTTPS on 127.0.0.1 (Deno.serve, with a
 * certificate of an in-process CA) that records every SubjectAccessReview it is sent, and the
 * kubeconfig that points a `type: Webhook` authorizer at it.
 *
 * @module
 */

import { stringify } from "yaml";
import type { Pki } from "../certificates/pki.ts";

export type Json = Record<string, unknown>;

/** A webhook's answer: a SubjectAccessReview with `status`. */
export function review(status: Json, kind = "SubjectAccessReview"): Response {
  return Response.json({ apiVersion: "authorization.k8s.io/v1", kind, status });
}

/** One call the webhook received. */
export interface Received {
  body: Json;
  authorization: string | null;
  path: string;
}

export interface Hook extends AsyncDisposable {
  /** Every review received, in order. */
  received: Received[];
  /** Answers each review (its body); tests replace it. */
  respond: (body: Json) => Response | Promise<Response>;
  /** `https://127.0.0.1:<port>/authorize` */
  url: string;
  server: Deno.HttpServer<Deno.NetAddr>;
  /** Aborted before the server shuts down: slow answers stop waiting. */
  stopping: AbortController;
}

/**
 * A fake webhook on 127.0.0.1 over HTTPS, serving `pki`'s serving certificate, allowing
 * everything until told otherwise. Disposing it aborts `stopping` and shuts the server down.
 */
export function startWebhook(pki: Pki): Hook {
  const received: Received[] = [];
  let respond: Hook["respond"] = () => review({ allowed: true });
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: pki.servingCertPem,
    key: pki.servingKeyPem,
    onListen: () => {},
  }, async (req) => {
    const body = await req.json();
    received.push({
      body,
      authorization: req.headers.get("authorization"),
      path: new URL(req.url).pathname,
    });
    return await respond(body);
  });
  const stopping = new AbortController();
  return {
    received,
    get respond() {
      return respond;
    },
    set respond(fn) {
      respond = fn;
    },
    url: `https://127.0.0.1:${server.addr.port}/authorize`,
    server,
    stopping,
    async [Symbol.asyncDispose]() {
      stopping.abort();
      await server.shutdown();
    },
  };
}

/**
 * A kubeconfig (YAML) whose current context names the webhook at `url`, trusting `caCertPem`
 * and presenting `user` (a kubeconfig user: `{token}`, client certificate data, …).
 */
export function webhookKubeconfig(url: string, caCertPem: string, user: Json = {}): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{
      name: "authz",
      cluster: { server: url, "certificate-authority-data": btoa(caCertPem) },
    }],
    users: [{ name: "apiserver", user }],
    contexts: [{ name: "webhook", context: { cluster: "authz", user: "apiserver" } }],
    "current-context": "webhook",
  });
}
