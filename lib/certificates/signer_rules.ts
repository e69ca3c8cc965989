/**
 * What the built-in signer checks before it signs: the well-known signer names and their
 * constants, key usages, the signer configuration (which CA signs for which signer), parsing
 * and verifying a request, and each well-known signer's rules (kube's `csrsigning` controller and
 * `ValidateKubeletClientCSR` / `ValidateKubeletServingCSR`, with platform names), plus "no CA
 * certificates for anyone".
 *
 * @module
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import {
  decodePem,
  isWellKnownSigner,
  SIGNER_APISERVER_CLIENT,
  SIGNER_APISERVER_CLIENT_NODEAGENT,
} from "../api/mod.ts";

import { errText, OID_BASIC_CONSTRAINTS, OID_SAN } from "./x509_helpers.ts";

x509.cryptoProvider.set(crypto);

// ---------------------------------------------------------------------------------------
// Names and constants

/** The reason of the Failed condition when a request breaks its signer's rules (as kube). */
export const SIGNER_VALIDATION_FAILURE = "SignerValidationFailure";

const MINUTE_MS = 60 * 1000;
const HOUR_MS = 60 * MINUTE_MS;

/** The default and maximum lifetime (`--cluster-signing-duration`): 1 year, as kube's 8760h. */
export const DEFAULT_SIGNING_DURATION_MS = 365 * 24 * HOUR_MS;
/** notBefore is this much before the time of signing (clock skew), as kube. */
export const BACKDATE_MS = 5 * MINUTE_MS;
/** Below this lifetime a certificate is short-lived: its notAfter is not backdated (kube). */
export const SHORT_LIVED_MS = 8 * HOUR_MS;
/** A requested lifetime below this is raised to it (twice the backdate, as kube). */
export const MIN_SIGNING_DURATION_MS = 10 * MINUTE_MS;

const NODE_GROUP = "system:nodes";
const NODE_USER_PREFIX = "system:node:";

// ---------------------------------------------------------------------------------------
// Usages

/** `spec.usages` values that are key usages (X.509 keyUsage bits), as kube's keyUsageDict. */
export const KEY_USAGES: Readonly<Record<string, number>> = {
  "signing": x509.KeyUsageFlags.digitalSignature,
  "digital signature": x509.KeyUsageFlags.digitalSignature,
  "content commitment": x509.KeyUsageFlags.nonRepudiation,
  "key encipherment": x509.KeyUsageFlags.keyEncipherment,
  "key agreement": x509.KeyUsageFlags.keyAgreement,
  "data encipherment": x509.KeyUsageFlags.dataEncipherment,
  "cert sign": x509.KeyUsageFlags.keyCertSign,
  "crl sign": x509.KeyUsageFlags.cRLSign,
  "encipher only": x509.KeyUsageFlags.encipherOnly,
  "decipher only": x509.KeyUsageFlags.decipherOnly,
};

/**
 * `spec.usages` values that are extended key usages, with their OIDs, as kube's
 * extKeyUsageDict; in the order of Go's `x509.ExtKeyUsage`, which is the order kube writes them.
 */
export const EXT_KEY_USAGES: Readonly<Record<string, string>> = {
  "any": "2.5.29.37.0",
  "server auth": "1.3.6.1.5.5.7.3.1",
  "client auth": "1.3.6.1.5.5.7.3.2",
  "code signing": "1.3.6.1.5.5.7.3.3",
  "email protection": "1.3.6.1.5.5.7.3.4",
  "s/mime": "1.3.6.1.5.5.7.3.4",
  "ipsec end system": "1.3.6.1.5.5.7.3.5",
  "ipsec tunnel": "1.3.6.1.5.5.7.3.6",
  "ipsec user": "1.3.6.1.5.5.7.3.7",
  "timestamping": "1.3.6.1.5.5.7.3.8",
  "ocsp signing": "1.3.6.1.5.5.7.3.9",
  "microsoft sgc": "1.3.6.1.4.1.311.10.3.3",
  "netscape sgc": "2.16.840.1.113730.4.1",
};

