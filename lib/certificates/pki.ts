/**
 * The server's PKI on first start and every start after: the cluster CA and the serving
 * certificate. The admin token and continue key (`admin_credentials.ts`) and the admin
 * kubeconfig (`kubeconfig.ts`) have their own modules.
 *
 * Layout under `<dataDir>/pki/` (directory 0700, keys and token 0600):
 *
 * ```
 * ca.crt  ca.key            cluster CA: ECDSA P-256, self-signed, 10 years, CN platform-ca
 * serving.crt serving.key   serving certificate signed by the CA, 1 year (unless
 *                           --tls-cert-file/--tls-private-key-file are given)
 * admin.token               bearer token of platform-admin (group system:masters)
 * ```
 *
 * Certificates are made with `@peculiar/x509` on Web Crypto; private keys are written as
 * PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), which `Deno.serve` accepts as is.
 *
 * @module
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { join } from "node:path";
import {
  ConfigError,
  importMatchingKey,
  normalizeIp,
  quote,
  readKeyPair,
  signatureParams,
} from "../config/mod.ts";
import { writeFileAtomic } from "../storage/mod.ts";
import { decodePem, encodePem } from "../api/mod.ts";

x509.cryptoProvider.set(crypto);

/** Common name of the generated cluster CA. */
export const CA_COMMON_NAME = "platform-ca";
/** Common name of the generated serving certificate. */
export const SERVING_COMMON_NAME = "platform-apiserver";

const DAY_MS = 24 * 60 * 60 * 1000;
const CA_VALIDITY_MS = 10 * 365 * DAY_MS;
const SERVING_VALIDITY_MS = 365 * DAY_MS;
/** A generated serving certificate this close to expiry is renewed on start. */
const SERVING_RENEW_BEFORE_MS = 30 * DAY_MS;
/** notBefore is backdated by this much to tolerate clock skew between machines. */
const BACKDATE_MS = 5 * 60 * 1000;

const EC_P256 = { name: "ECDSA", namedCurve: "P-256" } as const;
const ECDSA_SHA256 = { name: "ECDSA", hash: "SHA-256" } as const;

// ---------------------------------------------------------------------------------------
// Keys

async function exportPkcs8Pem(key: CryptoKey): Promise<string> {
  return encodePem("PRIVATE KEY", await crypto.subtle.exportKey("pkcs8", key));
}

function randomSerial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] & 0x7f) | 0x01; // positive, no leading zero byte
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// ---------------------------------------------------------------------------------------
// Files

/** A file's text, or undefined when it does not exist. */
export async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

// ---------------------------------------------------------------------------------------
// CA and serving certificate

/** Options of {@link ensurePki}. */
export interface EnsurePkiOptions {
  /** The server's data directory; the PKI lives in `<dataDir>/pki`. */
  dataDir: string;
  /** Extra subject alternative names (`--tls-san`): IP addresses or DNS names. */
  sans: string[];
  /** The listen address; added to the serving certificate unless it is 0.0.0.0 or ::. */
  bindAddress: string;
  /** A serving certificate chain to use instead of generating one (with the key below). */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** Where notes go (generated or regenerated certificates, missing CA). @default stderr */
  logger?: { info(message: string): void };
  /** The clock. @default () => new Date() */
  now?: () => Date;
  /** The time renewal is decided at (tests move it ahead). @default `now` */
  renewalClock?: () => Date;
}

/** The server's certificates, as PEM. */
export interface Pki {
  /** The cluster CA: signs generated serving and client certificates. */
  caCertPem: string;
  caKeyPem: string;
  /** The serving chain, leaf first, and its key: ready for `Deno.serve({cert, key})`. */
  servingCertPem: string;
  servingKeyPem: string;
  /**
   * What a client trusts to verify the serving certificate (the kubeconfig's
   * certificate-authority-data): the cluster CA for a generated serving certificate, the
   * self-signed root of a given chain, or `undefined` when the given chain's root is not
   * known (clients then rely on their system roots).
   */
  servingCaPem: string | undefined;
  /** Whether this call wrote any certificate or key. */
  generated: boolean;
}

