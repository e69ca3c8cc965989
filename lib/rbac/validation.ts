/**
 * Defaulting and validation of the RBAC kinds, in kube's words (pkg/apis/rbac/validation):
 *
 * - rules: `verbs` required; a resource rule needs `apiGroups` and `resources`; a rule with
 *   `nonResourceURLs` names nothing else, and only ClusterRoles have such rules;
 * - aggregationRule: at least one selector, each a valid label selector;
 * - roleRef: `apiGroup` the RBAC group, `kind` Role or ClusterRole (a ClusterRoleBinding only
 *   ClusterRole), `name` a path segment; it cannot change once created;
 * - subjects: `name` required; User and Group in the RBAC group; ServiceAccount in the core
 *   group (`""`) with a valid name, and a namespace in a ClusterRoleBinding.
 *
 * The RBAC group may be spelled `rbac.authorization.platform.io` or, as every manifest and
 * kube client writes it, `rbac.authorization.k8s.io`: both are accepted and kept as sent. An
 * empty one defaults to the platform spelling, as kube defaults it.
 */

import {
  type FieldError,
  isDNS1123Subdomain,
  labelSelectorFromObject,
  validatePathSegmentName,
} from "../api/mod.ts";
import type { KubeObject } from "../registry/mod.ts";
import { RBAC_GROUP } from "./policy_index.ts";

/** The two spellings of the RBAC group. */
export const RBAC_GROUPS = [RBAC_GROUP, "rbac.authorization.k8s.io"];

/** kube's defaults of a binding: the roleRef's group, and User and Group subjects' group. */
export function defaultBinding(obj: KubeObject): void {
  if (obj.roleRef && typeof obj.roleRef === "object" && !obj.roleRef.apiGroup) {
    obj.roleRef.apiGroup = RBAC_GROUP;
  }
  if (!Array.isArray(obj.subjects)) return;
  for (const s of obj.subjects) {
    if (s && !s.apiGroup && (s.kind === "User" || s.kind === "Group")) s.apiGroup = RBAC_GROUP;
  }
}

/** A Role (`namespaced`) or ClusterRole. */
export function validateRole(obj: KubeObject, namespaced: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const rules = Array.isArray(obj.rules) ? obj.rules : [];
  rules.forEach((rule: KubeObject, i: number) =>
    errors.push(...validatePolicyRule(rule ?? {}, namespaced, `rules[${i}]`))
  );
  if (!namespaced && obj.aggregationRule) errors.push(...validateAggregationRule(obj));
  return errors;
}

function validatePolicyRule(rule: KubeObject, namespaced: boolean, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const count = (f: string) => (Array.isArray(rule[f]) ? rule[f].length : 0);
  if (!count("verbs")) {
    errors.push({
      type: "Required",
      field: `${path}.verbs`,
      detail: "verbs must contain at least one value",
    });
  }
  if (count("nonResourceURLs")) {
    const invalid = (detail: string) =>
      errors.push({
        type: "Invalid",
        field: `${path}.nonResourceURLs`,
        value: rule.nonResourceURLs,
        detail,
      });
    if (namespaced) invalid("namespaced rules cannot apply to non-resource URLs");
    if (count("apiGroups") || count("resources") || count("resourceNames")) {
      invalid("rules cannot apply to both regular resources and non-resource URLs");
    }
    return errors;
  }
  if (!count("apiGroups")) {
    errors.push({
      type: "Required",
      field: `${path}.apiGroups`,
      detail: "resource rules must supply at least one api group",
    });
  }
  if (!count("resources")) {
    errors.push({
      type: "Required",
      field: `${path}.resources`,
      detail: "resource rules must supply at least one resource",
    });
  }
  return errors;
}

function validateAggregationRule(obj: KubeObject): FieldError[] {
  const path = "aggregationRule.clusterRoleSelectors";
  const selectors = obj.aggregationRule.clusterRoleSelectors;
  if (!Array.isArray(selectors) || selectors.length === 0) {
    return [{
      type: "Required",
      field: path,
      detail: "at least one clusterRoleSelector required if aggregationRule is non-nil",
    }];
  }
  const errors: FieldError[] = [];
  selectors.forEach((selector: KubeObject, i: number) => {
    try {
      labelSelectorFromObject(selector ?? {});
    } catch (err) {
      errors.push({
        type: "Invalid",
        field: `${path}[${i}]`,
        value: selector,
        detail: (err as Error).message,
      });
    }
  });
  return errors;
}

/** A RoleBinding (`namespaced`) or ClusterRoleBinding. */
export function validateBinding(obj: KubeObject, namespaced: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const ref = obj.roleRef ?? {};
  if (!RBAC_GROUPS.includes(ref.apiGroup)) {
    errors.push(notSupported("roleRef.apiGroup", ref.apiGroup ?? "", RBAC_GROUPS));
  }
  const kinds = namespaced ? ["Role", "ClusterRole"] : ["ClusterRole"];
  if (!kinds.includes(ref.kind)) errors.push(notSupported("roleRef.kind", ref.kind ?? "", kinds));
  if (!ref.name) {
    errors.push({ type: "Required", field: "roleRef.name" });
  } else {
    for (const detail of validatePathSegmentName(ref.name)) {
      errors.push({ type: "Invalid", field: "roleRef.name", value: ref.name, detail });
    }
  }
  const subjects = Array.isArray(obj.subjects) ? obj.subjects : [];
  subjects.forEach((s: KubeObject, i: number) =>
    errors.push(...validateSubject(s ?? {}, namespaced, `subjects[${i}]`))
  );
  return errors;
}

/** The roleRef is fixed at creation (either spelling of the group naming the same). */
export function validateBindingUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const same = (a: KubeObject = {}, b: KubeObject = {}) =>
    a.kind === b.kind && a.name === b.name &&
    (a.apiGroup === b.apiGroup || (RBAC_GROUPS.includes(a.apiGroup) &&
      RBAC_GROUPS.includes(b.apiGroup)));
  if (same(obj.roleRef, old.roleRef)) return [];
  return [{
    type: "Invalid",
    field: "roleRef",
    value: obj.roleRef,
    detail: "cannot change roleRef",
  }];
}

function validateSubject(s: KubeObject, namespaced: boolean, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (!s.name) errors.push({ type: "Required", field: `${path}.name` });
  switch (s.kind) {
    case "ServiceAccount":
      if (s.name) {
        for (const detail of isDNS1123Subdomain(s.name)) {
          errors.push({ type: "Invalid", field: `${path}.name`, value: s.name, detail });
        }
      }
      if (s.apiGroup) errors.push(notSupported(`${path}.apiGroup`, s.apiGroup, [""]));
      if (!namespaced && !s.namespace) {
        errors.push({ type: "Required", field: `${path}.namespace` });
      }
      break;
    case "User":
    case "Group":
      if (!RBAC_GROUPS.includes(s.apiGroup)) {
        errors.push(notSupported(`${path}.apiGroup`, s.apiGroup ?? "", RBAC_GROUPS));
      }
      break;
    default:
      errors.push(
        notSupported(`${path}.kind`, s.kind ?? "", ["ServiceAccount", "User", "Group"]),
      );
  }
  return errors;
}

function notSupported(field: string, value: unknown, supported: string[]): FieldError {
  return {
    type: "NotSupported",
    field,
    value,
    detail: `supported values: ${supported.map((v) => JSON.stringify(v)).join(", ")}`,
  };
}
