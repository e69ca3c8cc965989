/**
 * Loading a signing CA from PEM text: the certificate and its chain, and its key as PKCS#8,
 * SEC1 `EC PRIVATE KEY` or PKCS#1 `RSA PRIVATE KEY` (converted to PKCS#8 for Web Crypto).
 *
 * @module
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { decodePem } from "../api/mod.ts";
import type { SigningCA } from "./signer_rules.ts";

import { errText, OID_BASIC_CONSTRAINTS, OID_KEY_USAGE, signingAlgorithm } from "./x509_helpers.ts";

x509.cryptoProvider.set(crypto);

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
