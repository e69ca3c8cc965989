/**
 * Namespace strategy. A namespace is created Active with the `kubernetes` finalizer in
 * `spec.finalizers`; deleting it sets phase Terminating, and the namespace lifecycle controller
 * (`lib/registry/namespace_lifecycle.ts`) empties it and then removes the finalizer.
 */

import type { KubeObject, Strategy } from "../definition.ts";

/** The finalizer the namespace lifecycle controller owns. */
export const NAMESPACE_FINALIZER = "kubernetes";

export const namespaceStrategy: Strategy = {
  specFields: ["spec"],
  prepareForCreate(obj: KubeObject) {
    obj.spec ??= {};
    const finalizers: string[] = Array.isArray(obj.spec.finalizers) ? obj.spec.finalizers : [];
    if (!finalizers.includes(NAMESPACE_FINALIZER)) finalizers.push(NAMESPACE_FINALIZER);
    obj.spec.finalizers = finalizers;
    obj.status = { phase: "Active" };
  },
  prepareForUpdate(obj: KubeObject, old: KubeObject, ctx) {
    if (ctx.subresource === "finalize") {
      // /finalize changes only spec.finalizers.
      const finalizers = obj.spec?.finalizers;
      Object.assign(obj, structuredClone({ ...old, metadata: obj.metadata }));
      obj.spec = { ...(old.spec ?? {}), finalizers: Array.isArray(finalizers) ? finalizers : [] };
      return;
    }
    // spec.finalizers changes only through /finalize; the phase never goes back to Active.
    obj.spec = { ...(obj.spec ?? {}), finalizers: old.spec?.finalizers ?? [] };
    if (!obj.spec.finalizers.length) delete obj.spec.finalizers;
    if (old.status?.phase === "Terminating") {
      obj.status = { ...(obj.status ?? {}), phase: "Terminating" };
    }
  },
  prepareForDelete(obj: KubeObject) {
    obj.status = { ...(obj.status ?? {}), phase: "Terminating" };
  },
  finalizersPending(obj: KubeObject) {
    return Array.isArray(obj.spec?.finalizers) && obj.spec.finalizers.length > 0;
  },
};
