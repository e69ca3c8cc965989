/** {@link checkSignerRules}: the rules of the three well-known signers. */

import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import assert from "node:assert/strict";
import { checkSignerRules } from "./signer_rules.ts";
import {
  SIGNER_APISERVER_CLIENT,
  SIGNER_APISERVER_CLIENT_NODEAGENT,
  SIGNER_NODEAGENT_SERVING,
  WELL_KNOWN_SIGNERS,
} from "../api/mod.ts";
import { CLIENT_USAGES, expectFailure, makeCsr, NODE, SERVING_USAGES } from "./signer_testdata.ts";

// ---------------------------------------------------------------------------------------
// Signer rules

Deno.test("rules: nobody gets a CA certificate", async () => {
  const caRequest = await makeCsr({
    name: NODE,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
    sans: [{ type: "dns", value: "worker-1" }],
  });
  for (const signer of WELL_KNOWN_SIGNERS) {
    expectFailure(
      checkSignerRules(signer, await makeCsr({ name: NODE }), [
        "digital signature",
        "cert sign",
        "client auth",
      ]),
      /usage "cert sign" is not allowed/,
    );
    const usages = signer === SIGNER_NODEAGENT_SERVING ? SERVING_USAGES : CLIENT_USAGES;
    expectFailure(
      checkSignerRules(signer, caRequest, usages),
      /basicConstraints extension with CA:true is not allowed/,
    );
  }
  // basicConstraints CA:false in the request is fine.
  const notCa = await makeCsr({
    extensions: [new x509.BasicConstraintsExtension(false, undefined, true)],
  });
  assert.deepEqual(checkSignerRules(SIGNER_APISERVER_CLIENT, notCa, CLIENT_USAGES), { ok: true });
});

Deno.test("rules: apiserver-client takes client usages only, any subject", async () => {
  const csr = await makeCsr({ name: "CN=anyone, O=whatever" });
  const s = SIGNER_APISERVER_CLIENT;
  assert.deepEqual(checkSignerRules(s, csr, CLIENT_USAGES), { ok: true });
  assert.deepEqual(checkSignerRules(s, csr, ["client auth"]), { ok: true });
  assert.deepEqual(checkSignerRules(s, csr, ["digital signature", "client auth"]), { ok: true });
  expectFailure(
    checkSignerRules(s, csr, ["digital signature", "client auth", "server auth"]),
    "invalid usage for client certificate: server auth",
  );
  expectFailure(
    checkSignerRules(s, csr, ["signing", "client auth"]),
    "invalid usage for client certificate: signing",
  );
  expectFailure(
    checkSignerRules(s, csr, ["digital signature", "key encipherment"]),
    "missing required usage for client certificate: client auth",
  );
  // SANs are allowed (kube does not check them for this signer).
  const withSans = await makeCsr({ sans: [{ type: "email", value: "a@example.com" }] });
  assert.deepEqual(checkSignerRules(s, withSans, CLIENT_USAGES), { ok: true });
});

