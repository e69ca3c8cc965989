/**
 * What the validation of webhook configurations and of admission policies share (kube's
 * pkg/apis/admissionregistration/validation): the enumerations, match conditions compiled as
 * CEL, label selectors, and rules with their resource forms. Fields the schema marks required
 * are reported missing by schema validation; the checks here say what is wrong with a value
 * that is there.
 */

import { type FieldError, isQualifiedName, type KubeObject, validateLabels } from "../api/mod.ts";
import {
  CelCompileError,
  type CelEnvironmentName,
  type CelResultKind,
  compile,
} from "../cel/mod.ts";

export const isObj = (v: unknown): v is KubeObject =>
  typeof v === "object" && v !== null && !Array.isArray(v);
export const absent = (v: unknown) => v === undefined || v === null;
export const list = (v: unknown): unknown[] => Array.isArray(v) ? v : [];
export const str = (v: unknown): string => typeof v === "string" ? v : "";

/** kube's field.NotSupported detail: the supported values, sorted, quoted. */
export function notSupported(field: string, value: unknown, values: readonly string[]): FieldError {
  const supported = [...values].sort().map((v) => JSON.stringify(v)).join(", ");
  return { type: "NotSupported", field, value, detail: `supported values: ${supported}` };
}

export function oneOf(
  errors: FieldError[],
  field: string,
  value: unknown,
  values: readonly string[],
): void {
  if (!absent(value) && !values.includes(value as string)) {
    errors.push(notSupported(field, value, values));
  }
}

export const FAILURE_POLICIES = ["Fail", "Ignore"];
export const MATCH_POLICIES = ["Equivalent", "Exact"];
export const REINVOCATION_POLICIES = ["IfNeeded", "Never"];
export const SIDE_EFFECTS_V1 = ["None", "NoneOnDryRun"];
export const OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
export const SCOPES = ["*", "Cluster", "Namespaced"];
export const VALIDATION_REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"];
export const VALIDATION_ACTIONS = ["Audit", "Deny", "Warn"];
export const PARAMETER_NOT_FOUND_ACTIONS = ["Allow", "Deny"];
/** The AdmissionReview versions the server sends; kube also accepts v1beta1. */
export const ADMISSION_REVIEW_VERSIONS = ["v1"];
export const MAX_MATCH_CONDITIONS = 64;

// ---- CEL ----

/** Compiles `expression`; a failure is kube's `compilation failed: …` at `field`. */
export function compileInto(
  errors: FieldError[],
  env: CelEnvironmentName,
  field: string,
  expression: string,
  expect: CelResultKind,
  authorizer: boolean,
): void {
  try {
    compile(env, expression, { expect, authorizer });
  } catch (err) {
    if (!(err instanceof CelCompileError)) throw err;
    const at = err.position ? `<input>:${err.position.line}:${err.position.column}: ` : "";
    errors.push({
      type: "Invalid",
      field,
      value: expression,
      detail: `compilation failed: ERROR: ${at}${err.message}`,
    });
  }
}

/** kube's validateMatchConditions: at most 64, names unique qualified names, expressions
 * compile to a bool. */
export function validateMatchConditions(
  errors: FieldError[],
  conditions: unknown,
  path: string,
  env: CelEnvironmentName,
): void {
  const items = list(conditions);
  if (items.length > MAX_MATCH_CONDITIONS) {
    errors.push({
      type: "TooMany",
      field: path,
      value: items.length,
      detail: `must have at most ${MAX_MATCH_CONDITIONS} items`,
    });
  }
  const names = new Set<string>();
  items.forEach((c, i) => {
    if (!isObj(c)) return;
    const at = `${path}[${i}]`;
    const name = str(c.name);
    if (c.expression === "") errors.push({ type: "Required", field: `${at}.expression` });
    if (c.name === "") errors.push({ type: "Required", field: `${at}.name` });
    else if (name) {
      for (const msg of isQualifiedName(name)) {
        errors.push({ type: "Invalid", field: `${at}.name`, value: name, detail: msg });
      }
      if (names.has(name)) errors.push({ type: "Duplicate", field: `${at}.name`, value: name });
      names.add(name);
    }
    if (str(c.expression).trim()) {
      compileInto(errors, env, `${at}.expression`, str(c.expression), "bool", true);
    }
  });
}

// ---- selectors and rules ----

