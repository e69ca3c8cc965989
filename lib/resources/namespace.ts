/**
 * Namespace strategy. A namespace is created Active with the `kubernetes` finalizer in
 * `spec.finalizers`; deleting it sets phase Terminating, and the namespace lifecycle controller
 * (`lib/controllers/namespace_lifecycle.ts`) empties it and then removes the finalizer.
 *
 * Every write also sets the label `kubernetes.io/metadata.name` to the namespace's name, as
 * kube does: a client cannot change or remove it (its value is simply put back), so selectors
 * can pick namespaces by name.
 */

import type { KubeObject, Strategy } from "../registry/mod.ts";

/** The finalizer the namespace lifecycle controller owns. */
export const NAMESPACE_FINALIZER = "kubernetes";

/** The label every namespace carries, equal to its name. */
export const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";

/** Sets the name label. Labels of the wrong type are left for validation to report. */
export function setNamespaceNameLabel(obj: KubeObject): void {
  const meta = obj.metadata;
  if (typeof meta?.name !== "string" || !meta.name) return;
  meta.labels ??= {};
  if (typeof meta.labels !== "object" || Array.isArray(meta.labels)) return;
  meta.labels[NAMESPACE_NAME_LABEL] = meta.name;
}

export const namespaceStrategy: Strategy = {
  specFields: ["spec"],
  prepareForCreate(obj: KubeObject) {
    obj.spec ??= {};
    const finalizers: string[] = Array.isArray(obj.spec.finalizers) ? obj.spec.finalizers : [];
    if (!finalizers.includes(NAMESPACE_FINALIZER)) finalizers.push(NAMESPACE_FINALIZER);
    obj.spec.finalizers = finalizers;
    obj.status = { phase: "Active" };
    setNamespaceNameLabel(obj);
  },
  prepareForUpdate(obj: KubeObject, old: KubeObject, ctx) {
    if (ctx.subresource === "finalize") {
      // /finalize changes only spec.finalizers.
      const finalizers = obj.spec?.finalizers;
      Object.assign(obj, structuredClone({ ...old, metadata: obj.metadata }));
      obj.spec = { ...(old.spec ?? {}), finalizers: Array.isArray(finalizers) ? finalizers : [] };
      setNamespaceNameLabel(obj);
      return;
    }
    // spec.finalizers changes only through /finalize; the phase never goes back to Active.
    obj.spec = { ...(obj.spec ?? {}), finalizers: old.spec?.finalizers ?? [] };
    if (!obj.spec.finalizers.length) delete obj.spec.finalizers;
    if (old.status?.phase === "Terminating") {
      obj.status = { ...(obj.status ?? {}), phase: "Terminating" };
    }
    setNamespaceNameLabel(obj);
  },
  prepareForDelete(obj: KubeObject) {
    obj.status = { ...(obj.status ?? {}), phase: "Terminating" };
  },
  finalizersPending(obj: KubeObject) {
    return Array.isArray(obj.spec?.finalizers) && obj.spec.finalizers.length > 0;
  },
};
