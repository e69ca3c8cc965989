/**
 * Corrupt objects under kube's AllowUnsafeMalformedObjectDeletion gate (KEP-3926): objects
 * whose stored value the server cannot read (encrypted with a key no longer configured).
 * A list names every one it met (StorageReadError), and the unsafe delete removes one from the
 * store by its key alone. Nothing reads the object, so finalizers, preconditions, admission and
 * the strategy's after-delete hook are all skipped. Only for objects that are corrupt: a
 * readable one is refused, as kube refuses it.
 */

import { invalid, notFound, type StatusCause, StatusError } from "../api/mod.ts";
import { type KeyValue, unreadableReason } from "../storage/mod.ts";
import type { RegistryCore } from "./core.ts";

/** How many corrupt objects a list error names (then one TooMany cause), as kube. */
const MAX_LISTED = 100;

/**
 * With the gate on (`core.corruptObjectErrors`), a list that meets unreadable values fails
 * with kube's StorageReadError naming each key (up to 100) instead of stopping at the first.
 */
export function throwIfCorruptItems(core: RegistryCore, prefix: string, kvs: KeyValue[]): void {
  if (!core.corruptObjectErrors) return;
  const causes: StatusCause[] = [];
  for (const kv of kvs) {
    const reason = unreadableReason(kv.value);
    if (reason === undefined) continue;
    if (causes.length === MAX_LISTED) {
      causes.push({ reason: "TooMany", message: "too many errors, the list is truncated" });
      break;
    }
    causes.push({
      reason: "UnexpectedServerResponse",
      message: `data from the storage is not transformable revision=${kv.modRevision}: ${reason}`,
      field: kv.key,
    });
  }
  if (!causes.length) return;
  throw new StatusError(
    500,
    "StorageReadError",
    `failed to read one or more ${core.gr.resource} from the storage`,
    { details: { name: prefix, kind: core.gr.resource, causes } },
  );
}

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
