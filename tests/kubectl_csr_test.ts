/**
 * Certificate requests with the real kubectl: `kubectl create -f` a request, approve it with
 * `kubectl certificate approve` (kubectl resolves `csr` to `certificates.k8s.io`, listed first
 * in discovery, the only group that command handles), the built-in signer issues, `kubectl get
 * csr -w` shows each transition, another is denied with `kubectl certificate deny`, and a third
 * is approved with `kubectl patch --subresource=approval`.
 */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import assert from "node:assert/strict";
import { kubectlEnv, kubectlInstalled, liveOutput } from "./kubectl.ts";

const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };

async function requestYaml(name: string, subject: string): Promise<string> {
  const keys = await crypto.subtle.generateKey(ALG, true, ["sign", "verify"]);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: subject,
    keys,
    signingAlgorithm: ALG,
  });
  return `apiVersion: certificates.platform.io/v1
kind: CertificateSigningRequest
metadata:
  name: ${name}
spec:
  request: ${btoa(csr.toString("pem"))}
  signerName: platform.io/apiserver-client
  expirationSeconds: 86400
  usages: [digital signature, key encipherment, client auth]
`;
}

function decision(type: string): string {
  return JSON.stringify({
    status: {
      conditions: [{ type, status: "True", reason: "KubectlTest", message: "by kubectl" }],
    },
  });
}

Deno.test({
  name: "kubectl: approve and deny requests, get csr -w shows the transitions",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using env = await kubectlEnv();
  const { ok, spawn } = env;
  await using watch = liveOutput(spawn(["get", "csr", "-w", "--request-timeout=20s"]));
  const waitLine = (re: RegExp) => watch.until((lines) => lines.some((l) => re.test(l)), `${re}`);
  assert.equal(
    await ok(["create", "-f", "-"], await requestYaml("alice", "CN=alice,O=devs")),
    "certificatesigningrequest.certificates.platform.io/alice created\n",
  );
  await waitLine(
    /^alice\s+\S+\s+platform.io\/apiserver-client\s+platform-admin\s+24h\s+Pending$/,
  );
  assert.equal(
    await ok(["certificate", "approve", "alice"]),
    "certificatesigningrequest.certificates.k8s.io/alice approved\n",
  );
  await waitLine(/^alice\s.*\s+Approved,Issued$/);
  const pem = atob(await ok(["get", "csr", "alice", "-o", "jsonpath={.status.certificate}"]));
  const cert = new x509.X509Certificate(pem);
  assert.equal(cert.subject, "CN=alice, O=devs");

  await ok(["create", "-f", "-"], await requestYaml("bob", "CN=bob"));
  assert.equal(
    await ok(["certificate", "deny", "bob"]),
    "certificatesigningrequest.certificates.k8s.io/bob denied\n",
  );
  await waitLine(/^bob\s.*\s+Denied$/);

  // The approval subresource by hand, under the name the manifest uses.
  await ok(["create", "-f", "-"], await requestYaml("carol", "CN=carol"));
  assert.match(
    await ok([
      "patch",
      "certificatesigningrequests.certificates.platform.io",
      "carol",
      "--subresource=approval",
      "--type=merge",
      "-p",
      decision("Approved"),
    ]),
    /certificatesigningrequest.certificates.platform.io\/carol patched/,
  );
  await waitLine(/^carol\s.*\s+Approved,Issued$/);
});
