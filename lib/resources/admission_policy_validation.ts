/**
 * Kube's validation of ValidatingAdmissionPolicies and their bindings, with its field paths
 * and messages: match resources, validations, audit annotations, variables, param references
 * and validation actions. Expressions are compiled in the `admissionPolicy` CEL environment.
 */

import {
  type FieldError,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  type KubeObject,
  validatePathSegmentName,
} from "../api/mod.ts";
import { CEL_RESERVED_WORDS } from "../cel/mod.ts";
import {
  absent,
  compileInto,
  FAILURE_POLICIES,
  isObj,
  list,
  MATCH_POLICIES,
  oneOf,
  PARAMETER_NOT_FOUND_ACTIONS,
  str,
  validateLabelSelector,
  validateMatchConditions,
  validateRuleWithOperations,
  VALIDATION_ACTIONS,
  VALIDATION_REASONS,
} from "./admission_validation_common.ts";

function validateMatchResources(errors: FieldError[], match: unknown, path: string): void {
  if (!isObj(match)) return;
  oneOf(errors, `${path}.matchPolicy`, match.matchPolicy, MATCH_POLICIES);
  validateLabelSelector(errors, match.namespaceSelector, `${path}.namespaceSelector`);
  validateLabelSelector(errors, match.objectSelector, `${path}.objectSelector`);
  for (const field of ["resourceRules", "excludeResourceRules"]) {
    list(match[field]).forEach((rule, i) => {
      if (!isObj(rule)) return;
      const at = `${path}.${field}[${i}]`;
      const names = new Set<string>();
      list(rule.resourceNames).forEach((n, j) => {
        const name = str(n);
        for (const msg of validatePathSegmentName(name)) {
          errors.push({
            type: "Invalid",
            field: `${at}.resourceNames[${j}]`,
            value: name,
            detail: msg,
          });
        }
        if (names.has(name)) {
          errors.push({ type: "Duplicate", field: `${at}.resourceNames[${j}]`, value: name });
        }
        names.add(name);
      });
      validateRuleWithOperations(errors, rule, at);
    });
  }
}

const isCelIdentifier = (name: string) =>
  /^[_a-zA-Z][_a-zA-Z0-9]*$/.test(name) && !CEL_RESERVED_WORDS.has(name);

function validateValidations(errors: FieldError[], validations: unknown, path: string) {
  list(validations).forEach((v, i) => {
    if (!isObj(v)) return;
    const at = `${path}[${i}]`;
    const expression = str(v.expression);
    if (!absent(v.expression) && expression.trim() === "") {
      errors.push({
        type: "Required",
        field: `${at}.expression`,
        detail: "expression is not specified",
      });
    } else if (expression.trim()) {
      compileInto(errors, "admissionPolicy", `${at}.expression`, expression, "bool", true);
    }
    const messageExpression = str(v.messageExpression);
    if (messageExpression && !messageExpression.trim()) {
      errors.push({
        type: "Invalid",
        field: `${at}.messageExpression`,
        value: messageExpression,
        detail: "must be non-empty if specified",
      });
    } else if (messageExpression) {
      compileInto(
        errors,
        "admissionPolicy",
        `${at}.messageExpression`,
        messageExpression,
        "string",
        false,
      );
    }
    const message = str(v.message);
    if (message && !message.trim()) {
      errors.push({
        type: "Invalid",
        field: `${at}.message`,
        value: message,
        detail: "message must be non-empty if specified",
      });
    } else if (/[\n\r]/.test(message.trim())) {
      errors.push({
        type: "Invalid",
        field: `${at}.message`,
        value: message,
        detail: "message must not contain line breaks",
      });
    }
    oneOf(errors, `${at}.reason`, v.reason, VALIDATION_REASONS);
  });
}

function validateAuditAnnotations(errors: FieldError[], annotations: unknown, path: string) {
  const keys = new Set<string>();
  list(annotations).forEach((a, i) => {
    if (!isObj(a)) return;
    const at = `${path}[${i}]`;
    const key = str(a.key);
    if (a.key === "") errors.push({ type: "Required", field: `${at}.key` });
    else if (key) {
      for (const msg of isQualifiedName(`placeholder.admission.k8s.io/${key}`)) {
        errors.push({ type: "Invalid", field: `${at}.key`, value: key, detail: msg });
      }
      if (keys.has(key)) errors.push({ type: "Duplicate", field: `${at}.key`, value: key });
      keys.add(key);
    }
    const value = str(a.valueExpression);
    if (!absent(a.valueExpression) && !value.trim()) {
      errors.push({
        type: "Required",
        field: `${at}.valueExpression`,
        detail: "valueExpression is not specified",
      });
    } else if (value.trim()) {
      compileInto(errors, "admissionPolicy", `${at}.valueExpression`, value, "any", true);
    }
  });
}

function validateVariables(errors: FieldError[], variables: unknown, path: string) {
  const names = new Set<string>();
  list(variables).forEach((v, i) => {
    if (!isObj(v)) return;
    const at = `${path}[${i}]`;
    const name = str(v.name);
    if (!absent(v.name) && !name.trim()) {
      errors.push({ type: "Required", field: `${at}.name`, detail: "name is not specified" });
    } else if (name) {
      if (!isCelIdentifier(name)) {
        errors.push({
          type: "Invalid",
          field: `${at}.name`,
          value: name,
          detail: "name is not a valid CEL identifier",
        });
      }
      if (names.has(name)) errors.push({ type: "Duplicate", field: `${at}.name`, value: name });
      names.add(name);
    }
    const expression = str(v.expression);
    if (!absent(v.expression) && !expression.trim()) {
      errors.push({
        type: "Required",
        field: `${at}.expression`,
        detail: "expression is not specified",
      });
    } else if (expression.trim()) {
      compileInto(errors, "admissionPolicy", `${at}.expression`, expression, "any", true);
    }
  });
}

