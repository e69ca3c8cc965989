/**
 * Client-certificate authentication on a real server: certificates issued by the cluster CA
 * (or the `--client-ca-file` CA) authenticate as CN / O; others, expired ones and ones for
 * servers only do not; bearer tokens keep working on the same port; kubectl signs in with
 * client-certificate-data; a certificate the built-in signer issues for a CSR authenticates.
 */

import "reflect-metadata";
import assert from "node:assert/strict";
import { join } from "node:path";
import * as x509 from "@peculiar/x509";
import { stringify as stringifyYaml } from "yaml";
import { type ServerHandle, type StartOptions, startServer } from "../mod.ts";
import { silentLogger } from "../lib/api/log.ts";
import { ensurePki, issueClientCertificate } from "../lib/certificates/pki.ts";
import { encodePem } from "../lib/api/mod.ts";
import { KUBECTL, kubectlInstalled } from "./kubectl.ts";

const REVIEW = "/apis/authentication.platform.io/v1/selfsubjectreviews";

interface Credentials {
  certPem?: string;
  keyPem?: string;
  token?: string;
}

/** A server with client-certificate authentication, and the cluster CA's key for issuing. */
async function certServer(opts: StartOptions = {}) {
  const server = await startServer({
    storage: "memory",
    logger: silentLogger,
    clientCertAuth: true,
    ...opts,
  });
  const ca = {
    caCertPem: await Deno.readTextFile(join(server.dataDir, "pki", "ca.crt")),
    caKeyPem: await Deno.readTextFile(join(server.dataDir, "pki", "ca.key")),
  };
  return {
    server,
    ca,
    [Symbol.asyncDispose]: () => server.close(),
  };
}

/** POST a SelfSubjectReview with these credentials: the status and the user it names. */
async function whoami(server: ServerHandle, creds: Credentials) {
  const client = Deno.createHttpClient({
    caCerts: [server.caCertPem],
    ...(creds.certPem ? { cert: creds.certPem, key: creds.keyPem! } : {}),
  });
  try {
    const res = await fetch(server.url + REVIEW, {
      method: "POST",
      client,
      headers: {
        "Content-Type": "application/json",
        ...(creds.token ? { Authorization: `Bearer ${creds.token}` } : {}),
      },
      body: JSON.stringify({
        apiVersion: "authentication.platform.io/v1",
        kind: "SelfSubjectReview",
      }),
    });
    const body = await res.json();
    return { status: res.status, user: body.status?.userInfo, body };
  } finally {
    client.close();
  }
}

Deno.test("client certificates: the cluster CA's authenticate as CN and O, others do not", async (t) => {
  await using env = await certServer();
  const { server, ca } = env;

  await t.step("a certificate from the cluster CA authenticates", async () => {
    const alice = await issueClientCertificate({ ...ca, user: "alice", groups: ["dev", "ops"] });
    const res = await whoami(server, alice);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.user.username, "alice");
    assert.deepEqual(res.user.groups, ["dev", "ops", "system:authenticated"]);
    assert.match(
      res.user.extra["authentication.kubernetes.io/credential-id"][0],
      /^X509SHA256=[0-9a-f]{64}$/,
    );
  });

  await t.step("a bearer token still works on the same port", async () => {
    const res = await whoami(server, { token: server.adminToken });
    assert.equal(res.status, 201);
    assert.equal(res.user.username, "platform-admin");
    const none = await whoami(server, {});
    assert.equal(none.status, 401);
  });

  await t.step("a certificate from another CA is not trusted", async () => {
    const otherDir = await Deno.makeTempDir({ prefix: "client_cert_test_" });
    try {
      const other = await ensurePki({
        dataDir: otherDir,
        sans: [],
        bindAddress: "127.0.0.1",
        logger: { info: () => {} },
      });
      const mallory = await issueClientCertificate({
        caCertPem: other.caCertPem,
        caKeyPem: other.caKeyPem,
        user: "platform-admin",
        groups: ["system:masters"],
      });
      assert.equal((await whoami(server, mallory)).status, 401);
      // With a token too, the request is the token's: the certificate adds nothing.
      const both = await whoami(server, { ...mallory, token: server.adminToken });
      assert.equal(both.user.username, "platform-admin");
    } finally {
      await Deno.remove(otherDir, { recursive: true });
    }
  });

  await t.step("an expired certificate, or one not valid yet, is refused", async () => {
    const expired = await issueClientCertificate({
      ...ca,
      user: "old",
      validityDays: 1,
      now: new Date(Date.now() - 3 * 86_400_000),
    });
    assert.equal((await whoami(server, expired)).status, 401);
    const early = await issueClientCertificate({
      ...ca,
      user: "early",
      now: new Date(Date.now() + 86_400_000),
    });
    assert.equal((await whoami(server, early)).status, 401);
  });

  await t.step("a serving certificate (serverAuth only) does not authenticate", async () => {
    const pki = await Deno.readTextFile(join(server.dataDir, "pki", "serving.crt"));
    const key = await Deno.readTextFile(join(server.dataDir, "pki", "serving.key"));
    assert.equal((await whoami(server, { certPem: pki, keyPem: key })).status, 401);
  });

  await t.step("a certificate comes before a token, as in kube", async () => {
    const bob = await issueClientCertificate({ ...ca, user: "bob" });
    const res = await whoami(server, { ...bob, token: server.adminToken });
    assert.equal(res.user.username, "bob");
  });
});

