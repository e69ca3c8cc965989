/**
 * Checks of a custom resource that follow its schema's markers rather than JSON Schema:
 * items of `x-kubernetes-list-type: set` lists are unique, items of `map` lists are objects
 * with unique keys, and `x-kubernetes-embedded-resource` objects name their apiVersion and
 * kind. Errors are worded as Kubernetes words them (`spec.set[2]: Duplicate value: "a"`).
 */

import type { FieldError } from "../api/mod.ts";
import type { SchemaNode } from "../schema/mod.ts";

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The errors of `obj` against a custom resource schema (as made by
 * `customResourceSchema`). References (ObjectMeta) are not followed. */
export function validateListsAndEmbedded(obj: unknown, schema: SchemaNode): FieldError[] {
  const errs: FieldError[] = [];
  walk(obj, schema, "", errs);
  return errs;
}

function child(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

function walk(value: unknown, node: SchemaNode, path: string, errs: FieldError[]): void {
  if (value === null || value === undefined || !node || typeof node !== "object") return;
  if (Array.isArray(value)) {
    const listType = node["x-kubernetes-list-type"];
    if (listType === "set") checkSet(value, path, errs);
    else if (listType === "map") {
      checkMap(value, node["x-kubernetes-list-map-keys"] ?? [], path, errs);
    }
    if (node.items && typeof node.items === "object") {
      value.forEach((item, i) => walk(item, node.items!, `${path}[${i}]`, errs));
    }
    return;
  }
  if (!isObject(value)) return;
  if (node["x-kubernetes-embedded-resource"] === true) {
    for (const f of ["apiVersion", "kind"]) {
      if (typeof value[f] !== "string" || value[f] === "") {
        errs.push({ type: "Required", field: child(path, f), detail: "must not be empty" });
      }
    }
  }
  const props = node.properties ?? {};
  const extra = node.additionalProperties;
  for (const [key, v] of Object.entries(value)) {
    if (Object.hasOwn(props, key)) walk(v, props[key], child(path, key), errs);
    else if (extra && typeof extra === "object") walk(v, extra, `${path}[${key}]`, errs);
  }
}

function checkSet(list: unknown[], path: string, errs: FieldError[]): void {
  const seen = new Set<string>();
  list.forEach((item, i) => {
    const key = JSON.stringify(item);
    if (seen.has(key)) errs.push({ type: "Duplicate", field: `${path}[${i}]`, value: item });
    seen.add(key);
  });
}

function checkMap(list: unknown[], keys: string[], path: string, errs: FieldError[]): void {
  const bad = list.findIndex((item) => item !== null && !isObject(item));
  if (bad >= 0) {
    errs.push({
      type: "Invalid",
      field: `${path}[${bad}]`,
      value: list[bad],
      detail: "must be an object for an array of list-type map",
    });
    return;
  }
  const seen = new Set<string>();
  list.forEach((item, i) => {
    if (!isObject(item)) return;
    const id: Record<string, unknown> = {};
    for (const k of keys) if (item[k] !== undefined && item[k] !== null) id[k] = item[k];
    const key = JSON.stringify(keys.map((k) => id[k] ?? null));
    if (seen.has(key)) errs.push({ type: "Duplicate", field: `${path}[${i}]`, value: id });
    seen.add(key);
  });
}
