/**
 * The `--audit-policy-file` (`Policy`, spec 03): which requests are audited, at which level,
 * and which stages are left out. Accepted `apiVersion`s: `audit.platform.io/v1` and kube's
 * `audit.k8s.io/v1`, so that kube's policies work unchanged. The file is YAML or JSON; unknown
 * fields are errors, and every problem is reported at once with its field path, in kube's
 * field-error words (`rules[0].level: Unsupported value: "Loud": supported values: …`).
 *
 * Matching follows kube's policy checker: rules are tried in order and the first whose every
 * given criterion matches decides; a request no rule matches is level None. A rule with
 * `resources` or `namespaces` matches only resource requests, one with `nonResourceURLs` only
 * the others (`/healthz*` matches by prefix). In `resources[].resources`, `*` is every
 * resource, `pods/status` a subresource, `*\/status` that subresource of any resource and
 * `pods/*` pods and every subresource of pods; groups are compared in their canonical spelling
 * (`certificates.k8s.io` is `certificates.platform.io`).
 *
 * @module
 */

import { z } from "zod";
import { canonicalGroup, fieldErrorMessage, type UserInfo } from "../api/mod.ts";
import {
  ConfigError,
  describeValue,
  fieldPath,
  formatIssueAsFieldError,
  parseYamlConfig,
  quote,
  readConfigFile,
  valueAt,
} from "../config/mod.ts";

export const AUDIT_POLICY_API_VERSIONS = ["audit.platform.io/v1", "audit.k8s.io/v1"] as const;
export const AUDIT_POLICY_KIND = "Policy";

export const LEVELS = ["None", "Metadata", "Request", "RequestResponse"] as const;
export type Level = typeof LEVELS[number];
export const STAGES = ["RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"] as const;
export type Stage = typeof STAGES[number];

/** What a request is, as the policy reads it (kube's authorizer attributes). */
export interface AuditAttributes {
  /** The authenticated user (before impersonation, as kube evaluates the policy). */
  user?: UserInfo;
  verb: string;
  resourceRequest: boolean;
  /** The URL path (non-resource requests). */
  path: string;
  namespace?: string;
  /** Canonical spelling. */
  apiGroup?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

/** What the policy decides for one request. */
export interface AuditDecision {
  level: Level;
  /** Stages not emitted: the policy's and the rule's. */
  omitStages: ReadonlySet<Stage>;
  omitManagedFields: boolean;
}

interface GroupResources {
  group: string;
  resources: string[];
  resourceNames: string[];
}

/** One validated rule. */
export interface PolicyRule {
  level: Level;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  namespaces: string[];
  nonResourceURLs: string[];
  omitStages: Stage[];
  omitManagedFields?: boolean;
}

/** A validated policy. */
export interface AuditPolicy {
  rules: PolicyRule[];
  omitStages: Stage[];
  omitManagedFields: boolean;
}

const groupResourcesSchema = z.strictObject({
  group: z.string().optional(),
  resources: z.array(z.string()).optional(),
  resourceNames: z.array(z.string()).optional(),
});
const ruleSchema = z.strictObject({
  level: z.string(),
  users: z.array(z.string()).optional(),
  userGroups: z.array(z.string()).optional(),
  verbs: z.array(z.string()).optional(),
  resources: z.array(groupResourcesSchema).optional(),
  namespaces: z.array(z.string()).optional(),
  nonResourceURLs: z.array(z.string()).optional(),
  omitStages: z.array(z.string()).optional(),
  omitManagedFields: z.boolean().optional(),
});
const policySchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  rules: z.array(ruleSchema),
  omitStages: z.array(z.string()).optional(),
  omitManagedFields: z.boolean().optional(),
});

type Obj = Record<string, unknown>;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Reads and validates the policy file; a ConfigError lists every problem, one per line. */
export async function loadAuditPolicy(path: string): Promise<AuditPolicy> {
  const text = await readConfigFile("--audit-policy-file", path);
  return parseAuditPolicy(parseYamlConfig(text, path), path);
}

/** Validates a decoded policy document; `path` prefixes the messages. */
export function parseAuditPolicy(data: unknown, path: string): AuditPolicy {
  if (data === null || data === undefined) {
    throw new ConfigError(
      `${path}: the file is empty; expected apiVersion: ${AUDIT_POLICY_API_VERSIONS[0]} and ` +
        `kind: ${AUDIT_POLICY_KIND}`,
    );
  }
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new ConfigError(`${path}: expected a mapping, got ${describeValue(data)}`);
  }
  const errors: string[] = [];
  const parsed = policySchema.safeParse(data);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code === "invalid_type" && valueAt(data, issue.path) === undefined) {
        const field = fieldPath(issue.path, { hyphens: false });
        errors.push(fieldErrorMessage({ type: "Required", field }));
      } else {
        errors.push(...formatIssueAsFieldError(issue, data));
      }
    }
  }
  const policy = checkPolicy(data as Obj, errors);
  if (errors.length > 0) throw new ConfigError(errors.map((e) => `${path}: ${e}`).join("\n"));
  return policy;
}

