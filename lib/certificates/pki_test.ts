import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { ConfigError } from "../config/mod.ts";
import { certificateNames, ensurePki, issueClientCertificate, servingNames } from "./pki.ts";
import { ensureAdminToken } from "./admin_credentials.ts";
import { writeKubeconfig } from "./kubeconfig.ts";
import { ADMIN_USER, decodePem } from "../api/mod.ts";

async function tempDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "pki_test_" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

function parseCert(pem: string): x509.X509Certificate {
  return new x509.X509Certificate(decodePem(pem).find((b) => b.type === "CERTIFICATE")!.der);
}

function mode(path: string): number {
  return Deno.statSync(path).mode! & 0o777;
}

const quiet = () => {};
const silent = { info: quiet };

/** Assert that `fn` rejects with an instance of `cls` whose message contains `text`. */
async function rejectsWith(
  fn: () => Promise<unknown>,
  cls: new (...args: never[]) => Error,
  text: string,
): Promise<void> {
  await assert.rejects(fn, (err: unknown) => {
    assert(err instanceof cls, `expected ${cls.name}, got ${err}`);
    assert(
      err.message.includes(text),
      `message ${JSON.stringify(err.message)} lacks ${JSON.stringify(text)}`,
    );
    return true;
  });
}

Deno.test("ensurePki generates a CA and a serving certificate on first start", async () => {
  await using dir = await tempDir();
  const pki = await ensurePki({
    dataDir: dir.path,
    sans: ["10.0.0.7", "api.example.com", "fd00::1"],
    bindAddress: "192.168.1.5",
    logger: silent,
  });
  assert(pki.generated);
  const pkiDir = join(dir.path, "pki");
  for (const name of ["ca.crt", "ca.key", "serving.crt", "serving.key"]) {
    assert(Deno.statSync(join(pkiDir, name)).isFile, name);
  }
  assert.deepEqual(mode(join(pkiDir, "ca.key")), 0o600);
  assert.deepEqual(mode(join(pkiDir, "serving.key")), 0o600);
  assert.deepEqual(mode(pkiDir), 0o700);
  assert.match(pki.caKeyPem, /^-----BEGIN PRIVATE KEY-----\n/);
  assert.match(pki.servingKeyPem, /^-----BEGIN PRIVATE KEY-----\n/);
  assert.deepEqual(pki.servingCaPem, pki.caCertPem);

  const ca = parseCert(pki.caCertPem);
  assert.deepEqual(ca.subject, "CN=platform-ca");
  assert(await ca.isSelfSigned());
  assert.deepEqual(ca.getExtension(x509.BasicConstraintsExtension)?.ca, true);
  const caUsage = ca.getExtension(x509.KeyUsagesExtension)!.usages;
  assert(caUsage & x509.KeyUsageFlags.keyCertSign);
  assert.deepEqual(ca.publicKey.algorithm.name, "ECDSA");
  const caYears = (ca.notAfter.getTime() - Date.now()) / (365 * 86400_000);
  assert(caYears > 9.9 && caYears <= 10.01, `CA valid for ${caYears} years`);

  const serving = parseCert(pki.servingCertPem);
  assert(await serving.verify({ publicKey: ca.publicKey, signatureOnly: true }));
  assert.deepEqual(serving.issuer, ca.subject);
  assert.deepEqual(serving.getExtension(x509.BasicConstraintsExtension)?.ca, false);
  assert.deepEqual(
    [...serving.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? []].map(String),
    [
      x509.ExtendedKeyUsage.serverAuth,
    ],
  );
  const days = (serving.notAfter.getTime() - Date.now()) / 86400_000;
  assert(days > 364 && days <= 365.01, `serving cert valid for ${days} days`);
  assert.deepEqual(certificateNames(serving), [
    { type: "dns", value: "localhost" },
    { type: "ip", value: "127.0.0.1" },
    { type: "ip", value: "192.168.1.5" },
    { type: "ip", value: "10.0.0.7" },
    { type: "dns", value: "api.example.com" },
    { type: "ip", value: "fd00::1" },
  ]);
});

Deno.test("ensurePki reuses the PKI on the next start", async () => {
  await using dir = await tempDir();
  const opts = { dataDir: dir.path, sans: ["a.example"], bindAddress: "127.0.0.1", logger: silent };
  const first = await ensurePki(opts);
  const second = await ensurePki(opts);
  assert.deepEqual(second.generated, false);
  assert.deepEqual(second.caCertPem, first.caCertPem);
  assert.deepEqual(second.caKeyPem, first.caKeyPem);
  assert.deepEqual(second.servingCertPem, first.servingCertPem);
  assert.deepEqual(second.servingKeyPem, first.servingKeyPem);
  // Asking for fewer names keeps the certificate that covers more.
  const third = await ensurePki({ ...opts, sans: [] });
  assert.deepEqual(third.servingCertPem, first.servingCertPem);
});

