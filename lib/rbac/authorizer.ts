/**
 * The RBAC authorizer (kube's `--authorization-mode=RBAC`): allows a request when a rule of a
 * role bound to the user (directly, through a group, or as a service account) matches it;
 * otherwise it has no opinion, with kube's reason when a binding's role is missing
 * (`RBAC: clusterrole.rbac.authorization.platform.io "x" not found`).
 *
 * Decisions are answered from a {@link PolicyIndex} kept current by informers on the four RBAC
 * registries, so a request costs a few map lookups, and sees every RBAC write that completed
 * before it arrived (see informer.ts).
 *
 * @example
 * ```ts
 * const rbac = rbacAuthorizer({ roles, roleBindings, clusterRoles, clusterRoleBindings }, { logger });
 * await rbac.start();
 * const { decision } = await rbac.authorize({ user, verb: "get", resourceRequest: true, … });
 * await rbac.stop();
 * ```
 */

import { canonicalGroup, type Logger, type UserInfo } from "../api/mod.ts";
import { Informer, type ResourceRegistry } from "../registry/mod.ts";
import type {
  Attributes,
  AuthorizationResult,
  Authorizer,
  NonResourceRule,
  ResourceRule,
  RuleSet,
} from "../auth/mod.ts";
import { aggregateErrors, PolicyIndex, type RbacKind } from "./policy_index.ts";
import { ruleAllows } from "./rules.ts";

/** The registries of the four RBAC kinds. */
export interface RbacSources {
  roles: ResourceRegistry;
  roleBindings: ResourceRegistry;
  clusterRoles: ResourceRegistry;
  clusterRoleBindings: ResourceRegistry;
}

export interface RbacAuthorizerOptions {
  logger: Logger;
  /** The index to fill, when others read it too (the escalation checks). @default a new one */
  index?: PolicyIndex;
}

export interface RbacAuthorizer extends Authorizer {
  /** The rules it decides from; `index.rulesFor(user, namespace)` gives a user's rules. */
  readonly index: PolicyIndex;
  /** Loads the RBAC objects and follows their changes; resolves once they are loaded. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function rbacAuthorizer(sources: RbacSources, opts: RbacAuthorizerOptions): RbacAuthorizer {
  const index = opts.index ?? new PolicyIndex();
  const feeds: [RbacKind, ResourceRegistry][] = [
    ["Role", sources.roles],
    ["ClusterRole", sources.clusterRoles],
    ["RoleBinding", sources.roleBindings],
    ["ClusterRoleBinding", sources.clusterRoleBindings],
  ];
  const informers = feeds.map(([kind, registry]) =>
    new Informer(registry, {
      logger: opts.logger,
      onEvent: ({ type, object }) => {
        if (type === "DELETED") {
          index.remove(kind, object.metadata?.namespace ?? "", object.metadata?.name ?? "");
        } else {
          index.put(kind, object);
        }
      },
    })
  );
  const decisions = new DecisionCache(index);
  return {
    index,
    async start() {
      await Promise.all(informers.map((i) => i.start()));
    },
    async stop() {
      await Promise.all(informers.map((i) => i.stop()));
    },
    authorize: (a) => decisions.decide(a),
    rulesFor: (user, namespace) => Promise.resolve(ruleSet(index, user, namespace)),
  };
}

/** Decisions remembered per user object, at most this many each. */
const DECISIONS_PER_USER = 1024;

/**
 * Remembers decisions until the policy changes. Users are told apart by object identity
 * (authenticators hand out one object per static token and per cached JWT), so a hit costs a
 * key and two map lookups instead of walking the user's bindings; a user object seen once
 * costs one small map, dropped with the object.
 */
class DecisionCache {
  readonly #index: PolicyIndex;
  #generation = -1;
  #byUser = new WeakMap<UserInfo, Map<string, AuthorizationResult>>();

  constructor(index: PolicyIndex) {
    this.#index = index;
  }

  decide(a: Attributes): AuthorizationResult {
    if (this.#generation !== this.#index.generation) {
      this.#generation = this.#index.generation;
      this.#byUser = new WeakMap();
    }
    let decisions = this.#byUser.get(a.user);
    if (!decisions) this.#byUser.set(a.user, decisions = new Map());
    // Every field RBAC reads, each length-prefixed: names are the client's, so no separator
    // could keep two different requests from sharing a key.
    const key = a.resourceRequest
      ? `r${field(a.verb)}${field(a.namespace)}${field(a.apiGroup)}${field(a.resource)}${
        field(a.subresource)
      }${field(a.name)}`
      : `n${field(a.verb)}${field(a.path)}`;
    let result = decisions.get(key);
    if (!result) {
      if (decisions.size >= DECISIONS_PER_USER) decisions.clear();
      result = Object.freeze(decide(this.#index, a));
      decisions.set(key, result);
    }
    return result;
  }
}

function field(s: string | undefined): string {
  return s === undefined ? "-" : `${s.length}:${s}`;
}

function decide(index: PolicyIndex, a: Attributes): AuthorizationResult {
  // Rules name groups in the canonical spelling (see rules.ts); so must the request. Requests
  // and reviews come canonical; a direct caller may not.
  const group = a.resourceRequest ? canonicalGroup(a.apiGroup ?? "") : "";
  const request = group !== (a.apiGroup ?? "") ? { ...a, apiGroup: group } : a;
  let allowedBy: (() => string) | undefined;
  const errors: string[] = [];
  index.visitRulesFor(a.user, a.namespace ?? "", (v) => {
    if ("error" in v) {
      errors.push(v.error);
      return true;
    }
    if (!ruleAllows(request, v.rule)) return true;
    allowedBy = v.source;
    return false;
  });
  if (allowedBy) return { decision: "Allow", reason: `RBAC: allowed by ${allowedBy()}` };
  return errors.length
    ? { decision: "NoOpinion", reason: `RBAC: ${aggregateErrors(errors)}` }
    : { decision: "NoOpinion" };
}

/** What SelfSubjectRulesReview reports: resource rules and non-resource rules apart. */
function ruleSet(index: PolicyIndex, user: UserInfo, namespace: string): RuleSet {
  const { rules, errors } = index.rulesFor(user, namespace);
  const resourceRules: ResourceRule[] = [];
  const nonResourceRules: NonResourceRule[] = [];
  for (const r of rules) {
    if (r.resources.length) {
      // Empty lists are left out, as kube's JSON omits them.
      const rule: ResourceRule = { verbs: r.verbs };
      if (r.apiGroups.length) rule.apiGroups = r.apiGroups;
      rule.resources = r.resources;
      if (r.resourceNames.length) rule.resourceNames = r.resourceNames;
      resourceRules.push(rule);
    }
    if (r.nonResourceURLs.length) {
      nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
    }
  }
  const out: RuleSet = { resourceRules, nonResourceRules, incomplete: false };
  if (errors.length) out.evaluationError = aggregateErrors(errors);
  return out;
}
