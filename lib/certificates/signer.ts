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
import {
  checkSignerRules,
  DEFAULT_SIGNING_DURATION_MS,
  parseCertificateRequest,
  SIGNER_VALIDATION_FAILURE,
  type SignerConfig,
  signingCAFor,
  SigningError,
} from "./signer_rules.ts";
import { signCertificate } from "./sign_certificate.ts";
import { isWellKnownSigner } from "../api/mod.ts";

export * from "./signer_rules.ts";
export * from "./sign_certificate.ts";
export * from "./signing_ca.ts";

x509.cryptoProvider.set(crypto);

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