Deno.test("client certificates: --client-ca-file names the CA to trust instead", async () => {
  const dir = await Deno.makeTempDir({ prefix: "client_cert_test_" });
  try {
    const other = await ensurePki({
      dataDir: join(dir, "other"),
      sans: [],
      bindAddress: "127.0.0.1",
      logger: { info: () => {} },
    });
    await using env = await certServer({
      clientCertAuth: undefined, // on because a file is given
      clientCAFile: join(dir, "other", "pki", "ca.crt"),
    });
    const carol = await issueClientCertificate({
      caCertPem: other.caCertPem,
      caKeyPem: other.caKeyPem,
      user: "carol",
    });
    assert.equal((await whoami(env.server, carol)).user.username, "carol");
    const cluster = await issueClientCertificate({ ...env.ca, user: "dave" });
    assert.equal((await whoami(env.server, cluster)).status, 401);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("client certificates are off by default: a certificate alone is anonymous", async () => {
  const server = await startServer({ storage: "memory", logger: silentLogger });
  try {
    const ca = {
      caCertPem: await Deno.readTextFile(join(server.dataDir, "pki", "ca.crt")),
      caKeyPem: await Deno.readTextFile(join(server.dataDir, "pki", "ca.key")),
    };
    const alice = await issueClientCertificate({ ...ca, user: "alice" });
    assert.equal((await whoami(server, alice)).status, 401);
    assert.equal((await whoami(server, { token: server.adminToken })).status, 201);
  } finally {
    await server.close();
  }
});

Deno.test("client certificates: one the built-in signer issues for a CSR authenticates", async () => {
  await using env = await certServer();
  const { server } = env;
  const admin = Deno.createHttpClient({ caCerts: [server.caCertPem] });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(server.url + path, {
      method,
      client: admin,
      headers: { Authorization: `Bearer ${server.adminToken}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    assert(res.ok, `${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  try {
    const keys = await crypto.subtle.generateKey(
      { name: "ECDSA", namedCurve: "P-256" },
      true,
      ["sign", "verify"],
    );
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({
      name: "O=qa, CN=erin",
      keys,
      signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    });
    const CSRS = "/apis/certificates.platform.io/v1/certificatesigningrequests";
    const created = await api("POST", CSRS, {
      apiVersion: "certificates.platform.io/v1",
      kind: "CertificateSigningRequest",
      metadata: { name: "erin" },
      spec: {
        request: btoa(csr.toString("pem")),
        signerName: "platform.io/apiserver-client",
        usages: ["digital signature", "client auth"],
        expirationSeconds: 3600,
      },
    });
    created.status = {
      conditions: [{ type: "Approved", status: "True", reason: "Test", message: "ok" }],
    };
    await api("PUT", `${CSRS}/erin/approval`, created);
    let certificate: string | undefined;
    for (let i = 0; i < 100 && !certificate; i++) {
      certificate = (await api("GET", `${CSRS}/erin`)).status?.certificate;
      if (!certificate) await new Promise((r) => setTimeout(r, 50));
    }
    assert(certificate, "the signer issued the certificate");
    const keyPem = encodePem(
      "PRIVATE KEY",
      await crypto.subtle.exportKey("pkcs8", keys.privateKey),
    );
    const res = await whoami(server, { certPem: atob(certificate), keyPem });
    assert.equal(res.status, 201);
    assert.equal(res.user.username, "erin");
    assert.deepEqual(res.user.groups, ["qa", "system:authenticated"]);
  } finally {
    admin.close();
  }
});

Deno.test({
  name: "client certificates: kubectl signs in with client-certificate-data",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using env = await certServer();
  const home = await Deno.makeTempDir({ prefix: "client_cert_test_home_" });
  try {
    const frank = await issueClientCertificate({ ...env.ca, user: "frank", groups: ["team-a"] });
    const kubeconfig = join(home, "kubeconfig");
    await Deno.writeTextFile(
      kubeconfig,
      stringifyYaml({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{
          name: "platform",
          cluster: {
            server: env.server.url,
            "certificate-authority-data": btoa(env.server.caCertPem),
          },
        }],
        users: [{
          name: "frank",
          user: {
            "client-certificate-data": btoa(frank.certPem),
            "client-key-data": btoa(frank.keyPem),
          },
        }],
        contexts: [{ name: "frank", context: { cluster: "platform", user: "frank" } }],
        "current-context": "frank",
      }),
    );
    const out = await new Deno.Command(KUBECTL, {
      args: ["--kubeconfig", kubeconfig, "auth", "whoami"],
      env: { HOME: home, KUBECONFIG: kubeconfig },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.match(stdout, /^ATTRIBUTE\s+VALUE\nUsername\s+frank\n/);
    assert.match(stdout, /\nGroups\s+\[team-a system:authenticated\]\n/);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
