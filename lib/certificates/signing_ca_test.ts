/** {@link loadSigningCA}: CAs from PEM keys of every kind, and requests from PEM. */

import "reflect-metadata";
import assert from "node:assert/strict";
import { encodePem } from "../api/mod.ts";
import { parseCertificateRequest, SigningError } from "./signer_rules.ts";
import { signCertificate } from "./sign_certificate.ts";
import { loadSigningCA } from "./signing_ca.ts";
import {
  caForNow,
  certsOf,
  CLIENT_USAGES,
  csrPem,
  DAY,
  makeCa,
  makeCsr,
  NOW,
  type TestCa,
  verifies,
} from "./signer_testdata.ts";

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
