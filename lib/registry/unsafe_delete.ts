/**
 * The unsafe delete of a corrupt object (kube's AllowUnsafeMalformedObjectDeletion, KEP-3926):
 * an object whose stored value the server cannot read (encrypted with a key no longer
 * configured) is removed from the store by its key alone. Nothing reads the object, so
 * finalizers, preconditions, admission and the strategy's after-delete hook are all skipped.
 * Only for objects that are corrupt: a readable one is refused, as kube refuses it.
 */

import { invalid, notFound } from "../api/mod.ts";
import { unreadableReason } from "../storage/mod.ts";
import type { RegistryCore } from "./core.ts";

/** The option's name in DeleteOptions (query parameter and body field). */
export const UNSAFE_DELETE_OPTION = "ignoreStoreReadErrorWithClusterBreakingPotential";

/**
 * Removes the object at (namespace, name) if its stored value is unreadable. 404 when it is
 * missing; 422 (kube's message) when it reads fine. A dry run checks and removes nothing.
 * Resolves with the deletion's revision (the current one for a dry run).
 */
export async function deleteCorruptObject(
  core: RegistryCore,
  namespace: string,
  name: string,
  dryRun = false,
): Promise<number> {
  const key = core.key(namespace, name);
  const kv = await core.read(() => core.store.get(key));
  if (!kv) throw notFound(core.gr, name);
  if (unreadableReason(kv.value) === undefined) {
    // kube reports it against the resource's plural as the kind (its GroupKind{group, resource}).
    throw invalid(core.gr.resource, core.gr.group, name, [{
      type: "Invalid",
      field: UNSAFE_DELETE_OPTION,
      value: true,
      detail: "is exclusively used to delete corrupt object(s), try again by removing this option",
    }]);
  }
  if (dryRun) return core.store.currentRevision();
  try {
    // Only this stored value: a concurrent delete and re-create is not removed unread.
    const gone = await core.store.delete(key, kv.modRevision);
    return gone.modRevision;
  } catch (err) {
    throw core.translate(err, name);
  }
}
