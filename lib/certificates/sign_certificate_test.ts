/** {@link signCertificate}: what a certificate issued for a request holds, and what is refused. */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import assert from "node:assert/strict";
import { decodePem, encodePem } from "../api/mod.ts";
import { BACKDATE_MS, DEFAULT_SIGNING_DURATION_MS, SigningError } from "./signer_rules.ts";
import { signCertificate } from "./sign_certificate.ts";
import { loadSigningCA } from "./signing_ca.ts";
import {
  caForNow,
  certsOf,
  CLIENT_USAGES,
  DAY,
  ekuOf,
  ext,
  HOUR,
  keyUsageOf,
  makeCa,
  makeCsr,
  MINUTE,
  NOW,
  sansOf,
  SERVING_USAGES,
  verifies,
} from "./signer_testdata.ts";

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
