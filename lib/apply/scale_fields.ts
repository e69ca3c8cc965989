/**
 * The managed fields of a `/scale` write, mapped between the object and its autoscaling/v1
 * Scale as kube's scale handler maps them: the one field a Scale carries over is the replicas
 * field (`spec.replicas` in the Scale, the resource's spec replicas path in the object).
 *
 * - {@link scaleManagedFields}: the Scale's entries: every manager of the object's replicas
 *   field owns `spec.replicas` of the Scale (entries at apiVersion autoscaling/v1).
 * - {@link parentManagedFields}: back to the object after the Scale was written: a manager
 *   that no longer owns `spec.replicas` in the Scale loses the replicas field (its other
 *   fields stay); one that owns it in the Scale and had no entry owning it in the object gets
 *   an entry at the object's apiVersion owning the replicas field, under its Scale entry's
 *   manager, operation and subresource.
 */

import { fieldElement, FieldSet } from "./fieldset.ts";
import {
  decodeManagedFields,
  encodeManagedFields,
  entryId,
  type ManagerEntry,
} from "./managed_fields.ts";

/** The apiVersion of the Scale's managed fields. */
export const SCALE_GROUP_VERSION = "autoscaling/v1";

const SCALE_REPLICAS = [fieldElement("spec"), fieldElement("replicas")];

/** What the mapping needs to know about the scaled object. */
export interface ScaleFieldsContext {
  /** The object's spec replicas path as a simple JSON path, e.g. `.spec.replicas`. */
  specReplicasPath: string;
  /** The object's apiVersion at this request (the one new entries are recorded at). */
  apiVersion: string;
}

function replicasElements(path: string): string[] {
  return path.replace(/^\./, "").split(".").map(fieldElement);
}

/** Entries of the object's group: their replicas path is the one of this version (the
 * versions of one custom resource share their scale paths here; see the README). */
function sameGroup(apiVersion: string, ctx: ScaleFieldsContext): boolean {
  const group = (v: string) => v.includes("/") ? v.slice(0, v.lastIndexOf("/")) : "";
  return group(apiVersion) === group(ctx.apiVersion);
}

/**
 * The managed fields of the object's Scale (kube's `ToSubresource`): one entry per manager
 * that owns the replicas field, owning `spec.replicas`. Undefined when there are none.
 */
export function scaleManagedFields(
  objectManagedFields: unknown,
  ctx: ScaleFieldsContext,
): unknown[] | undefined {
  const path = replicasElements(ctx.specReplicasPath);
  const out: ManagerEntry[] = [];
  for (const e of decodeManagedFields(objectManagedFields) ?? []) {
    if (!sameGroup(e.apiVersion, ctx) || !e.fields.has(path)) continue;
    const fields = new FieldSet();
    fields.insert(SCALE_REPLICAS);
    out.push({ ...e, apiVersion: SCALE_GROUP_VERSION, fields });
  }
  return encodeManagedFields(out);
}

/**
 * The object's managed fields after its Scale was written with `scaleManagedFields` (kube's
 * `ToParent`); see the module comment. Undefined when none are left.
 */
export function parentManagedFields(
  objectManagedFields: unknown,
  scaleManagedFieldsAfter: unknown,
  ctx: ScaleFieldsContext,
): unknown[] | undefined {
  const path = replicasElements(ctx.specReplicasPath);
  const replicas = new FieldSet();
  replicas.insert(path);
  const scaleEntries = new Map(
    (decodeManagedFields(scaleManagedFieldsAfter) ?? [])
      .filter((e) => e.fields.has(SCALE_REPLICAS))
      .map((e) => [entryId({ ...e, apiVersion: ctx.apiVersion }), e]),
  );
  const out: ManagerEntry[] = [];
  for (const e of decodeManagedFields(objectManagedFields) ?? []) {
    if (!sameGroup(e.apiVersion, ctx) || !e.fields.has(path)) {
      out.push(e);
      continue;
    }
    // The Scale's entries are matched at this version: an Update entry of another version is
    // another entry, which loses the field while the Scale's entry comes back at this one.
    const id = entryId(e);
    if (scaleEntries.has(id)) {
      out.push(e);
      scaleEntries.delete(id);
    } else {
      out.push({ ...e, fields: e.fields.difference(replicas) });
    }
  }
  for (const e of scaleEntries.values()) {
    out.push({ ...e, apiVersion: ctx.apiVersion, fields: replicas.clone() });
  }
  return encodeManagedFields(out);
}
