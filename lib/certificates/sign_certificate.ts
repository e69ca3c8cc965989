/**
 * Issuing a certificate for a request with a CA, as kube's `authority.Sign` with its
 * `PermissiveSigningPolicy` does: subject and SANs from the request, key usages from
 * `spec.usages`, notBefore backdated 5 minutes, notAfter capped at the CA's.
 *
 * @module
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { encodePem } from "../api/mod.ts";
import {
  BACKDATE_MS,
  DEFAULT_SIGNING_DURATION_MS,
  keyUsagesFromStrings,
  MIN_SIGNING_DURATION_MS,
  requestNames,
  SHORT_LIVED_MS,
  type SigningCA,
  SigningError,
  verifyCertificateRequest,
} from "./signer_rules.ts";

import { errText, OID_SUBJECT_KEY_IDENTIFIER, signingAlgorithm } from "./x509_helpers.ts";

x509.cryptoProvider.set(crypto);

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
