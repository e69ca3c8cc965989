/**
 * The webhook authorizer (`type: Webhook`): asks a remote service by POSTing a
 * SubjectAccessReview, as kube's webhook authorizer does, so webhooks written for kube work.
 *
 * One decision:
 * 1. The request becomes a SubjectAccessReview spec in kube's v1 JSON shape (empty fields left
 *    out; a built-in group in its one canonical spelling, `certificates.platform.io`, however
 *    the client spelled it: request parsing and access reviews canonicalize it before any
 *    authorizer). The match conditions see it as `request`: all true → go on; any false → no
 *    opinion without a call (a false wins over errors); otherwise an error → the failure
 *    policy.
 * 2. A cached answer for the same spec is used while fresh: allowed answers for
 *    `authorizedTTL`, others for `unauthorizedTTL`. Failures are not cached.
 * 3. Otherwise the review goes to the webhook as `authorization.k8s.io/<version>` (kube's group
 *    name: that is what webhooks parse; `v1beta1` spells `groups` as `group`), giving up after
 *    `timeout`. Transport errors, non-2xx answers and answers that are not a
 *    SubjectAccessReview with a `status` → the failure policy. There are no retries.
 * 4. `status.denied` → Deny, else `status.allowed` → Allow, else no opinion; both → Deny with
 *    an evaluation error. `status.reason` and `status.evaluationError` are passed on.
 *
 * The failure policy answers `NoOpinion` or `Deny` with reason `authorization webhook "<name>"
 * failed` and the cause as evaluation error (causes never contain credentials).
 *
 * @module
 */

import { formatDuration, quote } from "../config/mod.ts";
import type { CompiledExpression } from "../cel/mod.ts";
import type { Logger, UserInfo } from "../api/mod.ts";
import type { HttpClientFactory } from "../egress/mod.ts";
import type { Attributes, AuthorizationResult, Authorizer, RuleSet } from "./authorizer.ts";
import type { WebhookConfig } from "./authorization_config.ts";
import { injectTraceparent } from "../tracing/mod.ts";

/** Options of {@link WebhookAuthorizer}. */
export interface WebhookAuthorizerOptions {
  /** The authorizer's `name` in the configuration; messages name the webhook by it. */
  name: string;
  config: WebhookConfig;
  /** Where failed calls are reported. @default nowhere */
  logger?: Pick<Logger, "warn">;
  /** The clock for cache expiry, in milliseconds. @default Date.now */
  now?: () => number;
  /** Makes the HTTP client (the `cluster` egress selection). @default direct */
  createHttpClient?: HttpClientFactory;
}

/** kube's webhook response cache size. */
const CACHE_SIZE = 8192;
/** Requests whose client-chosen attributes are longer are not cached (kube: a DoS guard). */
const MAX_CACHED_ATTRIBUTES_LENGTH = 10_000;
/** kube's group name: webhooks written for kube parse this. */
const SAR_GROUP = "authorization.k8s.io";

/** A SubjectAccessReview spec in the v1 JSON shape. */
interface SarSpec {
  user?: string;
  groups?: string[];
  uid?: string;
  extra?: Record<string, string[]>;
  resourceAttributes?: Record<string, string>;
  nonResourceAttributes?: Record<string, string>;
}

/** The part of a review's status a decision is made of. */
interface SarStatus {
  allowed: boolean;
  denied: boolean;
  reason: string;
  evaluationError: string;
}

/** Authorizes by asking a webhook. Call {@link close} when done with it. */
export class WebhookAuthorizer implements Authorizer {
  readonly #name: string;
  readonly #config: WebhookConfig;
  readonly #client: Deno.HttpClient;
  readonly #cache: ExpiringCache<SarStatus>;
  readonly #logger?: Pick<Logger, "warn">;

  constructor(opts: WebhookAuthorizerOptions) {
    this.#name = opts.name;
    this.#config = opts.config;
    this.#logger = opts.logger;
    const conn = opts.config.connection;
    const createHttpClient = opts.createHttpClient ?? Deno.createHttpClient;
    this.#client = createHttpClient({ caCerts: conn.caCerts, ...conn.clientCertificate });
    this.#cache = new ExpiringCache(CACHE_SIZE, opts.now ?? Date.now);
  }

  async authorize(attributes: Attributes): Promise<AuthorizationResult> {
    const spec = sarSpec(attributes);
    const match = matches(this.#config.matchConditions, spec);
    if (match instanceof Error) return this.#failure(match.message);
    if (!match) return { decision: "NoOpinion" };

    const key = JSON.stringify(spec);
    let status = this.#cache.get(key);
    if (status === undefined) {
      try {
        status = await this.#call(spec);
      } catch (err) {
        return this.#failure((err as Error).message);
      }
      if (attributesLength(attributes) < MAX_CACHED_ATTRIBUTES_LENGTH) {
        const ttl = status.allowed ? this.#config.authorizedTTL : this.#config.unauthorizedTTL;
        this.#cache.set(key, status, ttl);
      }
    }
    return decisionOf(status);
  }

  /** A webhook cannot list what it would allow (kube answers the same). */
  rulesFor(_user: UserInfo, _namespace: string): Promise<RuleSet> {
    return Promise.resolve({
      resourceRules: [],
      nonResourceRules: [],
      incomplete: true,
      evaluationError: "webhook authorizer does not support user rule resolution",
    });
  }

  /** Releases the HTTP client's connections. */
  close(): void {
    this.#client.close();
  }

  /** POSTs the review and returns its status; throws with the cause on any failure. */
  async #call(spec: SarSpec): Promise<SarStatus> {
    const { connection, timeout, subjectAccessReviewVersion: version } = this.#config;
    const body = {
      apiVersion: `${SAR_GROUP}/${version}`,
      kind: "SubjectAccessReview",
      spec: version === "v1beta1" ? toV1beta1(spec) : spec,
    };
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json",
    };
    if (connection.authorization) headers.authorization = await connection.authorization();
    injectTraceparent(headers);
    let text: string;
    let res: Response;
    try {
      res = await fetch(connection.url, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        client: this.#client,
        signal: AbortSignal.timeout(timeout),
      });
      text = await res.text();
    } catch (err) {
      if (err instanceof DOMException && err.name === "TimeoutError") {
        throw new Error(`no answer within ${formatDuration(timeout)}`);
      }
      throw new Error(`request failed: ${(err as Error).message}`);
    }
    if (!res.ok) throw new Error(`answered HTTP ${res.status}`);
    return parseStatus(text);
  }

  #failure(cause: string): AuthorizationResult {
    const evaluationError = `authorization webhook ${quote(this.#name)}: ${cause}`;
    this.#logger?.warn(evaluationError);
    return {
      decision: this.#config.failurePolicy === "Deny" ? "Deny" : "NoOpinion",
      reason: `authorization webhook ${quote(this.#name)} failed`,
      evaluationError,
    };
  }
}

