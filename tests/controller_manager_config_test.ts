// deno-lint-ignore-file no-explicit-any
/**
 * `--controller-manager-config`: a KubeControllerManagerConfiguration's controller selection,
 * leader election and CSR signing duration take effect in a real server (a controller turned
 * off, the signing duration in an issued certificate), under flags and the `--config` file;
 * a file kube would refuse stops the server with one line.
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { join } from "node:path";
import { assert, assertEquals } from "./assert.ts";
import { assertConfigError, runPlatform, testServer } from "./harness.ts";
import { loadServerConfig, type ServerConfig } from "../lib/config/mod.ts";

const CSRS = "/apis/certificates.platform.io/v1/certificatesigningrequests";
const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };

const KCM = `apiVersion: kubecontrollermanager.config.k8s.io/v1alpha1
kind: KubeControllerManagerConfiguration
generic:
  controllers:
    - "*"
    - -certificatesigningrequest-approving-controller
    - -deployment
  leaderElection:
    leaseDuration: 30s
    renewDeadline: 20s
    retryPeriod: 3s
    resourceName: my-controllers
csrSigningController:
  clusterSigningDuration: 45m
`;

async function csrBody(name: string, subject: string, signerName: string) {
  const keys = await crypto.subtle.generateKey(ALG, true, ["sign", "verify"]);
  const req = await x509.Pkcs10CertificateRequestGenerator.create({
    name: subject,
    keys,
    signingAlgorithm: ALG,
  });
  return {
    apiVersion: "certificates.platform.io/v1",
    kind: "CertificateSigningRequest",
    metadata: { name },
    spec: {
      request: btoa(req.toString("pem")),
      signerName,
      usages: ["digital signature", "client auth"],
    },
  };
}

async function load(args: string[]): Promise<ServerConfig> {
  const cfg = await loadServerConfig(args);
  assert(!("help" in cfg));
  return cfg as ServerConfig;
}

Deno.test("--controller-manager-config: its controllers, leader election and signing duration apply, under flags and --config", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kcm-config-" });
  const file = join(dir, "kcm.yaml");
  await Deno.writeTextFile(file, KCM);
  const base = ["--data-dir", join(dir, "data"), "--controller-manager-config", file];
  const cfg = await load(base);
  // kube's names map to the server's; a kube controller the server lacks is left out.
  assertEquals(cfg.controllers, ["*", "-csrapproving"]);
  assertEquals(cfg.leaderElectLeaseDuration, 30_000);
  assertEquals(cfg.leaderElectRenewDeadline, 20_000);
  assertEquals(cfg.leaderElectRetryPeriod, 3_000);
  assertEquals(cfg.leaderElectResourceName, "my-controllers");
  assertEquals(cfg.leaderElectResourceNamespace, "platform-system");
  assertEquals(cfg.clusterSigningDuration, 45 * 60_000);

  // Flags, then the --config file, win over it.
  const flags = await load([...base, "--controllers", "*", "--cluster-signing-duration", "2h"]);
  assertEquals(flags.controllers, ["*"]);
  assertEquals(flags.clusterSigningDuration, 2 * 3_600_000);
  const serverFile = join(dir, "server.yaml");
  await Deno.writeTextFile(
    serverFile,
    "apiVersion: platform.io/v1alpha1\nkind: ServerConfiguration\ncontrollerManagerConfig: kcm.yaml\n" +
      "leaderElectRetryPeriod: 1s\n",
  );
  const viaFile = await load(["--data-dir", join(dir, "data"), "--config", serverFile]);
  assertEquals(viaFile.controllerManagerConfig, file);
  assertEquals(viaFile.leaderElectRetryPeriod, 1_000);
  assertEquals(viaFile.leaderElectLeaseDuration, 30_000);

  // The server the configuration describes: csrapproving off, certificates for 45 minutes.
  await using ts = await testServer({
    controllers: cfg.controllers,
    clusterSigningDurationMs: cfg.clusterSigningDuration,
  });
  const node = await ts.json("POST", CSRS, {
    body: await csrBody(
      "node",
      "CN=system:node:n1,O=system:nodes",
      "platform.io/apiserver-client-nodeagent",
    ),
  });
  assertEquals(node.status, 201);
  const client = await ts.json("POST", CSRS, {
    body: await csrBody("alice", "CN=alice,O=devs", "platform.io/apiserver-client"),
  });
  assertEquals(client.status, 201);
  const approved = structuredClone(client.body);
  approved.status = {
    conditions: [{ type: "Approved", status: "True", reason: "Test", message: "by the test" }],
  };
  assertEquals((await ts.json("PUT", `${CSRS}/alice/approval`, { body: approved })).status, 200);
  let issued: any;
  for (let i = 0; i < 200 && !issued?.status?.certificate; i++) {
    issued = (await ts.json("GET", `${CSRS}/alice`)).body;
    if (!issued.status?.certificate) await new Promise((r) => setTimeout(r, 50));
  }
  const cert = new x509.X509Certificate(atob(issued.status.certificate));
  const lifetime = cert.notAfter.getTime() - cert.notBefore.getTime();
  // Backdated 5 minutes, then the 45 minutes of the file (kube's default would be a year).
  assert(Math.abs(lifetime - 50 * 60_000) < 2000, `lifetime ${lifetime} ms`);
  // The controller works its queue in order: the node request, queued first, was seen before
  // alice's was signed, and nobody approved it.
  assertEquals((await ts.json("GET", `${CSRS}/node`)).body.status?.conditions ?? [], []);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("--controller-manager-config: a file kube would refuse stops serve and check-config with one line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kcm-config-" });
  const bad = join(dir, "bad.yaml");
  await Deno.writeTextFile(
    bad,
    KCM.replace("renewDeadline: 20s", "renewDeadline: 40s"),
  );
  const kind = join(dir, "kind.yaml");
  await Deno.writeTextFile(
    kind,
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
  );
  const [serve, check, wrongKind, missing] = await Promise.all([
    runPlatform(
      "serve",
      "--secure-port",
      "0",
      "--data-dir",
      join(dir, "data"),
      "--controller-manager-config",
      bad,
    ),
    runPlatform("check-config", "--controller-manager-config", bad),
    runPlatform("check-config", "--controller-manager-config", kind),
    runPlatform("check-config", "--controller-manager-config", join(dir, "none.yaml")),
  ]);
  const message =
    /bad\.yaml: generic\.leaderElection\.leaseDuration: Invalid value: "40s": must be greater than `RenewDeadline`$/;
  assertConfigError(serve, message);
  assertConfigError(check, message);
  assertConfigError(
    wrongKind,
    /kind\.yaml: kind: Unsupported value: "KubeSchedulerConfiguration": supported values: "KubeControllerManagerConfiguration"$/,
  );
  assertConfigError(
    missing,
    /^platform: --controller-manager-config: cannot read ".*none\.yaml": No such file or directory$/,
  );
  await Deno.remove(dir, { recursive: true });
});