Deno.test("ensurePki regenerates the serving certificate for new SANs, same CA", async () => {
  await using dir = await tempDir();
  const logs: string[] = [];
  const logger = { info: (m: string) => logs.push(m) };
  const first = await ensurePki({ dataDir: dir.path, sans: [], bindAddress: "127.0.0.1", logger });
  logs.length = 0;
  const second = await ensurePki({
    dataDir: dir.path,
    sans: ["new.example.com", "10.1.2.3"],
    bindAddress: "127.0.0.1",
    logger,
  });
  assert(second.generated);
  assert.deepEqual(second.caCertPem, first.caCertPem);
  assert.notDeepEqual(second.servingCertPem, first.servingCertPem);
  const names = certificateNames(parseCert(second.servingCertPem)).map((n) => n.value);
  assert(names.includes("new.example.com") && names.includes("10.1.2.3"));
  assert.deepEqual(logs.length, 1);
  assert.match(
    logs[0],
    /regenerating .*serving\.crt: it does not cover new\.example\.com, 10\.1\.2\.3/,
  );
  // On disk too.
  assert.deepEqual(
    await Deno.readTextFile(join(dir.path, "pki", "serving.crt")),
    second.servingCertPem,
  );
});

Deno.test("ensurePki renews a serving certificate close to expiry", async () => {
  await using dir = await tempDir();
  const longAgo = new Date(Date.now() - 360 * 86400_000);
  const opts = { dataDir: dir.path, sans: [], bindAddress: "127.0.0.1", logger: silent };
  const old = await ensurePki({ ...opts, now: () => longAgo });
  const logs: string[] = [];
  const fresh = await ensurePki({ ...opts, logger: { info: (m) => logs.push(m) } });
  assert.notDeepEqual(fresh.servingCertPem, old.servingCertPem);
  assert.deepEqual(fresh.caCertPem, old.caCertPem);
  assert.match(logs[0], /it expires on/);
});

Deno.test("servingNames skips wildcard bind addresses and dedupes", () => {
  assert.deepEqual(servingNames("0.0.0.0", ["localhost", "127.0.0.1", "::"]), [
    { type: "dns", value: "localhost" },
    { type: "ip", value: "127.0.0.1" },
  ]);
  assert.deepEqual(servingNames("::", ["Host.Example"]).at(-1), {
    type: "dns",
    value: "host.example",
  });
  assert.deepEqual(servingNames("my-host", [])[2], { type: "dns", value: "my-host" });
});

Deno.test("Deno.serve accepts the generated certificate and a TLS client verifies it", async () => {
  await using dir = await tempDir();
  const pki = await ensurePki({
    dataDir: dir.path,
    sans: [],
    bindAddress: "127.0.0.1",
    logger: silent,
  });
  const server = Deno.serve({
    cert: pki.servingCertPem,
    key: pki.servingKeyPem,
    port: 0,
    hostname: "127.0.0.1",
    onListen: quiet,
  }, () => new Response("ok"));
  try {
    const port = server.addr.port;
    for (const host of ["127.0.0.1", "localhost"]) {
      using client = Deno.createHttpClient({ caCerts: [pki.caCertPem] });
      const res = await fetch(`https://${host}:${port}/`, { client });
      assert.deepEqual(await res.text(), "ok");
    }
    // Without the CA the certificate is not trusted.
    await assert.rejects(() => fetch(`https://127.0.0.1:${port}/`));
    // And openssl agrees, when it is installed (verification only; nothing is generated).
    const openssl = await opensslVerify(join(dir.path, "pki", "ca.crt"), port);
    if (openssl !== undefined) assert.match(openssl, /Verify return code: 0 \(ok\)/);
  } finally {
    await server.shutdown();
  }
});