/** The review spec of a request, kube's v1 JSON with empty fields left out (Go `omitempty`). */
function sarSpec(a: Attributes): SarSpec {
  const spec: SarSpec = {};
  if (a.user.username) spec.user = a.user.username;
  if (a.user.groups.length > 0) spec.groups = a.user.groups;
  if (a.user.uid) spec.uid = a.user.uid;
  if (a.user.extra && Object.keys(a.user.extra).length > 0) spec.extra = a.user.extra;
  if (a.resourceRequest) {
    spec.resourceAttributes = compact({
      namespace: a.namespace,
      verb: a.verb,
      group: a.apiGroup,
      version: a.apiVersion,
      resource: a.resource,
      subresource: a.subresource,
      name: a.name,
    });
  } else {
    spec.nonResourceAttributes = compact({ path: a.path, verb: a.verb });
  }
  return spec;
}

function compact(fields: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fields).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ""),
  );
}

function toV1beta1(spec: SarSpec): Record<string, unknown> {
  const { groups, ...rest } = spec;
  return groups === undefined ? rest : { ...rest, group: groups };
}

/** True when every condition holds, false when one is false, an Error when one failed. */
function matches(conditions: readonly CompiledExpression[], spec: SarSpec): boolean | Error {
  const failures: string[] = [];
  for (const condition of conditions) {
    let result: unknown;
    try {
      result = condition.evaluate({ request: spec });
    } catch (err) {
      failures.push(`match condition ${quote(condition.expression)}: ${(err as Error).message}`);
      continue;
    }
    if (result === false) return false;
    if (result !== true) {
      failures.push(`match condition ${quote(condition.expression)} did not yield a bool`);
    }
  }
  return failures.length > 0 ? new Error(failures.join("; ")) : true;
}

/** The status of a webhook's answer; throws when the answer is not a SubjectAccessReview. */
function parseStatus(text: string): SarStatus {
  let review: unknown;
  try {
    review = JSON.parse(text);
  } catch {
    throw new Error("the answer is not JSON");
  }
  if (typeof review !== "object" || review === null || Array.isArray(review)) {
    throw new Error("the answer is not a JSON object");
  }
  const { kind, status } = review as Record<string, unknown>;
  if (kind !== "SubjectAccessReview") {
    throw new Error(`the answer is not a SubjectAccessReview (kind ${quote(String(kind))})`);
  }
  if (typeof status !== "object" || status === null || Array.isArray(status)) {
    throw new Error("the answer has no status");
  }
  const s = status as Record<string, unknown>;
  const bool = (name: string): boolean => {
    const v = s[name] ?? false;
    if (typeof v !== "boolean") throw new Error(`the answer's status.${name} is not a boolean`);
    return v;
  };
  const str = (name: string): string => {
    const v = s[name] ?? "";
    if (typeof v !== "string") throw new Error(`the answer's status.${name} is not a string`);
    return v;
  };
  return {
    allowed: bool("allowed"),
    denied: bool("denied"),
    reason: str("reason"),
    evaluationError: str("evaluationError"),
  };
}

function decisionOf(status: SarStatus): AuthorizationResult {
  const result: AuthorizationResult = status.denied
    ? { decision: "Deny" }
    : { decision: status.allowed ? "Allow" : "NoOpinion" };
  if (status.reason) result.reason = status.reason;
  if (status.allowed && status.denied) {
    result.evaluationError = "webhook subject access review returned both allow and deny response";
  } else if (status.evaluationError) {
    result.evaluationError = status.evaluationError;
  }
  return result;
}

function attributesLength(a: Attributes): number {
  return [a.namespace, a.verb, a.apiGroup, a.apiVersion, a.resource, a.subresource, a.name, a.path]
    .reduce((n, s) => n + (s?.length ?? 0), 0);
}

/** A bounded map whose entries expire; the least recently used goes first when full. */
class ExpiringCache<V> {
  readonly #entries = new Map<string, { value: V; expires: number }>();

  constructor(readonly size: number, readonly now: () => number) {}

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    if (entry.expires <= this.now()) return undefined;
    this.#entries.set(key, entry); // most recently used last
    return entry.value;
  }

  set(key: string, value: V, ttl: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expires: this.now() + ttl });
    if (this.#entries.size > this.size) this.#entries.delete(this.#entries.keys().next().value!);
  }
}
