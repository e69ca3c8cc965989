/**
 * `certificates.platform.io/v1` certificatesigningrequests: plain CRUD plus `/status` for now.
 * Spec 02's full rules (request parsing, conditions, approval, signer) arrive with the CSR issue.
 */

import { ALL_VERBS, type KubeObject, type ResourceDefinition } from "../definition.ts";
import { AGE } from "./columns.ts";
import { humanDuration } from "../../api/time.ts";

function conditionSummary(o: KubeObject): string {
  const conditions = Array.isArray(o.status?.conditions) ? o.status.conditions : [];
  const types = conditions.filter((c: KubeObject) => c?.status !== "False").map((c: KubeObject) =>
    c.type
  );
  if (o.status?.certificate) types.push("Issued");
  return types.length ? types.join(",") : "Pending";
}

export const certificateSigningRequests: ResourceDefinition = {
  group: "certificates.platform.io",
  version: "v1",
  kind: "CertificateSigningRequest",
  emptyObject: { spec: {}, status: {} },
  plural: "certificatesigningrequests",
  singular: "certificatesigningrequest",
  namespaced: false,
  shortNames: ["csr"],
  verbs: ALL_VERBS,
  subresources: ["status", "approval"],
  schema: "io.k8s.api.certificates.v1.CertificateSigningRequest",
  nameValidation: "pathSegment",
  fieldSelectors: { "spec.signerName": (o) => o.spec?.signerName },
  printerColumns: [
    AGE,
    { name: "SignerName", type: "string", value: (o) => o.spec?.signerName },
    { name: "Requestor", type: "string", value: (o) => o.spec?.username },
    {
      name: "RequestedDuration",
      type: "string",
      value: (o) =>
        typeof o.spec?.expirationSeconds === "number"
          ? humanDuration(o.spec.expirationSeconds * 1000)
          : "<none>",
    },
    { name: "Condition", type: "string", value: conditionSummary },
  ],
  strategy: {
    specFields: ["spec"],
    prepareForCreate(o, ctx) {
      delete o.status;
      o.spec ??= {};
      // The requester's identity comes from authentication, never from the client.
      o.spec.username = ctx.user.username;
      if (ctx.user.uid) o.spec.uid = ctx.user.uid;
      else delete o.spec.uid;
      o.spec.groups = ctx.user.groups;
      if (ctx.user.extra && Object.keys(ctx.user.extra).length) o.spec.extra = ctx.user.extra;
      else delete o.spec.extra;
    },
    prepareForUpdate(o, old) {
      o.status = old.status;
    },
  },
};
