/**
 * The built-in signer of certificate signing requests, as a pure module: no HTTP, no store.
 *
 * - {@link checkSignerRules}: the rules of the three well-known signers (kube's `csrsigning`
 *   controller, `pkg/controller/certificates/signer` and `ValidateKubeletClientCSR` /
 *   `ValidateKubeletServingCSR`, with platform names), plus "no CA certificates for anyone".
 * - {@link signCertificate}: issue a certificate for a request with a CA, as kube's
 *   `authority.Sign` with its `PermissiveSigningPolicy` does (subject and SANs from the request,
 *   key usages from `spec.usages`, notBefore backdated 5 minutes, notAfter capped at the CA's).
 * - {@link signRequest}: both, for a controller: the outcome to write to the request's status.
 * - {@link loadSigningCA}: a CA from PEM text (PKCS#8, SEC1 `EC PRIVATE KEY` or PKCS#1
 *   `RSA PRIVATE KEY`).
 *
 * @example
 * ```ts
 * const ca = await loadSigningCA(pki.caCertPem, pki.caKeyPem);
 * const config: SignerConfig = { cas: () => ca };
 * const outcome = await signRequest(config, {
 *   signerName: "platform.io/apiserver-client",
 *   request: pemText,
 *   usages: ["digital signature", "client auth"],
 * });
 * if (outcome.status === "issued") status.certificate = outcome.certificate;
 * ```
 *
 * @module
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { decodePem, encodePem } from "./pki.ts";

x509.cryptoProvider.set(crypto);

// ---------------------------------------------------------------------------------------
// Names and constants

/** Client certificates for authenticating to the API server; never auto-approved. */
export const SIGNER_APISERVER_CLIENT = "platform.io/apiserver-client";
/** Client certificates of node agents; may be auto-approved. */
export const SIGNER_APISERVER_CLIENT_NODEAGENT = "platform.io/apiserver-client-nodeagent";
/** Serving certificates of node agents; never auto-approved. */
export const SIGNER_NODEAGENT_SERVING = "platform.io/nodeagent-serving";

/** The signers this server issues for; requests for other names are left to external signers. */
export const WELL_KNOWN_SIGNERS = [
  SIGNER_APISERVER_CLIENT,
  SIGNER_APISERVER_CLIENT_NODEAGENT,
  SIGNER_NODEAGENT_SERVING,
] as const;

/** One of {@link WELL_KNOWN_SIGNERS}. */
export type WellKnownSigner = typeof WELL_KNOWN_SIGNERS[number];

/** Whether `signerName` is one of {@link WELL_KNOWN_SIGNERS}. */
export function isWellKnownSigner(signerName: string): signerName is WellKnownSigner {
  return (WELL_KNOWN_SIGNERS as readonly string[]).includes(signerName);
}

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

const OID_SAN = "2.5.29.17";
const OID_BASIC_CONSTRAINTS = "2.5.29.19";
const OID_SUBJECT_KEY_IDENTIFIER = "2.5.29.14";
const OID_KEY_USAGE = "2.5.29.15";

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

// ---------------------------------------------------------------------------------------
// Signing

/** Options of {@link signCertificate}. */
export interface SignOptions {
  /** `spec.usages`: the keyUsage and extKeyUsage of the certificate. */
  usages: readonly string[];
  /** `spec.expirationSeconds`: honoured between 10 minutes and `maxDuration`. */
  expirationSeconds?: number;
  /** The time of signing. @default new Date() */
  now?: Date;
  /** Maximum and default lifetime in ms (`--cluster-signing-duration`). @default 1 year */
  maxDuration?: number;
}

/**
 * The lifetime of a certificate in ms, as kube's signer decides it: `maxDuration` when no
 * expiration is requested or the request is longer; at least 10 minutes; otherwise the request.
 */
export function certificateDuration(
  expirationSeconds: number | undefined,
  maxDuration: number = DEFAULT_SIGNING_DURATION_MS,
): number {
  if (expirationSeconds === undefined) return maxDuration;
  const requested = expirationSeconds * 1000;
  if (requested > maxDuration) return maxDuration;
  if (requested < MIN_SIGNING_DURATION_MS) return MIN_SIGNING_DURATION_MS;
  return requested;
}

