/**
 * Rule coverage, as kube's escalation check computes it: may someone holding `owner` rules
 * grant `servant` rules? Each servant rule is broken down into single (group, resource, verb,
 * name) or (URL, verb) tuples; every tuple must be covered by one owner rule. The tuples left
 * over are what the user is missing, compacted and worded as kube's error message lists them.
 */

import { ALL, type NormalRule, type PolicyRule } from "./rules.ts";

/** The broken-down servant rules that no owner rule covers (empty: covered). */
export function uncoveredRules(owner: NormalRule[], servant: NormalRule[]): NormalRule[] {
  const missing: NormalRule[] = [];
  for (const rule of servant) {
    for (const sub of breakdownRule(rule)) {
      if (!owner.some((o) => ruleCovers(o, sub))) missing.push(sub);
    }
  }
  return missing;
}

/** `rule` as rules of one verb, one group, one resource and at most one name (or one URL). */
export function breakdownRule(rule: NormalRule): NormalRule[] {
  const out: NormalRule[] = [];
  const one = (
    apiGroups: string[],
    resources: string[],
    verbs: string[],
    resourceNames: string[],
    nonResourceURLs: string[],
  ) => out.push({ verbs, apiGroups, resources, resourceNames, nonResourceURLs });
  for (const group of rule.apiGroups) {
    for (const resource of rule.resources) {
      for (const verb of rule.verbs) {
        if (rule.resourceNames.length === 0) one([group], [resource], [verb], [], []);
        for (const name of rule.resourceNames) one([group], [resource], [verb], [name], []);
      }
    }
  }
  for (const url of rule.nonResourceURLs) {
    for (const verb of rule.verbs) one([], [], [verb], [], [url]);
  }
  return out;
}

/** Whether `owner` covers `sub`, a rule of {@link breakdownRule}. */
function ruleCovers(owner: NormalRule, sub: NormalRule): boolean {
  const names = sub.resourceNames.length === 0
    ? owner.resourceNames.length === 0
    : owner.resourceNames.length === 0 || hasAll(owner.resourceNames, sub.resourceNames);
  return names &&
    (owner.verbs.includes(ALL) || hasAll(owner.verbs, sub.verbs)) &&
    (owner.apiGroups.includes(ALL) || hasAll(owner.apiGroups, sub.apiGroups)) &&
    resourcesCover(owner.resources, sub.resources) &&
    sub.nonResourceURLs.every((url) => owner.nonResourceURLs.some((o) => urlCovers(o, url)));
}

function hasAll(set: string[], wanted: string[]): boolean {
  return wanted.every((w) => set.includes(w));
}

/** A `*` resource covers everything; `*` slash `status` covers every resource's status. */
function resourcesCover(owner: string[], wanted: string[]): boolean {
  if (owner.includes(ALL)) return true;
  return wanted.every((r) => {
    if (owner.includes(r)) return true;
    const slash = r.indexOf("/");
    return slash >= 0 && owner.includes(`*/${r.slice(slash + 1)}`);
  });
}

function urlCovers(owner: string, url: string): boolean {
  return owner === url || (owner.endsWith("*") && url.startsWith(owner.replace(/\*+$/, "")));
}

/**
 * Joins rules that name one group and one resource (and at most one name) and differ only in
 * verbs, as kube's `CompactRules` does with the missing rules before listing them.
 */
export function compactRules(rules: NormalRule[]): NormalRule[] {
  const simple = new Map<string, NormalRule>();
  const out: NormalRule[] = [];
  for (const rule of rules) {
    const isSimple = rule.apiGroups.length === 1 && rule.resources.length === 1 &&
      rule.resourceNames.length <= 1 && rule.nonResourceURLs.length === 0;
    if (!isSimple) {
      out.push(rule);
      continue;
    }
    const key = JSON.stringify([rule.apiGroups, rule.resources, rule.resourceNames]);
    const seen = simple.get(key);
    if (!seen) simple.set(key, { ...rule, verbs: [...rule.verbs] });
    else for (const v of rule.verbs) if (!seen.verbs.includes(v)) seen.verbs.push(v);
  }
  return [...out, ...simple.values()];
}

/** kube's `CompactString`: `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`. */
export function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  const field = (name: string, list: string[] | undefined) => {
    if (list?.length) parts.push(`${name}:${goQuotedList(list)}`);
  };
  field("APIGroups", rule.apiGroups);
  field("Resources", rule.resources);
  field("NonResourceURLs", rule.nonResourceURLs);
  field("ResourceNames", rule.resourceNames);
  field("Verbs", rule.verbs);
  return `{${parts.join(", ")}}`;
}

/** Go's `%q` of a string slice: `["a" "b"]`. */
export function goQuotedList(list: readonly string[]): string {
  return `[${list.map((s) => JSON.stringify(s)).join(" ")}]`;
}
