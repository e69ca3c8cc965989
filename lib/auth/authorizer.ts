/**
 * Authorization: may this user do this? Attributes are kube's (verb, API group, resource,
 * subresource, namespace, name for resource requests; verb and path otherwise), so RBAC,
 * webhooks (SubjectAccessReview payloads) and access reviews all read the same shape.
 *
 * Until the authorization configuration lands every authenticated request is allowed
 * ({@link alwaysAllow}); the access-review endpoints already answer through this interface.
 */

import type { UserInfo } from "../server/context.ts";

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
  authorize(attributes: Attributes): Promise<AuthorizationResult>;
  rulesFor(user: UserInfo, namespace: string): Promise<RuleSet>;
}

/** Allows everything (kube's `AlwaysAllow`). */
export const alwaysAllow: Authorizer = {
  authorize: () => Promise.resolve({ decision: "Allow" }),
  rulesFor: () =>
    Promise.resolve({
      resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
      incomplete: false,
    }),
};
