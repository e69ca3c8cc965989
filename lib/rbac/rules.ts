/**
 * RBAC policy rules and how one rule matches a request, as kube's `RuleAllows`:
 *
 * - verbs: the request's verb, or `*`;
 * - apiGroups: the request's group, or `*`;
 * - resources: `resource`, `resource/subresource` for subresource requests, `*` (which covers
 *   subresources too), or `*` slash `subresource` for that subresource of any resource;
 * - resourceNames: empty for any name, else the request's name must be listed (so a rule with
 *   names never allows a create, or a list without a `metadata.name` field selector);
 * - nonResourceURLs: the path exactly, `*`, or a prefix ending in `*` (`/apis/*`).
 *
 * Group names are compared in their canonical spelling: the server serves every built-in group
 * under both `*.platform.io` and Kubernetes' `*.k8s.io` names, and kube's typed clients address
 * the latter, so a rule in either spelling means the same built-in group
 * ({@link normalizeRule}). Other groups have one spelling: `widgets.k8s.io` is not
 * `widgets.platform.io`.
 */

import { canonicalGroup } from "../api/mod.ts";
import type { Attributes } from "../auth/mod.ts";

/** A rule of a Role or ClusterRole, as stored (`rules[]`). */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** A rule with every list present and its groups in the canonical spelling. */
export type NormalRule = Required<PolicyRule>;

/** The wildcard of every rule field. */
export const ALL = "*";

/** `rule` with every list present and built-in groups respelled (`rbac.authorization.k8s.io`
 * -> `rbac.authorization.platform.io`); a new object. */
export function normalizeRule(rule: PolicyRule): NormalRule {
  return {
    verbs: strings(rule.verbs),
    apiGroups: strings(rule.apiGroups).map(canonicalGroup),
    resources: strings(rule.resources),
    resourceNames: strings(rule.resourceNames),
    nonResourceURLs: strings(rule.nonResourceURLs),
  };
}

function strings(list: unknown): string[] {
  return Array.isArray(list) ? list.filter((s): s is string => typeof s === "string") : [];
}

/** Whether `rule` allows the request. `a.apiGroup` must be in the canonical spelling. */
export function ruleAllows(a: Attributes, rule: NormalRule): boolean {
  if (!verbMatches(rule, a.verb)) return false;
  if (!a.resourceRequest) return nonResourceURLMatches(rule, a.path ?? "");
  const subresource = a.subresource ?? "";
  const resource = subresource ? `${a.resource ?? ""}/${subresource}` : a.resource ?? "";
  return apiGroupMatches(rule, a.apiGroup ?? "") &&
    resourceMatches(rule, resource, subresource) &&
    resourceNameMatches(rule, a.name ?? "");
}

export function verbMatches(rule: NormalRule, verb: string): boolean {
  return rule.verbs.includes(ALL) || rule.verbs.includes(verb);
}

export function apiGroupMatches(rule: NormalRule, group: string): boolean {
  return rule.apiGroups.includes(ALL) || rule.apiGroups.includes(group);
}

/** `resource` is `name` or `name/subresource`; `subresource` is its part after the slash. */
export function resourceMatches(rule: NormalRule, resource: string, subresource: string): boolean {
  for (const r of rule.resources) {
    if (r === ALL || r === resource) return true;
    if (subresource && r === `*/${subresource}`) return true;
  }
  return false;
}

export function resourceNameMatches(rule: NormalRule, name: string): boolean {
  return rule.resourceNames.length === 0 || rule.resourceNames.includes(name);
}

export function nonResourceURLMatches(rule: NormalRule, path: string): boolean {
  for (const url of rule.nonResourceURLs) {
    if (url === ALL || url === path) return true;
    if (url.endsWith("*") && path.startsWith(url.replace(/\*+$/, ""))) return true;
  }
  return false;
}
