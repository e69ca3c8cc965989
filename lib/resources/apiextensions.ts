/**
 * `apiextensions.platform.io/v1` customresourcedefinitions: the built-in resource whose
 * objects define the others. Its strategy defaults and validates CRDs (see
 * `lib/apiextensions/validation.ts`); the CRD controller (`lib/apiextensions/controller.ts`)
 * serves what they define and keeps their status.
 *
 * Deleting a CRD first only marks it: the strategy adds the cleanup finalizer and a
 * `Terminating` condition, the controller deletes the custom resources, then removes the
 * finalizer, and the CRD goes away.
 */

import { ALL_VERBS, type KubeObject, type ResourceDefinition } from "../registry/mod.ts";
import { CREATED_AT } from "../codec/mod.ts";
import { rfc3339 } from "../api/mod.ts";
import {
  CLEANUP_FINALIZER,
  defaultCustomResourceDefinition,
  recordReviewGroup,
  setCondition,
  validateCustomResourceDefinition,
  validateCustomResourceDefinitionUpdate,
} from "../apiextensions/mod.ts";

export const APIEXTENSIONS_GROUP = "apiextensions.platform.io";

/** The storage version goes into `status.storedVersions` (mutates `crd.status`). */
function recordStoredVersion(crd: KubeObject): void {
  const versions = Array.isArray(crd.spec?.versions) ? crd.spec.versions : [];
  const storage = versions.find((v: KubeObject) => v?.storage === true)?.name;
  if (typeof storage !== "string" || !storage) return;
  const stored: string[] = Array.isArray(crd.status.storedVersions)
    ? crd.status.storedVersions
    : [];
  if (!stored.includes(storage)) crd.status.storedVersions = [...stored, storage];
}

export const customResourceDefinitions: ResourceDefinition = {
  group: APIEXTENSIONS_GROUP,
  version: "v1",
  kind: "CustomResourceDefinition",
  plural: "customresourcedefinitions",
  singular: "customresourcedefinition",
  namespaced: false,
  shortNames: ["crd", "crds"],
  categories: ["api-extensions"],
  verbs: ALL_VERBS,
  subresources: ["status"],
  schema: "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
  printerColumns: [CREATED_AT],
  strategy: {
    specFields: ["spec"],
    prepareForCreate(crd, ctx) {
      defaultCustomResourceDefinition(crd);
      crd.status = {};
      recordStoredVersion(crd);
      // The ConversionReview spelling its webhook is sent (lib/apiextensions).
      recordReviewGroup(crd, ctx);
    },
    prepareForUpdate(crd, _old, ctx) {
      defaultCustomResourceDefinition(crd);
      recordReviewGroup(crd, ctx);
      // The registry kept the stored status (a status subresource exists); copy before
      // changing it, the stored object is shared.
      crd.status = structuredClone(crd.status ?? {});
      recordStoredVersion(crd);
    },
    validateCreate: (crd) => validateCustomResourceDefinition(crd),
    validateUpdate: (crd, old) => [
      ...validateCustomResourceDefinition(crd),
      ...validateCustomResourceDefinitionUpdate(crd, old),
    ],
    // The first delete always only marks the CRD: its custom resources go first.
    finalizersPending: (crd) => !crd.metadata?.deletionTimestamp,
    prepareForDelete(crd) {
      const finalizers: string[] = Array.isArray(crd.metadata.finalizers)
        ? crd.metadata.finalizers
        : [];
      if (!finalizers.includes(CLEANUP_FINALIZER)) {
        crd.metadata.finalizers = [...finalizers, CLEANUP_FINALIZER];
      }
      crd.status = structuredClone(crd.status ?? {});
      setCondition(crd.status, {
        type: "Terminating",
        status: "True",
        reason: "InstanceDeletionPending",
        message:
          "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
      }, crd.metadata.deletionTimestamp ?? rfc3339(new Date()));
    },
  },
};
