/** `coordination.platform.io/v1` leases. */

import { ALL_VERBS, type ResourceDefinition } from "../registry/mod.ts";
import { AGE } from "../codec/mod.ts";

export const leases: ResourceDefinition = {
  group: "coordination.platform.io",
  version: "v1",
  kind: "Lease",
  emptyObject: { spec: {} },
  plural: "leases",
  singular: "lease",
  namespaced: true,
  verbs: ALL_VERBS,
  schema: "io.k8s.api.coordination.v1.Lease",
  printerColumns: [
    { name: "Holder", type: "string", value: (o) => o.spec?.holderIdentity ?? "" },
    AGE,
  ],
  strategy: {
    validateCreate: (o) => validateLease(o),
    validateUpdate: (o) => validateLease(o),
  },
};

function validateLease(o: Record<string, unknown>) {
  const spec = (o.spec ?? {}) as Record<string, unknown>;
  const errors = [];
  for (const f of ["leaseDurationSeconds", "leaseTransitions"]) {
    const v = spec[f];
    if (typeof v === "number" && v < (f === "leaseDurationSeconds" ? 1 : 0)) {
      errors.push({
        type: "Invalid" as const,
        field: `spec.${f}`,
        value: v,
        detail: f === "leaseDurationSeconds"
          ? "must be greater than 0"
          : "must be greater than or equal to 0",
      });
    }
  }
  return errors;
}
