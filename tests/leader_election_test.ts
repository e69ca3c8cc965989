// deno-lint-ignore-file no-explicit-any
/**
 * Leader election of the cluster-wide controllers, black box: real `platform serve` processes
 * on one real etcd, sharing the signing CA and the admin token. Exactly one replica holds the
 * Lease and signs CSRs; when it is SIGKILLed the other takes the Lease (one transition more)
 * and signs; a replica stopped gracefully releases the Lease, and the other takes over before
 * the lease duration could have run out. Without etcd these tests skip, except under CI=true
 * where that fails.
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { assert, assertEquals } from "./assert.ts";
import { type TestServer, testServer, tokenFile } from "./harness.ts";
import {
  etcdInstalled,
  requireEtcdUnderCi,
  startEtcdMember,
} from "../lib/storage/testing/etcd_member.ts";
import { keyPair, makeCa, signAlg, verifies } from "../lib/certificates/signer_testdata.ts";
import { encodePem } from "../lib/api/mod.ts";
import { parseRuntimeConfig } from "../lib/config/mod.ts";
import { type Replica as ReplicaProcess, replica } from "./replica_process.ts";

requireEtcdUnderCi("tests/leader_election_test.ts");

const TOKEN = "leader-election-admin";
const LEASE = "/apis/coordination.platform.io/v1/namespaces/platform-system/leases/" +
  "platform-controllers";
const CSRS = "/apis/certificates.platform.io/v1/certificatesigningrequests";
/** Every wait is bounded by this (start-up, a takeover, a signature). */
const WAIT_MS = 30_000;

/** One `platform serve` child process, and a client that trusts its CA. */
interface Replica {
  name: string;
  url: string;
  client: Deno.HttpClient;
  process: ReplicaProcess;
  stopped?: Promise<Deno.CommandStatus | undefined>;
}

/** What the replicas share: etcd, the signing CA, the admin token; and the CA to verify with. */
interface Cluster {
  etcdUrl: string;
  dir: string;
  tokens: string;
  caCert: x509.X509Certificate;
}

async function startReplica(
  cluster: Cluster,
  name: string,
  durations: string[],
): Promise<Replica> {
  const process = await replica(name, {
    etcdServers: [cluster.etcdUrl],
    flags: [
      `--token-auth-file=${cluster.tokens}`,
      `--cluster-signing-cert-file=${cluster.dir}/signing-ca.crt`,
      `--cluster-signing-key-file=${cluster.dir}/signing-ca.key`,
      ...durations,
    ],
  });
  await process.start();
  const caCerts = [await Deno.readTextFile(`${process.dataDir}/pki/ca.crt`)];
  return { name, url: process.url, client: Deno.createHttpClient({ caCerts }), process };
}

/** Sends `signal` and waits for the exit; idempotent. */
function stopReplica(
  r: Replica,
  signal: "SIGKILL" | "SIGTERM",
): Promise<Deno.CommandStatus | undefined> {
  return r.stopped ??= (signal === "SIGKILL" ? r.process.kill() : r.process.stop()).then((s) => {
    r.client.close();
    return s;
  });
}

