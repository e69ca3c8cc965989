/**
 * Validation of CertificateSigningRequest objects (spec 02), worded and placed as Kubernetes'
 * `pkg/apis/certificates/validation` does: the request itself on create, the condition rules,
 * condition timestamp defaulting (`populateConditionTimestamps` of kube's strategy) and the
 * issued certificate.
 *
 * The functions take plain JSON as the API carries it: `spec.request` and `status.certificate`
 * are base64 strings of PEM text. Subresource separation (which update may touch what) is the
 * caller's business; these functions check the objects they are given.
 *
 * @module
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import {
  byteLength,
  DNS1123_LABEL_MAX_LENGTH,
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  type FieldError,
  isDNS1123Label,
  isDNS1123Subdomain,
} from "../api/mod.ts";

x509.cryptoProvider.set(crypto);

/** One entry of `status.conditions`. */
export interface CsrCondition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string | null;
  lastUpdateTime?: string | null;
}

/** `status` of a CertificateSigningRequest. */
export interface CsrStatus {
  /** base64 of PEM text. */
  certificate?: string;
  conditions?: CsrCondition[];
}

/** The client-settable part of `spec` (the server fills in the requester fields). */
export interface CsrSpec {
  /** base64 of one PEM `CERTIFICATE REQUEST` block. */
  request?: string;
  signerName?: string;
  usages?: string[];
  expirationSeconds?: number | null;
}

/** The values `spec.usages` may hold, in the spec's order. */
export const KNOWN_USAGES: readonly string[] = Object.freeze([
  "signing",
  "digital signature",
  "content commitment",
  "key encipherment",
  "key agreement",
  "data encipherment",
  "cert sign",
  "crl sign",
  "encipher only",
  "decipher only",
  "any",
  "server auth",
  "client auth",
  "code signing",
  "email protection",
  "s/mime",
  "ipsec end system",
  "ipsec tunnel",
  "ipsec user",
  "timestamping",
  "ocsp signing",
  "microsoft sgc",
  "netscape sgc",
]);

/** Refused on create since v1 (kube's `kubernetes.io/legacy-unknown`). */
export const LEGACY_UNKNOWN_SIGNER_NAME = "platform.io/legacy-unknown";
/** The shortest `expirationSeconds` accepted. */
export const MIN_EXPIRATION_SECONDS = 600;

/** Condition types that, once present, may only be `True` and may not be removed. */
const TRUE_ONLY_TYPES = ["Approved", "Denied", "Failed"];

// kube lists supported values sorted (sets.String.List()).
const USAGES_SUPPORTED = supportedValues(KNOWN_USAGES);
const USAGE_SET = new Set(KNOWN_USAGES);

function supportedValues(values: readonly string[]): string {
  return `supported values: ${[...values].sort().map((v) => JSON.stringify(v)).join(", ")}`;
}

// ---------------------------------------------------------------------------------------
// base64 and PEM

const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The bytes of a base64 string as a binary string, or undefined when it is not standard
 * padded base64. Line breaks are ignored, as Go's decoder of `[]byte` JSON fields does.
 */
function decodeBase64(s: string): string | undefined {
  const clean = s.replace(/[\r\n]/g, "");
  return BASE64_RE.test(clean) ? atob(clean) : undefined;
}

interface PemBlock {
  type: string;
  /** The block has `Name: value` header lines (RFC 1421). */
  headers: boolean;
  /** Undefined when the body is not base64. */
  der?: Uint8Array<ArrayBuffer>;
}

const BEGIN_RE = /^-----BEGIN ([^\r\n]*)-----\r?\n/gm;

/**
 * The PEM blocks of `text`: a BEGIN line, the body, and the first END line after it; text
 * around blocks is ignored. Malformed blocks (END label mismatch, body not base64) are
 * returned without `der`. One pass, so that hostile input cannot make it slow.
 */