/**
 * Make sure the cluster CA and a serving certificate exist, and return them.
 *
 * First start: generates `ca.crt`/`ca.key` and `serving.crt`/`serving.key` in
 * `<dataDir>/pki`. Later starts reuse them; the serving certificate is regenerated (same CA,
 * logged) when it does not cover the requested names, expires within 30 days, or was not
 * signed by the CA. With `tlsCertFile`/`tlsPrivateKeyFile` those are checked and served
 * instead; the CA is still created when missing, for signing client certificates.
 *
 * @throws {ConfigError} for unreadable or malformed certificate and key files.
 * @example
 * ```ts
 * const pki = await ensurePki({dataDir: "./data", sans: [], bindAddress: "127.0.0.1"});
 * Deno.serve({cert: pki.servingCertPem, key: pki.servingKeyPem, port: 6443}, handler);
 * ```
 */
export async function ensurePki(opts: EnsurePkiOptions): Promise<Pki> {
  const logger = opts.logger ?? { info: (m: string) => console.error(m) };
  const log = (m: string) => logger.info(m);
  const now = opts.now ?? (() => new Date());
  if ((opts.tlsCertFile === undefined) !== (opts.tlsPrivateKeyFile === undefined)) {
    throw opts.tlsCertFile === undefined
      ? new ConfigError("--tls-private-key-file: --tls-cert-file must be given too")
      : new ConfigError("--tls-cert-file: --tls-private-key-file must be given too");
  }
  const dir = join(opts.dataDir, "pki");
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });

  const ca = await ensureCa(dir, now(), log);
  let generated = ca.generated;

  if (opts.tlsCertFile !== undefined) {
    const pair = await readKeyPair(
      { path: opts.tlsCertFile, where: "--tls-cert-file" },
      { path: opts.tlsPrivateKeyFile!, where: "--tls-private-key-file" },
    );
    const servingCaPem = await trustAnchorOf(pair.chain, ca.cert);
    if (servingCaPem === undefined) {
      log(
        `pki: the issuer of ${quote(opts.tlsCertFile)} is not in that file; the admin ` +
          `kubeconfig has no certificate-authority-data and clients use their system roots`,
      );
    }
    return {
      caCertPem: ca.certPem,
      caKeyPem: ca.keyPem,
      servingCertPem: pair.certPem,
      servingKeyPem: pair.keyPem,
      servingCaPem,
      generated,
    };
  }

  const wanted = servingNames(opts.bindAddress, opts.sans);
  const certPath = join(dir, "serving.crt");
  const keyPath = join(dir, "serving.key");
  const existing = await readServing(certPath, keyPath);
  const reason = existing
    ? await whyRenew(existing.cert, existing.keyPem, ca.cert, wanted, (opts.renewalClock ?? now)())
    : undefined;
  let servingCertPem: string;
  let servingKeyPem: string;
  if (existing && reason === undefined) {
    servingCertPem = existing.certPem;
    servingKeyPem = existing.keyPem;
  } else {
    if (existing) log(`pki: regenerating ${certPath}: ${reason}`);
    const made = await issueCertificate({
      ca,
      subject: `CN=${SERVING_COMMON_NAME}`,
      names: wanted,
      usage: "server",
      validityMs: SERVING_VALIDITY_MS,
      now: now(),
    });
    await writeFileAtomic(keyPath, made.keyPem, { mode: 0o600 });
    await writeFileAtomic(certPath, made.certPem, { mode: 0o600 });
    servingCertPem = made.certPem;
    servingKeyPem = made.keyPem;
    generated = true;
  }
  return {
    caCertPem: ca.certPem,
    caKeyPem: ca.keyPem,
    servingCertPem,
    servingKeyPem,
    servingCaPem: ca.certPem,
    generated,
  };
}

/** A loaded CA: certificate and signing key. */
interface LoadedCa {
  cert: x509.X509Certificate;
  key: CryptoKey;
  certPem: string;
  keyPem: string;
  generated: boolean;
}

