/**
 * Client-certificate authentication, as kube's x509 authenticator: a certificate whose chain
 * verifies against the client CA bundle (`--client-ca-file`), that is within its validity and
 * whose extended key usage allows client authentication (or that has none) authenticates as
 *
 * - user: the subject's common name (the last CN; a certificate without one authenticates
 *   nobody),
 * - uid: the subject's `1.3.6.1.4.1.57683.2` attribute, when there is one,
 * - groups: the subject's organizations (O), in order, plus `system:authenticated`,
 * - extra `authentication.kubernetes.io/credential-id`: `X509SHA256=<hex SHA-256 of the DER>`.
 *
 * The TLS layer (`lib/server/tls_front.ts`) proves that the client holds the certificate's key
 * and hands the presented chain over once per connection; {@link ClientCAVerifier.verify}
 * decides here, and {@link clientCertificateAuthenticator} answers for every request on that
 * connection, checking the validity again at the time of the request (a connection may
 * outlive its certificate).
 *
 * @module
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { decodePem, type UserInfo } from "../api/mod.ts";
import type { Authenticator } from "./authenticator.ts";

x509.cryptoProvider.set(crypto);

/** The extra key carrying the credential's fingerprint (kube's `user.CredentialIDKey`). */
export const CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id";
/** The subject attribute read as the user's UID (kube's `AllowParsingUserUIDFromCertAuth`). */
export const UID_OID = "1.3.6.1.4.1.57683.2";

const OID_CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
const OID_ANY_EXTENDED_KEY_USAGE = "2.5.29.37.0";
/** Longest chain followed from the client's certificate to a CA of the bundle. */
const MAX_CHAIN_LENGTH = 8;

/** A verified client: who it is and when its chain is valid. */
export interface VerifiedClient {
  user: UserInfo;
  /** The latest notBefore and the earliest notAfter of the verified chain. */
  notBefore: Date;
  notAfter: Date;
}

/** The outcome of {@link ClientCAVerifier.verify}: the client, or why it is not trusted. */
export type Verification = { client: VerifiedClient } | { reason: string };

/**
 * The certificates of a PEM bundle.
 *
 * @throws {Error} when it has no `CERTIFICATE` block or one does not parse.
 */
export function parseCertificateBundle(pem: string): x509.X509Certificate[] {
  const blocks = decodePem(pem).filter((b) => b.type === "CERTIFICATE");
  if (blocks.length === 0) throw new Error("has no valid PEM CERTIFICATE block");
  return blocks.map((b, i) => {
    try {
      return new x509.X509Certificate(b.der);
    } catch {
      throw new Error(`certificate ${i + 1} does not parse`);
    }
  });
}

/** Verifies client certificate chains against a CA bundle. */
export class ClientCAVerifier {
  readonly #cas: x509.X509Certificate[];

  /** @param cas the trusted CAs (`--client-ca-file`, or the cluster CA). */
  constructor(cas: x509.X509Certificate[]) {
    this.#cas = cas;
  }

  /** A verifier for the CAs of a PEM bundle. @throws {Error} as {@link parseCertificateBundle} */
  static fromPem(pem: string): ClientCAVerifier {
    return new ClientCAVerifier(parseCertificateBundle(pem));
  }

  /**
   * Verify a presented chain (DER, the client's certificate first, then any intermediates)
   * at `now` and return the client it authenticates, or why not.
   *
   * @example
   * ```ts
   * const result = await ClientCAVerifier.fromPem(caPem).verify([leafDer]);
   * if ("client" in result) console.log(result.client.user.username);
   * ```
   */
  async verify(chain: readonly Uint8Array[], now = new Date()): Promise<Verification> {
    if (chain.length === 0) return { reason: "no certificate" };
    let presented: x509.X509Certificate[];
    try {
      presented = chain.map((der) => new x509.X509Certificate(new Uint8Array(der)));
    } catch {
      return { reason: "the certificate does not parse" };
    }
    const [leaf, ...intermediates] = presented;
    const path = await this.#path(leaf, intermediates);
    if (typeof path === "string") return { reason: path };
    for (const cert of path) {
      if (!allowsClientAuth(cert)) {
        return { reason: `${cert.subject}: extended key usage does not allow client auth` };
      }
    }
    const notBefore = new Date(Math.max(...path.map((c) => c.notBefore.getTime())));
    const notAfter = new Date(Math.min(...path.map((c) => c.notAfter.getTime())));
    if (now < notBefore || now > notAfter) {
      return { reason: `the chain is valid from ${iso(notBefore)} to ${iso(notAfter)}` };
    }
    const user = await userOf(leaf);
    if (typeof user === "string") return { reason: user };
    return { client: { user, notBefore, notAfter } };
  }

