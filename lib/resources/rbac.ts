/**
 * `rbac.authorization.platform.io/v1`: Role, ClusterRole, RoleBinding, ClusterRoleBinding.
 * Validation and defaulting are kube's (lib/rbac/validation.ts); every create and update
 * first passes kube's escalation check (lib/rbac/escalation.ts) against the rules the
 * given {@link PolicyIndex} resolves, the one the RBAC authorizer keeps current.
 */

import {
  checkBindingWrite,
  checkRoleWrite,
  defaultBinding,
  type PolicyIndex,
  RBAC_GROUP,
  validateBinding,
  validateBindingUpdate,
  validateRole,
} from "../rbac/mod.ts";
import {
  ALL_VERBS,
  type KubeObject,
  type PrinterColumn,
  type ResourceDefinition,
  type StrategyContext,
} from "../registry/mod.ts";
import { AGE, CREATED_AT } from "../codec/mod.ts";

/** kube's binding columns: Name, Role, Age, and with `-o wide` who it binds. */
function bindingColumns(roleRefDescription: string): PrinterColumn[] {
  const subjects = (o: KubeObject, kind: string) =>
    (Array.isArray(o.subjects) ? o.subjects : [])
      .filter((s: KubeObject) => s?.kind === kind)
      .map((s: KubeObject) => kind === "ServiceAccount" ? `${s.namespace ?? ""}/${s.name}` : s.name)
      .join(", ");
  return [
    {
      name: "Role",
      type: "string",
      description: roleRefDescription,
      value: (o) => `${o.roleRef?.kind ?? ""}/${o.roleRef?.name ?? ""}`,
    },
    AGE,
    ...["User", "Group", "ServiceAccount"].map((kind): PrinterColumn => ({
      name: `${kind}s`,
      type: "string",
      priority: 1,
      description: `${kind}s in the roleBinding`,
      value: (o) => subjects(o, kind),
    })),
  ];
}

/** The four RBAC definitions, their escalation checks resolving rules from `policy`. */
export function rbacDefinitions(policy: PolicyIndex): ResourceDefinition[] {
  const common = {
    group: RBAC_GROUP,
    version: "v1",
    verbs: ALL_VERBS,
    // kube's ValidateRBACName: any name that is a path segment.
    nameValidation: "pathSegment" as const,
  };
  const roles: ResourceDefinition = {
    ...common,
    kind: "Role",
    plural: "roles",
    singular: "role",
    namespaced: true,
    schema: "io.k8s.api.rbac.v1.Role",
    printerColumns: [CREATED_AT],
    strategy: {
      validateCreate: async (o, ctx) => {
        await checkRoleWrite(policy, "roles", o, undefined, ctx);
        return validateRole(o, true);
      },
      validateUpdate: async (o, old, ctx) => {
        await checkRoleWrite(policy, "roles", o, old, ctx);
        return validateRole(o, true);
      },
    },
  };
  const clusterRoles: ResourceDefinition = {
    ...common,
    kind: "ClusterRole",
    plural: "clusterroles",
    singular: "clusterrole",
    namespaced: false,
    schema: "io.k8s.api.rbac.v1.ClusterRole",
    printerColumns: [CREATED_AT],
    strategy: {
      validateCreate: async (o, ctx) => {
        await checkRoleWrite(policy, "clusterroles", o, undefined, ctx);
        return validateRole(o, false);
      },
      validateUpdate: async (o, old, ctx) => {
        await checkRoleWrite(policy, "clusterroles", o, old, ctx);
        return validateRole(o, false);
      },
    },
  };
  const bindingStrategy = (resource: "rolebindings" | "clusterrolebindings") => ({
    prepareForCreate: defaultBinding,
    prepareForUpdate: defaultBinding,
    validateCreate: async (o: KubeObject, ctx: StrategyContext) => {
      await checkBindingWrite(policy, resource, o, undefined, ctx);
      return validateBinding(o, resource === "rolebindings");
    },
    validateUpdate: async (o: KubeObject, old: KubeObject, ctx: StrategyContext) => {
      await checkBindingWrite(policy, resource, o, old, ctx);
      return [
        ...validateBinding(o, resource === "rolebindings"),
        ...validateBindingUpdate(o, old),
      ];
    },
  });
  const roleBindings: ResourceDefinition = {
    ...common,
    kind: "RoleBinding",
    plural: "rolebindings",
    singular: "rolebinding",
    namespaced: true,
    schema: "io.k8s.api.rbac.v1.RoleBinding",
    emptyObject: { roleRef: {} },
    printerColumns: bindingColumns(
      "RoleRef can reference a Role in the current namespace or a ClusterRole in the global " +
        "namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. " +
        "This field is immutable.",
    ),
    strategy: bindingStrategy("rolebindings"),
  };
  const clusterRoleBindings: ResourceDefinition = {
    ...common,
    kind: "ClusterRoleBinding",
    plural: "clusterrolebindings",
    singular: "clusterrolebinding",
    namespaced: false,
    schema: "io.k8s.api.rbac.v1.ClusterRoleBinding",
    emptyObject: { roleRef: {} },
    printerColumns: bindingColumns(
      "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot " +
        "be resolved, the Authorizer must return an error. This field is immutable.",
    ),
    strategy: bindingStrategy("clusterrolebindings"),
  };
  return [clusterRoleBindings, clusterRoles, roleBindings, roles];
}
