/**
 * The RBAC objects in memory, indexed for kube's rule resolution: which rules apply to a user
 * in a namespace. Bindings are indexed by subject (user name, group name; a service account
 * subject by its user name `system:serviceaccount:<ns>:<name>`), so resolving a request costs
 * a few map lookups, not a scan of every binding. Roles keep their rules normalized.
 *
 * ClusterRoleBindings apply in every namespace and at the cluster scope; RoleBindings only in
 * their namespace, where they may reference a Role of that namespace or a ClusterRole.
 *
 * The index is fed with {@link PolicyIndex.put} and {@link PolicyIndex.remove}.
 */

import { serviceAccountUsername } from "../auth/mod.ts";
import type { UserInfo } from "../api/mod.ts";
import type { KubeObject } from "../registry/mod.ts";
import { normalizeRule, type NormalRule } from "./rules.ts";

export type RbacKind = "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding";

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

export interface RoleRef {
  kind: string;
  name: string;
  apiGroup?: string;
}

interface Binding {
  kind: "RoleBinding" | "ClusterRoleBinding";
  name: string;
  /** `""` for a ClusterRoleBinding. */
  namespace: string;
  roleRef: RoleRef;
  subjects: Subject[];
  /** The subject keys it is indexed under. */
  keys: string[];
}

/**
 * Called with each rule that applies (and the binding it comes through), or with an error
 * resolving a binding's role. Returns false to stop.
 */
export type RuleVisitor = (
  visit: { rule: NormalRule; source: () => string } | { error: string },
) => boolean;

/** A user's rules in a namespace, and the bindings whose roles could not be resolved. */
export interface ResolvedRules {
  rules: NormalRule[];
  errors: string[];
}

/** The RBAC API group. */
export const RBAC_GROUP = "rbac.authorization.platform.io";

export class PolicyIndex {
  /** Role rules by `namespace/name`. */
  readonly #roles = new Map<string, NormalRule[]>();
  readonly #clusterRoles = new Map<string, NormalRule[]>();
  /** Bindings by `kind namespace/name`, to replace or remove them. */
  readonly #bindings = new Map<string, Binding>();
  /** Subject key -> ClusterRoleBindings naming it. */
  readonly #cluster = new Map<string, Set<Binding>>();
  /** Namespace -> subject key -> RoleBindings naming it. */
  readonly #namespaced = new Map<string, Map<string, Set<Binding>>>();
  #generation = 0;

  /** Changes with every put and remove: decisions remembered at another generation are stale. */
  get generation(): number {
    return this.#generation;
  }

  /** Adds or replaces an object. */
  put(kind: RbacKind, obj: KubeObject): void {
    this.#generation++;
    const name: string = obj.metadata?.name ?? "";
    const namespace: string = obj.metadata?.namespace ?? "";
    if (kind === "Role" || kind === "ClusterRole") {
      const rules = Array.isArray(obj.rules) ? obj.rules.map(normalizeRule) : [];
      if (kind === "Role") this.#roles.set(`${namespace}/${name}`, rules);
      else this.#clusterRoles.set(name, rules);
      return;
    }
    this.remove(kind, namespace, name);
    const bindingNamespace = kind === "RoleBinding" ? namespace : "";
    const subjects: Subject[] = Array.isArray(obj.subjects) ? obj.subjects : [];
    const binding: Binding = {
      kind,
      name,
      namespace: bindingNamespace,
      roleRef: obj.roleRef ?? { kind: "", name: "" },
      subjects,
      keys: [
        ...new Set(subjects.map((s) => subjectKey(s, bindingNamespace)).filter((k) => k !== "")),
      ],
    };
    this.#bindings.set(`${kind} ${namespace}/${name}`, binding);
    const index = this.#subjectIndex(bindingNamespace, true)!;
    for (const key of binding.keys) {
      let set = index.get(key);
      if (!set) index.set(key, set = new Set());
      set.add(binding);
    }
  }

  /** Removes an object; unknown ones are ignored. */
  remove(kind: RbacKind, namespace: string, name: string): void {
    this.#generation++;
    if (kind === "Role") this.#roles.delete(`${namespace}/${name}`);
    if (kind === "ClusterRole") this.#clusterRoles.delete(name);
    if (kind === "Role" || kind === "ClusterRole") return;
    const key = `${kind} ${namespace}/${name}`;
    const binding = this.#bindings.get(key);
    if (!binding) return;
    this.#bindings.delete(key);
    const index = this.#subjectIndex(binding.namespace, false);
    for (const k of binding.keys) {
      const set = index?.get(k);
      set?.delete(binding);
      if (set?.size === 0) index!.delete(k);
    }
    if (binding.namespace && index?.size === 0) this.#namespaced.delete(binding.namespace);
  }