/** The X.509 key usages of a list of `spec.usages` values (kube's `keyUsagesFromStrings`). */
export interface CertificateUsages {
  /** keyUsage bits (`x509.KeyUsageFlags`); 0 when none: then no keyUsage extension. */
  keyUsage: number;
  /** Extended key usage OIDs, without duplicates, in Go's order. */
  extKeyUsages: string[];
  /** Values that are neither (kube refuses to sign then). */
  unrecognized: string[];
}

/** Map `spec.usages` to keyUsage bits and extended key usage OIDs, as kube does. */
export function keyUsagesFromStrings(usages: readonly string[]): CertificateUsages {
  let keyUsage = 0;
  const ext = new Set<string>();
  const unrecognized: string[] = [];
  for (const u of usages) {
    if (Object.hasOwn(KEY_USAGES, u)) keyUsage |= KEY_USAGES[u];
    else if (Object.hasOwn(EXT_KEY_USAGES, u)) ext.add(EXT_KEY_USAGES[u]);
    else unrecognized.push(u);
  }
  const order = [...new Set(Object.values(EXT_KEY_USAGES))];
  return { keyUsage, extKeyUsages: order.filter((oid) => ext.has(oid)), unrecognized };
}

// ---------------------------------------------------------------------------------------
// Signer configuration

/** A CA that issues certificates: its certificate, its private key and what is above it. */
export interface SigningCA {
  /** The certificate that signs (the issuer of issued certificates). */
  cert: x509.X509Certificate;
  /** Its private key, imported for `sign` (ECDSA, RSASSA-PKCS1-v1_5 or Ed25519). */
  key: CryptoKey;
  /**
   * Certificates above `cert`, issuer order (as read after the first block of a cert file).
   * Those that are not self-signed are appended to issued certificates as intermediates.
   */
  chain?: x509.X509Certificate[];
}

/** How the built-in signer signs. */
export interface SignerConfig {
  /** Maximum (and default) lifetime in ms (`--cluster-signing-duration`). @default 1 year */
  duration?: number;
  /**
   * The CA of each well-known signer: a table by signer name, or a function (e.g. one CA for
   * all). A signer without a CA (`undefined`) does not issue: its requests stay pending.
   */
  cas: Readonly<Record<string, SigningCA>> | ((signerName: string) => SigningCA | undefined);
}

/** The CA of `signerName` in `config`, or `undefined`. */
export function signingCAFor(config: SignerConfig, signerName: string): SigningCA | undefined {
  if (typeof config.cas === "function") return config.cas(signerName);
  return Object.hasOwn(config.cas, signerName) ? config.cas[signerName] : undefined;
}

// ---------------------------------------------------------------------------------------
// Requests

/** Why a request cannot be signed. `kind` says whose fault it is. */
export class SigningError extends Error {
  override name = "SigningError";
  /**
   * `request`: the request is unusable (bad PEM, bad signature, unknown or CA usages): the
   * request should be marked Failed. `signer`: the CA cannot sign (expired, unusable key): the
   * request may succeed once the CA is fixed.
   */
  readonly kind: "request" | "signer";
  constructor(kind: "request" | "signer", message: string, options?: ErrorOptions) {
    super(message, options);
    this.kind = kind;
  }
}

/**
 * Parse `spec.request`: its first PEM block must be a `CERTIFICATE REQUEST` (as kube's
 * `ParseCSR`). Accepts the PEM text or its bytes. Does not check the signature: see
 * {@link verifyCertificateRequest}.
 *
 * @throws {SigningError} kind `request`.
 */
export function parseCertificateRequest(
  request: string | Uint8Array,
): x509.Pkcs10CertificateRequest {
  const text = typeof request === "string" ? request : new TextDecoder().decode(request);
  const block = decodePem(text)[0];
  if (!block || block.type !== "CERTIFICATE REQUEST") {
    throw new SigningError("request", "PEM block type must be CERTIFICATE REQUEST");
  }
  try {
    return new x509.Pkcs10CertificateRequest(block.der);
  } catch (err) {
    throw new SigningError("request", `the certificate request does not parse: ${errText(err)}`, {
      cause: err,
    });
  }
}

/** Whether the request's signature verifies with its own public key (false if unsupported). */
export async function verifyCertificateRequest(
  csr: x509.Pkcs10CertificateRequest,
): Promise<boolean> {
  try {
    return await csr.verify();
  } catch {
    return false;
  }
}

