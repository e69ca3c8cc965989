/**
 * Escalation prevention, kube's RBAC storage checks: nobody grants through RBAC what they do
 * not hold themselves.
 *
 * - A Role or ClusterRole may be written by a member of `system:masters`, by someone allowed
 *   to `escalate` that resource, or by someone who already holds every rule in it (coverage,
 *   see covers.ts) in its namespace. Setting or changing an aggregationRule needs `*` on
 *   everything, as it can gather any rule.
 * - A RoleBinding or ClusterRoleBinding may be written by a member of `system:masters`, by
 *   someone allowed to `bind` the referenced role (`bind` on `roles`/`clusterroles` named like
 *   it, in the binding's namespace), or by someone holding every rule of that role.
 *
 * An update that only changes owner references, finalizers or managed fields is not checked
 * (the garbage collector must be able to finish a deletion). Refusals are 403 Forbidden in
 * kube's words.
 */

import { forbidden, type GroupResource, jsonEqual, type UserInfo } from "../api/mod.ts";
import type { KubeObject, StrategyContext } from "../registry/mod.ts";
import type { Attributes } from "../auth/mod.ts";
import { compactRules, compactString, goQuotedList, uncoveredRules } from "./covers.ts";
import { aggregateErrors, type PolicyIndex, RBAC_GROUP, type RoleRef } from "./policy_index.ts";
import { normalizeRule, type PolicyRule } from "./rules.ts";

/** kube's privileged group: its members may do anything, RBAC writes included. */
export const SYSTEM_MASTERS = "system:masters";

/** What `bind` is asked on, by roleRef kind. */
const ROLE_RESOURCES: Record<string, string | undefined> = {
  Role: "roles",
  ClusterRole: "clusterroles",
};

/** Everything: what an aggregationRule needs. */
const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
  { verbs: ["*"], nonResourceURLs: ["*"] },
];

/**
 * kube's `ConfirmNoEscalation`: why `user` may not grant `rules` in `namespace` (`""`: the
 * cluster scope), or undefined when it holds them all.
 */
export function escalationError(
  policy: PolicyIndex,
  user: UserInfo,
  namespace: string,
  rules: PolicyRule[],
): string | undefined {
  const held = policy.rulesFor(user, namespace);
  const missing = uncoveredRules(held.rules, rules.map(normalizeRule));
  if (!missing.length) return undefined;
  const lines = [...new Set(compactRules(missing).map(compactString))].sort();
  let message = `user ${JSON.stringify(user.username)} (groups=${
    goQuotedList(user.groups)
  }) is attempting to grant RBAC permissions not currently held:\n${lines.join("\n")}`;
  if (held.errors.length) message += `; resolution errors: [${aggregateErrors(held.errors)}]`;
  return message;
}

/** Checks a create (`old` undefined) or update of a Role or ClusterRole. */
export async function checkRoleWrite(
  policy: PolicyIndex,
  resource: "roles" | "clusterroles",
  obj: KubeObject,
  old: KubeObject | undefined,
  ctx: StrategyContext,
): Promise<void> {
  if (exempt(obj, old, ctx)) return;
  const gr = { group: RBAC_GROUP, resource };
  const name: string = obj.metadata?.name ?? "";
  const namespace: string = obj.metadata?.namespace ?? "";
  // As kube, the request's name: none on a create (it is a POST to the collection).
  const escalate = { verb: "escalate", resourceRequest: true, apiGroup: RBAC_GROUP, resource };
  if (await allowed(ctx, { ...escalate, namespace, name: old ? name : "" })) return;
  refuse(gr, name, escalationError(policy, ctx.user, namespace, rulesOf(obj)));
  if (resource === "clusterroles" && (aggregates(obj) || aggregates(old))) {
    if (escalationError(policy, ctx.user, namespace, FULL_AUTHORITY)) {
      refuse(gr, name, "must have cluster-admin privileges to use the aggregationRule");
    }
  }
}

/** Checks a create (`old` undefined) or update of a RoleBinding or ClusterRoleBinding. */
export async function checkBindingWrite(
  policy: PolicyIndex,
  resource: "rolebindings" | "clusterrolebindings",
  obj: KubeObject,
  old: KubeObject | undefined,
  ctx: StrategyContext,
): Promise<void> {
  if (exempt(obj, old, ctx)) return;
  const gr = { group: RBAC_GROUP, resource };
  const name: string = obj.metadata?.name ?? "";
  const namespace: string = obj.metadata?.namespace ?? "";
  const ref: RoleRef = obj.roleRef ?? { kind: "", name: "" };
  const roleResource = ROLE_RESOURCES[ref.kind];
  if (roleResource) {
    // roleRef.apiGroup is the RBAC group in either spelling (validated); ask in one.
    const bind = {
      verb: "bind",
      resourceRequest: true,
      apiGroup: RBAC_GROUP,
      resource: roleResource,
      name: ref.name,
      namespace,
    };
    if (await allowed(ctx, bind)) return;
  }
  const rules = policy.roleRules(ref, namespace);
  if (typeof rules === "string") refuse(gr, name, rules);
  else refuse(gr, name, escalationError(policy, ctx.user, namespace, rules));
}

/** Members of system:masters, and updates that only touch what garbage collection changes. */
function exempt(obj: KubeObject, old: KubeObject | undefined, ctx: StrategyContext): boolean {
  if (ctx.user.groups.includes(SYSTEM_MASTERS)) return true;
  return old !== undefined && jsonEqual(withoutGcFields(obj), withoutGcFields(old));
}

function withoutGcFields(obj: KubeObject): KubeObject {
  const metadata = { ...obj.metadata };
  for (const f of ["ownerReferences", "finalizers", "managedFields", "resourceVersion"]) {
    delete metadata[f];
  }
  return { ...obj, metadata };
}

/** An absent `authorize` means the server checks nothing (see StrategyContext). */
function allowed(ctx: StrategyContext, attributes: Omit<Attributes, "user">): Promise<boolean> {
  return ctx.authorize ? ctx.authorize(attributes) : Promise.resolve(true);
}

function refuse(gr: GroupResource, name: string, why: string | undefined): void {
  if (why !== undefined) throw forbidden(gr, name, why);
}

function rulesOf(obj: KubeObject): PolicyRule[] {
  return Array.isArray(obj.rules) ? obj.rules : [];
}

function aggregates(obj: KubeObject | undefined): boolean {
  const selectors = obj?.aggregationRule?.clusterRoleSelectors;
  return Array.isArray(selectors) && selectors.length > 0;
}
