/**
 * `certificates.platform.io/v1` certificatesigningrequests (spec 02): the request is checked
 * at creation and immutable after; `/approval` changes only the Approved and Denied
 * conditions, `/status` only the certificate and the other conditions; the condition and
 * certificate rules hold on every write. Approving needs `approve` on the request's signer,
 * issuing needs `sign`: admission plugins check those (lib/certificates/admission.ts).
 */

import { type FieldError, humanDuration, jsonEqual, rfc3339 } from "../api/mod.ts";
import {
  defaultConditionTimes,
  validateCertificate,
  validateConditions,
  validateCsrSpec,
} from "../certificates/mod.ts";
import { ALL_VERBS, type KubeObject, type ResourceDefinition } from "../registry/mod.ts";
import { AGE } from "../codec/mod.ts";

function conditionsOf(status: KubeObject | undefined): KubeObject[] {
  return Array.isArray(status?.conditions) ? status.conditions : [];
}

const isDecision = (c: KubeObject) => c?.type === "Approved" || c?.type === "Denied";

/** Each changed field of the spec, named: the spec is immutable once created. */
function specChanges(spec: KubeObject | undefined, old: KubeObject | undefined): FieldError[] {
  if (spec === undefined || spec === null) return [{ type: "Required", field: "spec" }];
  const keys = new Set([...Object.keys(spec), ...Object.keys(old ?? {})]);
  return [...keys].filter((k) => !jsonEqual(spec[k], old?.[k])).map((k) => ({
    type: "Invalid",
    field: `spec.${k}`,
    value: spec[k] ?? null,
    detail: "field is immutable",
  }));
}

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
      // Status is written through its subresources; it starts empty, as in kube.
      o.status = {};
      o.spec ??= {};
      // The requester's identity comes from authentication, never from the client.
      o.spec.username = ctx.user.username;
      if (ctx.user.uid) o.spec.uid = ctx.user.uid;
      else delete o.spec.uid;
      o.spec.groups = [...ctx.user.groups];
      if (ctx.user.extra && Object.keys(ctx.user.extra).length) o.spec.extra = ctx.user.extra;
      else delete o.spec.extra;
    },
    validateCreate: (o) => validateCsrSpec(o.spec),
    prepareForUpdate(o, old, ctx) {
      if (ctx.subresource !== "approval" && ctx.subresource !== "status") return;
      // /approval owns the Approved and Denied conditions, /status everything else of status.
      const approval = ctx.subresource === "approval";
      const conditions = [
        ...conditionsOf(o.status).filter((c) => isDecision(c) === approval),
        ...conditionsOf(old.status).filter((c) => isDecision(c) !== approval),
      ];
      o.status = structuredClone(approval ? old.status ?? {} : o.status ?? {});
      if (conditions.length) o.status.conditions = structuredClone(conditions);
      else delete o.status.conditions;
      defaultConditionTimes(o.status, old.status, rfc3339(new Date()));
    },
    validateUpdate(o, old, ctx) {
      const errors = [
        ...(ctx.subresource ? [] : specChanges(o.spec, old.spec)),
        ...validateConditions(o.status, old.status),
        ...validateCertificate(o.status, old.status),
      ];
      return errors;
    },
  },
};
