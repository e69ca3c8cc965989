/**
 * What a CRD's `spec.conversion` must be, worded and placed as Kubernetes words and places
 * it: a strategy of `None` or `Webhook`; with `Webhook`, a webhook with a client config (an
 * https URL, or a Service) and review versions this server speaks. Beyond kube, a Service
 * needs a `caBundle`: its certificate cannot chain to the system's roots in any useful setup,
 * so without one every conversion would fail.
 */

import { decodePem, type FieldError } from "../api/mod.ts";
import { CONVERSION_REVIEW_VERSIONS } from "./conversion_webhook.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const absent = (v: unknown) => v === undefined || v === null;

/** Checks `spec.conversion` (already defaulted). */
export function validateConversion(conversion: Json): FieldError[] {
  if (!conversion || typeof conversion !== "object") return [];
  const path = "spec.conversion";
  const strategy = conversion.strategy;
  if (strategy === "Webhook") {
    if (absent(conversion.webhook)) {
      return [{
        type: "Required",
        field: `${path}.webhook`,
        detail: "required when strategy is set to Webhook",
      }];
    }
    const webhook = conversion.webhook;
    const errs: FieldError[] = [];
    if (absent(webhook.clientConfig)) {
      errs.push({
        type: "Required",
        field: `${path}.webhook.clientConfig`,
        detail: "required when strategy is set to Webhook",
      });
    } else {
      errs.push(...validateClientConfig(webhook.clientConfig, `${path}.webhook.clientConfig`));
    }
    errs.push(
      ...validateReviewVersions(
        webhook.conversionReviewVersions,
        `${path}.webhook.conversionReviewVersions`,
      ),
    );
    return errs;
  }
  if (strategy !== "None") {
    return [{
      type: "NotSupported",
      field: `${path}.strategy`,
      value: strategy ?? "",
      detail: 'supported values: "None", "Webhook"',
    }];
  }
  if (!absent(conversion.webhook)) {
    return [{
      type: "Forbidden",
      field: `${path}.webhook`,
      detail: "should not be set when strategy is not set to Webhook",
    }];
  }
  return [];
}

function validateClientConfig(config: Json, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const hasURL = !absent(config.url);
  const hasService = !absent(config.service);
  if (hasURL === hasService) {
    errs.push({
      type: "Required",
      field: path,
      detail: "exactly one of url or service is required",
    });
  } else if (hasURL) {
    errs.push(...validateURL(String(config.url), `${path}.url`));
  } else {
    const s = config.service ?? {};
    if (!s.name) {
      errs.push({
        type: "Required",
        field: `${path}.service.name`,
        detail: "service name is required",
      });
    }
    if (!s.namespace) {
      errs.push({
        type: "Required",
        field: `${path}.service.namespace`,
        detail: "service namespace is required",
      });
    }
    if (absent(config.caBundle) || config.caBundle === "") {
      errs.push({
        type: "Required",
        field: `${path}.caBundle`,
        detail: "required with service: the service's certificate is checked against it",
      });
    }
  }
  if (typeof config.caBundle === "string" && config.caBundle !== "") {
    let text = "";
    try {
      text = atob(config.caBundle.replace(/[\r\n]/g, ""));
    } catch { /* not base64: the schema's error */ }
    if (text && !decodePem(text).some((b) => b.type === "CERTIFICATE")) {
      errs.push({
        type: "Invalid",
        field: `${path}.caBundle`,
        value: "<bundle>",
        detail: "must be PEM-encoded certificates: no CERTIFICATE block found",
      });
    }
  }
  return errs;
}

function validateURL(raw: string, path: string): FieldError[] {
  if (!URL.canParse(raw)) {
    return [{
      type: "Required",
      field: path,
      detail: `url must be a valid URL: parse ${JSON.stringify(raw)}: invalid URL`,
    }];
  }
  const u = new URL(raw);
  const errs: FieldError[] = [];
  const scheme = u.protocol.replace(/:$/, "");
  if (scheme !== "https") {
    errs.push({
      type: "Invalid",
      field: path,
      value: scheme,
      detail: "'https' is the only allowed URL scheme",
    });
  }
  if (u.username || u.password) {
    errs.push({
      type: "Invalid",
      field: path,
      value: u.username,
      detail: "user information is not permitted in the URL",
    });
  }
  if (u.hash.length > 1) {
    errs.push({
      type: "Invalid",
      field: path,
      value: u.hash.slice(1),
      detail: "fragments are not permitted in the URL",
    });
  }
  if (u.search.length > 1) {
    errs.push({
      type: "Invalid",
      field: path,
      value: u.search.slice(1),
      detail: "query parameters are not permitted in the URL",
    });
  }
  return errs;
}

function validateReviewVersions(versions: Json, path: string): FieldError[] {
  const accepted = CONVERSION_REVIEW_VERSIONS.join(", ");
  if (!Array.isArray(versions) || versions.length === 0) {
    return [{ type: "Required", field: path, detail: `must specify one of ${accepted}` }];
  }
  if (!versions.some((v) => CONVERSION_REVIEW_VERSIONS.includes(v))) {
    return [{
      type: "Invalid",
      field: path,
      value: versions,
      detail: `must include at least one of ${accepted}`,
    }];
  }
  return [];
}
