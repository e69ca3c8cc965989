/**
 * Kube's validation of `admissionregistration.platform.io/v1` objects (its
 * pkg/apis/admissionregistration/validation), with its field paths and messages. Fields the
 * schema marks required (a webhook's name, clientConfig, sideEffects, admissionReviewVersions,
 * …) are reported missing by schema validation; the checks here say what is wrong with a value
 * that is there. CEL expressions are compiled in the admission environments of lib/cel.
 */

import {
  decodePem,
  type FieldError,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  type KubeObject,
  validateLabels,
  validatePathSegmentName,
} from "../api/mod.ts";
import {
  CelCompileError,
  type CelEnvironmentName,
  type CelResultKind,
  compile,
} from "../cel/mod.ts";

const isObj = (v: unknown): v is KubeObject =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const absent = (v: unknown) => v === undefined || v === null;
const list = (v: unknown): unknown[] => Array.isArray(v) ? v : [];
const str = (v: unknown): string => typeof v === "string" ? v : "";

/** kube's field.NotSupported detail: the supported values, sorted, quoted. */
function notSupported(field: string, value: unknown, values: readonly string[]): FieldError {
  const supported = [...values].sort().map((v) => JSON.stringify(v)).join(", ");
  return { type: "NotSupported", field, value, detail: `supported values: ${supported}` };
}

function oneOf(
  errors: FieldError[],
  field: string,
  value: unknown,
  values: readonly string[],
): void {
  if (!absent(value) && !values.includes(value as string)) {
    errors.push(notSupported(field, value, values));
  }
}

const FAILURE_POLICIES = ["Fail", "Ignore"];
const MATCH_POLICIES = ["Equivalent", "Exact"];
const REINVOCATION_POLICIES = ["IfNeeded", "Never"];
const SIDE_EFFECTS_V1 = ["None", "NoneOnDryRun"];
const OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const SCOPES = ["*", "Cluster", "Namespaced"];
const VALIDATION_REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"];
const VALIDATION_ACTIONS = ["Audit", "Deny", "Warn"];
const PARAMETER_NOT_FOUND_ACTIONS = ["Allow", "Deny"];
/** The AdmissionReview versions the server sends; kube also accepts v1beta1. */
const ADMISSION_REVIEW_VERSIONS = ["v1"];
const MAX_MATCH_CONDITIONS = 64;

// ---- CEL ----

