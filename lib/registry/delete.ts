/**
 * Deletes and finalizers: an object that finalizers hold is only marked (deletionTimestamp)
 * and stays until the last one is removed (update.ts then completes the deletion); any other
 * object leaves the store at once. Also deletecollection, one delete per selected object.
 */

import { conflict, notFound, rfc3339, StatusError } from "../api/mod.ts";
import { isStoreError } from "../storage/mod.ts";
import type { KubeObject, ResourceDefinition } from "./definition.ts";
import { MAX_UPDATE_RETRIES, type RegistryCore } from "./core.ts";
import { admissionAttributes, SERVER_CONTEXT } from "./admission.ts";
import { listObjects, type ListResult } from "./list.ts";
import type { DeleteCollectionOptions, DeleteOptions, DeleteResult } from "./write_options.ts";

/** Whether finalizers (metadata.finalizers, or the strategy's own) still hold `obj`. */
export function finalizersPending(def: ResourceDefinition, obj: KubeObject): boolean {
  const meta = obj.metadata ?? {};
  if (Array.isArray(meta.finalizers) && meta.finalizers.length) return true;
  return def.strategy?.finalizersPending?.(obj) ?? false;
}

/** Deletes one object (see `ResourceRegistry.delete`). */
export async function deleteObject(
  core: RegistryCore,
  namespace: string,
  name: string,
  opts: DeleteOptions,
): Promise<DeleteResult> {
  const { def } = core;
  const key = core.key(namespace, name);
  for (let attempt = 0;; attempt++) {
    const kv = await core.readStored(key);
    if (!kv) throw notFound(core.gr, name);
    const obj = core.decode(kv);
    const pre = opts.preconditions ?? {};
    if (pre.uid && pre.uid !== obj.metadata.uid) {
      throw conflict(
        core.gr,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${obj.metadata.uid}`,
      );
    }
    if (pre.resourceVersion && pre.resourceVersion !== obj.metadata.resourceVersion) {
      throw conflict(
        core.gr,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion}`,
      );
    }
    const admission = admissionAttributes(core, {
      operation: "DELETE",
      namespace,
      name,
      ctx: opts.context ?? SERVER_CONTEXT,
      dryRun: opts.dryRun,
      oldObject: obj,
    });
    await core.admission.admit(admission);
    await core.admission.validate(admission);
    if (finalizersPending(def, obj)) {
      if (obj.metadata.deletionTimestamp) return { object: obj, deleted: false };
      obj.metadata.deletionTimestamp = rfc3339(core.clock.now());
      obj.metadata.deletionGracePeriodSeconds = 0;
      def.strategy?.prepareForDelete?.(obj);
      if (opts.dryRun) return { object: obj, deleted: false };
      try {
        const next = await core.store.update(key, await core.encode(obj), kv.modRevision);
        obj.metadata.resourceVersion = String(next.modRevision);
        return { object: obj, deleted: false };
      } catch (err) {
        if (isStoreError(err, "Conflict") && attempt < MAX_UPDATE_RETRIES) continue;
        throw core.translate(err, name);
      }
    }
    if (opts.dryRun) return { object: obj, deleted: true };
    try {
      const gone = await core.store.delete(key, kv.modRevision);
      obj.metadata.resourceVersion = String(gone.modRevision);
      await def.strategy?.afterDelete?.(obj);
      return { object: obj, deleted: true };
    } catch (err) {
      if (isStoreError(err, "Conflict") && attempt < MAX_UPDATE_RETRIES) continue;
      throw core.translate(err, name);
    }
  }
}

/** Deletes every object the filter selects; returns them (as deleted or as marked). */
export async function deleteCollection(
  core: RegistryCore,
  namespace: string,
  opts: DeleteCollectionOptions,
): Promise<Pick<ListResult, "items" | "resourceVersion">> {
  const listed = await listObjects(core, namespace, { filter: opts.filter });
  const items: KubeObject[] = [];
  for (const obj of listed.items) {
    try {
      const res = await deleteObject(core, obj.metadata.namespace ?? "", obj.metadata.name, {
        dryRun: opts.dryRun,
        context: opts.context,
        preconditions: { uid: obj.metadata.uid },
      });
      items.push(res.object);
    } catch (err) {
      // Deleted or replaced meanwhile: not ours to delete any more.
      if (err instanceof StatusError && (err.code === 404 || err.code === 409)) continue;
      throw err;
    }
  }
  return { items, resourceVersion: String(core.store.currentRevision()) };
}
