/**
 * Updates and patches: both read the stored object, make the object to store (a PUT's body; a
 * patch or an apply configuration applied to the stored object), and write it over the stored
 * one with one conditional Store call, retrying on concurrent writes unless the client named
 * a resourceVersion. A PUT or an apply of a missing object creates it.
 */

import { conflict, notFound, OBJECT_MODIFIED, validateObjectMetaUpdate } from "../api/mod.ts";
import { applyConfig, trackUpdate } from "../apply/mod.ts";
import { isStoreError, type KeyValue } from "../storage/mod.ts";
import type { KubeObject, StrategyContext } from "./definition.ts";
import { MAX_UPDATE_RETRIES, type RegistryCore } from "./core.ts";
import { admissionAttributes, blameMutations } from "./admission.ts";
import { createObject } from "./create.ts";
import { finalizersPending } from "./delete.ts";
import {
  applyAcrossVersions,
  changesAtOtherVersions,
  checkApplyConfig,
  managerContext,
  withoutObsoleteManagers,
} from "./managed_fields.ts";
import { patchedObject, type PatchType } from "./patching.ts";
import { prepareUpdate, sameStoredState } from "./prepare_update.ts";
import { checkBody, checkName, checkTypes, validateObject } from "./validation.ts";
import type {
  PatchOptions,
  PatchRequest,
  UpdateOptions,
  UpsertResult,
  WriteResult,
} from "./write_options.ts";

/** How a replacement is written: see {@link replaceObject}. */
export interface ReplaceHow {
  /** The client named the resourceVersion: a concurrent write is a 409, not a retry. */
  conditional: boolean;
  /** The managed fields were computed by an apply (not tracked here). */
  applied: boolean;
  /** No more retries: a concurrent write is a 409. */
  lastAttempt: boolean;
}

/** A PUT (see `ResourceRegistry.update`). */
export async function updateObject(
  core: RegistryCore,
  namespace: string,
  name: string,
  body: KubeObject,
  ctx: StrategyContext,
  opts: UpdateOptions,
): Promise<UpsertResult> {
  const input = checkBody(core, body);
  checkName(input, name);
  const subresource = opts.subresource ?? "";
  const key = core.key(namespace, name);
  for (let attempt = 0;; attempt++) {
    const kv = await core.readStored(key);
    if (!kv) {
      if (subresource) throw notFound(core.gr, name);
      if (input.metadata.resourceVersion) throw notFound(core.gr, name);
      await opts.beforeCreate?.();
      const res = await createObject(core, namespace, input, ctx, opts);
      return { ...res, created: true };
    }
    const old = withoutObsoleteManagers(core, core.decode(kv));
    const wanted = input.metadata.resourceVersion;
    if (wanted && wanted !== old.metadata.resourceVersion) {
      throw conflict(core.gr, name, OBJECT_MODIFIED);
    }
    const res = await replaceObject(core, kv, old, structuredClone(input), ctx, opts, {
      conditional: !!wanted,
      applied: false,
      lastAttempt: attempt >= MAX_UPDATE_RETRIES,
    });
    if (res) return { ...res, created: false };
  }
}

/** A PATCH of any type, apply included (see `ResourceRegistry.patch`). */
export async function patchObject(
  core: RegistryCore,
  namespace: string,
  name: string,
  patch: PatchRequest,
  ctx: StrategyContext,
  opts: PatchOptions,
): Promise<UpsertResult> {
  const subresource = opts.subresource ?? "";
  const key = core.key(namespace, name);
  const config = patch.type === "apply" ? checkApplyConfig(core, patch.body, name) : undefined;
  const force = opts.force ?? false;
  for (let attempt = 0;; attempt++) {
    const kv = await core.readStored(key);
    if (!kv) {
      if (!config || subresource) throw notFound(core.gr, name);
      if (config.metadata.resourceVersion) throw notFound(core.gr, name);
      await opts.beforeCreate?.();
      // applyConfig copies what it takes from the configuration and never changes it.
      const obj = applyConfig(undefined, config, {
        ...managerContext(core, opts, undefined, config),
        force,
      });
      const res = await createObject(core, namespace, obj, ctx, opts, { applied: true });
      return { ...res, created: true };
    }
    const old = withoutObsoleteManagers(core, core.decode(kv));
    let input: KubeObject;
    let wanted: string | undefined;
    if (config) {
      wanted = config.metadata.resourceVersion;
      if (wanted && wanted !== old.metadata.resourceVersion) {
        throw conflict(core.gr, name, OBJECT_MODIFIED);
      }
      // The result shares unchanged subtrees with `old`: copy before the write path mutates it.
      input = structuredClone(
        await applyAcrossVersions(core, old, config, {
          ...managerContext(core, opts, old, config),
          force,
        }),
      );
    } else {
      input = patchedObject(
        patch.type as Exclude<PatchType, "apply">,
        old,
        patch.body,
        core.fieldType(),
      );
      input = checkBody(core, input);
      checkName(input, name);
      // A patch that sets another resourceVersion than the stored one is stale. One that
      // sets the stored one, or none, proceeds; after a concurrent write the retry patches
      // the new object, and a patch naming the old version then fails here.
      const rv = input.metadata.resourceVersion;
      if (rv !== undefined && rv !== old.metadata.resourceVersion) {
        throw conflict(core.gr, name, OBJECT_MODIFIED);
      }
      delete input.metadata.resourceVersion;
    }
    const res = await replaceObject(core, kv, old, input, ctx, opts, {
      conditional: !!wanted,
      applied: !!config,
      lastAttempt: attempt >= MAX_UPDATE_RETRIES,
    });
    if (res) return { ...res, created: false };
  }
}