/** The validity of a certificate signed at `now` for `ttl` ms by a CA valid until `caNotAfter`. */
export function certificateValidity(
  now: Date,
  ttl: number,
  caNotAfter: Date,
): { notBefore: Date; notAfter: Date } {
  // X.509 times have whole seconds: truncate so that notAfter - notBefore is exactly ttl.
  const t = Math.floor(now.getTime() / 1000) * 1000;
  const notBefore = new Date(t - BACKDATE_MS);
  // kube: a short-lived certificate's end is not backdated; a long-lived one lasts exactly ttl.
  let notAfter = new Date(ttl < SHORT_LIVED_MS ? t + ttl : t + ttl - BACKDATE_MS);
  if (notAfter.getTime() >= caNotAfter.getTime()) notAfter = caNotAfter;
  return { notBefore, notAfter };
}

/**
 * Issue a certificate for `csr` with `ca`, as kube's signer does, and return the PEM text of
 * `status.certificate`: the issued certificate, then the intermediates (`ca.cert` when it is
 * not self-signed, then the certificates of `ca.chain` that are not self-signed).
 *
 * The certificate has the request's subject (as encoded in the request) and its DNS, email,
 * IP and URI SANs (other SAN types and every other requested extension are dropped); the
 * request's public key; a random positive 128-bit serial number; notBefore = now - 5 minutes;
 * notAfter = now + {@link certificateDuration} (minus the 5 minutes from 8 hours on, as kube),
 * never after the CA's notAfter; keyUsage (critical) and extKeyUsage from `usages`;
 * basicConstraints CA:false (critical); subject and authority key identifiers.
 *
 * Checks no signer rule (see {@link checkSignerRules}).
 *
 * @throws {SigningError} kind `request` when the request's signature does not verify, a usage
 * is unknown, or `cert sign` is requested; kind `signer` when the CA has expired or its key
 * cannot sign.
 */
export async function signCertificate(
  ca: SigningCA,
  csr: x509.Pkcs10CertificateRequest,
  opts: SignOptions,
): Promise<string> {
  if (!await verifyCertificateRequest(csr)) {
    throw new SigningError("request", "unable to verify certificate request signature");
  }
  const usage = keyUsagesFromStrings(opts.usages);
  if (usage.unrecognized.length > 0) {
    throw new SigningError(
      "request",
      `unrecognized usage values: ${usage.unrecognized.map((u) => JSON.stringify(u)).join(", ")}`,
    );
  }
  if (usage.keyUsage & x509.KeyUsageFlags.keyCertSign) {
    throw new SigningError("request", `usage "cert sign" is not allowed: no CA certificates`);
  }

  const now = opts.now ?? new Date();
  const ttl = certificateDuration(opts.expirationSeconds, opts.maxDuration);
  const caNotAfter = ca.cert.notAfter;
  const { notBefore, notAfter } = certificateValidity(now, ttl, caNotAfter);
  if (notBefore.getTime() >= caNotAfter.getTime()) {
    throw new SigningError(
      "signer",
      `the signer has expired: NotAfter=${caNotAfter.toISOString()}`,
    );
  }
  if (now.getTime() >= caNotAfter.getTime()) {
    throw new SigningError(
      "signer",
      `refusing to sign a certificate that expired in the past: NotAfter=${caNotAfter.toISOString()}`,
    );
  }

  const extensions: x509.Extension[] = [];
  if (usage.keyUsage !== 0) extensions.push(new x509.KeyUsagesExtension(usage.keyUsage, true));
  if (usage.extKeyUsages.length > 0) {
    extensions.push(new x509.ExtendedKeyUsageExtension(usage.extKeyUsages, false));
  }
  extensions.push(new x509.BasicConstraintsExtension(false, undefined, true));
  extensions.push(await x509.SubjectKeyIdentifierExtension.create(csr.publicKey, false));
  extensions.push(await authorityKeyIdentifier(ca.cert));
  const names = requestNames(csr);
  const sans: x509.JsonGeneralName[] = [
    ...names.dns.map((value) => ({ type: "dns" as const, value })),
    ...names.email.map((value) => ({ type: "email" as const, value })),
    ...names.ip.map((value) => ({ type: "ip" as const, value })),
    ...names.uri.map((value) => ({ type: "url" as const, value })),
  ];
  if (sans.length > 0) {
    // RFC 5280 4.2.1.6: critical when the subject is empty.
    const emptySubject = csr.subjectName.toJSON().length === 0;
    extensions.push(new x509.SubjectAlternativeNameExtension(sans, emptySubject));
  }

  let cert: x509.X509Certificate;
  try {
    cert = await x509.X509CertificateGenerator.create({
      serialNumber: randomSerial(),
      subject: csr.subjectName,
      issuer: ca.cert.subjectName,
      notBefore,
      notAfter,
      publicKey: csr.publicKey,
      signingKey: ca.key,
      signingAlgorithm: signingAlgorithm(ca.key),
      extensions,
    });
  } catch (err) {
    throw new SigningError("signer", `the CA key cannot sign: ${errText(err)}`, { cause: err });
  }

  let pem = encodePem("CERTIFICATE", cert.rawData);
  const seen = new Set<string>();
  for (const c of [ca.cert, ...(ca.chain ?? [])]) {
    const id = encodePem("CERTIFICATE", c.rawData);
    if (seen.has(id)) continue;
    seen.add(id);
    if (!await isSelfSigned(c)) pem += id;
  }
  return pem;
}

