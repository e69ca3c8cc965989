/**
 * An issuer's signing keys, found through OpenID discovery: `{url}/.well-known/openid-
 * configuration` (or the configured `discoveryURL`) names the `jwks_uri`; the key set is
 * fetched from there, cached, and fetched again when a token names a key it does not hold
 * (at most once per cooldown) or the cache is old.
 *
 * Discovery runs in the background and is retried until it succeeds, so the server starts
 * while an issuer is down (as kube does); tokens of that issuer fail until then. Connections
 * trust `certificateAuthority` when set (in addition to the default roots), else the default
 * roots, and are made by the `controlplane` egress selection when the server has one.
 *
 * @module
 */

import { createRemoteJWKSet, customFetch, type JWTVerifyGetKey } from "jose";
import type { Logger } from "../api/mod.ts";
import { currentTraceparent } from "../tracing/mod.ts";
import type { HttpClientFactory } from "../egress/mod.ts";
import type { IssuerConfig } from "./authentication_config.ts";

/** Options of {@link OidcProvider}. */
export interface OidcProviderOptions {
  logger: Logger;
  /** Wait between discovery attempts while the issuer does not answer. @default 10_000 */
  retryIntervalMs?: number;
  /** Least time between two key set fetches caused by an unknown key. @default 10_000 */
  jwksCooldownMs?: number;
  /** Timeout of one HTTP request. @default 10_000 */
  requestTimeoutMs?: number;
  /** Makes the HTTP client (the `controlplane` egress selection). @default direct */
  createHttpClient?: HttpClientFactory;
}

const WELL_KNOWN = "/.well-known/openid-configuration";

export class OidcProvider {
  readonly #issuer: IssuerConfig;
  readonly #log: Logger;
  readonly #retryMs: number;
  readonly #cooldownMs: number;
  readonly #timeoutMs: number;
  readonly #client?: Deno.HttpClient;
  #keys?: JWTVerifyGetKey;
  #attempt?: Promise<void>;
  #retry?: ReturnType<typeof setTimeout>;
  #closed = false;

  /** Starts discovery at once, in the background. */
  constructor(issuer: IssuerConfig, opts: OidcProviderOptions) {
    this.#issuer = issuer;
    this.#log = opts.logger;
    this.#retryMs = opts.retryIntervalMs ?? 10_000;
    this.#cooldownMs = opts.jwksCooldownMs ?? 10_000;
    this.#timeoutMs = opts.requestTimeoutMs ?? 10_000;
    if (issuer.certificateAuthority || opts.createHttpClient) {
      const caCerts = issuer.certificateAuthority ? [issuer.certificateAuthority] : undefined;
      this.#client = (opts.createHttpClient ?? Deno.createHttpClient)({ caCerts });
    }
    this.#discover();
  }

  /**
   * The issuer's key set for `jwtVerify`, waiting for a discovery in flight; `undefined` while
   * discovery has not succeeded.
   */
  async keys(): Promise<JWTVerifyGetKey | undefined> {
    if (!this.#keys) await this.#attempt;
    return this.#keys;
  }

  /** Stops retrying and releases the connection pool. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#client?.close();
  }

  #discover() {
    this.#attempt = this.#fetchKeySet().then(
      (keys) => {
        this.#keys = keys;
        this.#log.debug(`jwt authenticator ${this.#issuer.url}: discovery succeeded`);
      },
      (err) => {
        if (this.#closed) return;
        this.#log.warn(
          `jwt authenticator ${this.#issuer.url}: discovery failed, retrying in ` +
            `${this.#retryMs / 1000}s:`,
          err,
        );
        this.#retry = setTimeout(() => this.#discover(), this.#retryMs);
      },
    ).finally(() => this.#attempt = undefined);
  }

  async #fetchKeySet(): Promise<JWTVerifyGetKey> {
    const url = this.#issuer.discoveryURL ?? this.#issuer.url.replace(/\/$/, "") + WELL_KNOWN;
    const res = await this.#fetch(url, {
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(this.#timeoutMs),
    });
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`GET ${url}: ${res.status} ${res.statusText}`);
    }
    const doc = await res.json() as { issuer?: unknown; jwks_uri?: unknown };
    // The document must speak for the configured issuer, whoever serves it.
    if (doc.issuer !== this.#issuer.url) {
      throw new Error(
        `${url}: issuer ${JSON.stringify(doc.issuer)} does not match ` +
          JSON.stringify(this.#issuer.url),
      );
    }
    let jwksUri: URL;
    try {
      jwksUri = new URL(String(doc.jwks_uri));
    } catch {
      throw new Error(`${url}: jwks_uri is missing or not a URL`);
    }
    if (jwksUri.protocol !== "https:") throw new Error(`${url}: jwks_uri is not an https URL`);
    return createRemoteJWKSet(jwksUri, {
      cooldownDuration: this.#cooldownMs,
      timeoutDuration: this.#timeoutMs,
      [customFetch]: (u, init) => this.#fetch(u, init),
    });
  }

  async #fetch(url: string, init: RequestInit): Promise<Response> {
    try {
      // A key set fetched for a traced request's token carries its traceparent.
      const traceparent = currentTraceparent();
      if (traceparent !== undefined) {
        const headers = new Headers(init.headers);
        headers.set("traceparent", traceparent);
        init = { ...init, headers };
      }
      return await fetch(url, this.#client ? { ...init, client: this.#client } : init);
    } catch (err) {
      // Deno says "fetch failed" and puts the reason (TLS, refused, …) in the cause.
      const cause = (err as Error).cause;
      const reason = (cause instanceof Error ? cause.message : (err as Error).message)
        .replace(/^error sending request for url \([^)]*\): /, "");
      throw new Error(`GET ${url}: ${reason}`, { cause: err });
    }
  }
}