Deno.test("rules: apiserver-client-nodeagent", async () => {
  const s = SIGNER_APISERVER_CLIENT_NODEAGENT;
  const good = await makeCsr({ name: NODE });
  assert.deepEqual(checkSignerRules(s, good, CLIENT_USAGES), { ok: true });
  assert.deepEqual(checkSignerRules(s, good, ["digital signature", "client auth"]), { ok: true });
  // Order of the request's usages does not matter.
  assert.deepEqual(
    checkSignerRules(s, good, ["client auth", "key encipherment", "digital signature"]),
    { ok: true },
  );

  const subject = async (name: string) =>
    checkSignerRules(s, await makeCsr({ name }), CLIENT_USAGES);
  const badOrg = "subject organization is not system:nodes";
  expectFailure(await subject("O=system:masters, CN=system:node:worker-1"), badOrg);
  expectFailure(await subject("CN=system:node:worker-1"), badOrg);
  expectFailure(await subject("O=system:nodes, O=system:masters, CN=system:node:worker-1"), badOrg);
  const badCn = "subject common name does not begin with system:node:";
  expectFailure(await subject("O=system:nodes, CN=worker-1"), badCn);
  expectFailure(await subject("O=system:nodes, CN=system:nodes:worker-1"), badCn);
  expectFailure(await subject("O=system:nodes"), badCn);
  expectFailure(
    await subject("O=system:nodes, CN=system:node:"),
    "subject common name has no node name after system:node:",
  );
  expectFailure(
    await subject("O=system:nodes, CN=system:node:a, CN=admin"),
    "subject has more than one common name",
  );

  const sans = async (san: x509.JsonGeneralName) =>
    checkSignerRules(s, await makeCsr({ name: NODE, sans: [san] }), CLIENT_USAGES);
  expectFailure(
    await sans({ type: "dns", value: "worker-1" }),
    "DNS subjectAltNames are not allowed",
  );
  expectFailure(
    await sans({ type: "email", value: "n@example.com" }),
    "Email subjectAltNames are not allowed",
  );
  expectFailure(
    await sans({ type: "ip", value: "10.0.0.1" }),
    "IP subjectAltNames are not allowed",
  );
  expectFailure(
    await sans({ type: "url", value: "spiffe://x/y" }),
    "URI subjectAltNames are not allowed",
  );

  const usageError = "usages did not match [client auth digital signature key encipherment]";
  expectFailure(checkSignerRules(s, good, ["client auth"]), usageError);
  expectFailure(checkSignerRules(s, good, ["key encipherment", "client auth"]), usageError);
  expectFailure(checkSignerRules(s, good, ["digital signature", "server auth"]), usageError);
  expectFailure(checkSignerRules(s, good, [...CLIENT_USAGES, "server auth"]), usageError);
});

Deno.test("rules: nodeagent-serving", async () => {
  const s = SIGNER_NODEAGENT_SERVING;
  const dns = { type: "dns", value: "worker-1.example.com" } as const;
  const ip = { type: "ip", value: "10.0.0.7" } as const;
  const csr = (name: string, sans: x509.JsonGeneralName[]) => makeCsr({ name, sans });

  assert.deepEqual(checkSignerRules(s, await csr(NODE, [dns, ip]), SERVING_USAGES), { ok: true });
  assert.deepEqual(checkSignerRules(s, await csr(NODE, [ip]), SERVING_USAGES), { ok: true });
  assert.deepEqual(
    checkSignerRules(s, await csr(NODE, [dns]), ["digital signature", "server auth"]),
    { ok: true },
  );

  expectFailure(
    checkSignerRules(s, await makeCsr({ name: NODE }), SERVING_USAGES),
    "DNS or IP subjectAltName is required",
  );
  expectFailure(
    checkSignerRules(
      s,
      await csr(NODE, [dns, { type: "email", value: "n@example.com" }]),
      SERVING_USAGES,
    ),
    "Email subjectAltNames are not allowed",
  );
  expectFailure(
    checkSignerRules(
      s,
      await csr(NODE, [dns, { type: "url", value: "https://n.example" }]),
      SERVING_USAGES,
    ),
    "URI subjectAltNames are not allowed",
  );
  expectFailure(
    checkSignerRules(s, await csr("O=dev, CN=system:node:worker-1", [dns]), SERVING_USAGES),
    "subject organization is not system:nodes",
  );
  expectFailure(
    checkSignerRules(s, await csr("O=system:nodes, CN=worker-1", [dns]), SERVING_USAGES),
    "subject common name does not begin with system:node:",
  );
  const usageError = "usages did not match [digital signature key encipherment server auth]";
  const good = await csr(NODE, [dns]);
  expectFailure(checkSignerRules(s, good, CLIENT_USAGES), usageError);
  expectFailure(checkSignerRules(s, good, ["server auth"]), usageError);
  expectFailure(checkSignerRules(s, good, [...SERVING_USAGES, "client auth"]), usageError);
});

Deno.test("rules: other signer names are not recognized", async () => {
  expectFailure(
    checkSignerRules("example.com/custom", await makeCsr(), CLIENT_USAGES),
    'unrecognized signerName: "example.com/custom"',
  );
});