/** kube's metav1validation.ValidateLabelSelector. */
export function validateLabelSelector(errors: FieldError[], selector: unknown, path: string): void {
  if (!isObj(selector)) return;
  errors.push(...validateLabels(selector.matchLabels, `${path}.matchLabels`));
  list(selector.matchExpressions).forEach((e, i) => {
    if (!isObj(e)) return;
    const at = `${path}.matchExpressions[${i}]`;
    const values = list(e.values);
    switch (e.operator) {
      case "In":
      case "NotIn":
        if (values.length === 0) {
          errors.push({
            type: "Required",
            field: `${at}.values`,
            detail: "must be specified when `operator` is 'In' or 'NotIn'",
          });
        }
        break;
      case "Exists":
      case "DoesNotExist":
        if (values.length > 0) {
          errors.push({
            type: "Forbidden",
            field: `${at}.values`,
            detail: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
          });
        }
        break;
      default:
        errors.push({
          type: "Invalid",
          field: `${at}.operator`,
          value: e.operator ?? "",
          detail: "not a valid selector operator",
        });
    }
    for (const msg of isQualifiedName(str(e.key))) {
      errors.push({ type: "Invalid", field: `${at}.key`, value: str(e.key), detail: msg });
    }
    values.forEach((v, j) => {
      // a label value's rules, reported at the value
      for (const err of validateLabels({ key: v }, `${at}.values[${j}]`)) errors.push(err);
    });
  });
}

export const hasWildcard = (items: unknown[]) => items.includes("*");

/** kube's validateResources: `*`, `*\/*`, `x`, `x/y`, `*\/y`, `x/*`, without overlaps. */
export function validateResources(errors: FieldError[], resources: unknown[], path: string): void {
  if (resources.length === 0) errors.push({ type: "Required", field: path });
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSub = false;
  resources.forEach((r, i) => {
    const res = str(r);
    if (res === "") {
      errors.push({ type: "Required", field: `${path}[${i}]` });
      return;
    }
    if (res === "*/*") doubleWildcard = true;
    if (res === "*") singleWildcard = true;
    const slash = res.indexOf("/");
    if (slash < 0) {
      withoutSub = res !== "*";
      return;
    }
    const [name, sub] = [res.slice(0, slash), res.slice(slash + 1)];
    if (withWildcardSub.has(name)) {
      errors.push({
        type: "Invalid",
        field: `${path}[${i}]`,
        value: res,
        detail: `if '${name}/*' is present, must not specify ${res}`,
      });
    }
    if (subWithWildcardRes.has(sub)) {
      errors.push({
        type: "Invalid",
        field: `${path}[${i}]`,
        value: res,
        detail: `if '*/${sub}' is present, must not specify ${res}`,
      });
    }
    if (sub === "*") withWildcardSub.add(name);
    if (name === "*") subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) {
    errors.push({
      type: "Invalid",
      field: path,
      value: resources,
      detail: "if '*/*' is present, must not specify other resources",
    });
  }
  if (singleWildcard && withoutSub) {
    errors.push({
      type: "Invalid",
      field: path,
      value: resources,
      detail: "if '*' is present, must not specify other resources without subresources",
    });
  }
}

/** kube's validateRuleWithOperations (the Rule is inline). */
export function validateRuleWithOperations(
  errors: FieldError[],
  rule: KubeObject,
  path: string,
): void {
  const operations = list(rule.operations);
  if (operations.length === 0) errors.push({ type: "Required", field: `${path}.operations` });
  if (operations.length > 1 && hasWildcard(operations)) {
    errors.push({
      type: "Invalid",
      field: `${path}.operations`,
      value: operations,
      detail: "if '*' is present, must not specify other operations",
    });
  }
  operations.forEach((op, i) => oneOf(errors, `${path}.operations[${i}]`, op, OPERATIONS));
  const groups = list(rule.apiGroups);
  if (groups.length === 0) errors.push({ type: "Required", field: `${path}.apiGroups` });
  if (groups.length > 1 && hasWildcard(groups)) {
    errors.push({
      type: "Invalid",
      field: `${path}.apiGroups`,
      value: groups,
      detail: "if '*' is present, must not specify other API groups",
    });
  }
  const versions = list(rule.apiVersions);
  if (versions.length === 0) errors.push({ type: "Required", field: `${path}.apiVersions` });
  if (versions.length > 1 && hasWildcard(versions)) {
    errors.push({
      type: "Invalid",
      field: `${path}.apiVersions`,
      value: versions,
      detail: "if '*' is present, must not specify other API versions",
    });
  }
  versions.forEach((v, i) => {
    if (v === "") errors.push({ type: "Required", field: `${path}.apiVersions[${i}]` });
  });
  validateResources(errors, list(rule.resources), `${path}.resources`);
  oneOf(errors, `${path}.scope`, rule.scope, SCOPES);
}

// ---- webhooks ----

/** kube's IsFullyQualifiedName: a DNS subdomain of at least three segments. */