/** The authority key identifier: the CA's subject key identifier, or one computed from its key. */
async function authorityKeyIdentifier(
  caCert: x509.X509Certificate,
): Promise<x509.AuthorityKeyIdentifierExtension> {
  const ski = caCert.extensions.find((e) => e.type === OID_SUBJECT_KEY_IDENTIFIER);
  if (ski) {
    const keyId = new x509.SubjectKeyIdentifierExtension(ski.rawData).keyId;
    return new x509.AuthorityKeyIdentifierExtension(keyId, false);
  }
  return await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey, false);
}

/** The Web Crypto signature algorithm of a private key (ECDSA hash by curve, as Go). */
function signingAlgorithm(key: CryptoKey): Algorithm | EcdsaParams {
  const alg = key.algorithm as Algorithm & { namedCurve?: string };
  if (alg.name === "ECDSA") {
    const hash = alg.namedCurve === "P-384"
      ? "SHA-384"
      : alg.namedCurve === "P-521"
      ? "SHA-512"
      : "SHA-256";
    return { name: "ECDSA", hash } as EcdsaParams;
  }
  return { name: alg.name };
}

async function isSelfSigned(cert: x509.X509Certificate): Promise<boolean> {
  try {
    return await cert.isSelfSigned();
  } catch {
    return false;
  }
}

