/** The signer's names, usages and durations, and {@link signRequest}: issue, fail or ignore. */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import assert from "node:assert/strict";
import {
  encodePem,
  isWellKnownSigner,
  SIGNER_APISERVER_CLIENT,
  SIGNER_NODEAGENT_SERVING,
  WELL_KNOWN_SIGNERS,
} from "../api/mod.ts";
import {
  BACKDATE_MS,
  certificateDuration,
  DEFAULT_SIGNING_DURATION_MS,
  keyUsagesFromStrings,
  SIGNER_VALIDATION_FAILURE,
  SigningError,
  signRequest,
} from "./signer.ts";
import {
  caForNow,
  certsOf,
  CLIENT_USAGES,
  csrPem,
  DAY,
  HOUR,
  makeCa,
  makeCsr,
  MINUTE,
  NODE,
  NOW,
  SERVING_USAGES,
  verifies,
} from "./signer_testdata.ts";

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
