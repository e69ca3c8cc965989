/**
 * kube's CertificateApproval and CertificateSigning admission plugins (validating): approving
 * or denying a CertificateSigningRequest (its `/approval` subresource) needs `approve`, and
 * issuing its certificate (a `/status` write that changes `status.certificate`) needs `sign`,
 * on the `signers` resource named by the request's signer, or `<domain>/*` for all of that
 * domain's signers.
 */

import { forbidden, type KubeObject } from "../api/mod.ts";
import type { AdmissionAttributes, AdmissionPlugin } from "../admission/mod.ts";

const GROUP = "certificates.platform.io";
const RESOURCE = "certificatesigningrequests";

export const CERTIFICATE_APPROVAL = "CertificateApproval";
export const CERTIFICATE_SIGNING = "CertificateSigning";

export const certificateApproval: AdmissionPlugin = {
  name: CERTIFICATE_APPROVAL,
  operations: ["UPDATE"],
  async validate(a) {
    if (isCsr(a) && a.subresource === "approval") await checkSigner(a, "approve");
  },
};

export const certificateSigning: AdmissionPlugin = {
  name: CERTIFICATE_SIGNING,
  operations: ["UPDATE"],
  async validate(a) {
    if (!isCsr(a) || a.subresource !== "status") return;
    const issued = (a.object?.status?.certificate ?? "") !==
      (a.oldObject?.status?.certificate ?? "");
    if (issued) await checkSigner(a, "sign");
  },
};

function isCsr(a: AdmissionAttributes): boolean {
  return a.resource.group === GROUP && a.resource.resource === RESOURCE;
}

async function checkSigner(a: AdmissionAttributes, verb: "approve" | "sign"): Promise<void> {
  if (!a.authorize) return;
  const obj = a.object as KubeObject;
  const signerName: string = obj.spec?.signerName ?? "";
  const domain = signerName.split("/")[0];
  for (const name of [signerName, `${domain}/*`]) {
    const attributes = { verb, resourceRequest: true, apiGroup: GROUP, resource: "signers", name };
    if (await a.authorize(attributes)) return;
  }
  throw forbidden(
    { group: GROUP, resource: RESOURCE },
    obj.metadata?.name ?? "",
    `user not permitted to ${verb} requests with signerName ${JSON.stringify(signerName)}`,
  );
}
