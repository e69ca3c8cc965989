/**
 * The two webhook plugins of the chain, kube's MutatingAdmissionWebhook and
 * ValidatingAdmissionWebhook. For each stored webhook that selects the request (rules,
 * selectors, match conditions), the review is sent and the answer applied: mutating webhooks
 * one after another, each seeing the previous one's changes, those with `reinvocationPolicy:
 * IfNeeded` called once more when a later webhook changed the object; validating webhooks all
 * at once. A webhook that cannot be called, times out or answers nonsense fails the request
 * (`failurePolicy: Fail`) or is skipped with a log line (`Ignore`).
 */

import {
  badRequest,
  internalError,
  type KubeObject,
  type Logger,
  StatusError,
} from "../../api/mod.ts";
import type { Authorizer } from "../../auth/mod.ts";
import { applyJsonPatch } from "../../patch/mod.ts";
import { preparedInput } from "../../cel/mod.ts";
import { traced } from "../../tracing/mod.ts";
import type { AdmissionAttributes } from "../attributes.ts";
import { evaluateWithAuthorizer } from "../authorizer_checks.ts";
import type { AdmissionPlugin } from "../plugin.ts";
import { CallError, type WebhookClient } from "./client.ts";
import { type EquivalentResource, type Matched, matchRules, matchSelectors } from "./matching.ts";
import { admissionRequest, InvalidResponse, parseResponse, reviewBody } from "./review.ts";
import { KUBE_REVIEW_GROUP, type Webhook, type WebhookType } from "./webhook.ts";
import { observeWebhook, type WebhookMetrics } from "./metrics.ts";

export const MUTATING_ADMISSION_WEBHOOK = "MutatingAdmissionWebhook";
export const VALIDATING_ADMISSION_WEBHOOK = "ValidatingAdmissionWebhook";

/** The webhooks of the stored configurations, current as of the call. */
export interface WebhookSource {
  /** In kube's order: configurations by name, then each one's webhooks as listed. */
  webhooks(type: WebhookType): Promise<readonly Webhook[]>;
}

/** What the webhook plugins need from the server. */
export interface WebhookEnvironment {
  source: WebhookSource;
  client: WebhookClient;
  /** A namespace object (for namespace selectors and `namespaceObject`). */
  namespace(name: string): Promise<KubeObject | undefined>;
  /** The resources stored where `resource` is (not itself). */
  equivalents(resource: AdmissionAttributes["resource"]): readonly EquivalentResource[];
  /** Answers `authorizer` checks of match conditions. Absent: every check has no opinion. */
  authorizer?: Authorizer;
  logger: Logger;
  /** Where calls are timed and rejections counted. @default nowhere */
  metrics?: WebhookMetrics;
}

const OPERATIONS = ["CREATE", "UPDATE", "DELETE", "CONNECT"] as const;

/** Audit annotations of mutating webhook calls (kube's keys, in the platform spelling). */
export const MUTATION_ANNOTATION_PREFIX = "mutation.webhook.admission.platform.io/";
export const PATCH_ANNOTATION_PREFIX = "patch.webhook.admission.platform.io/";

/** The group of webhook configurations and admission policies. */
const ADMISSION_CONFIGURATION_GROUP = "admissionregistration.platform.io";

export function mutatingWebhooks(env: WebhookEnvironment): AdmissionPlugin {
  return {
    name: MUTATING_ADMISSION_WEBHOOK,
    operations: OPERATIONS,
    admit: (a) => mutate(env, a),
  };
}

export function validatingWebhooks(env: WebhookEnvironment): AdmissionPlugin {
  return {
    name: VALIDATING_ADMISSION_WEBHOOK,
    operations: OPERATIONS,
    validate: (a) => validate(env, a),
  };
}

/** A webhook that selects the request, with the request's review as it sees it. */
interface Call {
  webhook: Webhook;
  matched: Matched;
}

async function mutate(env: WebhookEnvironment, a: AdmissionAttributes): Promise<void> {
  const hooks = await env.source.webhooks("mutating");
  if (!hooks.length) return;
  // Which IfNeeded webhooks ran, and whether the object changed after each.
  const reinvoke = new Set<Webhook>();
  const ranIfNeeded: Webhook[] = [];
  for (const [index, webhook] of hooks.entries()) {
    const changed = await callMutating(env, a, webhook, { round: 0, index });
    if (changed) { for (const w of ranIfNeeded) if (w !== webhook) reinvoke.add(w); }
    if (changed !== undefined && webhook.reinvocationPolicy === "IfNeeded") {
      ranIfNeeded.push(webhook);
    }
  }
  for (const [index, webhook] of hooks.entries()) {
    if (reinvoke.has(webhook)) await callMutating(env, a, webhook, { round: 1, index });
  }
}

