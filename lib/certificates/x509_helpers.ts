/**
 * Small X.509 helpers the signer's modules share (not part of the signer's public surface):
 * extension OIDs, the signature algorithm of a key, and error text.
 *
 * @module
 */

export const OID_SAN = "2.5.29.17";
export const OID_BASIC_CONSTRAINTS = "2.5.29.19";
export const OID_SUBJECT_KEY_IDENTIFIER = "2.5.29.14";
export const OID_KEY_USAGE = "2.5.29.15";

/** The Web Crypto signature algorithm of a private key (ECDSA hash by curve, as Go). */
export function signingAlgorithm(key: CryptoKey): Algorithm | EcdsaParams {
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

/** An error's message, or the thrown value as text. */
export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