/** Checks the meaning of what has the right shape (shape errors come from the schema). */
function checkPolicy(data: Obj, errors: string[]): AuditPolicy {
  const { apiVersion, kind } = data;
  if (typeof apiVersion === "string" && !includes(AUDIT_POLICY_API_VERSIONS, apiVersion)) {
    errors.push(notSupported("apiVersion", apiVersion, AUDIT_POLICY_API_VERSIONS));
  }
  if (typeof kind === "string" && kind !== AUDIT_POLICY_KIND) {
    errors.push(notSupported("kind", kind, [AUDIT_POLICY_KIND]));
  }
  const omitStages = stages(data.omitStages, "omitStages", errors);
  const rules: PolicyRule[] = [];
  if (Array.isArray(data.rules)) {
    if (data.rules.length === 0) {
      errors.push(fieldErrorMessage({
        type: "Required",
        field: "rules",
        detail: "a policy needs at least one rule",
      }));
    }
    data.rules.forEach((r, i) => {
      if (r && typeof r === "object" && !Array.isArray(r)) {
        rules.push(checkRule(r as Obj, `rules[${i}]`, errors));
      }
    });
  }
  return {
    rules,
    omitStages,
    omitManagedFields: data.omitManagedFields === true,
  };
}

function checkRule(r: Obj, at: string, errors: string[]): PolicyRule {
  const level = r.level;
  if (typeof level === "string" && !includes(LEVELS, level)) {
    errors.push(notSupported(`${at}.level`, level, LEVELS));
  }
  const nonResourceURLs = strings(r.nonResourceURLs);
  const resources = Array.isArray(r.resources) ? r.resources : [];
  const namespaces = strings(r.namespaces);
  if (nonResourceURLs.length > 0 && (resources.length > 0 || namespaces.length > 0)) {
    errors.push(fieldErrorMessage({
      type: "Invalid",
      field: `${at}.nonResourceURLs`,
      value: nonResourceURLs,
      detail: "rules cannot apply to both regular resources and non-resource URLs",
    }));
  }
  nonResourceURLs.forEach((url, j) => {
    const field = `${at}.nonResourceURLs[${j}]`;
    if (url === "*") return;
    if (!url.startsWith("/")) {
      errors.push(fieldErrorMessage({
        type: "Invalid",
        field,
        value: url,
        detail: "non-resource URL rules must begin with a '/' character",
      }));
    } else if (url.slice(0, -1).includes("*")) {
      errors.push(fieldErrorMessage({
        type: "Invalid",
        field,
        value: url,
        detail: "non-resource URL wildcards '*' must be the final character of the rule",
      }));
    }
  });
  const groups: GroupResources[] = [];
  resources.forEach((g, j) => {
    if (!g || typeof g !== "object" || Array.isArray(g)) return;
    groups.push(checkGroupResources(g as Obj, `${at}.resources[${j}]`, errors));
  });
  const rule: PolicyRule = {
    level: (includes(LEVELS, level) ? level : "None") as Level,
    users: strings(r.users),
    userGroups: strings(r.userGroups),
    verbs: strings(r.verbs),
    resources: groups,
    namespaces,
    nonResourceURLs,
    omitStages: stages(r.omitStages, `${at}.omitStages`, errors),
  };
  if (typeof r.omitManagedFields === "boolean") rule.omitManagedFields = r.omitManagedFields;
  return rule;
}

function checkGroupResources(g: Obj, at: string, errors: string[]): GroupResources {
  const group = typeof g.group === "string" ? g.group : "";
  if (group !== "" && (group.length > 253 || !DNS_SUBDOMAIN.test(group))) {
    errors.push(fieldErrorMessage({
      type: "Invalid",
      field: `${at}.group`,
      value: group,
      detail: "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric " +
        "characters, '-' or '.', and must start and end with an alphanumeric character",
    }));
  }
  const resources = strings(g.resources);
  const resourceNames = strings(g.resourceNames);
  if (resourceNames.length > 0 && resources.length === 0) {
    errors.push(fieldErrorMessage({
      type: "Invalid",
      field: `${at}.resourceNames`,
      value: resourceNames,
      detail: "using resourceNames requires at least one resource",
    }));
  }
  resources.forEach((res, k) => {
    const field = `${at}.resources[${k}]`;
    const overlap = overlapping(res, resources, k);
    if (res === "" || res.split("/").length > 2 || res.split("/").some((p) => p === "")) {
      errors.push(fieldErrorMessage({
        type: "Invalid",
        field,
        value: res,
        detail: "must be a resource, resource/subresource, '*', '*/subresource' or 'resource/*'",
      }));
    } else if (overlap !== undefined) {
      errors.push(fieldErrorMessage({
        type: "Invalid",
        field,
        value: res,
        detail: `overlaps ${quote(overlap)}: wildcards must not overlap other resources`,
      }));
    }
  });
  return { group: canonicalGroup(group), resources, resourceNames };
}