/** Calls one mutating webhook if it selects the request. Undefined: not called; else whether
 * it changed the object. */
async function callMutating(
  env: WebhookEnvironment,
  a: AdmissionAttributes,
  webhook: Webhook,
  at: { round: number; index: number },
): Promise<boolean | undefined> {
  const call = await select(env, a, webhook);
  if (!call) return undefined;
  const response = await send(env, a, call);
  // kube's audit annotations of a mutating webhook's call, in the platform spelling.
  const key = `round_${at.round}_index_${at.index}`;
  const who = { configuration: webhook.configuration, webhook: webhook.name };
  if (response) {
    a.auditAnnotations[`${MUTATION_ANNOTATION_PREFIX}${key}`] = JSON.stringify({
      ...who,
      mutated: Boolean(response.patch?.length),
    });
  }
  if (!response?.patch) return false;
  if (response.patch.length) {
    a.auditAnnotations[`${PATCH_ANNOTATION_PREFIX}${key}`] = JSON.stringify({
      ...who,
      patch: response.patch,
      patchType: "JSONPatch",
    });
  }
  const { target, equivalent } = call.matched;
  let patched: KubeObject;
  try {
    patched = applyJsonPatch(target.object ?? null, response.patch) as KubeObject;
  } catch (err) {
    return failed(env, webhook, `JSON Patch could not be applied: ${(err as Error).message}`);
  }
  if (!a.object || !patched || typeof patched !== "object" || Array.isArray(patched)) {
    return failed(env, webhook, "the patched object is not an object");
  }
  replaceContents(a.object, equivalent ? equivalent.fromEquivalent(patched) : patched);
  (a.mutatedBy ??= []).push(webhook.name);
  return true;
}

async function validate(env: WebhookEnvironment, a: AdmissionAttributes): Promise<void> {
  const hooks = await env.source.webhooks("validating");
  if (!hooks.length) return;
  const calls: Call[] = [];
  for (const webhook of hooks) {
    const call = await select(env, a, webhook);
    if (call) calls.push(call);
  }
  // In parallel; the first failure in webhook order is the answer.
  const results = await Promise.allSettled(calls.map((c) => send(env, a, c)));
  for (const r of results) if (r.status === "rejected") throw r.reason;
}

/** The call of `webhook` for `a`, if the webhook selects it; throws per failurePolicy when
 * deciding fails. */
async function select(
  env: WebhookEnvironment,
  a: AdmissionAttributes,
  webhook: Webhook,
): Promise<Call | undefined> {
  // As kube: webhooks never see writes of the objects that configure admission, so that a
  // broken webhook cannot lock its own configuration in.
  if (a.resource.group === ADMISSION_CONFIGURATION_GROUP) return undefined;
  const matched = matchRules(webhook, a, () => env.equivalents(a.resource));
  if (!matched) return undefined;
  // The namespace is read only when a selector or a condition can look at it.
  const needsNamespace = webhook.matchConditions.length > 0 ||
    !(webhook.namespaceSelector instanceof Error) && !webhook.namespaceSelector.isEmpty();
  const namespace = a.namespace && needsNamespace ? await env.namespace(a.namespace) : undefined;
  try {
    if (!matchSelectors(webhook, a, namespace)) return undefined;
  } catch (err) {
    return failed(env, webhook, `invalid selector: ${(err as Error).message}`);
  }
  if (webhook.matchConditions.length) {
    // Each part converted to CEL when a condition first reads it, once for all of them.
    const variables = {
      object: preparedInput(matched.target.object ?? null, "object"),
      oldObject: preparedInput(matched.target.oldObject ?? null, "oldObject"),
      request: preparedInput(admissionRequest("", a, matched.target, false), "request"),
      namespaceObject: preparedInput(namespace ?? null, "namespaceObject"),
    };
    const errors: string[] = [];
    for (const c of webhook.matchConditions) {
      try {
        const ok = await evaluateWithAuthorizer(env.authorizer, a.user, c.expression, variables);
        if (ok === false) return undefined;
      } catch (err) {
        errors.push(`${c.name}: ${(err as Error).message}`);
      }
    }
    if (errors.length) {
      return failed(env, webhook, `failed to evaluate match conditions: ${errors.join("; ")}`);
    }
  }
  if (a.dryRun && webhook.sideEffects !== "None" && webhook.sideEffects !== "NoneOnDryRun") {
    throw badRequest(`admission webhook ${JSON.stringify(webhook.name)} does not support dry run`);
  }
  return { webhook, matched };
}