/** The subject alternative names of a request that kube (Go's x509) reads; others are dropped. */
export interface RequestNames {
  dns: string[];
  email: string[];
  ip: string[];
  uri: string[];
}

/**
 * The DNS, email, IP and URI names of the request's subjectAltName extensions (all of them,
 * should there be several). Other name types are ignored, as Go's parser does.
 *
 * @throws {SigningError} kind `request` when the extension does not parse.
 */
export function requestNames(csr: x509.Pkcs10CertificateRequest): RequestNames {
  const out: RequestNames = { dns: [], email: [], ip: [], uri: [] };
  for (const ext of requestExtensions(csr)) {
    if (ext.type !== OID_SAN) continue;
    let san: x509.SubjectAlternativeNameExtension;
    try {
      san = new x509.SubjectAlternativeNameExtension(ext.rawData);
    } catch (err) {
      throw new SigningError("request", `the subjectAltName extension does not parse`, {
        cause: err,
      });
    }
    for (const name of san.names.items) {
      if (name.type === "dns") out.dns.push(name.value);
      else if (name.type === "email") out.email.push(name.value);
      else if (name.type === "ip") out.ip.push(name.value);
      else if (name.type === "url") out.uri.push(name.value);
    }
  }
  return out;
}

function requestExtensions(csr: x509.Pkcs10CertificateRequest): x509.Extension[] {
  try {
    return csr.extensions;
  } catch (err) {
    throw new SigningError("request", "the request's extensions do not parse", { cause: err });
  }
}

