/**
 * Kube's validation of Mutating- and ValidatingWebhookConfigurations, with its field paths and
 * messages: webhook names, client configs (URL or Service, CA bundle), review versions, rules,
 * policies and match conditions.
 */

import {
  decodePem,
  type FieldError,
  isDNS1035Label,
  isDNS1123Subdomain,
  type KubeObject,
} from "../api/mod.ts";

import {
  absent,
  ADMISSION_REVIEW_VERSIONS,
  FAILURE_POLICIES,
  isObj,
  list,
  MATCH_POLICIES,
  oneOf,
  REINVOCATION_POLICIES,
  SIDE_EFFECTS_V1,
  str,
  validateLabelSelector,
  validateMatchConditions,
  validateRuleWithOperations,
} from "./admission_validation_common.ts";

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
