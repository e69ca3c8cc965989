/**
 * What an update stores, from the client's object and the stored one: server-owned metadata
 * from the stored object, only the part a subresource owns (status, or what the strategy lets
 * a subresource change), status kept by the main resource when a status subresource exists,
 * the generation bumped when the spec changed, and no new finalizers once deleting.
 */

import { invalid, jsonEqual } from "../api/mod.ts";
import type { KubeObject, ResourceDefinition, StrategyContext } from "./definition.ts";

/** Metadata an update always takes from the stored object. */
const KEPT_METADATA = [
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "generation",
];

/** Builds the object to store from the client's `obj` and the stored `old`. */
export function prepareUpdate(
  def: ResourceDefinition,
  obj: KubeObject,
  old: KubeObject,
  ctx: StrategyContext,
): KubeObject {
  const meta = obj.metadata;
  // A uid the client sends must match (validation says so); a missing one is the stored one.
  if (!meta.uid) meta.uid = old.metadata.uid;
  // Other server-owned metadata always comes from the stored object.
  for (const f of KEPT_METADATA) {
    if (old.metadata[f] === undefined) delete meta[f];
    else meta[f] = old.metadata[f];
  }
  if (def.namespaced) meta.namespace = old.metadata.namespace;
  delete meta.resourceVersion;
  if (ctx.subresource === "status") {
    // /status changes only status: everything else is the stored object.
    const next = structuredClone(old);
    delete next.metadata.resourceVersion;
    if (obj.status === undefined) delete next.status;
    else next.status = obj.status;
    def.strategy?.prepareForUpdate?.(next, old, ctx);
    def.strategy?.applyDefaults?.(next);
    return next;
  }
  // `/scale` writes the main resource (its replicas), through the main resource's rules.
  if (ctx.subresource && ctx.subresource !== "finalize" && ctx.subresource !== "scale") {
    const next = structuredClone(old);
    delete next.metadata.resourceVersion;
    if (obj.status !== undefined) next.status = obj.status;
    // The resource decides what else its subresource may change (a CSR's /approval: only
    // the Approved and Denied conditions).
    def.strategy?.prepareForUpdate?.(next, old, ctx);
    def.strategy?.applyDefaults?.(next);
    return next;
  }
  const hasStatus = def.subresources?.includes("status");
  if (hasStatus && ctx.subresource !== "finalize") {
    // The main resource cannot change status when a status subresource exists.
    if (old.status === undefined) delete obj.status;
    else obj.status = old.status;
  }
  def.strategy?.prepareForUpdate?.(obj, old, ctx);
  // Before the spec is compared: a default the body left out is no change.
  def.strategy?.applyDefaults?.(obj);
  if (specChanged(def, obj, old)) meta.generation = (old.metadata.generation ?? 0) + 1;
  if (meta.deletionTimestamp && Array.isArray(meta.finalizers)) {
    // Once deleting, finalizers may only be removed, never added.
    const before = new Set<string>(old.metadata.finalizers ?? []);
    const added = meta.finalizers.filter((f: string) => !before.has(f));
    if (added.length) {
      throw invalid(def.kind, def.group, old.metadata.name, [{
        type: "Forbidden",
        field: "metadata.finalizers",
        detail:
          `no new finalizers can be added if the object is being deleted, found new finalizers ${
            JSON.stringify(added)
          }`,
      }]);
    }
  }
  return obj;
}

function specChanged(def: ResourceDefinition, obj: KubeObject, old: KubeObject): boolean {
  const fields = def.strategy?.specFields ??
    [...new Set([...Object.keys(obj), ...Object.keys(old)])].filter((f) =>
      !["apiVersion", "kind", "metadata", "status"].includes(f)
    );
  return fields.some((f) => JSON.stringify(obj[f]) !== JSON.stringify(old[f]));
}

/** `obj` would store what is stored (key order aside: apply may reorder keys). */
export function sameStoredState(obj: KubeObject, old: KubeObject): boolean {
  const a = { ...old, metadata: { ...old.metadata } };
  delete a.metadata.resourceVersion;
  return jsonEqual(obj, a);
}
