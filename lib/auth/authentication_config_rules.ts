/**
 * kube's rules for single values of an `AuthenticationConfiguration` file, as its validation
 * words them: issuer and discovery URLs, the certificate authority bundle, and the keys of
 * extra user attributes.
 *
 * @module
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { decodePem, type FieldError, isDNS1123Subdomain } from "../api/mod.ts";

/**
 * What is wrong with an issuer or discovery URL, in kube's words: https only, no user
 * information, query or fragment, and not one of the `disallowed` issuers.
 */
export function urlProblems(text: string, disallowed: readonly string[]): string[] {
  const problems: string[] = [];
  if (disallowed.includes(text)) {
    problems.push(
      `URL must not overlap with disallowed issuers: [${[...disallowed].sort().join(" ")}]`,
    );
  }
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    // Go's parser takes "example.com" as a path without a scheme.
    problems.push(
      /^[a-z][a-z0-9+.-]*:/i.test(text) ? "not a valid URL" : "URL scheme must be https",
    );
    return problems;
  }
  if (u.protocol !== "https:") problems.push("URL scheme must be https");
  if (u.username !== "" || u.password !== "") {
    problems.push("URL must not contain a username or password");
  }
  if (u.search !== "") problems.push("URL must not contain a query");
  if (u.hash !== "") problems.push("URL must not contain a fragment");
  return problems;
}

/**
 * The errors of an extra attribute's key at `field`: a lowercase domain-prefixed path
 * (`acme.io/foo`) outside kube's own domains.
 */
export function extraKeyErrors(field: string, key: string): FieldError[] {
  const errs = domainPrefixedPathErrors(field, key);
  if (key !== key.toLowerCase()) {
    errs.push({ type: "Invalid", field, value: key, detail: "must be lowercase" });
  }
  if (isReservedDomain(key)) {
    errs.push({
      type: "Invalid",
      field,
      value: key,
      detail: "k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use",
    });
  }
  return errs;
}

/** Why a PEM bundle cannot serve as trust roots, or undefined when it can. */
export function caBundleProblem(pem: string): string | undefined {
  const blocks = decodePem(pem).filter((b) => b.type === "CERTIFICATE");
  if (blocks.length === 0) return "data does not contain any valid RSA or ECDSA certificates";
  for (const [i, block] of blocks.entries()) {
    try {
      new x509.X509Certificate(block.der);
    } catch {
      return `certificate ${i + 1} does not parse`;
    }
  }
  return undefined;
}

const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const httpPathRe = new RegExp(`^${HTTP_PATH_FMT}$`);

/** kube's IsDomainPrefixedPath: `acme.io/foo`, an RFC 1123 subdomain, `/`, an HTTP path. */
function domainPrefixedPathErrors(field: string, key: string): FieldError[] {
  if (key === "") return [{ type: "Required", field }];
  const slash = key.indexOf("/");
  const host = slash < 0 ? key : key.slice(0, slash);
  const path = slash < 0 ? "" : key.slice(slash + 1);
  if (host === "" || path === "") {
    return [{
      type: "Invalid",
      field,
      value: key,
      detail: 'must be a domain-prefixed path (such as "acme.io/foo")',
    }];
  }
  const errs: FieldError[] = isDNS1123Subdomain(host).map((detail) => ({
    type: "Invalid",
    field,
    value: host,
    detail,
  }));
  if (!httpPathRe.test(path)) {
    errs.push({
      type: "Invalid",
      field,
      value: path,
      detail: `Invalid path (regex used for validation is '${HTTP_PATH_FMT}')`,
    });
  }
  return errs;
}

/** Extra keys under kube's own domains are kube's to define. */
function isReservedDomain(key: string): boolean {
  const slash = key.indexOf("/");
  if (slash < 0) return false;
  const domain = key.slice(0, slash);
  return ["kubernetes.io", "k8s.io"].some((d) => domain === d || domain.endsWith(`.${d}`));
}