/** A ValidatingAdmissionPolicy's spec. */
export function validatePolicy(o: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const spec = isObj(o.spec) ? o.spec : {};
  if (isObj(spec.paramKind)) {
    if (!spec.paramKind.apiVersion) {
      errors.push({ type: "Required", field: "spec.paramKind.apiVersion" });
    }
    if (!spec.paramKind.kind) errors.push({ type: "Required", field: "spec.paramKind.kind" });
  }
  if (!isObj(spec.matchConstraints)) {
    errors.push({ type: "Required", field: "spec.matchConstraints" });
  } else {
    validateMatchResources(errors, spec.matchConstraints, "spec.matchConstraints");
    if (list(spec.matchConstraints.resourceRules).length === 0) {
      errors.push({ type: "Required", field: "spec.matchConstraints.resourceRules" });
    }
  }
  if (list(spec.validations).length === 0 && list(spec.auditAnnotations).length === 0) {
    const detail = "validations or auditAnnotations must contain at least one item";
    errors.push({ type: "Required", field: "spec.validations", detail });
    errors.push({ type: "Required", field: "spec.auditAnnotations", detail });
  }
  validateValidations(errors, spec.validations, "spec.validations");
  validateAuditAnnotations(errors, spec.auditAnnotations, "spec.auditAnnotations");
  validateMatchConditions(errors, spec.matchConditions, "spec.matchConditions", "admissionPolicy");
  validateVariables(errors, spec.variables, "spec.variables");
  oneOf(errors, "spec.failurePolicy", spec.failurePolicy, FAILURE_POLICIES);
  return errors;
}

/** A status write: each type-checking warning names its field and says something. */
export function validatePolicyStatus(o: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  list(o.status?.typeChecking?.expressionWarnings).forEach((w, i) => {
    if (!isObj(w)) return;
    const at = `status.typeChecking.expressionWarnings[${i}]`;
    if (w.fieldRef === "") errors.push({ type: "Required", field: `${at}.fieldRef` });
    if (w.warning === "") errors.push({ type: "Required", field: `${at}.warning` });
  });
  return errors;
}

/** A ValidatingAdmissionPolicyBinding's spec. */
export function validatePolicyBinding(o: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const spec = isObj(o.spec) ? o.spec : {};
  const policyName = str(spec.policyName);
  if (!policyName) errors.push({ type: "Required", field: "spec.policyName" });
  else {
    for (const msg of isDNS1123Subdomain(policyName)) {
      errors.push({ type: "Invalid", field: "spec.policyName", value: policyName, detail: msg });
    }
  }
  const ref = spec.paramRef;
  if (isObj(ref)) {
    const name = str(ref.name);
    const hasSelector = isObj(ref.selector);
    const exclusive = "name and selector are mutually exclusive";
    if (name) {
      for (const msg of validatePathSegmentName(name)) {
        errors.push({ type: "Invalid", field: "spec.paramRef.name", value: name, detail: msg });
      }
      if (hasSelector) {
        errors.push({ type: "Forbidden", field: "spec.paramRef.name", detail: exclusive });
        errors.push({ type: "Forbidden", field: "spec.paramRef.selector", detail: exclusive });
      }
    }
    if (hasSelector) validateLabelSelector(errors, ref.selector, "spec.paramRef.selector");
    if (!name && !hasSelector) {
      errors.push({
        type: "Required",
        field: "spec.paramRef",
        detail: "one of name or selector must be specified",
      });
    }
    oneOf(
      errors,
      "spec.paramRef.parameterNotFoundAction",
      ref.parameterNotFoundAction,
      PARAMETER_NOT_FOUND_ACTIONS,
    );
    const namespace = str(ref.namespace);
    if (namespace) {
      for (const msg of isDNS1123Label(namespace)) {
        errors.push({
          type: "Invalid",
          field: "spec.paramRef.namespace",
          value: namespace,
          detail: msg,
        });
      }
    }
  }
  validateMatchResources(errors, spec.matchResources, "spec.matchResources");
  const actions = list(spec.validationActions);
  const seen = new Set<unknown>();
  actions.forEach((a, i) => {
    oneOf(errors, `spec.validationActions[${i}]`, a, VALIDATION_ACTIONS);
    if (seen.has(a)) {
      errors.push({ type: "Duplicate", field: `spec.validationActions[${i}]`, value: a });
    }
    seen.add(a);
  });
  if (seen.has("Deny") && seen.has("Warn")) {
    errors.push({
      type: "Invalid",
      field: "spec.validationActions",
      value: actions,
      detail: "must not contain both Deny and Warn (repeating the same validation failure " +
        "information in the API response and headers serves no purpose)",
    });
  }
  if (seen.size === 0) {
    errors.push({
      type: "Required",
      field: "spec.validationActions",
      detail: "at least one validation action is required",
    });
  }
  return errors;
}
