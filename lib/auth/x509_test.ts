import "reflect-metadata";
import assert from "node:assert/strict";
import * as x509 from "@peculiar/x509";
import {
  ClientCAVerifier,
  clientCertificateAuthenticator,
  CREDENTIAL_ID_KEY,
  parseCertificateBundle,
  UID_OID,
  type VerifiedClient,
} from "./x509.ts";

x509.cryptoProvider.set(crypto);

const EC = { name: "ECDSA", namedCurve: "P-256" } as const;
const SIGN = { name: "ECDSA", hash: "SHA-256" } as const;
const DAY = 86_400_000;
const CLIENT_AUTH = x509.ExtendedKeyUsage.clientAuth;
const SERVER_AUTH = x509.ExtendedKeyUsage.serverAuth;

interface Issued {
  cert: x509.X509Certificate;
  key: CryptoKey;
  der: Uint8Array<ArrayBuffer>;
}

interface CertOptions {
  subject: string | x509.Name;
  /** Self-signed when absent. */
  issuer?: Issued;
  ca?: boolean;
  /** Extended key usages; none when `null`. @default [clientAuth] (CAs: none) */
  eku?: string[] | null;
  notBefore?: Date;
  notAfter?: Date;
}

let serial = 1;

async function make(o: CertOptions): Promise<Issued> {
  const keys = await crypto.subtle.generateKey(EC, true, ["sign", "verify"]);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(o.ca ?? false, undefined, true),
    new x509.KeyUsagesExtension(
      o.ca
        ? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature
        : x509.KeyUsageFlags.digitalSignature,
      true,
    ),
  ];
  const eku = o.eku === undefined ? (o.ca ? null : [CLIENT_AUTH]) : o.eku;
  if (eku) extensions.push(new x509.ExtendedKeyUsageExtension(eku));
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: (serial++).toString(16).padStart(2, "0"),
    subject: o.subject,
    issuer: o.issuer?.cert.subject ?? o.subject,
    notBefore: o.notBefore ?? new Date(now - DAY),
    notAfter: o.notAfter ?? new Date(now + DAY),
    publicKey: keys.publicKey,
    signingKey: o.issuer?.key ?? keys.privateKey,
    signingAlgorithm: SIGN,
    extensions,
  });
  return { cert, key: keys.privateKey, der: new Uint8Array(cert.rawData) };
}

const root = await make({ subject: "CN=root", ca: true });
const other = await make({ subject: "CN=other", ca: true });
const verifier = new ClientCAVerifier([root.cert]);

async function verify(...chain: Issued[]) {
  return await verifier.verify(chain.map((c) => c.der));
}

async function userOf(...chain: Issued[]) {
  const result = await verify(...chain);
  assert("client" in result, `not verified: ${"reason" in result ? result.reason : ""}`);
  return result.client.user;
}

async function reasonOf(...chain: Issued[]): Promise<string> {
  const result = await verify(...chain);
  assert("reason" in result, "verified, but should not be");
  return result.reason;
}

Deno.test("a certificate from the CA authenticates as CN with the O values as groups", async () => {
  const leaf = await make({ subject: "O=dev, O=ops, CN=alice", issuer: root });
  const user = await userOf(leaf);
  assert.equal(user.username, "alice");
  assert.deepEqual(user.groups, ["dev", "ops", "system:authenticated"]);
  assert.equal(user.uid, undefined);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", leaf.der));
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  assert.deepEqual(user.extra, { [CREDENTIAL_ID_KEY]: [`X509SHA256=${hex}`] });
});

Deno.test("the UID attribute is the user's uid; two of them authenticate nobody", async () => {
  const one = await make({
    subject: new x509.Name([{ CN: ["bob"] }, { [UID_OID]: ["uid-7"] }]),
    issuer: root,
  });
  assert.equal((await userOf(one)).uid, "uid-7");
  const two = await make({
    subject: new x509.Name([{ CN: ["bob"] }, { [UID_OID]: ["a"] }, { [UID_OID]: ["b"] }]),
    issuer: root,
  });
  assert.match(await reasonOf(two), /2 UIDs/);
});

Deno.test("the last CN is the user; no CN authenticates nobody", async () => {
  const two = await make({ subject: "CN=first, CN=second", issuer: root });
  assert.equal((await userOf(two)).username, "second");
  const none = await make({ subject: "O=dev", issuer: root });
  assert.equal(await reasonOf(none), "the certificate's subject has no common name");
});

Deno.test("a certificate from another CA, or self-signed, is not trusted", async () => {
  const foreign = await make({ subject: "CN=mallory", issuer: other });
  assert.match(await reasonOf(foreign), /CN=mallory is not signed by a trusted CA/);
  // Same issuer name, other key.
  const impostor = await make({ subject: "CN=root", ca: true });
  const forged = await make({ subject: "CN=mallory", issuer: impostor });
  assert.match(await reasonOf(forged), /not signed by a trusted CA/);
  const self = await make({ subject: "CN=mallory" });
  assert.match(await reasonOf(self), /not signed by a trusted CA/);
  // Presenting the other CA as an intermediate does not help.
  assert.match(await reasonOf(foreign, other), /not signed by a trusted CA/);
});

