// deno-lint-ignore-file no-explicit-any
/**
 * CertificateSigningRequests over HTTP: creation rules, immutability of spec under every kind
 * of write, the /approval and /status subresources, the condition and certificate rules, the
 * signerName field selector, and the built-in approver and signer issuing real certificates.
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { type TestServer, testServer } from "./harness.ts";

const CSRS = "/apis/certificates.platform.io/v1/certificatesigningrequests";
const CLIENT = "platform.io/apiserver-client";
const NODE_CLIENT = "platform.io/apiserver-client-nodeagent";
const SERVING = "platform.io/nodeagent-serving";

const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };

/** base64 of a PEM certificate request for `subject`, with `extensions`. */
async function csrRequest(subject: string, extensions: x509.Extension[] = []): Promise<string> {
  const keys = await crypto.subtle.generateKey(ALG, true, ["sign", "verify"]);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: subject,
    keys,
    signingAlgorithm: ALG,
    extensions,
  });
  return btoa(csr.toString("pem"));
}

function csr(name: string, spec: Record<string, unknown>) {
  return {
    apiVersion: "certificates.platform.io/v1",
    kind: "CertificateSigningRequest",
    metadata: { name },
    spec,
  };
}

async function clientCsr(ts: TestServer, name: string, extra: Record<string, unknown> = {}) {
  const res = await ts.json("POST", CSRS, {
    body: csr(name, {
      request: await csrRequest("CN=alice,O=devs"),
      signerName: CLIENT,
      usages: ["digital signature", "client auth"],
      ...extra,
    }),
  });
  assertEquals(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

function conditionTypes(obj: any): string[] {
  return (obj.status?.conditions ?? []).map((c: any) => c.type);
}

/** Polls the request until `done` holds. */
async function waitFor(ts: TestServer, name: string, done: (o: any) => boolean): Promise<any> {
  let last: any;
  for (let i = 0; i < 100; i++) {
    last = (await ts.json("GET", `${CSRS}/${name}`)).body;
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`request ${name} never got there: ${JSON.stringify(last?.status)}`);
}

function approve(obj: any, type = "Approved") {
  const next = structuredClone(obj);
  next.status ??= {};
  next.status.conditions = [
    ...(next.status.conditions ?? []),
    { type, status: "True", reason: "Test", message: `${type} by the test` },
  ];
  return next;
}

function issuedCertificate(obj: any): x509.X509Certificate {
  const pem = atob(obj.status.certificate);
  return new x509.X509Certificate(
    pem.split("-----END CERTIFICATE-----")[0] + "-----END CERTIFICATE-----",
  );
}

Deno.test("csr: every violation of a request is listed in one 422", async () => {
  await using ts = await testServer();
  const res = await ts.json("POST", CSRS, {
    body: csr("bad", {
      request: btoa("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
      signerName: "platform.io/legacy-unknown",
      usages: ["client auth", "client auth", "flying"],
      expirationSeconds: 60,
    }),
  });
  assertEquals(res.status, 422);
  const fields = res.body.details.causes.map((c: any) => c.field);
  for (
    const f of [
      "spec.request",
      "spec.signerName",
      "spec.usages[1]",
      "spec.usages[2]",
      "spec.expirationSeconds",
    ]
  ) {
    assert(fields.includes(f), `${f} missing in ${fields}`);
  }
  const unqualified = await ts.json("POST", CSRS, {
    body: csr("bad2", {
      request: await csrRequest("CN=a"),
      signerName: "nodomain",
      usages: ["client auth"],
    }),
  });
  assertEquals(unqualified.status, 422);
  assertEquals(unqualified.body.details.causes[0].field, "spec.signerName");
  const noUsages = await ts.json("POST", CSRS, {
    body: csr("bad3", { request: await csrRequest("CN=a"), signerName: CLIENT }),
  });
  assertEquals(noUsages.status, 422);
  assertMatch(noUsages.body.message, /spec.usages: Required value/);
  // Nothing was stored.
  assertEquals((await ts.json("GET", CSRS)).body.items.length, 0);
});

Deno.test("csr: a request whose signature does not verify is refused", async () => {
  await using ts = await testServer();
  const pem = atob(await csrRequest("CN=alice"));
  const der = x509.PemConverter.decodeFirst(pem);
  const bytes = new Uint8Array(der);
  bytes[bytes.length - 5] ^= 0xff; // inside the signature
  const tampered = btoa(x509.PemConverter.encode(bytes.buffer, "CERTIFICATE REQUEST"));
  const res = await ts.json("POST", CSRS, {
    body: csr("tampered", { request: tampered, signerName: CLIENT, usages: ["client auth"] }),
  });
  assertEquals(res.status, 422);
  assertEquals(res.body.details.causes[0].field, "spec.request");
});

Deno.test("csr: the requester's identity replaces what the client sent", async () => {
  await using ts = await testServer();
  const obj = await clientCsr(ts, "who", {
    username: "mallory",
    groups: ["system:masters2"],
    uid: "x",
  });
  assertEquals(obj.spec.username, "platform-admin");
  assertEquals(obj.spec.uid, "platform-admin");
  assertEquals(obj.spec.groups, ["system:masters", "system:authenticated"]);
});

Deno.test("csr: spec is immutable under PUT and every patch type; an unchanged spec passes", async () => {
  await using ts = await testServer({ controllers: ["-csrsigning", "-csrapproving"] });
  const obj = await clientCsr(ts, "imm");
  const put = structuredClone(obj);
  put.spec.usages = ["client auth"];
  const r1 = await ts.json("PUT", `${CSRS}/imm`, { body: put });
  assertEquals(r1.status, 422);
  assertMatch(r1.body.message, /spec.usages: Invalid value: .*field is immutable/);
  const patches: [string, unknown][] = [
    ["application/merge-patch+json", { spec: { signerName: "example.com/other" } }],
    ["application/strategic-merge-patch+json", { spec: { expirationSeconds: 7200 } }],
    ["application/json-patch+json", [{
      op: "replace",
      path: "/spec/usages",
      value: ["client auth"],
    }]],
    ["application/apply-patch+yaml", {
      apiVersion: "certificates.platform.io/v1",
      kind: "CertificateSigningRequest",
      metadata: { name: "imm" },
      spec: { signerName: "example.com/applied" },
    }],
  ];
  for (const [type, body] of patches) {
    const url = type.startsWith("application/apply")
      ? `${CSRS}/imm?fieldManager=t&force=true`
      : `${CSRS}/imm`;
    const res = await ts.json("PATCH", url, { body, headers: { "Content-Type": type } });
    assertEquals(res.status, 422, `${type}: ${JSON.stringify(res.body)}`);
    assertMatch(res.body.message, /field is immutable/);
  }
  // Labels change; the spec stays: fine.
  const ok = await ts.json("PATCH", `${CSRS}/imm`, {
    body: { metadata: { labels: { a: "b" } } },
    headers: { "Content-Type": "application/merge-patch+json" },
  });
  assertEquals(ok.status, 200);
  const same = structuredClone(ok.body);
  assertEquals((await ts.json("PUT", `${CSRS}/imm`, { body: same })).status, 200);
});

Deno.test("csr: /approval changes only Approved and Denied, /status only the rest, the main resource no status", async () => {
  await using ts = await testServer({ controllers: ["-csrsigning", "-csrapproving"] });
  const obj = await clientCsr(ts, "sub");
  // The main resource ignores status.
  const main = await ts.json("PUT", `${CSRS}/sub`, { body: approve(obj) });
  assertEquals(main.status, 200);
  assertEquals(conditionTypes(main.body), []);
  // /approval takes Approved but not Failed.
  const withBoth = approve(approve(obj), "Failed");
  const approval = await ts.json("PUT", `${CSRS}/sub/approval`, { body: withBoth });
  assertEquals(approval.status, 200, JSON.stringify(approval.body));
  assertEquals(conditionTypes(approval.body), ["Approved"]);
  const approved = approval.body.status.conditions[0];
  assert(approved.lastTransitionTime, "lastTransitionTime defaulted");
  // /status takes Failed but cannot remove or add Approved/Denied.
  const statusBody = structuredClone(approval.body);
  statusBody.status.conditions = [{ type: "Failed", status: "True", reason: "R", message: "m" }];
  const status = await ts.json("PUT", `${CSRS}/sub/status`, { body: statusBody });
  assertEquals(status.status, 200, JSON.stringify(status.body));
  assertEquals(conditionTypes(status.body).sort(), ["Approved", "Failed"]);
  assertEquals(status.body.status.conditions.find((c: any) => c.type === "Approved"), approved);
  // GET on both subresources answers the object.
  assertEquals((await ts.json("GET", `${CSRS}/sub/approval`)).body.metadata.name, "sub");
  assertEquals((await ts.json("GET", `${CSRS}/sub/status`)).body.metadata.name, "sub");
});

Deno.test("csr: condition rules: exclusive, not removable, one per type, status True", async () => {
  await using ts = await testServer({ controllers: ["-csrsigning", "-csrapproving"] });
  const obj = await clientCsr(ts, "cond");
  const both = await ts.json("PUT", `${CSRS}/cond/approval`, {
    body: approve(approve(obj), "Denied"),
  });
  assertEquals(both.status, 422);
  assertMatch(both.body.message, /Approved and Denied conditions are mutually exclusive/);
  const twice = await ts.json("PUT", `${CSRS}/cond/approval`, { body: approve(approve(obj)) });
  assertEquals(twice.status, 422);
  assertMatch(twice.body.message, /Duplicate value/);
  const falseStatus = structuredClone(obj);
  falseStatus.status = { conditions: [{ type: "Approved", status: "False" }] };
  const f = await ts.json("PUT", `${CSRS}/cond/approval`, { body: falseStatus });
  assertEquals(f.status, 422);
  assertMatch(f.body.message, /status.conditions\[0\].status: Unsupported value: "False"/);
  const approved = (await ts.json("PUT", `${CSRS}/cond/approval`, { body: approve(obj) })).body;
  const removed = structuredClone(approved);
  removed.status.conditions = [];
  const r = await ts.json("PUT", `${CSRS}/cond/approval`, { body: removed });
  assertEquals(r.status, 422);
  assertMatch(r.body.message, /updates may not remove a condition of type "Approved"/);
});

Deno.test("csr: status.certificate: PEM CERTIFICATE blocks only, set once, never when denied", async () => {
  await using ts = await testServer({ controllers: ["-csrsigning", "-csrapproving"] });
  const obj = await clientCsr(ts, "cert");
  const setCert = (o: any, text: string) => {
    const next = structuredClone(o);
    next.status = { ...(next.status ?? {}), certificate: btoa(text) };
    return next;
  };
  const garbage = await ts.json("PUT", `${CSRS}/cert/status`, {
    body: setCert(obj, "not a certificate"),
  });
  assertEquals(garbage.status, 422);
  assertEquals(garbage.body.details.causes[0].field, "status.certificate");
  const caPem = ts.server.caCertPem;
  const ok = await ts.json("PUT", `${CSRS}/cert/status`, {
    body: setCert(obj, `issued:\n${caPem}trailer\n`),
  });
  assertEquals(ok.status, 200, JSON.stringify(ok.body));
  const again = await ts.json("PUT", `${CSRS}/cert/status`, {
    body: setCert(ok.body, caPem + caPem),
  });
  assertEquals(again.status, 422);
  assertMatch(again.body.message, /updates may not modify existing certificate content/);

  const denied = await clientCsr(ts, "denied");
  const d =
    (await ts.json("PUT", `${CSRS}/denied/approval`, { body: approve(denied, "Denied") })).body;
  const onDenied = await ts.json("PUT", `${CSRS}/denied/status`, { body: setCert(d, caPem) });
  assertEquals(onDenied.status, 422);
  assertMatch(onDenied.body.message, /Denied/);
});

Deno.test("csr: field selector spec.signerName on list, watch and deletecollection", async () => {
  await using ts = await testServer({ controllers: ["-csrsigning", "-csrapproving"] });
  await clientCsr(ts, "c1");
  const other = await ts.json("POST", CSRS, {
    body: csr("o1", {
      request: await csrRequest("CN=x"),
      signerName: "example.com/custom",
      usages: ["client auth"],
    }),
  });
  assertEquals(other.status, 201);
  const sel = `fieldSelector=${encodeURIComponent("spec.signerName=example.com/custom")}`;
  const list = await ts.json("GET", `${CSRS}?${sel}`);
  assertEquals(list.body.items.map((i: any) => i.metadata.name), ["o1"]);
  const watch = await ts.request("GET", `${CSRS}?watch=1&timeoutSeconds=1&${sel}`);
  const events = (await watch.text()).trim().split("\n").map((l) => JSON.parse(l));
  assertEquals(events.map((e) => [e.type, e.object.metadata.name]), [["ADDED", "o1"]]);
  const del = await ts.json("DELETE", `${CSRS}?${sel}`);
  assertEquals(del.status, 200);
  assertEquals((await ts.json("GET", CSRS)).body.items.map((i: any) => i.metadata.name), ["c1"]);
});

Deno.test("csr: approved client request -> the signer issues a certificate the CA verifies", async () => {
  await using ts = await testServer();
  const obj = await clientCsr(ts, "flow", {
    usages: ["digital signature", "key encipherment", "client auth"],
    expirationSeconds: 3600,
  });
  // Not auto-approved: the apiserver-client signer needs a person.
  await new Promise((r) => setTimeout(r, 200));
  assertEquals(conditionTypes((await ts.json("GET", `${CSRS}/flow`)).body), []);
  assertEquals((await ts.json("PUT", `${CSRS}/flow/approval`, { body: approve(obj) })).status, 200);
  const issued = await waitFor(ts, "flow", (o) => Boolean(o.status?.certificate));
  const cert = issuedCertificate(issued);
  const ca = new x509.X509Certificate(ts.server.caCertPem);
  assert(await cert.verify({ publicKey: ca.publicKey, signatureOnly: true }), "signed by the CA");
  assertEquals(cert.subject, "CN=alice, O=devs");
  const lifetime = cert.notAfter.getTime() - cert.notBefore.getTime();
  // notBefore is backdated 5 minutes; the requested hour follows.
  assert(Math.abs(lifetime - 65 * 60_000) < 2000, `lifetime ${lifetime} ms`);
  const eku = cert.getExtension(x509.ExtendedKeyUsageExtension)!;
  assertEquals([...eku.usages], [x509.ExtendedKeyUsage.clientAuth]);
  const ku = cert.getExtension(x509.KeyUsagesExtension)!;
  assertEquals(ku.usages, x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment);
});

Deno.test("csr: denied requests are not issued; forbidden usages fail with a reason", async () => {
  await using ts = await testServer();
  const denied = await clientCsr(ts, "no");
  assertEquals(
    (await ts.json("PUT", `${CSRS}/no/approval`, { body: approve(denied, "Denied") })).status,
    200,
  );
  const server = await clientCsr(ts, "srv", { usages: ["digital signature", "server auth"] });
  assertEquals(
    (await ts.json("PUT", `${CSRS}/srv/approval`, { body: approve(server) })).status,
    200,
  );
  const failed = await waitFor(ts, "srv", (o) => conditionTypes(o).includes("Failed"));
  const condition = failed.status.conditions.find((c: any) => c.type === "Failed");
  assertEquals(condition.reason, "SignerValidationFailure");
  assertMatch(condition.message, /server auth/);
  assertEquals(failed.status.certificate, undefined);
  assertEquals((await ts.json("GET", `${CSRS}/no`)).body.status.certificate, undefined);
});

Deno.test("csr: node agent client requests are approved and issued automatically", async () => {
  await using ts = await testServer();
  const res = await ts.json("POST", CSRS, {
    body: csr("node1", {
      request: await csrRequest("CN=system:node:n1,O=system:nodes"),
      signerName: NODE_CLIENT,
      usages: ["digital signature", "client auth"],
    }),
  });
  assertEquals(res.status, 201);
  const done = await waitFor(ts, "node1", (o) => Boolean(o.status?.certificate));
  const approved = done.status.conditions.find((c: any) => c.type === "Approved");
  assertEquals(approved.reason, "AutoApproved");
  assertEquals(issuedCertificate(done).subject, "CN=system:node:n1, O=system:nodes");
  // A request breaking the node rules is left for a person.
  await ts.json("POST", CSRS, {
    body: csr("node2", {
      request: await csrRequest("CN=alice,O=system:nodes"),
      signerName: NODE_CLIENT,
      usages: ["digital signature", "client auth"],
    }),
  });
  await new Promise((r) => setTimeout(r, 300));
  assertEquals(conditionTypes((await ts.json("GET", `${CSRS}/node2`)).body), []);
});

Deno.test("csr: node agent serving certificates carry the requested DNS and IP names", async () => {
  await using ts = await testServer();
  const san = new x509.SubjectAlternativeNameExtension([
    { type: "dns", value: "n1.example.com" },
    { type: "ip", value: "10.0.0.1" },
  ]);
  const res = await ts.json("POST", CSRS, {
    body: csr("serve1", {
      request: await csrRequest("CN=system:node:n1,O=system:nodes", [san]),
      signerName: SERVING,
      usages: ["digital signature", "server auth"],
    }),
  });
  assertEquals(res.status, 201);
  await new Promise((r) => setTimeout(r, 200));
  const pending = (await ts.json("GET", `${CSRS}/serve1`)).body;
  assertEquals(conditionTypes(pending), [], "serving requests are never auto-approved");
  await ts.json("PUT", `${CSRS}/serve1/approval`, { body: approve(pending) });
  const done = await waitFor(ts, "serve1", (o) => Boolean(o.status?.certificate));
  const names = issuedCertificate(done).getExtension(x509.SubjectAlternativeNameExtension)!.names
    .toJSON().map((n) => `${n.type}:${n.value}`);
  assertEquals(names.sort(), ["dns:n1.example.com", "ip:10.0.0.1"]);
});

Deno.test("csr: with --controllers=-csrsigning approved requests stay unissued", async () => {
  await using ts = await testServer({ controllers: ["*", "-csrsigning"] });
  const obj = await clientCsr(ts, "idle");
  await ts.json("PUT", `${CSRS}/idle/approval`, { body: approve(obj) });
  await new Promise((r) => setTimeout(r, 300));
  assertEquals((await ts.json("GET", `${CSRS}/idle`)).body.status.certificate, undefined);
});

const SIGNING_CA = {
  certFile: new URL("../testdata/config/signing-ca.crt", import.meta.url).pathname,
  keyFile: new URL("../testdata/config/signing-ca.key", import.meta.url).pathname,
};

/** Approves a client request and returns the certificate issued for it. */
async function issueClient(ts: TestServer, name: string, extra: Record<string, unknown> = {}) {
  const obj = await clientCsr(ts, name, extra);
  await ts.json("PUT", `${CSRS}/${name}/approval`, { body: approve(obj) });
  return issuedCertificate(await waitFor(ts, name, (o) => Boolean(o.status?.certificate)));
}

Deno.test("csr: --cluster-signing-cert-file/-key-file sign every signer's certificates; --cluster-signing-duration caps their lifetime", async () => {
  await using ts = await testServer({
    clusterSigning: SIGNING_CA,
    clusterSigningDurationMs: 30 * 60_000,
  });
  const ca = new x509.X509Certificate(await Deno.readTextFile(SIGNING_CA.certFile));
  const cert = await issueClient(ts, "capped", { expirationSeconds: 7200 });
  assertEquals(cert.issuer, ca.subject);
  assert(await cert.verify({ publicKey: ca.publicKey, signatureOnly: true }), "signed by it");
  const lifetime = cert.notAfter.getTime() - cert.notBefore.getTime();
  // Backdated 5 minutes, then the 30 minutes of the cap rather than the 2 hours asked for.
  assert(Math.abs(lifetime - 35 * 60_000) < 2000, `lifetime ${lifetime} ms`);
});

Deno.test("csr: --cluster-signing-<signer>-cert-file/-key-file sign only that signer's certificates", async () => {
  await using ts = await testServer({ clusterSigningPerSigner: { [CLIENT]: SIGNING_CA } });
  const ca = new x509.X509Certificate(await Deno.readTextFile(SIGNING_CA.certFile));
  assertEquals((await issueClient(ts, "own-ca")).issuer, ca.subject);
  // The node agent client signer has no CA of its own: the cluster CA signs.
  await ts.json("POST", CSRS, {
    body: csr("node", {
      request: await csrRequest("CN=system:node:n1,O=system:nodes"),
      signerName: NODE_CLIENT,
      usages: ["digital signature", "client auth"],
    }),
  });
  const node = issuedCertificate(await waitFor(ts, "node", (o) => Boolean(o.status?.certificate)));
  assertEquals(node.issuer, new x509.X509Certificate(ts.server.caCertPem).subject);
});

Deno.test("csr: with --controllers=*,-csrapproving node agent requests are not approved", async () => {
  await using ts = await testServer({ controllers: ["*", "-csrapproving"] });
  const res = await ts.json("POST", CSRS, {
    body: csr("node1", {
      request: await csrRequest("CN=system:node:n1,O=system:nodes"),
      signerName: NODE_CLIENT,
      usages: ["digital signature", "client auth"],
    }),
  });
  assertEquals(res.status, 201);
  await new Promise((r) => setTimeout(r, 500));
  assertEquals(conditionTypes((await ts.json("GET", `${CSRS}/node1`)).body), []);
});