/** Sends the review; applies the answer's denial, warnings and audit annotations. */
async function send(env: WebhookEnvironment, a: AdmissionAttributes, call: Call) {
  const { webhook, matched } = call;
  const uid = crypto.randomUUID();
  const request = admissionRequest(
    uid,
    a,
    matched.target,
    webhook.reviewGroup === KUBE_REVIEW_GROUP,
  );
  let response;
  const started = performance.now();
  try {
    // kube's span of a webhook call, with its attributes; the call sends its traceparent.
    const answer = await traced(
      webhook.type === "mutating" ? "Call mutating webhook" : "Call validating webhook",
      {
        configuration: webhook.configuration,
        webhook: webhook.name,
        resource: a.resource.resource,
        subresource: a.subresource,
        operation: a.operation,
        UID: uid,
      },
      () => env.client.call(webhook, reviewBody(webhook, request)),
    );
    response = parseResponse(webhook, uid, answer);
  } catch (err) {
    const known = err instanceof CallError || err instanceof InvalidResponse;
    const refuses = !known || webhook.failurePolicy === "Fail";
    observeWebhook(
      env.metrics,
      webhook,
      a,
      started,
      refuses
        ? { type: known ? "calling_webhook_error" : "apiserver_internal_error", code: 0 }
        : undefined,
    );
    if (err instanceof CallError) {
      return failed(env, webhook, `failed to call webhook: ${err.message}`);
    }
    if (err instanceof InvalidResponse) {
      return failed(env, webhook, `received invalid webhook response: ${err.message}`);
    }
    throw err;
  }
  a.warnings.push(...response.warnings);
  for (const [key, value] of Object.entries(response.auditAnnotations)) {
    a.auditAnnotations[`${webhook.name}/${key}`] = value;
  }
  if (!response.allowed) {
    const refusal = denial(webhook, response.status);
    observeWebhook(env.metrics, webhook, a, started, { type: "no_error", code: refusal.code });
    throw refusal;
  }
  observeWebhook(env.metrics, webhook, a, started);
  return response;
}

/** A failed call: an error under `failurePolicy: Fail`, a log line and no answer under Ignore. */
function failed(env: WebhookEnvironment, webhook: Webhook, why: string): undefined {
  const message = `failed calling webhook ${JSON.stringify(webhook.name)}: ${why}`;
  if (webhook.failurePolicy === "Fail") throw internalError(message);
  env.logger.warn(
    `admission: ${message} (configuration ${webhook.configuration}, failurePolicy Ignore: allowed)`,
  );
  return undefined;
}

/** kube's `ToStatusErr`: the webhook's status, its message prefixed, its code at least 400. */
function denial(webhook: Webhook, status: KubeObject | undefined): StatusError {
  const deniedBy = `admission webhook ${JSON.stringify(webhook.name)} denied the request`;
  const code = Number.isInteger(status?.code) && status!.code >= 400 ? status!.code : 400;
  const message = typeof status?.message === "string" && status.message
    ? `${deniedBy}: ${status.message}`
    : typeof status?.reason === "string" && status.reason
    ? `${deniedBy}: ${status.reason}`
    : `${deniedBy} without explanation`;
  const reason = typeof status?.reason === "string" ? status.reason : "";
  const details = status?.details && typeof status.details === "object"
    ? status.details
    : undefined;
  // deno-lint-ignore no-explicit-any
  return new StatusError(code, reason as any, message, { details });
}

/** Replaces `target`'s properties with `source`'s, in place (the registry holds `target`). */
function replaceContents(target: KubeObject, source: KubeObject): void {
  for (const k of Object.keys(target)) if (!(k in source)) delete target[k];
  Object.assign(target, source);
}
