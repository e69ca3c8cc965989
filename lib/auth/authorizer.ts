/**
 * Authorization: may this user do this? Attributes are kube's (verb, API group, resource,
 * subresource, namespace, name for resource requests; verb and path otherwise), so RBAC,
 * webhooks (SubjectAccessReview payloads) and access reviews all read the same shape.
 *
 * The server asks one Authorizer for requests and access reviews alike: by default
 * `system:masters` then RBAC (lib/rbac/).
 */

import type { UserInfo } from "../api/mod.ts";

export interface Attributes {
  user: UserInfo;
  verb: string;
  /** True for requests on resources; false for other paths (`/healthz`, `/version`). */
  resourceRequest: boolean;
  namespace?: string;
  apiGroup?: string;
  apiVersion?: string;
  resource?: string;
  subresource?: string;
  name?: string;
  /** Non-resource requests: the URL path. */
  path?: string;
}

export type Decision = "Allow" | "Deny" | "NoOpinion";

export interface AuthorizationResult {
  decision: Decision;
  reason?: string;
  evaluationError?: string;
}

export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs?: string[];
}

/** What a user may do in a namespace, as SelfSubjectRulesReview reports it. */
export interface RuleSet {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  /** True when some authorizer cannot enumerate its rules (webhooks). */
  incomplete: boolean;
  evaluationError?: string;
}

export interface Authorizer {
  /**
   * The decision on `attributes`. An authorizer that decides in memory (RBAC, the privileged
   * groups) answers synchronously: every request is authorized, and a promise per request and
   * authorizer is measurable at tens of thousands of requests a second. Callers `await` it.
   */
  authorize(attributes: Attributes): AuthorizationResult | Promise<AuthorizationResult>;
  rulesFor(user: UserInfo, namespace: string): Promise<RuleSet>;
}

/** Allows everything (kube's `AlwaysAllow`). */
export const alwaysAllow: Authorizer = {
  authorize: () => ({ decision: "Allow" }),
  rulesFor: () =>
    Promise.resolve({
      resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
      incomplete: false,
    }),
};

/**
 * Allows nothing, as kube's `AlwaysDeny`: it has no opinion, so an authorizer after it in a
 * chain may still allow; at the end of a chain the request is forbidden.
 */
export const alwaysDeny: Authorizer = {
  authorize: () => ({ decision: "NoOpinion", reason: "Everything is forbidden." }),
  rulesFor: () => Promise.resolve({ resourceRules: [], nonResourceRules: [], incomplete: false }),
};