async function ensureCa(dir: string, now: Date, log: (m: string) => void): Promise<LoadedCa> {
  const certPath = join(dir, "ca.crt");
  const keyPath = join(dir, "ca.key");
  const certPem = await readIfExists(certPath);
  const keyPem = await readIfExists(keyPath);
  if (certPem !== undefined && keyPem !== undefined) {
    const pair = await readKeyPair(
      { path: certPath, where: "--data-dir" },
      { path: keyPath, where: "--data-dir" },
    );
    const block = decodePem(keyPem).find((b) => b.type === "PRIVATE KEY");
    const key = block ? await importMatchingKey(pair.chain[0], block.der) : "is not PKCS#8";
    if (typeof key === "string") {
      throw new ConfigError(`--data-dir: ${quote(keyPath)} ${key}`);
    }
    return { cert: pair.chain[0], key, certPem, keyPem, generated: false };
  }
  if (certPem !== undefined) {
    // A CA certificate without its key cannot sign: refuse rather than replace it.
    throw new ConfigError(
      `--data-dir: ${quote(certPath)} exists but ${quote(keyPath)} is missing`,
    );
  }
  if (keyPem !== undefined) {
    // The key is written before the certificate: a first start stopped between the two.
    log(`pki: ${keyPath} has no ca.crt beside it (interrupted first start); replacing it`);
  }

  const keys = await crypto.subtle.generateKey(EC_P256, true, ["sign", "verify"]);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: `CN=${CA_COMMON_NAME}`,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + CA_VALIDITY_MS),
    keys,
    signingAlgorithm: ECDSA_SHA256,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign |
          x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const newKeyPem = await exportPkcs8Pem(keys.privateKey);
  const newCertPem = cert.toString("pem") + "\n";
  await writeFileAtomic(keyPath, newKeyPem, { mode: 0o600 });
  await writeFileAtomic(certPath, newCertPem, { mode: 0o600 });
  log(`pki: generated cluster CA ${certPath}`);
  return { cert, key: keys.privateKey, certPem: newCertPem, keyPem: newKeyPem, generated: true };
}

/** A subject alternative name, normalized: `{type: "ip", value: "::1"}`. */
export interface SanName {
  type: "dns" | "ip";
  value: string;
}

/**
 * The names a generated serving certificate carries: localhost, 127.0.0.1, the bind address
 * (unless it is a wildcard address) and every extra SAN; IP when it parses as IPv4/IPv6.
 */