  /** The chain from `leaf` to a trusted CA (both included), or why there is none. */
  async #path(
    leaf: x509.X509Certificate,
    intermediates: x509.X509Certificate[],
  ): Promise<x509.X509Certificate[] | string> {
    const path = [leaf];
    let cur = leaf;
    while (path.length <= MAX_CHAIN_LENGTH) {
      for (const ca of this.#cas) {
        if (await signedBy(cur, ca)) return [...path, ca];
      }
      let next: x509.X509Certificate | undefined;
      for (const cert of intermediates) {
        if (!path.includes(cert) && isCA(cert) && await signedBy(cur, cert)) {
          next = cert;
          break;
        }
      }
      if (!next) break;
      path.push(next);
      cur = next;
    }
    return `${leaf.subject} is not signed by a trusted CA (issuer ${leaf.issuer})`;
  }
}

/** Whether `cert` names `issuer` as its issuer and carries its valid signature. */
async function signedBy(cert: x509.X509Certificate, issuer: x509.X509Certificate) {
  if (cert.issuer !== issuer.subject) return false;
  try {
    return await cert.verify({ publicKey: issuer.publicKey, signatureOnly: true });
  } catch {
    return false;
  }
}

/** A CA certificate: basicConstraints cA, and keyCertSign when key usage is given. */
function isCA(cert: x509.X509Certificate): boolean {
  if (!cert.getExtension(x509.BasicConstraintsExtension)?.ca) return false;
  const ku = cert.getExtension(x509.KeyUsagesExtension);
  return !ku || (ku.usages & x509.KeyUsageFlags.keyCertSign) !== 0;
}

/** No extended key usage, clientAuth or anyExtendedKeyUsage (as Go's chain verification). */
function allowsClientAuth(cert: x509.X509Certificate): boolean {
  const eku = cert.getExtension(x509.ExtendedKeyUsageExtension);
  if (!eku) return true;
  return eku.usages.some((u) => u === OID_CLIENT_AUTH || u === OID_ANY_EXTENDED_KEY_USAGE);
}

/** The user a verified certificate names, or why it names none. */
async function userOf(cert: x509.X509Certificate): Promise<UserInfo | string> {
  const username = cert.subjectName.getField("CN").at(-1) ?? "";
  if (username === "") return "the certificate's subject has no common name";
  const uids = cert.subjectName.getField(UID_OID);
  if (uids.length > 1) return `the certificate's subject has ${uids.length} UIDs (${UID_OID})`;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", cert.rawData));
  const fingerprint = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  const user: UserInfo = {
    username,
    groups: [...cert.subjectName.getField("O"), "system:authenticated"],
    extra: { [CREDENTIAL_ID_KEY]: [`X509SHA256=${fingerprint}`] },
  };
  if (uids.length === 1) user.uid = uids[0];
  return user;
}

function iso(d: Date): string {
  return d.toISOString().replace(/\.000Z$/, "Z");
}

/**
 * The authenticator of client certificates: the verified client of the request's connection
 * (`clientOf`, filled in by the TLS front), while the time of the request is within the
 * chain's validity.
 */
export function clientCertificateAuthenticator(
  clientOf: (req: Request) => VerifiedClient | undefined,
  now: () => Date = () => new Date(),
): Authenticator {
  return {
    authenticate(req) {
      const client = clientOf(req);
      if (!client) return undefined;
      const t = now();
      if (t < client.notBefore || t > client.notAfter) return undefined;
      return client.user;
    },
  };
}