async function opensslVerify(caFile: string, port: number): Promise<string | undefined> {
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command("openssl", {
      args: [
        "s_client",
        "-connect",
        `127.0.0.1:${port}`,
        "-CAfile",
        caFile,
        "-verify_return_error",
        "-verify_ip",
        "127.0.0.1",
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch {
    return undefined; // not installed
  }
  assert(out.success, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

Deno.test("ensurePki with --tls-cert-file: bad PEM, missing partner, mismatch", async () => {
  await using dir = await tempDir();
  await using other = await tempDir();
  const otherPki = await ensurePki({
    dataDir: other.path,
    sans: [],
    bindAddress: "127.0.0.1",
    logger: silent,
  });
  const bad = join(dir.path, "x.pem");
  await Deno.writeTextFile(
    bad,
    "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n",
  );
  const key = join(other.path, "pki", "serving.key");
  const cert = join(other.path, "pki", "serving.crt");
  const base = { dataDir: dir.path, sans: [], bindAddress: "127.0.0.1", logger: silent };

  await rejectsWith(
    () => ensurePki({ ...base, tlsCertFile: bad, tlsPrivateKeyFile: key }),
    ConfigError,
    `--tls-cert-file: "${bad}" has no valid PEM CERTIFICATE block`,
  );
  await rejectsWith(
    () => ensurePki({ ...base, tlsCertFile: cert }),
    ConfigError,
    "--tls-cert-file: --tls-private-key-file must be given too",
  );
  await rejectsWith(
    () => ensurePki({ ...base, tlsCertFile: cert, tlsPrivateKeyFile: join(dir.path, "nope") }),
    ConfigError,
    `--tls-private-key-file: cannot read "${join(dir.path, "nope")}": No such file or directory`,
  );
  await rejectsWith(
    () =>
      ensurePki({
        ...base,
        tlsCertFile: cert,
        tlsPrivateKeyFile: join(other.path, "pki", "ca.key"),
      }),
    ConfigError,
    `--tls-private-key-file: "${join(other.path, "pki", "ca.key")}" does not match the ` +
      `certificate in "${cert}"`,
  );
  await rejectsWith(
    () => ensurePki({ ...base, tlsCertFile: cert, tlsPrivateKeyFile: cert }),
    ConfigError,
    "has no valid PEM PRIVATE KEY block",
  );
  assert(otherPki.generated);
});

Deno.test("ensurePki with --tls-cert-file: serves it and picks what clients trust", async () => {
  await using dir = await tempDir();
  await using other = await tempDir();
  const otherPki = await ensurePki({
    dataDir: other.path,
    sans: [],
    bindAddress: "127.0.0.1",
    logger: silent,
  });
  const o = (name: string) => join(other.path, "pki", name);
  const base = { dataDir: dir.path, sans: [], bindAddress: "127.0.0.1" };

  // Leaf only, issuer not in the file: no CA for the kubeconfig, and a note says so.
  const logs: string[] = [];
  const leafOnly = await ensurePki({
    ...base,
    tlsCertFile: o("serving.crt"),
    tlsPrivateKeyFile: o("serving.key"),
    logger: { info: (m) => logs.push(m) },
  });
  assert.deepEqual(leafOnly.servingCertPem, otherPki.servingCertPem);
  assert.deepEqual(leafOnly.servingKeyPem, otherPki.servingKeyPem);
  assert.deepEqual(leafOnly.servingCaPem, undefined);
  assert(logs.some((m) => m.includes("no certificate-authority-data")));
  // The cluster CA is still made (for client certificates), and no serving cert is.
  assert(Deno.statSync(join(dir.path, "pki", "ca.crt")).isFile);
  await assert.rejects(() => Deno.stat(join(dir.path, "pki", "serving.crt")));
  assert.notDeepEqual(leafOnly.caCertPem, otherPki.caCertPem);

  // Leaf + self-signed root in the file: the root is what clients trust.
  const chain = join(dir.path, "chain.pem");
  await Deno.writeTextFile(chain, otherPki.servingCertPem + otherPki.caCertPem);
  const withRoot = await ensurePki({
    ...base,
    tlsCertFile: chain,
    tlsPrivateKeyFile: o("serving.key"),
    logger: silent,
  });
  assert.deepEqual(withRoot.servingCaPem, otherPki.caCertPem);
  assert.deepEqual(withRoot.generated, false);

  // A self-signed certificate: itself.
  const selfSigned = await ensurePki({
    ...base,
    tlsCertFile: o("ca.crt"),
    tlsPrivateKeyFile: o("ca.key"),
    logger: silent,
  });
  assert.deepEqual(selfSigned.servingCaPem, otherPki.caCertPem);
});

Deno.test("ensurePki replaces a CA key left without its certificate", async () => {
  await using dir = await tempDir();
  await Deno.mkdir(join(dir.path, "pki"));
  await Deno.writeTextFile(join(dir.path, "pki", "ca.key"), "leftover");
  const logs: string[] = [];
  const pki = await ensurePki({
    dataDir: dir.path,
    sans: [],
    bindAddress: "127.0.0.1",
    logger: { info: (m) => logs.push(m) },
  });
  assert(pki.generated);
  assert.equal(await Deno.readTextFile(join(dir.path, "pki", "ca.key")), pki.caKeyPem);
  assert.match(logs[0], /interrupted first start/);
});

Deno.test("ensurePki refuses a CA certificate without its key", async () => {
  await using dir = await tempDir();
  await ensurePki({ dataDir: dir.path, sans: [], bindAddress: "127.0.0.1", logger: silent });
  await Deno.remove(join(dir.path, "pki", "ca.key"));
  await rejectsWith(
    () => ensurePki({ dataDir: dir.path, sans: [], bindAddress: "127.0.0.1", logger: silent }),
    ConfigError,
    `exists but "${join(dir.path, "pki", "ca.key")}" is missing`,
  );
});

Deno.test("ensureAdminToken makes a 32-byte base64url token once", async () => {
  await using dir = await tempDir();
  const token = await ensureAdminToken(dir.path);
  assert.match(token, /^[A-Za-z0-9_-]{43}$/);
  const path = join(dir.path, "pki", "admin.token");
  assert.deepEqual(mode(path), 0o600);
  assert.deepEqual(await ensureAdminToken(dir.path), token);
  await using other = await tempDir();
  assert.notDeepEqual(await ensureAdminToken(other.path), token);
});

Deno.test("writeKubeconfig writes a kubeconfig atomically with mode 0600", async () => {
  await using dir = await tempDir();
  const pki = await ensurePki({
    dataDir: dir.path,
    sans: [],
    bindAddress: "127.0.0.1",
    logger: silent,
  });
  const path = join(dir.path, "sub", "admin.kubeconfig");
  await writeKubeconfig({
    path,
    server: "https://127.0.0.1:6443",
    caCertPem: pki.caCertPem,
    token: "tok",
    user: ADMIN_USER,
    clusterName: "platform",
    contextName: "platform",
  });
  assert.deepEqual(mode(path), 0o600);
  assert.deepEqual([...Deno.readDirSync(join(dir.path, "sub"))].map((e) => e.name), [
    "admin.kubeconfig",
  ]);
  const kc = parseYaml(await Deno.readTextFile(path));
  assert.deepEqual(kc.apiVersion, "v1");
  assert.deepEqual(kc.kind, "Config");
  assert.deepEqual(kc["current-context"], "platform");
  assert.deepEqual(kc.clusters[0].name, "platform");
  assert.deepEqual(kc.clusters[0].cluster.server, "https://127.0.0.1:6443");
  assert.deepEqual(atob(kc.clusters[0].cluster["certificate-authority-data"]), pki.caCertPem);
  assert.deepEqual(kc.users, [{ name: "platform-admin", user: { token: "tok" } }]);
  assert.deepEqual(kc.contexts, [{
    name: "platform",
    context: { cluster: "platform", user: "platform-admin" },
  }]);

  // Without a CA the field is left out; the generated entries are replaced, not appended to.
  await writeKubeconfig({ path, server: "https://h:1", caCertPem: undefined, token: "t2" });
  const again = parseYaml(await Deno.readTextFile(path));
  assert.deepEqual(again.clusters, [{ name: "platform", cluster: { server: "https://h:1" } }]);
  assert.deepEqual(again.users, [{ name: "platform-admin", user: { token: "t2" } }]);

  // A context the user added (and chose) survives the next start's rewrite.
  again.users.push({ name: "alice", user: { "client-certificate-data": "Y2VydA==" } });
  again.contexts.push({ name: "alice", context: { cluster: "platform", user: "alice" } });
  again["current-context"] = "alice";
  await Deno.writeTextFile(path, stringifyYaml(again));
  await writeKubeconfig({ path, server: "https://h:2", caCertPem: undefined, token: "t3" });
  const kept = parseYaml(await Deno.readTextFile(path));
  assert.deepEqual(kept.users.map((u: { name: string }) => u.name), ["alice", "platform-admin"]);
  assert.deepEqual(kept.contexts.map((c: { name: string }) => c.name), ["alice", "platform"]);
  assert.equal(kept["current-context"], "alice");
  assert.deepEqual(kept.clusters[0].cluster, { server: "https://h:2" });
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
});

Deno.test("issueClientCertificate signs CN=user, O=groups for clientAuth", async () => {
  await using dir = await tempDir();
  const pki = await ensurePki({
    dataDir: dir.path,
    sans: [],
    bindAddress: "127.0.0.1",
    logger: silent,
  });
  const { certPem, keyPem } = await issueClientCertificate({
    caCertPem: pki.caCertPem,
    caKeyPem: pki.caKeyPem,
    user: "alice",
    groups: ["dev", "ops"],
  });
  assert.match(keyPem, /^-----BEGIN PRIVATE KEY-----/);
  const cert = parseCert(certPem);
  assert.deepEqual(cert.subjectName.getField("CN"), ["alice"]);
  assert.deepEqual(cert.subjectName.getField("O"), ["dev", "ops"]);
  assert.deepEqual(
    [...cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? []].map(String),
    [
      x509.ExtendedKeyUsage.clientAuth,
    ],
  );
  assert(await cert.verify({ publicKey: parseCert(pki.caCertPem).publicKey, signatureOnly: true }));
});