/** An earlier entry of `all` that `res` overlaps through a wildcard (either way), if any. */
function overlapping(res: string, all: string[], index: number): string | undefined {
  for (let i = 0; i < index; i++) {
    const other = all[i];
    if (covers(other, res) || covers(res, other)) return other;
  }
  return undefined;
}

/** Whether the pattern `a` (a wildcard form) also matches what `b` names. */
function covers(a: string, b: string): boolean {
  if (a === b) return true;
  if (a === "*") return true;
  const [aRes, aSub] = a.split("/");
  const [bRes, bSub] = b.split("/");
  if (aSub === "*" && aRes === bRes) return true;
  if (aRes === "*" && aSub !== undefined && aSub === bSub) return true;
  return false;
}

function stages(value: unknown, at: string, errors: string[]): Stage[] {
  const out: Stage[] = [];
  strings(value).forEach((s, i) => {
    if (includes(STAGES, s)) out.push(s as Stage);
    else errors.push(notSupported(`${at}[${i}]`, s, STAGES));
  });
  return out;
}

function notSupported(field: string, value: string, supported: readonly string[]): string {
  return fieldErrorMessage({
    type: "NotSupported",
    field,
    value,
    detail: `supported values: ${supported.map((s) => JSON.stringify(s)).join(", ")}`,
  });
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function includes(list: readonly string[], value: unknown): boolean {
  return typeof value === "string" && list.includes(value);
}

// ---------------------------------------------------------------------------------------
// Matching

const NONE: AuditDecision = { level: "None", omitStages: new Set(), omitManagedFields: false };

/** Evaluates a policy against requests; built once at start. */
export class PolicyEvaluator {
  readonly #rules: { rule: PolicyRule; decision: AuditDecision }[];

  constructor(policy: AuditPolicy) {
    this.#rules = policy.rules.map((rule) => ({
      rule,
      decision: {
        level: rule.level,
        omitStages: new Set([...policy.omitStages, ...rule.omitStages]),
        omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields,
      },
    }));
  }

  /** The decision of the first rule that matches; level None when none does. */
  evaluate(a: AuditAttributes): AuditDecision {
    for (const { rule, decision } of this.#rules) {
      if (ruleMatches(rule, a)) return decision;
    }
    return NONE;
  }
}

/** Whether every criterion the rule gives matches the request (kube's ruleMatches). */
export function ruleMatches(r: PolicyRule, a: AuditAttributes): boolean {
  if (r.users.length > 0 && !(a.user && r.users.includes(a.user.username))) return false;
  if (r.userGroups.length > 0) {
    if (!a.user || !a.user.groups.some((g) => r.userGroups.includes(g))) return false;
  }
  if (r.verbs.length > 0 && !r.verbs.includes(a.verb)) return false;
  if (r.namespaces.length > 0 || r.resources.length > 0) return resourceMatches(r, a);
  if (r.nonResourceURLs.length > 0) return nonResourceMatches(r, a);
  return true;
}

function nonResourceMatches(r: PolicyRule, a: AuditAttributes): boolean {
  if (a.resourceRequest) return false;
  return r.nonResourceURLs.some((url) =>
    url === "*" || url === a.path || (url.endsWith("*") && a.path.startsWith(url.slice(0, -1)))
  );
}

function resourceMatches(r: PolicyRule, a: AuditAttributes): boolean {
  if (!a.resourceRequest) return false;
  if (r.namespaces.length > 0 && !r.namespaces.includes(a.namespace ?? "")) return false;
  if (r.resources.length === 0) return true;
  const resource = a.resource ?? "";
  const subresource = a.subresource ?? "";
  const combined = subresource ? `${resource}/${subresource}` : resource;
  const name = a.name ?? "";
  for (const gr of r.resources) {
    if (gr.group !== (a.apiGroup ?? "")) continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === "*") return true;
      if (subresource && res.startsWith("*/") && res.slice(2) === subresource) return true;
      if (res.endsWith("/*") && res.slice(0, -2) === resource) return true;
    }
  }
  return false;
}
