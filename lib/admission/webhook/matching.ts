/**
 * Whether a request goes to a webhook (kube's `ShouldCallHook`): its rules, taken as written
 * or, under `matchPolicy: Equivalent`, for a resource stored in the same place (core v1 events
 * and events.platform.io/v1 events); then its namespace and object selectors. Match conditions
 * are evaluated by the dispatcher, once the request's review is built.
 */

import type { KubeObject } from "../../api/mod.ts";
import type { AdmissionAttributes } from "../attributes.ts";
import type { ReviewTarget } from "./review.ts";
import { ruleMatches } from "./rules.ts";
import type { Webhook } from "./webhook.ts";

type GroupVersionResource = AdmissionAttributes["resource"];

/** A resource stored where the request's is, and how its objects are converted. */
export interface EquivalentResource {
  resource: GroupVersionResource;
  kind: AdmissionAttributes["kind"];
  /** The request's object in this resource's version. */
  toEquivalent(obj: KubeObject): KubeObject;
  /** Back: an object of this resource's version in the request's version. */
  fromEquivalent(obj: KubeObject): KubeObject;
}

/** The resource a webhook is called for: the request's own, or an equivalent one. */
export interface Matched {
  target: ReviewTarget;
  /** Set when the webhook matched through an equivalent resource. */
  equivalent?: EquivalentResource;
}

/** The rule match of `webhook` for `a`, or undefined when its rules do not select it. */
export function matchRules(
  webhook: Pick<Webhook, "rules" | "matchPolicy">,
  a: AdmissionAttributes,
  /** The resources stored alike, asked for only when the rules do not match as written. */
  equivalents: () => readonly EquivalentResource[],
): Matched | undefined {
  const target = {
    ...a.resource,
    operation: a.operation,
    subresource: a.subresource,
    namespace: a.namespace,
  };
  if (webhook.rules.some((r) => ruleMatches(r, target))) {
    return {
      target: {
        resource: a.resource,
        subresource: a.subresource,
        kind: a.kind,
        object: a.object,
        oldObject: a.oldObject,
      },
    };
  }
  if (webhook.matchPolicy !== "Equivalent") return undefined;
  for (const eq of equivalents()) {
    if (!webhook.rules.some((r) => ruleMatches(r, { ...target, ...eq.resource }))) continue;
    return {
      target: {
        resource: eq.resource,
        subresource: a.subresource,
        kind: eq.kind,
        object: a.object && eq.toEquivalent(a.object),
        oldObject: a.oldObject && eq.toEquivalent(a.oldObject),
      },
      equivalent: eq,
    };
  }
  return undefined;
}

/**
 * The selectors: the object's (its new or old labels), and the namespace's (its labels; a
 * Namespace's own; none for other cluster-scoped objects). Throws when a selector cannot be
 * used.
 */
export function matchSelectors(
  webhook: Pick<Webhook, "namespaceSelector" | "objectSelector">,
  a: AdmissionAttributes,
  namespace: KubeObject | undefined,
): boolean {
  if (webhook.objectSelector instanceof Error) throw webhook.objectSelector;
  if (webhook.namespaceSelector instanceof Error) throw webhook.namespaceSelector;
  const objectSelector = webhook.objectSelector;
  const labelsOf = (o: KubeObject | undefined) => o?.metadata?.labels as Record<string, string>;
  const objectMatches = objectSelector.matches(labelsOf(a.object)) ||
    (a.oldObject !== undefined && objectSelector.matches(labelsOf(a.oldObject)));
  if (!objectMatches) return false;
  const isNamespace = a.resource.group === "" && a.resource.resource === "namespaces";
  if (isNamespace) {
    return webhook.namespaceSelector.matches(labelsOf(a.object ?? a.oldObject));
  }
  if (!a.namespace) return true;
  return webhook.namespaceSelector.matches(labelsOf(namespace));
}