async function call(
  r: Replica,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(r.url + path, {
    method,
    client: r.client,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const json = res.headers.get("content-type")?.includes("json");
  return { status: res.status, body: json ? await res.json() : await res.text() };
}

/** Polls `probe` until it answers something; fails after {@link WAIT_MS}. */
async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const got = await probe().catch(() => undefined);
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`not within ${WAIT_MS} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The Lease's spec as a replica serves it. */
async function lease(r: Replica): Promise<any> {
  const res = await call(r, "GET", LEASE);
  assertEquals(res.status, 200, JSON.stringify(res.body));
  return res.body.spec;
}

/** The identity a replica logged when it became leader, if it did. */
function leaderIdentity(r: Replica): string | undefined {
  const lines = r.process.lines().filter((l) => l.includes("became leader"));
  return lines.at(-1)?.match(/held by (\S+)/)?.[1];
}

/** Creates a client CSR through `r`, approves it, and waits for the certificate. */
async function signedThrough(r: Replica, name: string): Promise<x509.X509Certificate> {
  const keys = await keyPair("P-256");
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name: `CN=${name}, O=devs`,
    keys,
    signingAlgorithm: signAlg("P-256"),
  });
  const created = await call(r, "POST", CSRS, {
    apiVersion: "certificates.platform.io/v1",
    kind: "CertificateSigningRequest",
    metadata: { name },
    spec: {
      request: btoa(request.toString("pem")),
      signerName: "platform.io/apiserver-client",
      usages: ["digital signature", "client auth"],
    },
  });
  assertEquals(created.status, 201, JSON.stringify(created.body));
  const csr = created.body;
  csr.status = {
    conditions: [{ type: "Approved", status: "True", reason: "Test", message: "approved" }],
  };
  const approved = await call(r, "PUT", `${CSRS}/${name}/approval`, csr);
  assertEquals(approved.status, 200, JSON.stringify(approved.body));
  const pem = await waitFor(`CSR ${name} signed`, async () => {
    const got = await call(r, "GET", `${CSRS}/${name}`);
    return got.body?.status?.certificate ? atob(got.body.status.certificate) : undefined;
  });
  return new x509.X509Certificate(pem);
}

/** etcd, the shared files and two replicas; everything stopped and removed on dispose. */
async function cluster(durations: string[]) {
  const member = await startEtcdMember();
  const dir = await Deno.makeTempDir({ prefix: "platform-leader-election-" });
  const tokens = await tokenFile({ [TOKEN]: { name: "admin", groups: ["system:masters"] } });
  const ca = await makeCa({ name: "CN=shared-signing-ca" });
  await Deno.writeTextFile(`${dir}/signing-ca.crt`, ca.certPem);
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", ca.keys.privateKey);
  await Deno.writeTextFile(`${dir}/signing-ca.key`, encodePem("PRIVATE KEY", pkcs8));
  const shared = { etcdUrl: member.clientUrl, dir, tokens: tokens.path, caCert: ca.cert };
  const replicas: Replica[] = [];
  const start = async (name: string) => {
    const r = await startReplica(shared, name, durations);
    replicas.push(r);
    return r;
  };
  return {
    caCert: ca.cert,
    start,
    async [Symbol.asyncDispose]() {
      await Promise.all(replicas.map((r) => stopReplica(r, "SIGKILL")));
      for (const r of replicas) await Deno.remove(r.process.dataDir, { recursive: true });
      await member.stop();
      await tokens[Symbol.asyncDispose]();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** [the leader, the other] of two replicas: the holder of the Lease is the one that logged
 * "became leader" under that identity (each process has its own). */
async function leaderOf(a: Replica, b: Replica): Promise<[Replica, Replica]> {
  const holder = await waitFor(
    "a holder",
    async () => (await lease(a)).holderIdentity || undefined,
  );
  assertEquals((await lease(b)).holderIdentity, holder, "both replicas serve one Lease");
  const leaders = [a, b].filter((r) => leaderIdentity(r) === holder);
  assertEquals(leaders.length, 1, `one replica logged "became leader" as ${holder}`);
  return leaders[0] === a ? [a, b] : [b, a];
}

Deno.test({
  name: "leader election: the CSR signer resumes on another replica when the leader is killed",
  ignore: !etcdInstalled,
  async fn() {
    await using c = await cluster([
      "--leader-elect-lease-duration=3s",
      "--leader-elect-renew-deadline=2s",
      "--leader-elect-retry-period=500ms",
    ]);
    const a = await c.start("a");
    const b = await c.start("b");
    const [leader, follower] = await leaderOf(a, b);
    const before = await lease(follower);
    assertEquals(before.leaseDurationSeconds, 3);
    // Not leading leaves a replica ready, and serving the one API.
    assertEquals((await call(follower, "GET", "/readyz")).status, 200);

    // A CSR made through the follower is signed (by the leader) with the shared CA.
    const first = await signedThrough(follower, "before-kill");
    assert(await verifies(first, c.caCert), "signed by the shared CA");

    await stopReplica(leader, "SIGKILL");
    const after = await waitFor("the survivor holds the Lease", async () => {
      const spec = await lease(follower);
      return spec.holderIdentity && spec.holderIdentity !== before.holderIdentity
        ? spec
        : undefined;
    });
    assertEquals(after.holderIdentity, leaderIdentity(follower));
    assertEquals(after.leaseTransitions, before.leaseTransitions + 1);
    const second = await signedThrough(follower, "after-kill");
    assert(await verifies(second, c.caCert), "signed by the shared CA");
  },
});

Deno.test({
  name: "leader election: a graceful stop releases the Lease and the other replica takes over",
  ignore: !etcdInstalled,
  async fn() {
    // A lease of 60 s: a takeover within the 30 s wait can only come from the release.
    await using c = await cluster([
      "--leader-elect-lease-duration=60s",
      "--leader-elect-renew-deadline=40s",
      "--leader-elect-retry-period=500ms",
    ]);
    const a = await c.start("a");
    const b = await c.start("b");
    const [leader, follower] = await leaderOf(a, b);
    const before = await lease(follower);
    assertEquals(before.leaseDurationSeconds, 60);

    assertEquals((await stopReplica(leader, "SIGTERM"))?.code, 0);
    assert(leader.process.lines().some((l) => l.includes("released lease")), leader.process.log());
    const after = await waitFor("the other replica holds the Lease", async () => {
      const spec = await lease(follower);
      return spec.holderIdentity === leaderIdentity(follower) ? spec : undefined;
    });
    assertEquals(after.leaseTransitions, before.leaseTransitions + 1);
    const cert = await signedThrough(follower, "after-release");
    assert(await verifies(cert, c.caCert), "signed by the shared CA");
  },
});

/** A client CSR created and approved as the admin of an in-process server; its certificate. */
async function signedIn(ts: TestServer, name: string): Promise<string> {
  const keys = await keyPair("P-256");
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name: `CN=${name}`,
    keys,
    signingAlgorithm: signAlg("P-256"),
  });
  const created = await ts.json("POST", CSRS, {
    body: {
      apiVersion: "certificates.platform.io/v1",
      kind: "CertificateSigningRequest",
      metadata: { name },
      spec: {
        request: btoa(request.toString("pem")),
        signerName: "platform.io/apiserver-client",
        usages: ["digital signature", "client auth"],
      },
    },
  });
  assertEquals(created.status, 201, JSON.stringify(created.body));
  const csr = created.body;
  csr.status = { conditions: [{ type: "Approved", status: "True", reason: "T", message: "m" }] };
  assertEquals((await ts.json("PUT", `${CSRS}/${name}/approval`, { body: csr })).status, 200);
  return await waitFor(`CSR ${name} signed`, async () => {
    const got = await ts.json("GET", `${CSRS}/${name}`);
    return got.body?.status?.certificate;
  });
}

/** Whether etcd holds the Lease (whether or not the API serves it). */
async function leaseInEtcd(etcdUrl: string): Promise<boolean> {
  const key = "/registry/coordination.platform.io/leases/platform-system/platform-controllers";
  const res = await fetch(`${etcdUrl}/v3/kv/range`, {
    method: "POST",
    body: JSON.stringify({ key: btoa(key), count_only: true }),
  });
  return Number((await res.json()).count ?? 0) === 1;
}

Deno.test({
  name: "leader election: --leader-elect=false runs the controllers without a Lease",
  ignore: !etcdInstalled,
  async fn() {
    await using member = await startEtcdMember();
    await using ts = await testServer({
      storage: "etcd3",
      etcdServers: [member.clientUrl],
      leaderElection: { enabled: false },
    });
    assert((await signedIn(ts, "unelected")).length > 0);
    assertEquals((await ts.json("GET", LEASE)).status, 404);
    assertEquals(await leaseInEtcd(member.clientUrl), false);
  },
});

Deno.test({
  name: "leader election: the Lease is kept even when --runtime-config does not serve leases",
  ignore: !etcdInstalled,
  async fn() {
    await using member = await startEtcdMember();
    await using ts = await testServer({
      storage: "etcd3",
      etcdServers: [member.clientUrl],
      runtimeConfig: parseRuntimeConfig("coordination.k8s.io/v1=false"),
    });
    assertEquals((await ts.json("GET", LEASE)).status, 404); // not served
    assert(await leaseInEtcd(member.clientUrl), "the Lease is in etcd");
    assert((await signedIn(ts, "elected")).length > 0); // this replica leads
  },
});