/** Whether the request asks for a CA certificate with a basicConstraints CA:true extension. */
function requestsCaExtension(csr: x509.Pkcs10CertificateRequest): boolean {
  for (const ext of requestExtensions(csr)) {
    if (ext.type !== OID_BASIC_CONSTRAINTS) continue;
    try {
      if (new x509.BasicConstraintsExtension(ext.rawData).ca) return true;
    } catch (err) {
      throw new SigningError("request", "the basicConstraints extension does not parse", {
        cause: err,
      });
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------
// Signer rules

/** The outcome of {@link checkSignerRules}: the reason and message of a Failed condition. */
export type SignerCheck =
  | { ok: true }
  | { ok: false; reason: string; message: string };

/**
 * Whether a request meets the rules of a well-known signer, as kube's `csrsigning` controller
 * checks them (messages are kube's where kube has the rule):
 *
 * - everyone: no CA certificate (usage `cert sign`, or a basicConstraints CA:true extension);
 * - `platform.io/apiserver-client`: usages among `digital signature`, `key encipherment`,
 *   `client auth`, and `client auth` among them;
 * - `platform.io/apiserver-client-nodeagent`: organization exactly `system:nodes`; no DNS,
 *   email, IP or URI SANs; one common name `system:node:<name>` (non-empty name); usages exactly
 *   {`digital signature`, `key encipherment`, `client auth`} or {`digital signature`,
 *   `client auth`} (kube's `ValidateKubeletClientCSR`);
 * - `platform.io/nodeagent-serving`: organization exactly `system:nodes`; at least one DNS or IP
 *   SAN; no email or URI SANs; usages exactly {`digital signature`, `key encipherment`,
 *   `server auth`} or {`digital signature`, `server auth`}; common name as above (kube's
 *   `ValidateKubeletServingCSR`).
 *
 * Another signer name is refused with `unrecognized signerName`: call this only for
 * {@link isWellKnownSigner} names. Does not verify the request's signature.
 */
export function checkSignerRules(
  signerName: string,
  csr: x509.Pkcs10CertificateRequest,
  usages: readonly string[],
): SignerCheck {
  const fail = (message: string): SignerCheck => ({
    ok: false,
    reason: SIGNER_VALIDATION_FAILURE,
    message,
  });
  try {
    if (!isWellKnownSigner(signerName)) {
      return fail(`unrecognized signerName: ${JSON.stringify(signerName)}`);
    }
    if (usages.includes("cert sign")) {
      return fail(`usage "cert sign" is not allowed: ${signerName} does not issue CA certificates`);
    }
    if (requestsCaExtension(csr)) {
      return fail(
        `a basicConstraints extension with CA:true is not allowed: ${signerName} does not ` +
          `issue CA certificates`,
      );
    }
    const message = signerName === SIGNER_APISERVER_CLIENT
      ? apiServerClientUsagesError(usages)
      : signerName === SIGNER_APISERVER_CLIENT_NODEAGENT
      ? nodeAgentClientError(csr, usages)
      : nodeAgentServingError(csr, usages);
    return message === undefined ? { ok: true } : fail(message);
  } catch (err) {
    if (err instanceof SigningError) return fail(err.message);
    throw err;
  }
}

function apiServerClientUsagesError(usages: readonly string[]): string | undefined {
  let hasClientAuth = false;
  for (const u of usages) {
    if (u === "client auth") hasClientAuth = true;
    else if (u !== "digital signature" && u !== "key encipherment") {
      return `invalid usage for client certificate: ${u}`;
    }
  }
  return hasClientAuth ? undefined : "missing required usage for client certificate: client auth";
}

const NODE_CLIENT_USAGES = ["client auth", "digital signature", "key encipherment"];
const NODE_SERVING_USAGES = ["digital signature", "key encipherment", "server auth"];

function nodeAgentClientError(
  csr: x509.Pkcs10CertificateRequest,
  usages: readonly string[],
): string | undefined {
  const orgError = nodeOrganizationError(csr);
  if (orgError) return orgError;
  const names = requestNames(csr);
  if (names.dns.length > 0) return "DNS subjectAltNames are not allowed";
  if (names.email.length > 0) return "Email subjectAltNames are not allowed";
  if (names.ip.length > 0) return "IP subjectAltNames are not allowed";
  if (names.uri.length > 0) return "URI subjectAltNames are not allowed";
  const cnError = nodeCommonNameError(csr);
  if (cnError) return cnError;
  if (!usagesMatch(usages, NODE_CLIENT_USAGES, "key encipherment")) {
    return `usages did not match [${NODE_CLIENT_USAGES.join(" ")}]`;
  }
  return undefined;
}

function nodeAgentServingError(
  csr: x509.Pkcs10CertificateRequest,
  usages: readonly string[],
): string | undefined {
  const orgError = nodeOrganizationError(csr);
  if (orgError) return orgError;
  const names = requestNames(csr);
  if (names.dns.length === 0 && names.ip.length === 0) {
    return "DNS or IP subjectAltName is required";
  }
  if (names.email.length > 0) return "Email subjectAltNames are not allowed";
  if (names.uri.length > 0) return "URI subjectAltNames are not allowed";
  if (!usagesMatch(usages, NODE_SERVING_USAGES, "key encipherment")) {
    return `usages did not match [${NODE_SERVING_USAGES.join(" ")}]`;
  }
  return nodeCommonNameError(csr);
}

/** Organization is exactly `["system:nodes"]` (Go's `reflect.DeepEqual`), as kube. */
function nodeOrganizationError(csr: x509.Pkcs10CertificateRequest): string | undefined {
  const orgs = csr.subjectName.getField("O");
  return orgs.length === 1 && orgs[0] === NODE_GROUP
    ? undefined
    : "subject organization is not system:nodes";
}

/**
 * One common name `system:node:<name>` with a non-empty name. kube only checks the prefix of
 * the (last) common name; a second common name or an empty node name are refused here, so that
 * no reader of the certificate can see another user.
 */
function nodeCommonNameError(csr: x509.Pkcs10CertificateRequest): string | undefined {
  const cns = csr.subjectName.getField("CN");
  if (cns.length > 1) return "subject has more than one common name";
  const cn = cns[0] ?? "";
  if (!cn.startsWith(NODE_USER_PREFIX)) {
    return "subject common name does not begin with system:node:";
  }
  if (cn.length === NODE_USER_PREFIX.length) {
    return "subject common name has no node name after system:node:";
  }
  return undefined;
}

/** The set of `usages` equals `all`, or `all` without `optional` (kube's RSA / non-RSA sets). */
function usagesMatch(usages: readonly string[], all: string[], optional: string): boolean {
  const have = new Set(usages);
  const equals = (want: string[]) => have.size === want.length && want.every((u) => have.has(u));
  return equals(all) || equals(all.filter((u) => u !== optional));
}
