/**
 * Calls webhooks: one POST per review, bounded by the webhook's timeout (sent to it too, as
 * kube does, in the `timeout` query parameter), its answer read up to a size limit. TLS
 * trusts the webhook's caBundle (the system's roots when it has none); connections are kept
 * and reused per CA bundle and client credential. Connections are made by the HTTP clients
 * `createHttpClient` makes: the server's egress dialer (its `cluster` selection).
 */

import { injectTraceparent } from "../../tracing/mod.ts";
import type { HttpClientFactory } from "../../egress/mod.ts";
import type { Webhook } from "./webhook.ts";

/** What the server presents to a webhook (from the AdmissionConfiguration's kubeconfig). */
export interface WebhookCredentials {
  /** Client certificate and key, PEM. */
  cert?: string;
  key?: string;
  /** Bearer token. */
  token?: string;
}

export interface WebhookClientOptions {
  /** The outbound call. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Makes the HTTP clients calls go through (the egress dialer's `cluster` selection).
   * @default Deno.createHttpClient: direct */
  createHttpClient?: HttpClientFactory;
  /** Credentials for a webhook, by its URL. @default none */
  credentials?: (webhook: Webhook) => WebhookCredentials | undefined;
  /** The largest answer read. @default 3 MiB */
  maxResponseBytes?: number;
}

/** Why a call did not give an answer (not reached, timed out, not 200, not JSON). */
export class CallError extends Error {}

export class WebhookClient {
  readonly #fetch: typeof fetch;
  readonly #credentials: (webhook: Webhook) => WebhookCredentials | undefined;
  readonly #maxBytes: number;
  readonly #createHttpClient: HttpClientFactory;
  readonly #clients = new Map<string, Deno.HttpClient>();

  constructor(opts: WebhookClientOptions = {}) {
    this.#fetch = opts.fetch ?? globalThis.fetch;
    this.#credentials = opts.credentials ?? (() => undefined);
    this.#maxBytes = opts.maxResponseBytes ?? 3 * 1024 * 1024;
    this.#createHttpClient = opts.createHttpClient ?? Deno.createHttpClient;
  }

  /** POSTs `body` to the webhook; resolves to its decoded JSON answer. */
  async call(webhook: Webhook, body: string): Promise<unknown> {
    const seconds = Math.max(1, Math.round(webhook.timeoutMs / 1000));
    let url: URL;
    try {
      url = new URL(webhook.clientConfig.url);
    } catch {
      throw new CallError(`invalid URL ${JSON.stringify(webhook.clientConfig.url)}`);
    }
    url.searchParams.set("timeout", `${seconds}s`);
    const where = `Post ${JSON.stringify(url.href)}`;
    const credentials = this.#credentials(webhook);
    const headers: Record<string, string> = {
      "Content-Type": "application/json",
      Accept: "application/json",
    };
    if (credentials?.token) headers.Authorization = `Bearer ${credentials.token}`;
    injectTraceparent(headers);
    // A timer cleared when the call ends: AbortSignal.timeout would leave one pending for the
    // whole timeout per call (thousands at a time under load), each firing an abort later.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), webhook.timeoutMs);
    const signal = controller.signal;
    try {
      return await this.#send(url, where, headers, body, signal, webhook, credentials);
    } finally {
      clearTimeout(timer);
    }
  }

  async #send(
    url: URL,
    where: string,
    headers: Record<string, string>,
    body: string,
    signal: AbortSignal,
    webhook: Webhook,
    credentials: WebhookCredentials | undefined,
  ): Promise<unknown> {
    let res: Response;
    try {
      res = await this.#fetch(url, {
        method: "POST",
        headers,
        body,
        signal,
        client: this.#client(webhook.clientConfig.caBundle, credentials),
      } as RequestInit);
    } catch (err) {
      throw new CallError(
        `${where}: ${signal.aborted ? "context deadline exceeded" : reason(err)}`,
      );
    }
    try {
      const text = await readLimited(res, this.#maxBytes, signal);
      if (res.status !== 200) {
        throw new CallError(
          `${where}: the server responded with the status code ${res.status}` +
            (text ? `: ${text.slice(0, 200)}` : " but did not return more information"),
        );
      }
      try {
        return JSON.parse(text);
      } catch {
        throw new CallError(`${where}: the answer is not JSON`);
      }
    } catch (err) {
      if (err instanceof CallError) throw err;
      throw new CallError(
        `${where}: ${signal.aborted ? "context deadline exceeded" : reason(err)}`,
      );
    }
  }

  /** Closes the kept connections. */
  close(): void {
    for (const c of this.#clients.values()) c.close();
    this.#clients.clear();
  }

  #client(caBundle: string, credentials: WebhookCredentials | undefined): Deno.HttpClient {
    const key = JSON.stringify([caBundle, credentials?.cert ?? "", credentials?.key ?? ""]);
    let client = this.#clients.get(key);
    if (!client) {
      const options: Deno.CreateHttpClientOptions & { cert?: string; key?: string } = {};
      if (caBundle) options.caCerts = [caBundle];
      if (credentials?.cert && credentials.key) {
        options.cert = credentials.cert;
        options.key = credentials.key;
      }
      // HTTP/1.1 with kept connections: over HTTP/2 to Deno.serve, a create with two webhooks
      // took 50 ms longer at the median (bench/admission.ts), over HTTP/1.1 1.4 ms.
      client = this.#createHttpClient({ ...options, http2: false });
      this.#clients.set(key, client);
    }
    return client;
  }
}

async function readLimited(res: Response, max: number, signal: AbortSignal): Promise<string> {
  if (!res.body) return "";
  // A stated length within the limit: read whole (the call's signal also ends this read).
  const length = Number(res.headers.get("content-length") ?? NaN);
  if (length >= 0 && length <= max) return await res.text();
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const onAbort = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        await reader.cancel().catch(() => {});
        throw new CallError(`the answer is larger than ${max} bytes`);
      }
      chunks.push(value);
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

function reason(err: unknown): string {
  const e = err as Error;
  // Deno wraps the cause: "error sending request for url (...): <cause>"; keep the cause.
  const cause = (e?.cause as Error | undefined)?.message;
  return cause ?? e?.message ?? String(err);
}
