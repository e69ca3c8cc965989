/**
 * CustomResourceDefinition conditions (`Established`, `NamesAccepted`, `Terminating`) and the
 * cleanup finalizer, with Kubernetes' reasons and messages.
 */

import type { KubeObject } from "../registry/mod.ts";

/** Held by a CRD being deleted until its custom resources are gone (Kubernetes:
 * `customresourcecleanup.apiextensions.k8s.io`). */
export const CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.platform.io";

export type ConditionType = "Established" | "NamesAccepted" | "Terminating";

export interface Condition {
  type: ConditionType;
  status: "True" | "False" | "Unknown";
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/** The condition of `type` in `crd.status`, if any. */
export function findCondition(crd: KubeObject, type: ConditionType): Condition | undefined {
  const list = crd.status?.conditions;
  return Array.isArray(list) ? list.find((c: Condition) => c?.type === type) : undefined;
}

/** True when the condition of `type` is True. */
export function isConditionTrue(crd: KubeObject, type: ConditionType): boolean {
  return findCondition(crd, type)?.status === "True";
}

/**
 * Sets `cond` in `status.conditions` (mutates `status`): replaces the condition of the same
 * type, keeping its `lastTransitionTime` when the status did not change, else stamping `now`.
 */
export function setCondition(status: KubeObject, cond: Condition, now: string): void {
  const list: Condition[] = Array.isArray(status.conditions) ? status.conditions : [];
  const i = list.findIndex((c) => c?.type === cond.type);
  const old = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    type: cond.type,
    status: cond.status,
    lastTransitionTime: old && old.status === cond.status && old.lastTransitionTime
      ? old.lastTransitionTime
      : now,
  };
  if (cond.reason) next.reason = cond.reason;
  if (cond.message) next.message = cond.message;
  if (i >= 0) list[i] = next;
  else list.push(next);
  status.conditions = list;
}