/** Compiles `expression`; a failure is kube's `compilation failed: …` at `field`. */
function compileInto(
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
function validateMatchConditions(
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
function validateLabelSelector(errors: FieldError[], selector: unknown, path: string): void {
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

const hasWildcard = (items: unknown[]) => items.includes("*");

/** kube's validateResources: `*`, `*\/*`, `x`, `x/y`, `*\/y`, `x/*`, without overlaps. */
function validateResources(errors: FieldError[], resources: unknown[], path: string): void {
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
function validateRuleWithOperations(errors: FieldError[], rule: KubeObject, path: string): void {
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
function validateWebhookName(errors: FieldError[], name: string, path: string): void {
  if (name === "") {
    errors.push({ type: "Required", field: path });
    return;
  }
  const trimmed = name.endsWith(".") ? name.slice(0, -1) : name;
  const msgs = isDNS1123Subdomain(trimmed);
  if (msgs.length) {
    errors.push({ type: "Invalid", field: path, value: trimmed, detail: msgs.join(",") });
  } else if (trimmed.split(".").length < 3) {
    errors.push({
      type: "Invalid",
      field: path,
      value: trimmed,
      detail: "should be a domain with at least three segments separated by dots",
    });
  }
}

const URL_FORM = "; desired format: https://host[/path]";

/** kube's ValidateWebhookURL (https forced). */
function validateWebhookURL(errors: FieldError[], raw: string, path: string): void {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    errors.push({
      type: "Required",
      field: path,
      detail: `url must be a valid URL: parse ${JSON.stringify(raw)}: invalid URL${URL_FORM}`,
    });
    return;
  }
  const scheme = u.protocol.replace(/:$/, "");
  if (scheme !== "https") {
    errors.push({
      type: "Invalid",
      field: path,
      value: scheme,
      detail: `'https' is the only allowed URL scheme${URL_FORM}`,
    });
  }
  if (u.host === "") {
    errors.push({
      type: "Invalid",
      field: path,
      value: "",
      detail: `host must be specified${URL_FORM}`,
    });
  }
  if (u.username || u.password || /^[^/]*\/\/[^/]*@/.test(raw)) {
    const user = u.password ? `${u.username}:${u.password}` : u.username;
    errors.push({
      type: "Invalid",
      field: path,
      value: user,
      detail: "user information is not permitted in the URL",
    });
  }
  if (u.hash.length > 1 || raw.includes("#")) {
    errors.push({
      type: "Invalid",
      field: path,
      value: u.hash.slice(1),
      detail: "fragments are not permitted in the URL",
    });
  }
  if (u.search.length > 1 || /\?[^#]/.test(raw)) {
    errors.push({
      type: "Invalid",
      field: path,
      value: u.search.slice(1),
      detail: "query parameters are not permitted in the URL",
    });
  }
}

/** kube's ValidateWebhookService. */
function validateWebhookService(errors: FieldError[], service: KubeObject, path: string): void {
  if (service.name === "") {
    errors.push({ type: "Required", field: `${path}.name`, detail: "service name is required" });
  }
  if (service.namespace === "") {
    errors.push({
      type: "Required",
      field: `${path}.namespace`,
      detail: "service namespace is required",
    });
  }
  const port = service.port;
  if (typeof port === "number" && (port < 1 || port > 65535)) {
    errors.push({
      type: "Invalid",
      field: `${path}.port`,
      value: port,
      detail: "port is not valid: must be between 1 and 65535, inclusive",
    });
  }
  const urlPath = service.path;
  if (typeof urlPath !== "string" || urlPath === "" || urlPath === "/") return;
  if (urlPath === "//") {
    errors.push({
      type: "Invalid",
      field: `${path}.path`,
      value: urlPath,
      detail: "segment[0] may not be empty",
    });
    return;
  }
  if (!urlPath.startsWith("/")) {
    errors.push({
      type: "Invalid",
      field: `${path}.path`,
      value: urlPath,
      detail: "must start with a '/'",
    });
  }
  let check = urlPath.slice(1);
  if (check.endsWith("/")) check = check.slice(0, -1);
  check.split("/").forEach((step, i) => {
    if (step === "") {
      errors.push({
        type: "Invalid",
        field: `${path}.path`,
        value: urlPath,
        detail: `segment[${i}] may not be empty`,
      });
      return;
    }
    for (const msg of isDNS1123Subdomain(step)) {
      errors.push({
        type: "Invalid",
        field: `${path}.path`,
        value: urlPath,
        detail: `segment[${i}]: ${msg}`,
      });
    }
  });
}

/** A caBundle holds PEM certificates: base64 (the schema checks that) of at least one
 * `CERTIFICATE` block. */
function validateCABundle(errors: FieldError[], bundle: unknown, path: string): void {
  if (typeof bundle !== "string" || bundle === "") return;
  let text: string;
  try {
    text = atob(bundle.replace(/[\r\n]/g, ""));
  } catch {
    return; // not base64: the schema's error
  }
  if (!decodePem(text).some((b) => b.type === "CERTIFICATE")) {
    errors.push({
      type: "Invalid",
      field: path,
      value: "<bundle>",
      detail: "must be PEM-encoded certificates: no CERTIFICATE block found",
    });
  }
}

function validateClientConfig(errors: FieldError[], config: unknown, path: string): void {
  if (!isObj(config)) return;
  const hasURL = !absent(config.url);
  const hasService = !absent(config.service);
  if (hasURL === hasService) {
    errors.push({
      type: "Required",
      field: path,
      detail: "exactly one of url or service is required",
    });
  } else if (hasURL) validateWebhookURL(errors, str(config.url), `${path}.url`);
  else if (isObj(config.service)) validateWebhookService(errors, config.service, `${path}.service`);
  validateCABundle(errors, config.caBundle, `${path}.caBundle`);
}

function validateAdmissionReviewVersions(errors: FieldError[], versions: unknown, path: string) {
  if (absent(versions)) return; // the schema's Required
  const items = list(versions);
  const accepted = ADMISSION_REVIEW_VERSIONS.join(", ");
  if (items.length === 0) {
    errors.push({ type: "Required", field: path, detail: `must specify one of ${accepted}` });
    return;
  }
  const seen = new Set<unknown>();
  items.forEach((v, i) => {
    if (seen.has(v)) {
      errors.push({
        type: "Invalid",
        field: `${path}[${i}]`,
        value: v,
        detail: "duplicate version",
      });
      return;
    }
    seen.add(v);
    for (const msg of isDNS1035Label(str(v))) {
      errors.push({ type: "Invalid", field: `${path}[${i}]`, value: v, detail: msg });
    }
  });
  if (!items.some((v) => ADMISSION_REVIEW_VERSIONS.includes(v as string))) {
    errors.push({
      type: "Invalid",
      field: path,
      value: items,
      detail: `must include at least one of ${accepted}`,
    });
  }
}

function validateWebhook(errors: FieldError[], hook: KubeObject, path: string, mutating: boolean) {
  if (!absent(hook.name)) validateWebhookName(errors, str(hook.name), `${path}.name`);
  validateClientConfig(errors, hook.clientConfig, `${path}.clientConfig`);
  list(hook.rules).forEach((rule, i) => {
    if (isObj(rule)) validateRuleWithOperations(errors, rule, `${path}.rules[${i}]`);
  });
  oneOf(errors, `${path}.failurePolicy`, hook.failurePolicy, FAILURE_POLICIES);
  oneOf(errors, `${path}.matchPolicy`, hook.matchPolicy, MATCH_POLICIES);
  oneOf(errors, `${path}.sideEffects`, hook.sideEffects, SIDE_EFFECTS_V1);
  if (mutating) {
    oneOf(errors, `${path}.reinvocationPolicy`, hook.reinvocationPolicy, REINVOCATION_POLICIES);
  }
  const timeout = hook.timeoutSeconds;
  if (typeof timeout === "number" && (timeout < 1 || timeout > 30)) {
    errors.push({
      type: "Invalid",
      field: `${path}.timeoutSeconds`,
      value: timeout,
      detail: "the timeout value must be between 1 and 30 seconds",
    });
  }
  validateAdmissionReviewVersions(
    errors,
    hook.admissionReviewVersions,
    `${path}.admissionReviewVersions`,
  );
  validateLabelSelector(errors, hook.namespaceSelector, `${path}.namespaceSelector`);
  validateLabelSelector(errors, hook.objectSelector, `${path}.objectSelector`);
  validateMatchConditions(errors, hook.matchConditions, `${path}.matchConditions`, "admission");
}

/** A Mutating- or ValidatingWebhookConfiguration. */
export function validateWebhookConfiguration(o: KubeObject, mutating: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const names = new Set<string>();
  list(o.webhooks).forEach((hook, i) => {
    if (!isObj(hook)) return;
    const path = `webhooks[${i}]`;
    validateWebhook(errors, hook, path, mutating);
    if (typeof hook.name === "string" && hook.name !== "") {
      if (names.has(hook.name)) {
        errors.push({ type: "Duplicate", field: `${path}.name`, value: hook.name });
      }
      names.add(hook.name);
    }
  });
  return errors;
}

// ---- policies and bindings ----

/** kube's validateMatchResources (nil is fine: the caller says when it is required). */
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

const CEL_RESERVED = new Set([
  "true",
  "false",
  "null",
  "in",
  "as",
  "break",
  "const",
  "continue",
  "else",
  "for",
  "function",
  "if",
  "import",
  "let",
  "loop",
  "package",
  "namespace",
  "return",
  "var",
  "void",
  "while",
]); // deno-fmt-ignore

const isCelIdentifier = (name: string) =>
  /^[_a-zA-Z][_a-zA-Z0-9]*$/.test(name) && !CEL_RESERVED.has(name);

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
