/**
 * NamespaceLifecycle (kube's plugin of that name, in its mutating phase): nothing is created in
 * a namespace that does not exist (404) or is being deleted (403 NamespaceTerminating). Updates
 * and deletes inside a terminating namespace go on, so that its finalizers can empty it.
 */

import { forbidden, type GroupResource, notFound, type StatusError } from "../api/mod.ts";
import type { AdmissionPlugin } from "./plugin.ts";

/** A namespace's state as the plugin needs it: missing (undefined), active or terminating. */
export type NamespacePhase = "Active" | "Terminating";

/** Looks a namespace up (the server reads its store; no API round trip). */
export type NamespaceLookup = (name: string) => Promise<NamespacePhase | undefined>;

export const NAMESPACE_LIFECYCLE = "NamespaceLifecycle";

export function namespaceLifecycle(lookup: NamespaceLookup): AdmissionPlugin {
  return {
    name: NAMESPACE_LIFECYCLE,
    operations: ["CREATE"],
    async admit(a) {
      // Cluster-scoped objects, the namespaces themselves among them, have no namespace.
      if (!a.namespace) return;
      const phase = await lookup(a.namespace);
      if (!phase) throw notFound({ group: "", resource: "namespaces" }, a.namespace);
      if (phase === "Terminating") {
        const gr = { group: a.resource.group, resource: a.resource.resource };
        throw namespaceTerminating(gr, a.name, a.namespace);
      }
    },
  };
}

/** Forbidden for creates in a terminating namespace, in kube's words. */
export function namespaceTerminating(
  gr: GroupResource,
  name: string,
  namespace: string,
): StatusError {
  const why =
    `unable to create new content in namespace ${namespace} because it is being terminated`;
  return forbidden(gr, name, why, [{
    reason: "NamespaceTerminating",
    message: why,
    field: "metadata.namespace",
  }]);
}
