import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import assert from "node:assert/strict";
import { decodePem, encodePem } from "../api/mod.ts";
import {
  BACKDATE_MS,
  certificateDuration,
  checkSignerRules,
  DEFAULT_SIGNING_DURATION_MS,
  isWellKnownSigner,
  keyUsagesFromStrings,
  loadSigningCA,
  parseCertificateRequest,
  signCertificate,
  SIGNER_APISERVER_CLIENT,
  SIGNER_APISERVER_CLIENT_NODEAGENT,
  SIGNER_NODEAGENT_SERVING,
  SIGNER_VALIDATION_FAILURE,
  type SigningCA,
  SigningError,
  signRequest,
  WELL_KNOWN_SIGNERS,
} from "./signer.ts";

x509.cryptoProvider.set(crypto);

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const CLIENT_USAGES = ["digital signature", "key encipherment", "client auth"];
const SERVING_USAGES = ["digital signature", "key encipherment", "server auth"];

// ---------------------------------------------------------------------------------------
// Helpers

type KeyKind = "P-256" | "P-384" | "RSA" | "Ed25519";

async function keyPair(kind: KeyKind): Promise<CryptoKeyPair> {
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

function signAlg(kind: KeyKind): Algorithm | EcdsaParams {
  if (kind === "P-384") return { name: "ECDSA", hash: "SHA-384" } as EcdsaParams;
  if (kind === "P-256") return { name: "ECDSA", hash: "SHA-256" } as EcdsaParams;
  return { name: kind === "RSA" ? "RSASSA-PKCS1-v1_5" : "Ed25519" };
}

interface TestCa extends SigningCA {
  keys: CryptoKeyPair;
  certPem: string;
}

/** A CA: self-signed, or signed by `parent` (an intermediate). */
async function makeCa(opts: {
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

function keyKindOf(key: CryptoKey): KeyKind {
  const alg = key.algorithm as Algorithm & { namedCurve?: string };
  if (alg.name === "ECDSA") return alg.namedCurve as KeyKind;
  return alg.name === "Ed25519" ? "Ed25519" : "RSA";
}

async function makeCsr(opts: {
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

function csrPem(csr: x509.Pkcs10CertificateRequest): string {
  return encodePem("CERTIFICATE REQUEST", csr.rawData);
}

function certsOf(pem: string): x509.X509Certificate[] {
  return decodePem(pem).filter((b) => b.type === "CERTIFICATE").map((b) =>
    new x509.X509Certificate(b.der)
  );
}

function ext(cert: x509.X509Certificate, oid: string): x509.Extension | undefined {
  return cert.extensions.find((e) => e.type === oid);
}

function keyUsageOf(cert: x509.X509Certificate): { usages: number; critical: boolean } | undefined {
  const e = ext(cert, "2.5.29.15");
  return e && { usages: new x509.KeyUsagesExtension(e.rawData).usages, critical: e.critical };
}

function ekuOf(cert: x509.X509Certificate): string[] {
  const e = ext(cert, "2.5.29.37");
  return e ? Array.from(new x509.ExtendedKeyUsageExtension(e.rawData).usages, String) : [];
}

function sansOf(cert: x509.X509Certificate): x509.JsonGeneralName[] {
  const e = ext(cert, "2.5.29.17");
  return e ? new x509.SubjectAlternativeNameExtension(e.rawData).names.toJSON() : [];
}

async function verifies(cert: x509.X509Certificate, issuer: x509.X509Certificate) {
  return cert.issuer === issuer.subject &&
    await cert.verify({ publicKey: issuer.publicKey, signatureOnly: true });
}

const NOW = new Date("2030-06-01T12:00:00.000Z");
const caForNow = () =>
  makeCa({
    notBefore: new Date(NOW.getTime() - DAY),
    notAfter: new Date(NOW.getTime() + 3650 * DAY),
  });

function expectFailure(
  result: ReturnType<typeof checkSignerRules>,
  message: string | RegExp,
): void {
  assert.equal(result.ok, false, `expected a failure matching ${message}`);
  if (result.ok) return;
  assert.equal(result.reason, SIGNER_VALIDATION_FAILURE);
  if (typeof message === "string") assert.equal(result.message, message);
  else assert.match(result.message, message);
}

// ---------------------------------------------------------------------------------------
// Names, usages, durations

Deno.test("well-known signers are the three platform.io signers", () => {
  assert.deepEqual([...WELL_KNOWN_SIGNERS], [
    "platform.io/apiserver-client",
    "platform.io/apiserver-client-nodeagent",
    "platform.io/nodeagent-serving",
  ]);
  assert(isWellKnownSigner("platform.io/nodeagent-serving"));
  assert(!isWellKnownSigner("platform.io/legacy-unknown"));
  assert(!isWellKnownSigner("example.com/custom"));
});

Deno.test("keyUsagesFromStrings maps usages as kube's keyUsageDict and extKeyUsageDict", () => {
  const all = keyUsagesFromStrings([
    "signing",
    "digital signature",
    "content commitment",
    "key encipherment",
    "key agreement",
    "data encipherment",
    "cert sign",
    "crl sign",
    "encipher only",
    "decipher only",
  ]);
  assert.equal(all.keyUsage, 0x1ff);
  assert.deepEqual(all.extKeyUsages, []);
  assert.equal(keyUsagesFromStrings(["signing"]).keyUsage, x509.KeyUsageFlags.digitalSignature);
  assert.equal(
    keyUsagesFromStrings(["content commitment"]).keyUsage,
    x509.KeyUsageFlags.nonRepudiation,
  );

  const ext = keyUsagesFromStrings([
    "netscape sgc",
    "client auth",
    "s/mime",
    "email protection",
    "server auth",
    "any",
    "microsoft sgc",
    "ocsp signing",
    "timestamping",
    "ipsec user",
    "ipsec tunnel",
    "ipsec end system",
    "code signing",
  ]);
  assert.equal(ext.keyUsage, 0);
  // Go's ExtKeyUsage order, duplicates (s/mime = email protection) once.
  assert.deepEqual(ext.extKeyUsages, [
    "2.5.29.37.0",
    "1.3.6.1.5.5.7.3.1",
    "1.3.6.1.5.5.7.3.2",
    "1.3.6.1.5.5.7.3.3",
    "1.3.6.1.5.5.7.3.4",
    "1.3.6.1.5.5.7.3.5",
    "1.3.6.1.5.5.7.3.6",
    "1.3.6.1.5.5.7.3.7",
    "1.3.6.1.5.5.7.3.8",
    "1.3.6.1.5.5.7.3.9",
    "1.3.6.1.4.1.311.10.3.3",
    "2.16.840.1.113730.4.1",
  ]);
  assert.deepEqual(keyUsagesFromStrings(["client auth", "bogus"]).unrecognized, ["bogus"]);
});

Deno.test("certificateDuration: default, cap at the maximum, 10-minute floor", () => {
  assert.equal(certificateDuration(undefined), DEFAULT_SIGNING_DURATION_MS);
  assert.equal(DEFAULT_SIGNING_DURATION_MS, 365 * DAY);
  assert.equal(certificateDuration(undefined, 30 * DAY), 30 * DAY);
  assert.equal(certificateDuration(3600, 30 * DAY), HOUR);
  assert.equal(certificateDuration(3600 * 24 * 60, 30 * DAY), 30 * DAY);
  assert.equal(certificateDuration(60, 30 * DAY), 10 * MINUTE);
  assert.equal(certificateDuration(600, 30 * DAY), 10 * MINUTE);
});

// ---------------------------------------------------------------------------------------
// Issuing

Deno.test("signCertificate issues a client certificate for an ECDSA request", async () => {
  const ca = await caForNow();
  const csr = await makeCsr({ name: "CN=alice, O=dev, O=ops" });
  const pem = await signCertificate(ca, csr, { usages: CLIENT_USAGES, now: NOW });

  assert.match(pem, /^-----BEGIN CERTIFICATE-----\n/);
  assert.equal(decodePem(pem).length, 1, "a self-signed CA is not appended");
  const [cert] = certsOf(pem);
  assert(await verifies(cert, ca.cert));
  assert(await cert.verify({ publicKey: ca.cert.publicKey, date: NOW }));
  assert.equal(cert.subject, csr.subject);
  assert.deepEqual(cert.subjectName.getField("O"), ["dev", "ops"]);
  assert.deepEqual(
    new Uint8Array(cert.publicKey.rawData),
    new Uint8Array(csr.publicKey.rawData),
  );

  const ku = keyUsageOf(cert)!;
  assert.equal(
    ku.usages,
    x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
  );
  assert(ku.critical);
  assert.deepEqual(ekuOf(cert), ["1.3.6.1.5.5.7.3.2"]);
  const bc = ext(cert, "2.5.29.19")!;
  assert.equal(new x509.BasicConstraintsExtension(bc.rawData).ca, false);
  assert(bc.critical);
  assert.deepEqual(sansOf(cert), []);

  // Key identifiers: AKI is the CA's SKI; SKI is the request key's.
  const caSki = new x509.SubjectKeyIdentifierExtension(ext(ca.cert, "2.5.29.14")!.rawData).keyId;
  const aki = new x509.AuthorityKeyIdentifierExtension(ext(cert, "2.5.29.35")!.rawData);
  assert.equal(aki.keyId, caSki);
  const ski = new x509.SubjectKeyIdentifierExtension(ext(cert, "2.5.29.14")!.rawData).keyId;
  const expectedSki = await x509.SubjectKeyIdentifierExtension.create(csr.publicKey);
  assert.equal(ski, expectedSki.keyId);

  // Validity: backdated 5 minutes, one year long (kube backdates both ends of long certs).
  assert.equal(cert.notBefore.getTime(), NOW.getTime() - BACKDATE_MS);
  assert.equal(cert.notAfter.getTime() - cert.notBefore.getTime(), DEFAULT_SIGNING_DURATION_MS);

  // Serial: positive, at most 128 bits, and different each time.
  assert.match(cert.serialNumber, /^[0-9a-f]{1,32}$/);
  const again = certsOf(await signCertificate(ca, csr, { usages: CLIENT_USAGES, now: NOW }))[0];
  assert.notEqual(again.serialNumber, cert.serialNumber);
});

Deno.test("signCertificate issues a serving certificate for an RSA request with SANs", async () => {
  const ca = await caForNow();
  const csr = await makeCsr({
    kind: "RSA",
    name: "O=system:nodes, CN=system:node:worker-1",
    sans: [
      { type: "dns", value: "worker-1.example.com" },
      { type: "ip", value: "10.0.0.7" },
      { type: "ip", value: "fd00::7" },
    ],
  });
  const pem = await signCertificate(ca, csr, {
    usages: SERVING_USAGES,
    expirationSeconds: 3600,
    now: NOW,
  });
  const [cert] = certsOf(pem);
  assert(await verifies(cert, ca.cert));
  assert.equal(cert.publicKey.algorithm.name, "RSASSA-PKCS1-v1_5");
  assert.equal(cert.subject, "O=system:nodes, CN=system:node:worker-1");
  assert.deepEqual(sansOf(cert), [
    { type: "dns", value: "worker-1.example.com" },
    { type: "ip", value: "10.0.0.7" },
    { type: "ip", value: "fd00::7" },
  ]);
  assert.equal(ext(cert, "2.5.29.17")!.critical, false);
  assert.deepEqual(ekuOf(cert), ["1.3.6.1.5.5.7.3.1"]);
  // Short-lived (< 8h): notAfter = now + ttl, not backdated.
  assert.equal(cert.notBefore.getTime(), NOW.getTime() - BACKDATE_MS);
  assert.equal(cert.notAfter.getTime(), NOW.getTime() + HOUR);
});

Deno.test("signCertificate copies DNS, email, IP and URI SANs and drops other extensions", async () => {
  const ca = await caForNow();
  const csr = await makeCsr({
    kind: "P-384",
    name: "CN=bob, OU=team, O=dev",
    sans: [
      { type: "url", value: "spiffe://cluster/ns/a/sa/b" },
      { type: "ip", value: "192.0.2.1" },
      { type: "email", value: "bob@example.com" },
      { type: "dns", value: "bob.example.com" },
    ],
    extensions: [new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  });
  const [cert] = certsOf(
    await signCertificate(ca, csr, { usages: ["digital signature", "client auth"], now: NOW }),
  );
  assert(await verifies(cert, ca.cert));
  assert.equal(cert.subject, "CN=bob, OU=team, O=dev");
  // Go's order: DNS, email, IP, URI.
  assert.deepEqual(sansOf(cert), [
    { type: "dns", value: "bob.example.com" },
    { type: "email", value: "bob@example.com" },
    { type: "ip", value: "192.0.2.1" },
    { type: "url", value: "spiffe://cluster/ns/a/sa/b" },
  ]);
  // The requested keyCertSign extension is not copied: key usage comes from spec.usages.
  assert.equal(keyUsageOf(cert)!.usages, x509.KeyUsageFlags.digitalSignature);
  assert.deepEqual(
    Array.from(cert.extensions, (e) => e.type).sort(),
    ["2.5.29.14", "2.5.29.15", "2.5.29.17", "2.5.29.19", "2.5.29.35", "2.5.29.37"],
  );
});

Deno.test("signCertificate: SANs are critical when the subject is empty", async () => {
  const ca = await caForNow();
  const csr = await makeCsr({ name: "", sans: [{ type: "dns", value: "only.example" }] });
  const [cert] = certsOf(await signCertificate(ca, csr, { usages: SERVING_USAGES, now: NOW }));
  assert.equal(cert.subject, "");
  assert.equal(ext(cert, "2.5.29.17")!.critical, true);
});

Deno.test("signCertificate: no keyUsage extension without key usages", async () => {
  const ca = await caForNow();
  const [cert] = certsOf(
    await signCertificate(ca, await makeCsr(), { usages: ["client auth"], now: NOW }),
  );
  assert.equal(keyUsageOf(cert), undefined);
  assert.deepEqual(ekuOf(cert), ["1.3.6.1.5.5.7.3.2"]);
});

Deno.test("signCertificate: lifetime honours expirationSeconds, the maximum and the CA", async () => {
  const ca = await caForNow();
  const csr = await makeCsr();
  const lifetime = async (opts: { expirationSeconds?: number; maxDuration?: number }) => {
    const [cert] = certsOf(
      await signCertificate(ca, csr, { usages: CLIENT_USAGES, now: NOW, ...opts }),
    );
    return { notBefore: cert.notBefore.getTime(), notAfter: cert.notAfter.getTime() };
  };
  const t = NOW.getTime();

  // Requested below the maximum: honoured; long-lived, so backdated at both ends.
  let v = await lifetime({ expirationSeconds: 2 * 86400, maxDuration: 30 * DAY });
  assert.equal(v.notBefore, t - BACKDATE_MS);
  assert.equal(v.notAfter, t + 2 * DAY - BACKDATE_MS);

  // Requested above the maximum: the maximum.
  v = await lifetime({ expirationSeconds: 90 * 86400, maxDuration: 30 * DAY });
  assert.equal(v.notAfter, t + 30 * DAY - BACKDATE_MS);

  // No request: the maximum; default maximum one year.
  v = await lifetime({ maxDuration: 7 * DAY });
  assert.equal(v.notAfter, t + 7 * DAY - BACKDATE_MS);
  v = await lifetime({});
  assert.equal(v.notAfter, t + 365 * DAY - BACKDATE_MS);

  // Below 10 minutes: 10 minutes; short-lived, so notAfter is not backdated.
  v = await lifetime({ expirationSeconds: 60 });
  assert.equal(v.notAfter, t + 10 * MINUTE);
  v = await lifetime({ expirationSeconds: 600 });
  assert.equal(v.notAfter, t + 10 * MINUTE);

  // Never after the CA's notAfter.
  const shortCa = await makeCa({
    notBefore: new Date(t - DAY),
    notAfter: new Date(t + 2 * DAY),
  });
  const [cert] = certsOf(
    await signCertificate(shortCa, csr, { usages: CLIENT_USAGES, now: NOW }),
  );
  assert.equal(cert.notAfter.getTime(), shortCa.cert.notAfter.getTime());
  assert(await verifies(cert, shortCa.cert));
});

Deno.test("signCertificate refuses with an expired CA", async () => {
  const t = NOW.getTime();
  const expired = await makeCa({ notBefore: new Date(t - 10 * DAY), notAfter: new Date(t - DAY) });
  const csr = await makeCsr();
  await assert.rejects(
    () => signCertificate(expired, csr, { usages: CLIENT_USAGES, now: NOW }),
    (err: unknown) =>
      err instanceof SigningError && err.kind === "signer" &&
      /the signer has expired/.test(err.message),
  );
  // Expiring within the backdate: notBefore is before it, but now is not.
  const justExpired = await makeCa({
    notBefore: new Date(t - 10 * DAY),
    notAfter: new Date(t - MINUTE),
  });
  await assert.rejects(
    () => signCertificate(justExpired, csr, { usages: CLIENT_USAGES, now: NOW }),
    (err: unknown) =>
      err instanceof SigningError && err.kind === "signer" &&
      /refusing to sign a certificate that expired in the past/.test(err.message),
  );
});

Deno.test("signCertificate refuses bad signatures, unknown usages and cert sign", async () => {
  const ca = await caForNow();
  const csr = await makeCsr({ kind: "RSA" });
  const der = new Uint8Array(csr.rawData);
  der[der.length - 1] ^= 0xff; // in the signature value
  const tampered = new x509.Pkcs10CertificateRequest(der);
  const isRequestError = (text: RegExp) => (err: unknown) =>
    err instanceof SigningError && err.kind === "request" && text.test(err.message);
  await assert.rejects(
    () => signCertificate(ca, tampered, { usages: CLIENT_USAGES, now: NOW }),
    isRequestError(/unable to verify certificate request signature/),
  );
  await assert.rejects(
    () => signCertificate(ca, csr, { usages: ["client auth", "flying"], now: NOW }),
    isRequestError(/unrecognized usage values: "flying"/),
  );
  await assert.rejects(
    () => signCertificate(ca, csr, { usages: ["cert sign", "client auth"], now: NOW }),
    isRequestError(/cert sign/),
  );
});

Deno.test("signCertificate appends intermediates, never the root", async () => {
  const root = await caForNow();
  const intermediate = await makeCa({
    name: "CN=intermediate-1",
    parent: root,
    notBefore: new Date(NOW.getTime() - DAY),
    notAfter: new Date(NOW.getTime() + 1000 * DAY),
  });
  const intermediate2 = await makeCa({
    name: "CN=intermediate-2",
    parent: intermediate,
    notBefore: new Date(NOW.getTime() - DAY),
    notAfter: new Date(NOW.getTime() + 500 * DAY),
  });
  const csr = await makeCsr();

  // Signed by an intermediate whose chain holds the root: leaf, intermediate.
  let certs = certsOf(
    await signCertificate(
      { ...intermediate, chain: [root.cert] },
      csr,
      { usages: CLIENT_USAGES, now: NOW },
    ),
  );
  assert.deepEqual(certs.map((c) => c.subject), ["CN=alice, O=dev", "CN=intermediate-1"]);
  assert(await verifies(certs[0], intermediate.cert));
  assert(await verifies(certs[1], root.cert));

  // Two levels, loaded from PEM: leaf, intermediate-2, intermediate-1.
  const loaded = await loadSigningCA(
    intermediate2.certPem + intermediate.certPem + root.certPem,
    encodePem("PRIVATE KEY", await crypto.subtle.exportKey("pkcs8", intermediate2.key)),
  );
  assert.equal(loaded.chain?.length, 2);
  certs = certsOf(await signCertificate(loaded, csr, { usages: CLIENT_USAGES, now: NOW }));
  assert.deepEqual(certs.map((c) => c.subject), [
    "CN=alice, O=dev",
    "CN=intermediate-2",
    "CN=intermediate-1",
  ]);
  assert(await verifies(certs[0], intermediate2.cert));
  // Capped at the signing certificate's notAfter (500 days), not the root's.
  assert.equal(certs[0].notAfter.getTime(), NOW.getTime() + 365 * DAY - BACKDATE_MS);
});

Deno.test("signCertificate: the authority key identifier is computed when the CA has no SKI", async () => {
  const ca = await makeCa({
    ski: false,
    notBefore: new Date(NOW.getTime() - DAY),
    notAfter: new Date(NOW.getTime() + DAY * 30),
  });
  const [cert] = certsOf(
    await signCertificate(ca, await makeCsr(), { usages: CLIENT_USAGES, now: NOW }),
  );
  const aki = new x509.AuthorityKeyIdentifierExtension(ext(cert, "2.5.29.35")!.rawData);
  const expected = await x509.SubjectKeyIdentifierExtension.create(ca.cert.publicKey);
  assert.equal(aki.keyId, expected.keyId);
});

// ---------------------------------------------------------------------------------------
// Loading CAs

/** The content of the OCTET STRING of a PKCS#8 PrivateKeyInfo (PKCS#1 or SEC1 key). */
function pkcs8Inner(der: Uint8Array): Uint8Array {
  const children = derChildren(der);
  const octets = children.find((c) => c.tag === 0x04)!;
  return octets.content;
}

function derChildren(der: Uint8Array): { tag: number; bytes: Uint8Array; content: Uint8Array }[] {
  const read = (at: number) => {
    let len = der[at + 1];
    let start = at + 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      len = 0;
      for (let i = 0; i < n; i++) len = (len << 8) | der[start + i];
      start += n;
    }
    return { tag: der[at], start, end: start + len };
  };
  const outer = read(0);
  const out = [];
  for (let at = outer.start; at < outer.end;) {
    const c = read(at);
    out.push({ tag: c.tag, bytes: der.subarray(at, c.end), content: der.subarray(c.start, c.end) });
    at = c.end;
  }
  return out;
}

function derSeq(parts: Uint8Array[]): Uint8Array {
  const body = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    body.set(p, at);
    at += p.length;
  }
  const len = body.length < 0x80 ? [body.length] : [0x81, body.length];
  return new Uint8Array([0x30, ...len, ...body]);
}

/** A SEC1 EC key with the [0] curve parameters, as `openssl ecparam -genkey` writes it. */
function sec1WithParams(sec1: Uint8Array, curveOid: number[]): Uint8Array {
  const [version, priv, ...rest] = derChildren(sec1).map((c) => c.bytes);
  const params = new Uint8Array([0xa0, curveOid.length, ...curveOid]);
  return derSeq([version, priv, params, ...rest.filter((r) => r[0] !== 0xa0)]);
}

async function pkcs8Of(key: CryptoKey): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.exportKey("pkcs8", key));
}

Deno.test("loadSigningCA reads PKCS#8, PKCS#1 RSA and SEC1 EC keys", async () => {
  const csr = await makeCsr();
  const check = async (ca: TestCa, keyPem: string) => {
    const loaded = await loadSigningCA(ca.certPem, keyPem);
    assert.equal(loaded.chain, undefined);
    const [cert] = certsOf(
      await signCertificate(loaded, csr, { usages: CLIENT_USAGES, now: NOW }),
    );
    assert(await verifies(cert, ca.cert));
    return cert;
  };

  const p256 = await caForNow();
  await check(p256, encodePem("PRIVATE KEY", await pkcs8Of(p256.key)));
  const sec1 = pkcs8Inner(await pkcs8Of(p256.key));
  await check(p256, encodePem("EC PRIVATE KEY", sec1));
  const p256Oid = [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
  await check(p256, encodePem("EC PRIVATE KEY", sec1WithParams(sec1, p256Oid)));

  const p384 = await makeCa({
    kind: "P-384",
    notBefore: new Date(NOW.getTime() - DAY),
    notAfter: new Date(NOW.getTime() + 30 * DAY),
  });
  const p384Sec1 = pkcs8Inner(await pkcs8Of(p384.key));
  const p384Oid = [0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22];
  const cert384 = await check(
    p384,
    encodePem("EC PRIVATE KEY", sec1WithParams(p384Sec1, p384Oid)),
  );
  assert.deepEqual(cert384.signatureAlgorithm, { name: "ECDSA", hash: { name: "SHA-384" } });
  // A SEC1 key naming another curve than the certificate's is refused.
  await assert.rejects(
    () =>
      loadSigningCA(p384.certPem, encodePem("EC PRIVATE KEY", sec1WithParams(p384Sec1, p256Oid))),
    /EC PRIVATE KEY block is malformed: its curve is not the certificate's P-384/,
  );

  const rsa = await makeCa({
    kind: "RSA",
    notBefore: new Date(NOW.getTime() - DAY),
    notAfter: new Date(NOW.getTime() + 30 * DAY),
  });
  await check(rsa, encodePem("RSA PRIVATE KEY", pkcs8Inner(await pkcs8Of(rsa.key))));
  const certRsa = await check(rsa, encodePem("PRIVATE KEY", await pkcs8Of(rsa.key)));
  assert.equal(certRsa.signatureAlgorithm.name, "RSASSA-PKCS1-v1_5");

  const ed = await makeCa({
    kind: "Ed25519",
    notBefore: new Date(NOW.getTime() - DAY),
    notAfter: new Date(NOW.getTime() + 30 * DAY),
  });
  await check(ed, encodePem("PRIVATE KEY", await pkcs8Of(ed.key)));
});

Deno.test("loadSigningCA refuses what cannot sign", async () => {
  const ca = await caForNow();
  const other = await caForNow();
  const keyPem = encodePem("PRIVATE KEY", await pkcs8Of(ca.key));
  await assert.rejects(() => loadSigningCA("", keyPem), /no valid PEM CERTIFICATE block/);
  await assert.rejects(
    async () => loadSigningCA(ca.certPem, encodePem("PRIVATE KEY", await pkcs8Of(other.key))),
    /does not match the certificate/,
  );
  await assert.rejects(() => loadSigningCA(ca.certPem, ""), /no valid PEM PRIVATE KEY block/);
  await assert.rejects(
    () =>
      loadSigningCA(
        ca.certPem,
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n",
      ),
    /encrypted/,
  );
  const rsa = await makeCa({ kind: "RSA" });
  await assert.rejects(
    () => loadSigningCA(rsa.certPem, keyPem),
    /not a RSASSA-PKCS1-v1_5 key like the certificate's/,
  );

  // A leaf certificate is not a CA.
  const leaf = certsOf(
    await signCertificate(ca, await makeCsr(), { usages: CLIENT_USAGES }),
  )[0];
  await assert.rejects(
    () => loadSigningCA(encodePem("CERTIFICATE", leaf.rawData), keyPem),
    /is not a CA/,
  );
});

Deno.test("parseCertificateRequest takes PEM text or bytes with a CERTIFICATE REQUEST first", async () => {
  const csr = await makeCsr();
  const pem = csrPem(csr);
  assert.equal(parseCertificateRequest(pem).subject, csr.subject);
  assert.equal(parseCertificateRequest(new TextEncoder().encode(pem)).subject, csr.subject);
  assert.throws(
    () => parseCertificateRequest(encodePem("CERTIFICATE", csr.rawData)),
    /PEM block type must be CERTIFICATE REQUEST/,
  );
  assert.throws(() => parseCertificateRequest("garbage"), SigningError);
  assert.throws(
    () => parseCertificateRequest(encodePem("CERTIFICATE REQUEST", new Uint8Array([1, 2, 3]))),
    /does not parse/,
  );
});

// ---------------------------------------------------------------------------------------
// Signer rules

const NODE = "O=system:nodes, CN=system:node:worker-1";

Deno.test("rules: nobody gets a CA certificate", async () => {
  const caRequest = await makeCsr({
    name: NODE,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
    sans: [{ type: "dns", value: "worker-1" }],
  });
  for (const signer of WELL_KNOWN_SIGNERS) {
    expectFailure(
      checkSignerRules(signer, await makeCsr({ name: NODE }), [
        "digital signature",
        "cert sign",
        "client auth",
      ]),
      /usage "cert sign" is not allowed/,
    );
    const usages = signer === SIGNER_NODEAGENT_SERVING ? SERVING_USAGES : CLIENT_USAGES;
    expectFailure(
      checkSignerRules(signer, caRequest, usages),
      /basicConstraints extension with CA:true is not allowed/,
    );
  }
  // basicConstraints CA:false in the request is fine.
  const notCa = await makeCsr({
    extensions: [new x509.BasicConstraintsExtension(false, undefined, true)],
  });
  assert.deepEqual(checkSignerRules(SIGNER_APISERVER_CLIENT, notCa, CLIENT_USAGES), { ok: true });
});

Deno.test("rules: apiserver-client takes client usages only, any subject", async () => {
  const csr = await makeCsr({ name: "CN=anyone, O=whatever" });
  const s = SIGNER_APISERVER_CLIENT;
  assert.deepEqual(checkSignerRules(s, csr, CLIENT_USAGES), { ok: true });
  assert.deepEqual(checkSignerRules(s, csr, ["client auth"]), { ok: true });
  assert.deepEqual(checkSignerRules(s, csr, ["digital signature", "client auth"]), { ok: true });
  expectFailure(
    checkSignerRules(s, csr, ["digital signature", "client auth", "server auth"]),
    "invalid usage for client certificate: server auth",
  );
  expectFailure(
    checkSignerRules(s, csr, ["signing", "client auth"]),
    "invalid usage for client certificate: signing",
  );
  expectFailure(
    checkSignerRules(s, csr, ["digital signature", "key encipherment"]),
    "missing required usage for client certificate: client auth",
  );
  // SANs are allowed (kube does not check them for this signer).
  const withSans = await makeCsr({ sans: [{ type: "email", value: "a@example.com" }] });
  assert.deepEqual(checkSignerRules(s, withSans, CLIENT_USAGES), { ok: true });
});

Deno.test("rules: apiserver-client-nodeagent", async () => {
  const s = SIGNER_APISERVER_CLIENT_NODEAGENT;
  const good = await makeCsr({ name: NODE });
  assert.deepEqual(checkSignerRules(s, good, CLIENT_USAGES), { ok: true });
  assert.deepEqual(checkSignerRules(s, good, ["digital signature", "client auth"]), { ok: true });
  // Order of the request's usages does not matter.
  assert.deepEqual(
    checkSignerRules(s, good, ["client auth", "key encipherment", "digital signature"]),
    { ok: true },
  );

  const subject = async (name: string) =>
    checkSignerRules(s, await makeCsr({ name }), CLIENT_USAGES);
  const badOrg = "subject organization is not system:nodes";
  expectFailure(await subject("O=system:masters, CN=system:node:worker-1"), badOrg);
  expectFailure(await subject("CN=system:node:worker-1"), badOrg);
  expectFailure(await subject("O=system:nodes, O=system:masters, CN=system:node:worker-1"), badOrg);
  const badCn = "subject common name does not begin with system:node:";
  expectFailure(await subject("O=system:nodes, CN=worker-1"), badCn);
  expectFailure(await subject("O=system:nodes, CN=system:nodes:worker-1"), badCn);
  expectFailure(await subject("O=system:nodes"), badCn);
  expectFailure(
    await subject("O=system:nodes, CN=system:node:"),
    "subject common name has no node name after system:node:",
  );
  expectFailure(
    await subject("O=system:nodes, CN=system:node:a, CN=admin"),
    "subject has more than one common name",
  );

  const sans = async (san: x509.JsonGeneralName) =>
    checkSignerRules(s, await makeCsr({ name: NODE, sans: [san] }), CLIENT_USAGES);
  expectFailure(
    await sans({ type: "dns", value: "worker-1" }),
    "DNS subjectAltNames are not allowed",
  );
  expectFailure(
    await sans({ type: "email", value: "n@example.com" }),
    "Email subjectAltNames are not allowed",
  );
  expectFailure(
    await sans({ type: "ip", value: "10.0.0.1" }),
    "IP subjectAltNames are not allowed",
  );
  expectFailure(
    await sans({ type: "url", value: "spiffe://x/y" }),
    "URI subjectAltNames are not allowed",
  );

  const usageError = "usages did not match [client auth digital signature key encipherment]";
  expectFailure(checkSignerRules(s, good, ["client auth"]), usageError);
  expectFailure(checkSignerRules(s, good, ["key encipherment", "client auth"]), usageError);
  expectFailure(checkSignerRules(s, good, ["digital signature", "server auth"]), usageError);
  expectFailure(checkSignerRules(s, good, [...CLIENT_USAGES, "server auth"]), usageError);
});

Deno.test("rules: nodeagent-serving", async () => {
  const s = SIGNER_NODEAGENT_SERVING;
  const dns = { type: "dns", value: "worker-1.example.com" } as const;
  const ip = { type: "ip", value: "10.0.0.7" } as const;
  const csr = (name: string, sans: x509.JsonGeneralName[]) => makeCsr({ name, sans });

  assert.deepEqual(checkSignerRules(s, await csr(NODE, [dns, ip]), SERVING_USAGES), { ok: true });
  assert.deepEqual(checkSignerRules(s, await csr(NODE, [ip]), SERVING_USAGES), { ok: true });
  assert.deepEqual(
    checkSignerRules(s, await csr(NODE, [dns]), ["digital signature", "server auth"]),
    { ok: true },
  );

  expectFailure(
    checkSignerRules(s, await makeCsr({ name: NODE }), SERVING_USAGES),
    "DNS or IP subjectAltName is required",
  );
  expectFailure(
    checkSignerRules(
      s,
      await csr(NODE, [dns, { type: "email", value: "n@example.com" }]),
      SERVING_USAGES,
    ),
    "Email subjectAltNames are not allowed",
  );
  expectFailure(
    checkSignerRules(
      s,
      await csr(NODE, [dns, { type: "url", value: "https://n.example" }]),
      SERVING_USAGES,
    ),
    "URI subjectAltNames are not allowed",
  );
  expectFailure(
    checkSignerRules(s, await csr("O=dev, CN=system:node:worker-1", [dns]), SERVING_USAGES),
    "subject organization is not system:nodes",
  );
  expectFailure(
    checkSignerRules(s, await csr("O=system:nodes, CN=worker-1", [dns]), SERVING_USAGES),
    "subject common name does not begin with system:node:",
  );
  const usageError = "usages did not match [digital signature key encipherment server auth]";
  const good = await csr(NODE, [dns]);
  expectFailure(checkSignerRules(s, good, CLIENT_USAGES), usageError);
  expectFailure(checkSignerRules(s, good, ["server auth"]), usageError);
  expectFailure(checkSignerRules(s, good, [...SERVING_USAGES, "client auth"]), usageError);
});

Deno.test("rules: other signer names are not recognized", async () => {
  expectFailure(
    checkSignerRules("example.com/custom", await makeCsr(), CLIENT_USAGES),
    'unrecognized signerName: "example.com/custom"',
  );
});

// ---------------------------------------------------------------------------------------
// signRequest

Deno.test("signRequest issues, fails or ignores", async () => {
  const ca = await caForNow();
  const config = { duration: 30 * DAY, cas: { [SIGNER_APISERVER_CLIENT]: ca } };

  const csr = await makeCsr({ name: "CN=carol, O=dev" });
  const issued = await signRequest(config, {
    signerName: SIGNER_APISERVER_CLIENT,
    request: csrPem(csr),
    usages: CLIENT_USAGES,
    expirationSeconds: 90 * 86400,
  }, NOW);
  assert.equal(issued.status, "issued");
  if (issued.status !== "issued") return;
  const [cert] = certsOf(issued.certificate);
  assert(await verifies(cert, ca.cert));
  assert.equal(cert.subject, "CN=carol, O=dev");
  assert.equal(cert.notAfter.getTime(), NOW.getTime() + 30 * DAY - BACKDATE_MS);

  // A rule broken: Failed with kube's reason.
  assert.deepEqual(
    await signRequest(config, {
      signerName: SIGNER_APISERVER_CLIENT,
      request: new TextEncoder().encode(csrPem(csr)),
      usages: SERVING_USAGES,
    }, NOW),
    {
      status: "failed",
      reason: SIGNER_VALIDATION_FAILURE,
      message: "invalid usage for client certificate: server auth",
    },
  );

  // A signature that does not verify: Failed.
  const der = new Uint8Array(csr.rawData);
  der[der.length - 1] ^= 0xff;
  const bad = await signRequest(config, {
    signerName: SIGNER_APISERVER_CLIENT,
    request: encodePem("CERTIFICATE REQUEST", der),
    usages: CLIENT_USAGES,
  }, NOW);
  assert.equal(bad.status, "failed");
  assert.match(bad.status === "failed" ? bad.message : "", /unable to verify/);

  // Not PEM: Failed.
  const notPem = await signRequest(config, {
    signerName: SIGNER_APISERVER_CLIENT,
    request: "nonsense",
    usages: CLIENT_USAGES,
  }, NOW);
  assert.equal(notPem.status, "failed");

  // Custom signer, or no CA for the signer: left alone.
  const custom = await signRequest(config, {
    signerName: "example.com/custom",
    request: csr,
    usages: CLIENT_USAGES,
  }, NOW);
  assert.equal(custom.status, "ignored");
  const noCa = await signRequest(config, {
    signerName: SIGNER_NODEAGENT_SERVING,
    request: csr,
    usages: SERVING_USAGES,
  }, NOW);
  assert.equal(noCa.status, "ignored");

  // One CA for every signer via a function; a node serving certificate.
  const serving = await signRequest({ cas: () => ca }, {
    signerName: SIGNER_NODEAGENT_SERVING,
    request: await makeCsr({
      kind: "P-384",
      name: NODE,
      sans: [{ type: "ip", value: "10.1.1.1" }],
    }),
    usages: ["digital signature", "server auth"],
  }, NOW);
  assert.equal(serving.status, "issued");

  // An expired CA throws (retry later) rather than failing the request.
  const expired = await makeCa({
    notBefore: new Date(NOW.getTime() - 10 * DAY),
    notAfter: new Date(NOW.getTime() - DAY),
  });
  await assert.rejects(
    () =>
      signRequest({ cas: () => expired }, {
        signerName: SIGNER_APISERVER_CLIENT,
        request: csr,
        usages: CLIENT_USAGES,
      }, NOW),
    (err: unknown) => err instanceof SigningError && err.kind === "signer",
  );
});