/** 16 random bytes, not all zero: a positive 128-bit serial number (the encoder adds a 0 byte). */
function randomSerial(): string {
  for (;;) {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    if (bytes.some((b) => b !== 0)) {
      return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    }
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---------------------------------------------------------------------------------------
// The whole decision for a controller

/** The parts of a CertificateSigningRequest the signer reads. */
export interface RequestToSign {
  signerName: string;
  /** `spec.request`: PEM text or bytes, or an already parsed request. */
  request: string | Uint8Array | x509.Pkcs10CertificateRequest;
  usages: readonly string[];
  expirationSeconds?: number;
}

/**
 * What the signer does with an approved request:
 * - `issued`: set `status.certificate` to `certificate`;
 * - `failed`: add the condition Failed with `reason` and `message`;
 * - `ignored`: leave the request alone (not a well-known signer, or no CA for it).
 */
export type SignOutcome =
  | { status: "issued"; certificate: string }
  | { status: "failed"; reason: string; message: string }
  | { status: "ignored"; message: string };

/**
 * Decide and sign an approved request for `config`'s signers: ignore other signer names and
 * signers without a CA; fail requests that do not parse, break their signer's rules, or
 * cannot be signed (bad signature, unknown usage); otherwise issue.
 *
 * @throws {SigningError} kind `signer` when the CA cannot sign (e.g. it has expired): retry
 * later rather than fail the request.
 */
export async function signRequest(
  config: SignerConfig,
  req: RequestToSign,
  now: Date = new Date(),
): Promise<SignOutcome> {
  if (!isWellKnownSigner(req.signerName)) {
    return { status: "ignored", message: `${req.signerName} is not a built-in signer` };
  }
  const ca = signingCAFor(config, req.signerName);
  if (!ca) return { status: "ignored", message: `no signing CA for ${req.signerName}` };
  try {
    const csr = req.request instanceof x509.Pkcs10CertificateRequest
      ? req.request
      : parseCertificateRequest(req.request);
    const check = checkSignerRules(req.signerName, csr, req.usages);
    if (!check.ok) return { status: "failed", reason: check.reason, message: check.message };
    const certificate = await signCertificate(ca, csr, {
      usages: req.usages,
      expirationSeconds: req.expirationSeconds,
      now,
      maxDuration: config.duration ?? DEFAULT_SIGNING_DURATION_MS,
    });
    return { status: "issued", certificate };
  } catch (err) {
    if (err instanceof SigningError && err.kind === "request") {
      return { status: "failed", reason: SIGNER_VALIDATION_FAILURE, message: err.message };
    }
    throw err;
  }
}

// ---------------------------------------------------------------------------------------
// Loading a CA

/**
 * A signing CA from PEM text (e.g. `--cluster-signing-cert-file` and `--cluster-signing-key-file`,
 * or the cluster CA): the first `CERTIFICATE` block signs, later blocks are its chain; the key
 * is the first `PRIVATE KEY` (PKCS#8), `EC PRIVATE KEY` (SEC1) or `RSA PRIVATE KEY` (PKCS#1)
 * block. The certificate must be a CA (basicConstraints CA:true, keyCertSign when keyUsage is
 * present) and the key must belong to it. Keys: ECDSA P-256/P-384/P-521, RSA, Ed25519.
 *
 * @throws {Error} naming what is wrong; callers prefix the flag or file.
 */
export async function loadSigningCA(certPem: string, keyPem: string): Promise<SigningCA> {
  const certs: x509.X509Certificate[] = [];
  for (const block of decodePem(certPem).filter((b) => b.type === "CERTIFICATE")) {
    try {
      certs.push(new x509.X509Certificate(block.der));
    } catch {
      throw new Error(`certificate ${certs.length + 1} does not parse`);
    }
  }
  if (certs.length === 0) throw new Error("no valid PEM CERTIFICATE block");
  const [cert, ...chain] = certs;
  const bc = cert.extensions.find((e) => e.type === OID_BASIC_CONSTRAINTS);
  if (!bc || !new x509.BasicConstraintsExtension(bc.rawData).ca) {
    throw new Error(`the certificate ${JSON.stringify(cert.subject)} is not a CA (no CA:true)`);
  }
  const kuExt = cert.extensions.find((e) => e.type === OID_KEY_USAGE);
  const ku = kuExt && new x509.KeyUsagesExtension(kuExt.rawData);
  if (ku && !(ku.usages & x509.KeyUsageFlags.keyCertSign)) {
    throw new Error(`the certificate ${JSON.stringify(cert.subject)} lacks the keyCertSign usage`);
  }

  const blocks = decodePem(keyPem);
  if (blocks.some((b) => b.type === "ENCRYPTED PRIVATE KEY")) {
    throw new Error("the private key is encrypted; give an unencrypted key");
  }
  const block = blocks.find((b) => /^(|EC |RSA )PRIVATE KEY$/.test(b.type));
  if (!block) {
    throw new Error(
      "no valid PEM PRIVATE KEY block (PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY)",
    );
  }
  const params = keyImportParams(cert);
  let pkcs8: Uint8Array<ArrayBuffer>;
  try {
    pkcs8 = block.type === "PRIVATE KEY"
      ? block.der
      : block.type === "RSA PRIVATE KEY"
      ? rsaPkcs1ToPkcs8(block.der)
      : ecSec1ToPkcs8(block.der, params);
  } catch (err) {
    throw new Error(`the ${block.type} block is malformed: ${errText(err)}`, { cause: err });
  }
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey("pkcs8", pkcs8, params, false, ["sign"]);
  } catch {
    throw new Error(`the private key is not a ${describe(params)} key like the certificate's`);
  }
  const publicKey = await cert.publicKey.export(params, ["verify"]);
  const nonce = crypto.getRandomValues(new Uint8Array(32));
  const alg = signingAlgorithm(key);
  const sig = await crypto.subtle.sign(alg, key, nonce);
  if (!await crypto.subtle.verify(alg, publicKey, sig, nonce)) {
    throw new Error("the private key does not match the certificate");
  }
  return chain.length > 0 ? { cert, key, chain } : { cert, key };
}

type ImportParams = Algorithm | EcKeyImportParams | RsaHashedImportParams;

function keyImportParams(cert: x509.X509Certificate): ImportParams {
  const alg = cert.publicKey.algorithm as Algorithm & { namedCurve?: string };
  switch (alg.name) {
    case "ECDSA":
      return { name: "ECDSA", namedCurve: alg.namedCurve } as EcKeyImportParams;
    case "RSASSA-PKCS1-v1_5":
      return { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as RsaHashedImportParams;
    case "Ed25519":
      return { name: "Ed25519" };
    default:
      throw new Error(`unsupported CA key algorithm ${alg.name}`);
  }
}

function describe(params: ImportParams): string {
  const curve = (params as EcKeyImportParams).namedCurve;
  return curve ? `${params.name} ${curve}` : params.name;
}

// Minimal DER, enough to wrap PKCS#1 and SEC1 private keys in PKCS#8.

function derTlv(tag: number, content: Uint8Array): Uint8Array<ArrayBuffer> {
  const n = content.length;
  const len = n < 0x80
    ? [n]
    : n < 0x100
    ? [0x81, n]
    : n < 0x10000
    ? [0x82, n >> 8, n & 0xff]
    : [0x83, n >> 16, (n >> 8) & 0xff, n & 0xff];
  const out = new Uint8Array(1 + len.length + n);
  out[0] = tag;
  out.set(len, 1);
  out.set(content, 1 + len.length);
  return out;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The elements of a DER SEQUENCE: each element's full encoding and its tag. */
function derSequence(der: Uint8Array): { tag: number; bytes: Uint8Array }[] {
  const outer = readTlv(der, 0);
  if (outer.tag !== 0x30 || outer.end !== der.length) throw new Error("not a DER SEQUENCE");
  const items: { tag: number; bytes: Uint8Array }[] = [];
  for (let at = outer.start; at < outer.end;) {
    const item = readTlv(der, at);
    if (item.end > outer.end) throw new Error("truncated DER");
    items.push({ tag: item.tag, bytes: der.subarray(at, item.end) });
    at = item.end;
  }
  return items;
}

function readTlv(der: Uint8Array, at: number): { tag: number; start: number; end: number } {
  if (at + 2 > der.length) throw new Error("truncated DER");
  const tag = der[at];
  let len = der[at + 1];
  let start = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 3 || start + n > der.length) throw new Error("bad DER length");
    len = 0;
    for (let i = 0; i < n; i++) len = (len << 8) | der[start + i];
    start += n;
  }
  if (start + len > der.length) throw new Error("truncated DER");
  return { tag, start, end: start + len };
}

const DER_INTEGER_0 = new Uint8Array([0x02, 0x01, 0x00]);
const OID_RSA_ENCRYPTION = [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const OID_EC_PUBLIC_KEY = [0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const CURVE_OIDS: Record<string, number[]> = {
  "P-256": [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07],
  "P-384": [0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22],
  "P-521": [0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23],
};

function rsaPkcs1ToPkcs8(pkcs1: Uint8Array): Uint8Array<ArrayBuffer> {
  derSequence(pkcs1); // well-formed
  const algId = derTlv(0x30, new Uint8Array([...OID_RSA_ENCRYPTION, 0x05, 0x00]));
  return derTlv(0x30, concat(DER_INTEGER_0, algId, derTlv(0x04, pkcs1)));
}

/**
 * SEC1 `ECPrivateKey {version, privateKey, [0] parameters, [1] publicKey}` as PKCS#8, with the
 * curve of the certificate; [0] parameters naming another curve are refused.
 */
function ecSec1ToPkcs8(sec1: Uint8Array, params: ImportParams): Uint8Array<ArrayBuffer> {
  const curve = (params as EcKeyImportParams).namedCurve;
  const curveOid = curve ? CURVE_OIDS[curve] : undefined;
  if (!curveOid) throw new Error(`the certificate's key is not an ECDSA key on a known curve`);
  const items = derSequence(sec1);
  const kept: Uint8Array[] = [];
  for (const item of items) {
    if (item.tag === 0xa0) {
      const oid = item.bytes.subarray(readTlv(item.bytes, 0).start);
      if (oid.length !== curveOid.length || oid.some((b, i) => b !== curveOid[i])) {
        throw new Error(`its curve is not the certificate's ${curve}`);
      }
      continue; // PKCS#8 carries the curve in the algorithm identifier
    }
    kept.push(item.bytes);
  }
  const algId = derTlv(0x30, new Uint8Array([...OID_EC_PUBLIC_KEY, ...curveOid]));
  return derTlv(0x30, concat(DER_INTEGER_0, algId, derTlv(0x04, derTlv(0x30, concat(...kept)))));
}
