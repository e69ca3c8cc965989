/**
 * Test fixtures for the signer's tests: key pairs, CAs (self-signed or intermediate), certificate
 * requests, readers of a certificate's extensions, and the check of a signer rule's failure.
 *
 * @module
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import assert from "node:assert/strict";
import { decodePem, encodePem } from "../api/mod.ts";
import {
  type checkSignerRules,
  SIGNER_VALIDATION_FAILURE,
  type SigningCA,
} from "./signer_rules.ts";

x509.cryptoProvider.set(crypto);

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export const CLIENT_USAGES = ["digital signature", "key encipherment", "client auth"];
export const SERVING_USAGES = ["digital signature", "key encipherment", "server auth"];

export type KeyKind = "P-256" | "P-384" | "RSA" | "Ed25519";

export async function keyPair(kind: KeyKind): Promise<CryptoKeyPair> {
  switch (kind) {
    case "P-256":
    case "P-384":
      return await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: kind }, true, [
        "sign",
        "verify",
      ]);
    case "RSA":
      return await crypto.subtle.generateKey(
        {
          name: "RSASSA-PKCS1-v1_5",
          modulusLength: 2048,
          publicExponent: new Uint8Array([1, 0, 1]),
          hash: "SHA-256",
        },
        true,
        ["sign", "verify"],
      );
    case "Ed25519":
      return await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
        "sign",
        "verify",
      ]) as CryptoKeyPair;
  }
}

export function signAlg(kind: KeyKind): Algorithm | EcdsaParams {
  if (kind === "P-384") return { name: "ECDSA", hash: "SHA-384" } as EcdsaParams;
  if (kind === "P-256") return { name: "ECDSA", hash: "SHA-256" } as EcdsaParams;
  return { name: kind === "RSA" ? "RSASSA-PKCS1-v1_5" : "Ed25519" };
}

export interface TestCa extends SigningCA {
  keys: CryptoKeyPair;
  certPem: string;
}

/** A CA: self-signed, or signed by `parent` (an intermediate). */
export async function makeCa(opts: {
  kind?: KeyKind;
  name?: string;
  notBefore?: Date;
  notAfter?: Date;
  parent?: TestCa;
  ski?: boolean;
} = {}): Promise<TestCa> {
  const kind = opts.kind ?? "P-256";
  const keys = await keyPair(kind);
  const name = opts.name ?? "CN=test-ca";
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(true, undefined, true),
    new x509.KeyUsagesExtension(
      x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
      true,
    ),
  ];
  if (opts.ski !== false) {
    extensions.push(await x509.SubjectKeyIdentifierExtension.create(keys.publicKey));
  }
  const notBefore = opts.notBefore ?? new Date(Date.now() - DAY);
  const notAfter = opts.notAfter ?? new Date(Date.now() + 3650 * DAY);
  const cert = opts.parent
    ? await x509.X509CertificateGenerator.create({
      subject: name,
      issuer: opts.parent.cert.subjectName,
      notBefore,
      notAfter,
      publicKey: keys.publicKey,
      signingKey: opts.parent.key,
      signingAlgorithm: signAlg(keyKindOf(opts.parent.key)),
      extensions,
    })
    : await x509.X509CertificateGenerator.createSelfSigned({
      name,
      notBefore,
      notAfter,
      keys,
      signingAlgorithm: signAlg(kind),
      extensions,
    });
  return { cert, key: keys.privateKey, keys, certPem: encodePem("CERTIFICATE", cert.rawData) };
}

export function keyKindOf(key: CryptoKey): KeyKind {
  const alg = key.algorithm as Algorithm & { namedCurve?: string };
  if (alg.name === "ECDSA") return alg.namedCurve as KeyKind;
  return alg.name === "Ed25519" ? "Ed25519" : "RSA";
}

export async function makeCsr(opts: {
  kind?: KeyKind;
  name?: string;
  sans?: x509.JsonGeneralName[];
  extensions?: x509.Extension[];
} = {}): Promise<x509.Pkcs10CertificateRequest> {
  const kind = opts.kind ?? "P-256";
  const extensions = [...opts.extensions ?? []];
  if (opts.sans) extensions.push(new x509.SubjectAlternativeNameExtension(opts.sans));
  return await x509.Pkcs10CertificateRequestGenerator.create({
    name: opts.name ?? "CN=alice, O=dev",
    keys: await keyPair(kind),
    signingAlgorithm: signAlg(kind),
    extensions,
  });
}

export function csrPem(csr: x509.Pkcs10CertificateRequest): string {
  return encodePem("CERTIFICATE REQUEST", csr.rawData);
}

export function certsOf(pem: string): x509.X509Certificate[] {
  return decodePem(pem).filter((b) => b.type === "CERTIFICATE").map((b) =>
    new x509.X509Certificate(b.der)
  );
}

export function ext(cert: x509.X509Certificate, oid: string): x509.Extension | undefined {
  return cert.extensions.find((e) => e.type === oid);
}

export function keyUsageOf(
  cert: x509.X509Certificate,
): { usages: number; critical: boolean } | undefined {
  const e = ext(cert, "2.5.29.15");
  return e && { usages: new x509.KeyUsagesExtension(e.rawData).usages, critical: e.critical };
}

export function ekuOf(cert: x509.X509Certificate): string[] {
  const e = ext(cert, "2.5.29.37");
  return e ? Array.from(new x509.ExtendedKeyUsageExtension(e.rawData).usages, String) : [];
}

export function sansOf(cert: x509.X509Certificate): x509.JsonGeneralName[] {
  const e = ext(cert, "2.5.29.17");
  return e ? new x509.SubjectAlternativeNameExtension(e.rawData).names.toJSON() : [];
}

export async function verifies(cert: x509.X509Certificate, issuer: x509.X509Certificate) {
  return cert.issuer === issuer.subject &&
    await cert.verify({ publicKey: issuer.publicKey, signatureOnly: true });
}

export const NOW = new Date("2030-06-01T12:00:00.000Z");
export const caForNow = () =>
  makeCa({
    notBefore: new Date(NOW.getTime() - DAY),
    notAfter: new Date(NOW.getTime() + 3650 * DAY),
  });

export function expectFailure(
  result: ReturnType<typeof checkSignerRules>,
  message: string | RegExp,
): void {
  assert.equal(result.ok, false, `expected a failure matching ${message}`);
  if (result.ok) return;
  assert.equal(result.reason, SIGNER_VALIDATION_FAILURE);
  if (typeof message === "string") assert.equal(result.message, message);
  else assert.match(result.message, message);
}

export const NODE = "O=system:nodes, CN=system:node:worker-1";
