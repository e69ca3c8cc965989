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
import { fileURLToPath } from "node:url";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { assertConfigError, freePort, runPlatform } from "./harness.ts";
import { ConfigError, loadServerConfig, type ServerConfig } from "../lib/config/mod.ts";

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

/** `platform serve` on the memory store as a child process, with the admin token and CA of
 * its data directory. */
async function serve(flags: string[]) {
  const dataDir = await Deno.makeTempDir({ prefix: "kcm-serve-" });
  const url = `https://127.0.0.1:${freePort()}`;
  const proc = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      fileURLToPath(new URL("../main.ts", import.meta.url)),
      "serve",
      "--storage",
      "memory",
      "--secure-port",
      new URL(url).port,
      "--data-dir",
      dataDir,
      ...flags,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(proc.stderr).text();
  let client: Deno.HttpClient | undefined;
  let token = "";
  for (let i = 0; i < 600 && client === undefined; i++) {
    const kubeconfig = await Deno.readTextFile(join(dataDir, "admin.kubeconfig")).catch(() => "");
    const found = /token: (\S+)/.exec(kubeconfig);
    if (found) {
      const c = Deno.createHttpClient({
        caCerts: [await Deno.readTextFile(join(dataDir, "pki", "ca.crt"))],
      });
      const ready = await fetch(`${url}/readyz`, { client: c }).then(async (r) => {
        await r.body?.cancel();
        return r.status === 200;
      }, () => false);
      if (ready) [client, token] = [c, found[1]];
      else c.close();
    }
    if (client === undefined) await new Promise((r) => setTimeout(r, 100));
  }
  if (client === undefined) {
    proc.kill("SIGKILL");
    await proc.status;
    throw new Error(`the server did not become ready:\n${await stderr}`);
  }
  const http = client;
  return {
    async json(method: string, path: string, o: { body?: unknown } = {}) {
      const res = await fetch(url + path, {
        method,
        client: http,
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: o.body === undefined ? undefined : JSON.stringify(o.body),
      });
      return { status: res.status, body: await res.json() as any };
    },
    async [Symbol.asyncDispose]() {
      http.close();
      proc.kill("SIGTERM");
      await proc.status;
      await stderr;
      await Deno.remove(dataDir, { recursive: true });
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

  // The server's own rule on top of kube's names the file's field.
  const tight = join(dir, "tight.yaml");
  await Deno.writeTextFile(tight, KCM.replace("retryPeriod: 3s", "retryPeriod: 18s"));
  const err = await loadServerConfig(["--controller-manager-config", tight]).catch((e) => e);
  assert(err instanceof ConfigError);
  assertMatch(err.message, /^.*tight\.yaml: generic\.leaderElection\.retryPeriod: 18s is too long/);

  // `platform serve` with the file: csrapproving off, certificates for 45 minutes.
  await using server = await serve(["--controller-manager-config", file]);
  const node = await server.json("POST", CSRS, {
    body: await csrBody(
      "node",
      "CN=system:node:n1,O=system:nodes",
      "platform.io/apiserver-client-nodeagent",
    ),
  });
  assertEquals(node.status, 201, JSON.stringify(node.body));
  const client = await server.json("POST", CSRS, {
    body: await csrBody("alice", "CN=alice,O=devs", "platform.io/apiserver-client"),
  });
  assertEquals(client.status, 201);
  const approved = structuredClone(client.body);
  approved.status = {
    conditions: [{ type: "Approved", status: "True", reason: "Test", message: "by the test" }],
  };
  assertEquals(
    (await server.json("PUT", `${CSRS}/alice/approval`, { body: approved })).status,
    200,
  );
  let issued: any;
  for (let i = 0; i < 200 && !issued?.status?.certificate; i++) {
    issued = (await server.json("GET", `${CSRS}/alice`)).body;
    if (!issued.status?.certificate) await new Promise((r) => setTimeout(r, 50));
  }
  const cert = new x509.X509Certificate(atob(issued.status.certificate));
  const lifetime = cert.notAfter.getTime() - cert.notBefore.getTime();
  // Backdated 5 minutes, then the 45 minutes of the file (kube's default would be a year).
  assert(Math.abs(lifetime - 50 * 60_000) < 2000, `lifetime ${lifetime} ms`);
  // The controller works its queue in order: the node request, queued first, was seen before
  // alice's was signed, and nobody approved it.
  assertEquals((await server.json("GET", `${CSRS}/node`)).body.status?.conditions ?? [], []);
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