Deno.test("intermediates the client presents complete the chain when they are CAs", async () => {
  const mid = await make({ subject: "CN=mid", issuer: root, ca: true });
  const leaf = await make({ subject: "CN=carol", issuer: mid });
  assert.match(await reasonOf(leaf), /not signed by a trusted CA/);
  assert.equal((await userOf(leaf, mid)).username, "carol");
  // A client certificate cannot issue others.
  const notCA = await make({ subject: "CN=dave", issuer: root });
  const under = await make({ subject: "CN=eve", issuer: notCA });
  assert.match(await reasonOf(under, notCA), /not signed by a trusted CA/);
});

Deno.test("extended key usage: clientAuth, any or none; not serverAuth alone", async () => {
  const none = await make({ subject: "CN=a", issuer: root, eku: null });
  assert.equal((await userOf(none)).username, "a");
  const any = await make({ subject: "CN=b", issuer: root, eku: ["2.5.29.37.0"] });
  assert.equal((await userOf(any)).username, "b");
  const both = await make({ subject: "CN=c", issuer: root, eku: [SERVER_AUTH, CLIENT_AUTH] });
  assert.equal((await userOf(both)).username, "c");
  const server = await make({ subject: "CN=d", issuer: root, eku: [SERVER_AUTH] });
  assert.match(await reasonOf(server), /CN=d: extended key usage does not allow client auth/);
  // An intermediate restricted to serverAuth restricts what it issues.
  const mid = await make({ subject: "CN=mid", issuer: root, ca: true, eku: [SERVER_AUTH] });
  const leaf = await make({ subject: "CN=e", issuer: mid });
  assert.match(await reasonOf(leaf, mid), /CN=mid: extended key usage/);
});

Deno.test("only within the validity of every certificate of the chain", async () => {
  const now = Date.now();
  const expired = await make({
    subject: "CN=old",
    issuer: root,
    notBefore: new Date(now - 3 * DAY),
    notAfter: new Date(now - DAY),
  });
  assert.match(await reasonOf(expired), /^the chain is valid from .* to /);
  const future = await make({
    subject: "CN=new",
    issuer: root,
    notBefore: new Date(now + DAY),
    notAfter: new Date(now + 3 * DAY),
  });
  assert.match(await reasonOf(future), /^the chain is valid from /);
  const shortRoot = await make({
    subject: "CN=short",
    ca: true,
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + 60_000),
  });
  const leaf = await make({ subject: "CN=f", issuer: shortRoot, notAfter: new Date(now + DAY) });
  const result = await new ClientCAVerifier([shortRoot.cert]).verify([leaf.der]);
  assert("client" in result);
  assert.equal(result.client.notAfter.getTime(), shortRoot.cert.notAfter.getTime());
  const later = await new ClientCAVerifier([shortRoot.cert]).verify(
    [leaf.der],
    new Date(now + 120_000),
  );
  assert("reason" in later);
});

Deno.test("a bundle trusts each of its CAs", async () => {
  const pem = root.cert.toString("pem") + "\n" + other.cert.toString("pem") + "\n";
  const both = ClientCAVerifier.fromPem(pem);
  for (const issuer of [root, other]) {
    const leaf = await make({ subject: "CN=x", issuer });
    assert("client" in await both.verify([leaf.der]));
  }
  assert.throws(() => parseCertificateBundle("nothing"), /has no valid PEM CERTIFICATE block/);
  assert.equal(
    (await verifier.verify([new Uint8Array([1, 2, 3])]) as { reason: string }).reason,
    "the certificate does not parse",
  );
  assert.equal((await verifier.verify([]) as { reason: string }).reason, "no certificate");
});

Deno.test("the authenticator answers for a request's client while its chain is valid", async () => {
  const t0 = new Date("2030-01-01T00:00:00Z");
  const client: VerifiedClient = {
    user: { username: "alice", groups: ["system:authenticated"] },
    notBefore: t0,
    notAfter: new Date(t0.getTime() + DAY),
  };
  const req = new Request("https://x/");
  let now = new Date(t0.getTime() + 1000);
  const authn = clientCertificateAuthenticator((r) => r === req ? client : undefined, () => now);
  assert.equal(await authn.authenticate(req), client.user);
  assert.equal(await authn.authenticate(new Request("https://x/")), undefined);
  now = new Date(t0.getTime() + 2 * DAY);
  assert.equal(await authn.authenticate(req), undefined);
  now = new Date(t0.getTime() - 1);
  assert.equal(await authn.authenticate(req), undefined);
});
