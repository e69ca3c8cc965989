/**
 * A webhook as the dispatcher uses it: read once from a stored Mutating- or
 * ValidatingWebhookConfiguration (kube's v1 defaults filled in where the stored object lacks
 * them), its selectors parsed and its match conditions compiled.
 */

import { type KubeObject, type LabelSelector, labelSelectorFromObject } from "../../api/mod.ts";
import { compile, type CompiledExpression } from "../../cel/mod.ts";
import type { Rule } from "./rules.ts";

export type WebhookType = "mutating" | "validating";

/** Where the webhook is reached: a URL, or a Service resolved by its DNS name. */
export interface ClientConfig {
  /** The https URL to POST to (a Service reference made into `https://<name>.<namespace>.svc:<port><path>`). */
  url: string;
  /** PEM CA bundle; empty: the system's roots. */
  caBundle: string;
  /** Host name the certificate is checked against (the Service's DNS name, or the URL's host). */
  serverName: string;
}

export interface MatchCondition {
  name: string;
  expression: CompiledExpression;
}

export interface Webhook {
  type: WebhookType;
  name: string;
  /** The configuration object's name (calls and errors name the webhook, logs both). */
  configuration: string;
  clientConfig: ClientConfig;
  rules: Rule[];
  failurePolicy: "Fail" | "Ignore";
  matchPolicy: "Exact" | "Equivalent";
  /** An Error when the stored selector does not parse: calls then fail by failurePolicy. */
  namespaceSelector: LabelSelector | Error;
  objectSelector: LabelSelector | Error;
  sideEffects: string;
  timeoutMs: number;
  /** Mutating only. */
  reinvocationPolicy: "Never" | "IfNeeded";
  matchConditions: MatchCondition[];
  /** The AdmissionReview group the webhook speaks: `admission.k8s.io` when its configuration
   * was written under the Kubernetes group name, else `admission.platform.io`. */
  reviewGroup: string;
}

/** The annotation recording that a configuration was written as `admissionregistration.k8s.io`. */
export const REVIEW_GROUP_ANNOTATION = "admissionregistration.platform.io/review-group";

export const PLATFORM_REVIEW_GROUP = "admission.platform.io";
export const KUBE_REVIEW_GROUP = "admission.k8s.io";

/**
 * The webhooks of one stored configuration. A webhook whose selector or match condition
 * cannot be used (validation refuses those at write time; an object stored by an older
 * version could still have one) is kept with its condition replaced by one that always
 * errors, so that its failurePolicy decides.
 */
export function webhooksOf(type: WebhookType, config: KubeObject): Webhook[] {
  const configuration = String(config.metadata?.name ?? "");
  const reviewGroup = config.metadata?.annotations?.[REVIEW_GROUP_ANNOTATION] === KUBE_REVIEW_GROUP
    ? KUBE_REVIEW_GROUP
    : PLATFORM_REVIEW_GROUP;
  const hooks: KubeObject[] = Array.isArray(config.webhooks) ? config.webhooks : [];
  return hooks.map((h) => ({
    type,
    name: String(h.name ?? ""),
    configuration,
    clientConfig: clientConfigOf(h.clientConfig ?? {}),
    rules: Array.isArray(h.rules) ? h.rules : [],
    failurePolicy: h.failurePolicy === "Ignore" ? "Ignore" : "Fail",
    matchPolicy: h.matchPolicy === "Exact" ? "Exact" : "Equivalent",
    namespaceSelector: selectorOf(h.namespaceSelector),
    objectSelector: selectorOf(h.objectSelector),
    sideEffects: String(h.sideEffects ?? "Unknown"),
    timeoutMs: 1000 * (Number.isInteger(h.timeoutSeconds) ? h.timeoutSeconds : 10),
    reinvocationPolicy: h.reinvocationPolicy === "IfNeeded" ? "IfNeeded" : "Never",
    matchConditions: (Array.isArray(h.matchConditions) ? h.matchConditions : []).map(
      conditionOf,
    ),
    reviewGroup,
  }));
}

function clientConfigOf(c: KubeObject): ClientConfig {
  const caBundle = typeof c.caBundle === "string" && c.caBundle
    ? new TextDecoder().decode(Uint8Array.from(atob(c.caBundle), (ch) => ch.charCodeAt(0)))
    : "";
  if (typeof c.url === "string") {
    let serverName = "";
    try {
      serverName = new URL(c.url).hostname;
    } catch { /* refused at write time; the call fails and failurePolicy decides */ }
    return { url: c.url, caBundle, serverName };
  }
  const s = c.service ?? {};
  const host = `${s.name}.${s.namespace}.svc`;
  const path = typeof s.path === "string" ? s.path : "";
  return { url: `https://${host}:${s.port ?? 443}${path}`, caBundle, serverName: host };
}

/** Absent means everything here (kube defaults both selectors to `{}`). */
export function selectorOf(obj: unknown): LabelSelector | Error {
  try {
    return labelSelectorFromObject((obj ?? {}) as Record<string, never>);
  } catch (err) {
    return err as Error;
  }
}

function conditionOf(c: KubeObject): MatchCondition {
  const name = String(c?.name ?? "");
  try {
    const expression = compile("admission", String(c?.expression ?? ""), {
      expect: "bool",
      authorizer: true,
    });
    return { name, expression };
  } catch (err) {
    const why = (err as Error).message;
    return {
      name,
      expression: {
        expression: String(c?.expression ?? ""),
        environment: "admission",
        usesClaim: () => false,
        evaluate: () => {
          throw new Error(`compilation failed: ${why}`);
        },
      },
    };
  }
}
