/**
 * Which requests a webhook's `rules` select (kube's rule matcher): operation, API group,
 * version, resource with its subresource forms, and scope. Groups in rules are read in either
 * spelling (`apps`, `rbac.authorization.k8s.io`), as users' manifests write them.
 */

import { canonicalGroup } from "../../api/mod.ts";
import type { Operation } from "../attributes.ts";

/** One rule of a webhook (`RuleWithOperations`), as stored (defaults applied). */
export interface Rule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

/** What a rule is matched against: the request, or an equivalent resource of it. */
export interface RuleTarget {
  operation: Operation;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  /** `""` for cluster-scoped objects. */
  namespace: string;
}

export function ruleMatches(rule: Rule, t: RuleTarget): boolean {
  return has(rule.operations, t.operation) &&
    (rule.apiGroups ?? []).some((g) => g === "*" || canonicalGroup(g) === t.group) &&
    has(rule.apiVersions, t.version) &&
    (rule.resources ?? []).some((r) => resourceMatches(r, t.resource, t.subresource)) &&
    scopeMatches(rule.scope, t);
}

function has(list: string[] | undefined, value: string): boolean {
  return (list ?? []).some((v) => v === "*" || v === value);
}

/** `*` all resources (not subresources), `*\/*` everything, `r`, `r/s`, `r/*`, `*\/s`. */
function resourceMatches(pattern: string, resource: string, subresource: string): boolean {
  const [res, sub = ""] = pattern.split("/", 2);
  const subMatches = pattern.includes("/") ? sub === "*" || sub === subresource : !subresource;
  return (res === "*" || res === resource) && subMatches;
}

/** A Namespace is cluster-scoped, whatever namespace its request names. */
function scopeMatches(scope: string | undefined, t: RuleTarget): boolean {
  const isNamespace = t.group === "" && t.resource === "namespaces";
  if (scope === "Namespaced") return !isNamespace && t.namespace !== "";
  if (scope === "Cluster") return isNamespace || t.namespace === "";
  return true;
}