/**
 * Writes `input` over the stored `old` (read as `kv`): server-owned fields, strategy,
 * managed fields, admission around validation, the strategy's reservations (main resource only), then one
 * conditional store update. Undefined means a concurrent write got in first and the caller
 * should read again and retry.
 */
export async function replaceObject(
  core: RegistryCore,
  kv: KeyValue,
  old: KubeObject,
  input: KubeObject,
  ctx: StrategyContext,
  opts: UpdateOptions,
  how: ReplaceHow,
): Promise<WriteResult | undefined> {
  const { def } = core;
  const subresource = opts.subresource ?? "";
  checkTypes(core, input);
  const managed = input.metadata.managedFields;
  const obj = prepareUpdate(def, input, old, { ...ctx, subresource });
  if (how.applied) {
    // Apply computed the managed fields already; a subresource keeps only its part of the
    // input, so carry them over.
    if (managed === undefined) delete obj.metadata.managedFields;
    else obj.metadata.managedFields = managed;
  } else {
    const ctx = managerContext(core, opts, old, obj);
    trackUpdate(old, obj, { ...ctx, changesAt: await changesAtOtherVersions(core, old, obj, ctx) });
  }
  const admission = admissionAttributes(core, {
    operation: "UPDATE",
    namespace: old.metadata.namespace ?? "",
    name: old.metadata.name,
    ctx,
    dryRun: opts.dryRun,
    subresource,
    object: obj,
    oldObject: old,
  });
  await core.admission.admit(admission);
  if (admission.mutatedBy?.length) def.strategy?.applyDefaults?.(obj);
  const warnings = await validateObject(core, obj, opts, async () => [
    ...validateObjectMetaUpdate(obj.metadata, old.metadata),
    ...await def.strategy?.validateUpdate?.(obj, old, { ...ctx, subresource }) ?? [],
  ]).catch((err) => Promise.reject(blameMutations(err, admission)));
  await core.admission.validate(admission);
  if (!ctx.warnings) warnings.unshift(...admission.warnings);
  const reservation = subresource ? undefined : await def.strategy?.beginUpdate?.(
    obj,
    old,
    { ...ctx, subresource },
    { dryRun: opts.dryRun === true },
  );
  try {
    const res = await storeReplacement(core, kv, old, obj, opts, how);
    if (res?.deleted) await def.strategy?.afterDelete?.(res.object);
    if (res?.stored) await reservation?.commit();
    else await reservation?.revert();
    return res && { object: res.object, warnings };
  } catch (err) {
    await reservation?.revert();
    throw err;
  }
}

/** The store write of {@link replaceObject}: undefined to retry, else what happened. */
async function storeReplacement(
  core: RegistryCore,
  kv: KeyValue,
  old: KubeObject,
  obj: KubeObject,
  opts: UpdateOptions,
  how: ReplaceHow,
): Promise<{ object: KubeObject; stored: boolean; deleted?: boolean } | undefined> {
  const name = old.metadata.name;
  // An unchanged object is not written again, unless its stored form is outdated (another
  // encryption key): rewriting it is how keys are rotated (kube: `kubectl replace`).
  if (sameStoredState(obj, old) && !core.store.isStale?.(kv)) {
    return { object: old, stored: false };
  }
  const retry = (err: unknown) =>
    !how.conditional && !how.lastAttempt &&
    (isStoreError(err, "Conflict") || isStoreError(err, "NotFound"));
  if (obj.metadata.deletionTimestamp && !finalizersPending(core.def, obj)) {
    // The last finalizer is gone: the pending deletion completes now.
    if (opts.dryRun) return { object: obj, stored: false };
    try {
      const gone = await core.store.delete(kv.key, kv.modRevision);
      obj.metadata.resourceVersion = String(gone.modRevision);
      return { object: obj, stored: false, deleted: true };
    } catch (err) {
      if (retry(err)) return undefined;
      throw core.translate(err, name);
    }
  }
  if (opts.dryRun) return { object: obj, stored: false };
  try {
    const next = await core.store.update(kv.key, await core.encode(obj), kv.modRevision);
    obj.metadata.resourceVersion = String(next.modRevision);
    return { object: obj, stored: true };
  } catch (err) {
    if (retry(err)) return undefined;
    throw core.translate(err, name);
  }
}
