import assert from "node:assert/strict";
import type { AdmissionAttributes } from "../admission/mod.ts";
import { StatusError } from "../api/mod.ts";
import { certificateApproval, certificateSigning } from "./admission.ts";

const CSR = {
  metadata: { name: "req" },
  spec: { signerName: "example.com/serving" },
  status: {},
};

function attrs(subresource: string, allowed: string[], asked: string[]): AdmissionAttributes {
  return {
    operation: "UPDATE",
    resource: {
      group: "certificates.platform.io",
      version: "v1",
      resource: "certificatesigningrequests",
    },
    kind: { group: "certificates.platform.io", version: "v1", kind: "CertificateSigningRequest" },
    subresource,
    namespace: "",
    name: "req",
    object: structuredClone(CSR),
    oldObject: structuredClone(CSR),
    user: { username: "bob", groups: [] },
    dryRun: false,
    warnings: [],
    auditAnnotations: {},
    authorize: (a) => {
      asked.push(`${a.verb} ${a.apiGroup}/${a.resource}/${a.name}`);
      return Promise.resolve(allowed.includes(`${a.verb} ${a.name}`));
    },
  };
}

Deno.test("CertificateApproval: /approval needs approve on the signer or its domain", async () => {
  const asked: string[] = [];
  await certificateApproval.validate!(attrs("approval", ["approve example.com/*"], asked));
  assert.deepEqual(asked, [
    "approve certificates.platform.io/signers/example.com/serving",
    "approve certificates.platform.io/signers/example.com/*",
  ]);
  await assert.rejects(
    async () => await certificateApproval.validate!(attrs("approval", [], [])),
    (err: unknown) =>
      err instanceof StatusError && err.code === 403 &&
      err.message.includes(
        'user not permitted to approve requests with signerName "example.com/serving"',
      ),
  );
  // Other subresources are not its business.
  await certificateApproval.validate!(attrs("status", [], []));
});

Deno.test("CertificateSigning: a /status write that issues a certificate needs sign", async () => {
  const unchanged = attrs("status", [], []);
  await certificateSigning.validate!(unchanged);
  const issuing = attrs("status", [], []);
  issuing.object!.status.certificate = "LS0t";
  await assert.rejects(async () => await certificateSigning.validate!(issuing), StatusError);
  const allowed = attrs("status", ["sign example.com/serving"], []);
  allowed.object!.status.certificate = "LS0t";
  await certificateSigning.validate!(allowed);
});