function pemBlocks(text: string): PemBlock[] {
  const out: PemBlock[] = [];
  const begin = new RegExp(BEGIN_RE);
  for (let m; (m = begin.exec(text));) {
    const bodyStart = begin.lastIndex;
    const endAt = text.indexOf("\n-----END ", bodyStart - 1);
    if (endAt < 0) break; // no END follows this BEGIN, nor any later one
    const lineEnd = text.indexOf("\n", endAt + 1);
    const endLine = text.slice(endAt + 1, lineEnd < 0 ? text.length : lineEnd).trimEnd();
    const type = m[1];
    const lines = text.slice(bodyStart, endAt).split(/\r?\n/);
    // base64 has no ':', so any line with one is a header.
    const headers = lines.some((l) => l.includes(":"));
    const b64 = lines.filter((l) => !l.includes(":")).join("").replace(/\s+/g, "");
    const bin = endLine === `-----END ${type}-----` ? decodeBase64(b64) : undefined;
    const der = bin === undefined ? undefined : Uint8Array.from(bin, (c) => c.charCodeAt(0));
    out.push({ type, headers, der });
    begin.lastIndex = lineEnd < 0 ? text.length : lineEnd;
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// spec

/**
 * Decode and parse `spec.request`: base64 of exactly one PEM `CERTIFICATE REQUEST` block
 * holding a PKCS#10 request. Throws an Error whose message suits a field error detail. The
 * signature is not checked here (see {@link validateCsrSpec}).
 */
export function parseCsrRequest(request: string): x509.Pkcs10CertificateRequest {
  const pem = decodeBase64(request);
  if (pem === undefined) throw new Error("illegal base64 data");
  const blocks = pemBlocks(pem);
  if (blocks.length > 1) {
    throw new Error(`must contain exactly one PEM block, found ${blocks.length}`);
  }
  // kube's ParseCSR message, for no block as for a wrong one.
  if (blocks.length === 0 || blocks[0].type !== "CERTIFICATE REQUEST") {
    throw new Error("PEM block type must be CERTIFICATE REQUEST");
  }
  const der = blocks[0].der;
  if (!der) throw new Error("malformed PEM block: the body is not valid base64");
  try {
    const csr = new x509.Pkcs10CertificateRequest(der);
    void csr.publicKey; // make sure the key parses now rather than in the signer
    return csr;
  } catch {
    throw new Error("x509: malformed certificate request");
  }
}

/**
 * Create-time checks of a request's spec: `request` (one verified PKCS#10 request),
 * `signerName`, `usages` and `expirationSeconds`. Every violation is returned.
 */
export async function validateCsrSpec(spec: CsrSpec | undefined): Promise<FieldError[]> {
  const errs: FieldError[] = [];
  const s = spec ?? {};

  if (typeof s.request !== "string" || s.request === "") {
    errs.push({ type: "Required", field: "spec.request" });
  } else {
    const detail = await requestProblem(s.request);
    if (detail) errs.push({ type: "Invalid", field: "spec.request", value: s.request, detail });
  }

  const usages = Array.isArray(s.usages) ? s.usages : [];
  if (usages.length === 0) errs.push({ type: "Required", field: "spec.usages" });
  usages.forEach((u, i) => {
    if (!USAGE_SET.has(u)) {
      errs.push({
        type: "NotSupported",
        field: `spec.usages[${i}]`,
        value: u,
        detail: USAGES_SUPPORTED,
      });
    }
  });
  usages.forEach((u, i) => {
    if (usages.indexOf(u) < i) {
      errs.push({ type: "Duplicate", field: `spec.usages[${i}]`, value: u });
    }
  });

  const signerName = typeof s.signerName === "string" ? s.signerName : "";
  if (signerName === LEGACY_UNKNOWN_SIGNER_NAME) {
    errs.push({
      type: "Invalid",
      field: "spec.signerName",
      value: signerName,
      detail: "the legacy signerName is not allowed via this API version",
    });
  } else {
    errs.push(...validateSignerName("spec.signerName", signerName));
  }

  const exp = s.expirationSeconds;
  if (typeof exp === "number" && exp < MIN_EXPIRATION_SECONDS) {
    errs.push({
      type: "Invalid",
      field: "spec.expirationSeconds",
      value: exp,
      detail: "may not specify a duration less than 600 seconds (10 minutes)",
    });
  }
  return errs;
}

/** Why `request` is unusable, or undefined when it parses and its signature verifies. */
async function requestProblem(request: string): Promise<string | undefined> {
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = parseCsrRequest(request);
  } catch (err) {
    return (err as Error).message;
  }
  try {
    if (!await csr.verify()) return "x509: certificate request signature verification failed";
  } catch (err) {
    // e.g. a key or signature algorithm Web Crypto does not support
    return `x509: cannot verify certificate request signature: ${(err as Error).message}`;
  }
  return undefined;
}

/** The errors of the first label `check` refuses (later ones would read the same). */
function firstBadLabel(
  field: string,
  value: string,
  labels: string[],
  check: (label: string) => string[],
): FieldError[] {
  for (const label of labels) {
    const msgs = check(label);
    if (msgs.length) {
      return msgs.map((msg) => ({
        type: "Invalid",
        field,
        value,
        detail: `validating label "${label}": ${msg}`,
      }));
    }
  }
  return [];
}

/**
 * kube's `ValidateSignerName`: `<domain>/<path>`, the domain being DNS-1123 labels joined by
 * dots (at least two, at most 253 bytes), the path DNS-1123 subdomains joined by dots, and the
 * whole at most 571 bytes (room for `<fqdn>/<namespace>.<name>`).
 */
export function validateSignerName(field: string, signerName: string): FieldError[] {
  if (signerName === "") return [{ type: "Required", field }];
  const segments = signerName.split("/");
  if (segments.length !== 2) {
    return [{
      type: "Invalid",
      field,
      value: signerName,
      detail: "must be a fully qualified domain and path of the form 'example.com/signer-name'",
    }];
  }
  const [domain, path] = segments;
  const errs: FieldError[] = [];
  if (byteLength(domain) > DNS1123_SUBDOMAIN_MAX_LENGTH) {
    errs.push({
      type: "TooLong",
      field,
      detail: `may not be more than ${DNS1123_SUBDOMAIN_MAX_LENGTH} bytes`,
    });
  }
  const domainLabels = domain.split(".");
  errs.push(...firstBadLabel(field, domain, domainLabels, isDNS1123Label));
  if (domainLabels.length < 2) {
    errs.push({
      type: "Invalid",
      field,
      value: domain,
      detail: "should be a domain with at least two segments separated by dots",
    });
  }
  errs.push(...firstBadLabel(field, path, path.split("."), isDNS1123Subdomain));
  const maxLength = DNS1123_SUBDOMAIN_MAX_LENGTH + 1 + DNS1123_SUBDOMAIN_MAX_LENGTH + 1 +
    DNS1123_LABEL_MAX_LENGTH;
  if (byteLength(signerName) > maxLength) {
    errs.push({ type: "TooLong", field, detail: `may not be more than ${maxLength} bytes` });
  }
  return errs;
}

// ---------------------------------------------------------------------------------------
// status.conditions

function conditionsOf(status: CsrStatus | undefined): CsrCondition[] {
  return Array.isArray(status?.conditions) ? status.conditions : [];
}

/**
 * The condition rules: `type` and `status` required; Approved, Denied and Failed only `True`
 * (other types may use `True`, `False` or `Unknown`); one condition per type; Approved and
 * Denied exclusive; and, given the stored status, Approved, Denied and Failed never removed.
 */
export function validateConditions(
  newStatus: CsrStatus | undefined,
  oldStatus: CsrStatus | undefined,
): FieldError[] {
  const errs: FieldError[] = [];
  const conditions = conditionsOf(newStatus);
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conditions.forEach((c, i) => {
    const path = `status.conditions[${i}]`;
    const type = c?.type ?? "";
    const status = c?.status ?? "";
    if (type === "") errs.push({ type: "Required", field: `${path}.type` });

    const allowed = TRUE_ONLY_TYPES.includes(type) ? ["True"] : ["True", "False", "Unknown"];
    if (status === "") {
      errs.push({ type: "Required", field: `${path}.status` });
    } else if (!allowed.includes(status)) {
      errs.push({
        type: "NotSupported",
        field: `${path}.status`,
        value: status,
        detail: supportedValues(allowed),
      });
    }

    // As kube does, the error sits on whichever of the pair comes second.
    if (type === "Approved" || type === "Denied") {
      if (type === "Approved") approved = true;
      else denied = true;
      if (approved && denied) {
        errs.push({
          type: "Invalid",
          field: `${path}.type`,
          value: type,
          detail: "Approved and Denied conditions are mutually exclusive",
        });
      }
    }

    if (seen.has(type)) errs.push({ type: "Duplicate", field: `${path}.type`, value: type });
    seen.add(type);
  });

  if (oldStatus) {
    const old = conditionsOf(oldStatus);
    for (const t of TRUE_ONLY_TYPES) {
      const count = (cs: CsrCondition[]) => cs.filter((c) => c?.type === t).length;
      if (count(conditions) < count(old)) {
        errs.push({
          type: "Forbidden",
          field: "status.conditions",
          detail: `updates may not remove a condition of type "${t}"`,
        });
      }
    }
  }
  return errs;
}

/**
 * Condition times on `/approval` and `/status` writes: `lastTransitionTime` is taken from the
 * stored condition of the same type and status, or becomes `now` when the type is new or its
 * status changed; `lastUpdateTime` is kept from the stored condition of the same type when the
 * client leaves it out. Times the client sent are kept. Mutates `newStatus`.
 */
export function defaultConditionTimes(
  newStatus: CsrStatus | undefined,
  oldStatus: CsrStatus | undefined,
  now: string,
): void {
  const old = conditionsOf(oldStatus);
  for (const c of conditionsOf(newStatus)) {
    if (!c || typeof c !== "object") continue;
    const sameType = old.find((o) => o?.type === c.type);
    if (!c.lastUpdateTime && sameType?.lastUpdateTime) c.lastUpdateTime = sameType.lastUpdateTime;
    if (!c.lastTransitionTime) {
      const same = sameType?.status === c.status ? sameType?.lastTransitionTime : undefined;
      c.lastTransitionTime = same ?? now;
    }
  }
}

// ---------------------------------------------------------------------------------------
// status.certificate

/** Why decoded `status.certificate` PEM is not acceptable, or undefined (kube's wording). */
function certificateProblem(pem: string): string | undefined {
  const blocks = pemBlocks(pem);
  if (blocks.length === 0) return "must contain at least one CERTIFICATE PEM block";
  for (const b of blocks) {
    if (b.type !== "CERTIFICATE") {
      return `only CERTIFICATE PEM blocks are allowed, found "${b.type}"`;
    }
    if (b.headers) return "no PEM block headers are permitted";
    if (!b.der) return "malformed CERTIFICATE PEM block";
    try {
      new x509.X509Certificate(b.der);
    } catch {
      return "x509: malformed certificate";
    }
  }
  return undefined;
}

/**
 * `status.certificate`: when set, PEM with only `CERTIFICATE` blocks, without headers, each a
 * parseable certificate (text around blocks is allowed); immutable once set; and empty while
 * the request has a Denied or Failed condition. `conditions` are the conditions the object
 * will have after the update (by default `newStatus.conditions`).
 */
export function validateCertificate(
  newStatus: CsrStatus | undefined,
  oldStatus: CsrStatus | undefined,
  conditions: CsrCondition[] = conditionsOf(newStatus),
): FieldError[] {
  const errs: FieldError[] = [];
  const cert = newStatus?.certificate ?? "";
  const oldCert = oldStatus?.certificate ?? "";
  const pem = decodeBase64(cert);
  // Compare bytes, not only the base64 text (line breaks may differ).
  const unchanged = cert === oldCert || (pem !== undefined && pem === decodeBase64(oldCert));

  // Clearing a set certificate is a modification too.
  if (oldCert !== "" && !unchanged) {
    errs.push({
      type: "Forbidden",
      field: "status.certificate",
      detail: "updates may not modify existing certificate content",
    });
  }
  if (cert === "") return errs;
  // Content already stored was checked when it was set (kube does the same).
  if (!unchanged) {
    const detail = pem === undefined ? "illegal base64 data" : certificateProblem(pem);
    if (detail) {
      // kube hides the data itself behind this placeholder.
      errs.push({
        type: "Invalid",
        field: "status.certificate",
        value: "<certificate data>",
        detail,
      });
    }
  }
  for (const t of ["Denied", "Failed"]) {
    if (conditions.some((c) => c?.type === t)) {
      errs.push({
        type: "Forbidden",
        field: "status.certificate",
        detail: `may not be set when the request has a ${t} condition`,
      });
    }
  }
  return errs;
}
