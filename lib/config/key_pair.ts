/**
 * Key pairs named by flags and configuration files: read, parsed and checked at load, with
 * errors that name the flag or field they came from.
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { decodePem } from "../api/mod.ts";
import { ConfigError, osReason, quote } from "./config_error.ts";

x509.cryptoProvider.set(crypto);

/** The Web Crypto import/sign parameters for the key type of a certificate. */
export function signatureParams(
  cert: x509.X509Certificate,
): { importAlg: Algorithm; signAlg: Algorithm } | undefined {
  const alg = cert.publicKey.algorithm as Algorithm & { namedCurve?: string };
  switch (alg.name) {
    case "ECDSA": {
      const hash = alg.namedCurve === "P-384"
        ? "SHA-384"
        : alg.namedCurve === "P-521"
        ? "SHA-512"
        : "SHA-256";
      return {
        importAlg: { name: "ECDSA", namedCurve: alg.namedCurve } as EcKeyImportParams,
        signAlg: { name: "ECDSA", hash } as EcdsaParams,
      };
    }
    case "RSASSA-PKCS1-v1_5":
    case "RSA-PSS":
      return {
        importAlg: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as RsaHashedImportParams,
        signAlg: { name: "RSASSA-PKCS1-v1_5" },
      };
    case "Ed25519":
      return { importAlg: { name: "Ed25519" }, signAlg: { name: "Ed25519" } };
    default:
      return undefined;
  }
}

/**
 * Import a PKCS#8 private key for signing with the certificate's algorithm and check that it
 * belongs to the certificate (sign a nonce, verify it with the certificate's public key).
 * Returns an Error message on failure.
 */
export async function importMatchingKey(
  cert: x509.X509Certificate,
  pkcs8: Uint8Array<ArrayBuffer>,
): Promise<CryptoKey | string> {
  const params = signatureParams(cert);
  if (!params) return `unsupported key algorithm ${cert.publicKey.algorithm.name}`;
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey("pkcs8", pkcs8, params.importAlg, true, ["sign"]);
  } catch {
    return `is not a ${params.importAlg.name} PKCS#8 key`;
  }
  const publicKey = await cert.publicKey.export(params.importAlg, ["verify"]);
  const nonce = crypto.getRandomValues(new Uint8Array(32));
  const sig = await crypto.subtle.sign(params.signAlg, key, nonce);
  if (!await crypto.subtle.verify(params.signAlg, publicKey, sig, nonce)) {
    return "does not match the certificate";
  }
  return key;
}

/** A file named in an error: its path, the flag or field it came from, the name to show. */
export interface FileRef {
  path: string;
  /** Prefix of error messages, e.g. `--tls-cert-file` or `config.yaml: tlsCertFile`. */
  where: string;
  /** The name quoted in error messages; the path by default. */
  shown?: string;
}

/** A certificate chain and its private key, read from PEM files and checked. */
export interface KeyPair {
  /** The chain's PEM text as read: leaf first, then intermediates. */
  certPem: string;
  /** The private key's PEM text as read. */
  keyPem: string;
  chain: x509.X509Certificate[];
}

/**
 * Read and check a certificate chain and its private key: the certificate file has at least
 * one parsable `CERTIFICATE` block (leaf first), the key file a `PRIVATE KEY`, `EC PRIVATE
 * KEY` or `RSA PRIVATE KEY` block; a PKCS#8 key must belong to the leaf.
 *
 * @throws {ConfigError} naming the file, e.g.
 * `--tls-cert-file: "x.pem" has no valid PEM CERTIFICATE block`.
 */
export async function readKeyPair(cert: FileRef, key: FileRef): Promise<KeyPair> {
  const certPem = await readRef(cert);
  const certShown = quote(cert.shown ?? cert.path);
  const chain: x509.X509Certificate[] = [];
  for (const block of decodePem(certPem).filter((b) => b.type === "CERTIFICATE")) {
    try {
      chain.push(new x509.X509Certificate(block.der));
    } catch {
      throw new ConfigError(
        chain.length === 0
          ? `${cert.where}: ${certShown} has no valid PEM CERTIFICATE block`
          : `${cert.where}: certificate ${chain.length + 1} in ${certShown} does not parse`,
      );
    }
  }
  if (chain.length === 0) {
    throw new ConfigError(`${cert.where}: ${certShown} has no valid PEM CERTIFICATE block`);
  }

  const keyPem = await readRef(key);
  const keyShown = quote(key.shown ?? key.path);
  const blocks = decodePem(keyPem);
  if (blocks.some((b) => b.type === "ENCRYPTED PRIVATE KEY")) {
    throw new ConfigError(`${key.where}: ${keyShown} is encrypted; give an unencrypted key`);
  }
  const keyBlock = blocks.find((b) => /^(|EC |RSA )PRIVATE KEY$/.test(b.type));
  if (!keyBlock) {
    throw new ConfigError(
      `${key.where}: ${keyShown} has no valid PEM PRIVATE KEY block ` +
        `(PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY)`,
    );
  }
  if (keyBlock.type === "PRIVATE KEY") {
    const imported = await importMatchingKey(chain[0], keyBlock.der);
    if (typeof imported === "string") {
      const why = imported === "does not match the certificate"
        ? `does not match the certificate in ${certShown}`
        : imported;
      throw new ConfigError(`${key.where}: ${keyShown} ${why}`);
    }
  }
  return { certPem, keyPem, chain };
}

async function readRef(ref: FileRef): Promise<string> {
  try {
    return await Deno.readTextFile(ref.path);
  } catch (err) {
    throw new ConfigError(
      `${ref.where}: cannot read ${quote(ref.shown ?? ref.path)}: ${osReason(err)}`,
    );
  }
}