export function servingNames(bindAddress: string, sans: readonly string[]): SanName[] {
  const out: SanName[] = [];
  const seen = new Set<string>();
  for (const raw of ["localhost", "127.0.0.1", bindAddress, ...sans]) {
    const text = raw.trim();
    if (text === "") continue;
    const ip = normalizeIp(text);
    if (ip === "0.0.0.0" || ip === "::") continue;
    const name: SanName = ip !== undefined
      ? { type: "ip", value: ip }
      : { type: "dns", value: text.toLowerCase() };
    const id = `${name.type}:${name.value}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(name);
  }
  return out;
}

/** The normalized SANs of a certificate. */
export function certificateNames(cert: x509.X509Certificate): SanName[] {
  const ext = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const out: SanName[] = [];
  for (const n of ext?.names.items ?? []) {
    if (n.type === "ip") out.push({ type: "ip", value: normalizeIp(n.value) ?? n.value });
    else if (n.type === "dns") out.push({ type: "dns", value: n.value.toLowerCase() });
  }
  return out;
}

async function readServing(
  certPath: string,
  keyPath: string,
): Promise<{ cert: x509.X509Certificate; certPem: string; keyPem: string } | undefined> {
  const certPem = await readIfExists(certPath);
  const keyPem = await readIfExists(keyPath);
  if (certPem === undefined || keyPem === undefined) return undefined;
  const block = decodePem(certPem).find((b) => b.type === "CERTIFICATE");
  try {
    return block ? { cert: new x509.X509Certificate(block.der), certPem, keyPem } : undefined;
  } catch {
    return undefined; // unreadable: regenerate
  }
}

/** Why a generated serving certificate must be renewed, or `undefined` to keep it. */
async function whyRenew(
  cert: x509.X509Certificate,
  keyPem: string,
  ca: x509.X509Certificate,
  wanted: SanName[],
  now: Date,
): Promise<string | undefined> {
  const have = new Set(certificateNames(cert).map((n) => `${n.type}:${n.value}`));
  const missing = wanted.filter((n) => !have.has(`${n.type}:${n.value}`));
  if (missing.length > 0) {
    return `it does not cover ${missing.map((n) => n.value).join(", ")}`;
  }
  if (cert.notAfter.getTime() - now.getTime() < SERVING_RENEW_BEFORE_MS) {
    return `it expires on ${cert.notAfter.toISOString()}`;
  }
  if (
    cert.issuer !== ca.subject ||
    !await cert.verify({ publicKey: ca.publicKey, signatureOnly: true })
  ) {
    return "it was not signed by the cluster CA";
  }
  const block = decodePem(keyPem).find((b) => b.type === "PRIVATE KEY");
  if (!block || typeof await importMatchingKey(cert, block.der) === "string") {
    return "its key does not match";
  }
  return undefined;
}

/**
 * The PEM a client should trust for a given chain: the cluster CA when it signed the chain's
 * last certificate, that certificate when it is self-signed, otherwise `undefined`.
 */
async function trustAnchorOf(
  chain: x509.X509Certificate[],
  ca: x509.X509Certificate,
): Promise<string | undefined> {
  const top = chain[chain.length - 1];
  if (
    top.issuer === ca.subject &&
    await top.verify({ publicKey: ca.publicKey, signatureOnly: true })
  ) {
    return ca.toString("pem") + "\n";
  }
  if (await top.isSelfSigned()) return top.toString("pem") + "\n";
  return undefined;
}

/** Options of {@link issueCertificate}. */
interface IssueOptions {
  ca: { cert: x509.X509Certificate; key: CryptoKey };
  subject: string;
  names: SanName[];
  usage: "server" | "client";
  validityMs: number;
  now: Date;
}

async function issueCertificate(o: IssueOptions): Promise<{ certPem: string; keyPem: string }> {
  const keys = await crypto.subtle.generateKey(EC_P256, true, ["sign", "verify"]);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension(
      [o.usage === "server" ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth],
      false,
    ),
    await x509.AuthorityKeyIdentifierExtension.create(o.ca.cert, false),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
  ];
  if (o.names.length > 0) {
    extensions.push(new x509.SubjectAlternativeNameExtension(o.names, false));
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: o.subject,
    issuer: o.ca.cert.subject,
    notBefore: new Date(o.now.getTime() - BACKDATE_MS),
    notAfter: new Date(o.now.getTime() + o.validityMs),
    publicKey: keys.publicKey,
    signingKey: o.ca.key,
    signingAlgorithm: signatureParams(o.ca.cert)?.signAlg ?? ECDSA_SHA256,
    extensions,
  });
  return { certPem: cert.toString("pem") + "\n", keyPem: await exportPkcs8Pem(keys.privateKey) };
}

/** Options of {@link issueClientCertificate}. */
export interface ClientCertificateOptions {
  /** The signing CA, as PEM (e.g. `Pki.caCertPem` and `Pki.caKeyPem`). */
  caCertPem: string;
  caKeyPem: string;
  /** The user name (certificate CN). */
  user: string;
  /** The user's groups (certificate O attributes). @default [] */
  groups?: string[];
  /** @default 365 */
  validityDays?: number;
  /** @default new Date() */
  now?: Date;
}

/**
 * A client certificate (clientAuth, ECDSA P-256) for `user` and `groups`, signed by the CA,
 * as Kubernetes' x509 authenticator reads it: CN = user, O = groups. For tests and
 * bootstrapping; CSRs go through the signer controller.
 *
 * @example
 * ```ts
 * const {certPem, keyPem} = await issueClientCertificate({
 *   caCertPem: pki.caCertPem, caKeyPem: pki.caKeyPem, user: "alice", groups: ["dev"],
 * });
 * ```
 */
export async function issueClientCertificate(
  opts: ClientCertificateOptions,
): Promise<{ certPem: string; keyPem: string }> {
  const caBlock = decodePem(opts.caCertPem).find((b) => b.type === "CERTIFICATE");
  const keyBlock = decodePem(opts.caKeyPem).find((b) => b.type === "PRIVATE KEY");
  if (!caBlock || !keyBlock) throw new Error("issueClientCertificate: CA PEM is malformed");
  const cert = new x509.X509Certificate(caBlock.der);
  const key = await importMatchingKey(cert, keyBlock.der);
  if (typeof key === "string") throw new Error(`issueClientCertificate: CA key ${key}`);
  const subject = new x509.Name([
    ...(opts.groups ?? []).map((g) => ({ O: [g] })),
    { CN: [opts.user] },
  ]).toString();
  return await issueCertificate({
    ca: { cert, key },
    subject,
    names: [],
    usage: "client",
    validityMs: (opts.validityDays ?? 365) * DAY_MS,
    now: opts.now ?? new Date(),
  });
}
