/** Label and field selection of objects, driven by a resource's declared selectable fields. */

import {
  type FieldSelector,
  type LabelSelector,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
} from "../api/mod.ts";
import type { KubeObject, ResourceDefinition } from "./definition.ts";

export interface ObjectFilter {
  labels?: LabelSelector;
  fields?: FieldSelector;
}

/** The field names a resource can be selected by. */
export function selectableFields(def: ResourceDefinition): string[] {
  return ["metadata.name", "metadata.namespace", ...Object.keys(def.fieldSelectors ?? {})];
}

/** Field values of one object for field selection. */
export function fieldsOf(obj: KubeObject, def: ResourceDefinition): Record<string, string> {
  const fields: Record<string, string> = {
    "metadata.name": obj.metadata?.name ?? "",
    "metadata.namespace": obj.metadata?.namespace ?? "",
  };
  for (const [path, get] of Object.entries(def.fieldSelectors ?? {})) {
    const v = get(obj);
    fields[path] = v === undefined || v === null ? "" : String(v);
  }
  return fields;
}

/** Parses `labelSelector` / `fieldSelector` query values; 400 BadRequest when malformed. */
export function parseFilter(
  def: ResourceDefinition,
  labelSelector: string | null,
  fieldSelector: string | null,
): ObjectFilter | undefined {
  const filter: ObjectFilter = {};
  if (labelSelector) {
    const sel = parseLabelSelector(labelSelector);
    if (!sel.isEmpty()) filter.labels = sel;
  }
  if (fieldSelector) {
    const sel = parseFieldSelector(fieldSelector, selectableFields(def));
    if (!sel.isEmpty()) filter.fields = sel;
  }
  return filter.labels || filter.fields ? filter : undefined;
}

export function selectsObject(
  filter: ObjectFilter,
  obj: KubeObject,
  def: ResourceDefinition,
): boolean {
  if (filter.labels && !matchesLabels(filter.labels, obj.metadata?.labels)) return false;
  if (filter.fields && !matchesFields(filter.fields, fieldsOf(obj, def))) return false;
  return true;
}

/**
 * A filter's requirements on `metadata.name` and `metadata.namespace`, which an object's store
 * key decides without decoding the object (as kube narrows a single-name list to one key);
 * undefined when it has none. Objects it passes still go through {@link selectsObject}.
 */
export function nameMatcher(
  filter: ObjectFilter | undefined,
): ((namespace: string, name: string) => boolean) | undefined {
  const reqs = filter?.fields?.requirements.filter((r) =>
    r.field === "metadata.name" || r.field === "metadata.namespace"
  );
  if (!reqs?.length) return undefined;
  return (namespace, name) =>
    reqs.every((r) => {
      const actual = r.field === "metadata.name" ? name : namespace;
      return r.operator === "=" ? actual === r.value : actual !== r.value;
    });
}