  /**
   * Visits the rules that apply to `user` in `namespace` (`""`: the cluster scope, only
   * ClusterRoleBindings), ClusterRoleBindings first, as kube's `VisitRulesFor`.
   */
  visitRulesFor(user: UserInfo, namespace: string, visitor: RuleVisitor): void {
    const keys = [`user:${user.username}`, ...user.groups.map((g) => `group:${g}`)];
    const scopes = namespace ? [this.#cluster, this.#namespaced.get(namespace)] : [this.#cluster];
    const seen = new Set<Binding>();
    for (const index of scopes) {
      if (!index) continue;
      for (const key of keys) {
        for (const binding of index.get(key) ?? []) {
          if (seen.has(binding)) continue;
          seen.add(binding);
          const resolved = this.roleRules(binding.roleRef, binding.namespace);
          if (typeof resolved === "string") {
            if (!visitor({ error: resolved })) return;
            continue;
          }
          const source = () => describe(binding, user);
          for (const rule of resolved) if (!visitor({ rule, source })) return;
        }
      }
    }
  }

  /** Every rule that applies to `user` in `namespace`, as kube's `RulesFor`. */
  rulesFor(user: UserInfo, namespace: string): ResolvedRules {
    const out: ResolvedRules = { rules: [], errors: [] };
    this.visitRulesFor(user, namespace, (v) => {
      if ("error" in v) out.errors.push(v.error);
      else out.rules.push(v.rule);
      return true;
    });
    return out;
  }

  /** The rules of the role a binding in `namespace` references, or why there are none. */
  roleRules(ref: RoleRef, namespace: string): NormalRule[] | string {
    if (ref.kind === "ClusterRole") {
      return this.#clusterRoles.get(ref.name) ?? notFound("clusterrole", ref.name);
    }
    if (ref.kind === "Role") {
      return this.#roles.get(`${namespace}/${ref.name}`) ?? notFound("role", ref.name);
    }
    return `unsupported role reference kind: ${JSON.stringify(ref.kind)}`;
  }

  #subjectIndex(namespace: string, create: boolean): Map<string, Set<Binding>> | undefined {
    if (!namespace) return this.#cluster;
    let index = this.#namespaced.get(namespace);
    if (!index && create) this.#namespaced.set(namespace, index = new Map());
    return index;
  }
}

/** kube's lister error: `clusterrole.rbac.authorization.platform.io "x" not found`. */
function notFound(resource: string, name: string): string {
  return `${resource}.${RBAC_GROUP} ${JSON.stringify(name)} not found`;
}

/** The key a subject is indexed under; `""` when it can never apply. */
function subjectKey(s: Subject, bindingNamespace: string): string {
  switch (s?.kind) {
    case "User":
      return `user:${s.name}`;
    case "Group":
      return `group:${s.name}`;
    case "ServiceAccount": {
      // A subject without a namespace means the binding's own (none for a cluster binding).
      const namespace = s.namespace || bindingNamespace;
      return namespace ? `user:${serviceAccountUsername(namespace, s.name)}` : "";
    }
    default:
      return "";
  }
}

/** kube's words for where an allowing rule came from (`RBAC: allowed by …`). */
function describe(binding: Binding, user: UserInfo): string {
  const keys = new Set([`user:${user.username}`, ...user.groups.map((g) => `group:${g}`)]);
  const subject = binding.subjects.find((s) => keys.has(subjectKey(s, binding.namespace)))!;
  const who = subject.kind === "ServiceAccount"
    ? `${subject.kind} ${
      JSON.stringify(`${subject.name}/${subject.namespace || binding.namespace}`)
    }`
    : `${subject.kind} ${JSON.stringify(subject.name)}`;
  const name = binding.namespace ? `${binding.name}/${binding.namespace}` : binding.name;
  return `${binding.kind} ${JSON.stringify(name)} of ${binding.roleRef.kind} ${
    JSON.stringify(binding.roleRef.name)
  } to ${who}`;
}

/** kube's aggregate of errors: one message alone, several as `[a, b]`. */
export function aggregateErrors(errors: string[]): string {
  return errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`;
}
