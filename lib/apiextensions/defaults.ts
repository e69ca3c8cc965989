/**
 * Defaulting of custom resources: the `default` values of a CRD version's `openAPIV3Schema`,
 * filled in as Kubernetes fills them in, and the checks a CRD's defaults pass when it is
 * written.
 *
 * - {@link applyDefaults} runs on every object of the version the server reads from storage,
 *   on what a create, an update, a patch or an apply is about to store, and again after
 *   mutating admission changed it (the registry's `applyDefaults` strategy hook). So an object
 *   stored before a default was added reads with it, and a field an applier no longer sends
 *   (and nobody else owns) comes back with its default.
 * - {@link validateDefaults} runs when a CRD is created or updated: a default must be a valid
 *   value of its node (the same checks objects get, reported under `….default`), must hold
 *   no field its schema would prune (`must not have unknown fields`), and may not sit where
 *   it cannot apply: in a value validation (`allOf`, `anyOf`, `oneOf`, `not`), or in the
 *   root's `apiVersion`, `kind` and `metadata`. The keys of a `map` list must be required
 *   or have a default.
 *
 * Both take the version's `openAPIV3Schema` as written in the CRD.
 */

import type { FieldError } from "../api/mod.ts";
import type { SchemaNode } from "../schema/mod.ts";
import { customResourceSchema, schemasWith } from "./schema.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A node's default, when it has one (`default: null` is none, as in Kubernetes). */
function defaultOf(node: unknown): unknown {
  return isObject(node) && node.default !== null ? node.default : undefined;
}

/** A null where the schema does not allow null but has a default: the default goes there. */
function nullToDefault(value: unknown, node: unknown): boolean {
  return value === null && isObject(node) && node.nullable !== true &&
    defaultOf(node) !== undefined;
}

/**
 * Fills in the defaults of `schema` (a version's `openAPIV3Schema`) that `value` lacks, in
 * place: a missing property with a default gets a copy of it, and so does a property, map
 * value or list item that is null where the schema does not allow null. Then the same goes
 * on below every property, map value and list item. Defaults inside a default are not
 * expanded (a default is taken as written), and value validations (`allOf`, …) are not
 * followed, as in Kubernetes.
 *
 * @example
 * ```ts
 * const obj = { spec: {} };
 * applyDefaults(obj, { type: "object", properties: { spec: { type: "object",
 *   properties: { replicas: { type: "integer", default: 1 } } } } });
 * // obj.spec.replicas === 1
 * ```
 */
export function applyDefaults(value: unknown, schema: SchemaNode | undefined): void {
  if (!isObject(schema)) return;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (!isObject(items)) return;
    for (let i = 0; i < value.length; i++) {
      if (nullToDefault(value[i], items)) value[i] = structuredClone(defaultOf(items));
      applyDefaults(value[i], items);
    }
    return;
  }
  if (!isObject(value)) return;
  const props: Record<string, SchemaNode> = isObject(schema.properties) ? schema.properties : {};
  for (const [key, prop] of Object.entries(props)) {
    const d = defaultOf(prop);
    if (d === undefined) continue;
    if (!Object.hasOwn(value, key) || nullToDefault(value[key], prop)) {
      value[key] = structuredClone(d);
    }
  }
  const extra = isObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
  for (const key of Object.keys(value)) {
    if (Object.hasOwn(props, key)) {
      applyDefaults(value[key], props[key]);
    } else if (extra) {
      if (nullToDefault(value[key], extra)) value[key] = structuredClone(defaultOf(extra));
      applyDefaults(value[key], extra);
    }
  }
}

/** True when `schema` (a version's `openAPIV3Schema`) has a default anywhere. */
export function hasDefaults(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(hasDefaults);
  if (!isObject(schema)) return false;
  if (defaultOf(schema) !== undefined) return true;
  return Object.entries(schema).some(([k, v]) =>
    k !== "default" && k !== "enum" && k !== "example" && hasDefaults(v)
  );
}

/** Where a node sits, for the rules that depend on it. */
interface Place {
  /** Under `allOf`, `anyOf`, `oneOf` or `not`. */
  junctor: boolean;
  /** Under the root's `apiVersion`, `kind` or `metadata`: that field's name. */
  objectMeta?: string;
}

/**
 * The errors of the defaults in `schema` (a version's `openAPIV3Schema`, structural), placed
 * under `path` (`spec.versions[0].schema.openAPIV3Schema`), worded as Kubernetes words them;
 * empty when every default is valid.
 */
export function validateDefaults(schema: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isObject(schema)) return errs;
  walk(schema, path, { junctor: false }, errs, true);
  return errs;
}

function walk(node: Json, path: string, place: Place, errs: FieldError[], root = false): void {
  if (!isObject(node)) return;
  const d = defaultOf(node);
  if (d !== undefined) {
    const at = `${path}.default`;
    if (place.junctor) {
      errs.push({ type: "Forbidden", field: at, detail: "must be undefined to be structural" });
    } else if (place.objectMeta) {
      errs.push({
        type: "Forbidden",
        field: at,
        detail: `must not be set in top-level ${place.objectMeta}`,
      });
    } else {
      errs.push(...checkDefault(node, d, at));
    }
  }
  if (!place.junctor) errs.push(...listMapKeyDefaults(node, path));
  if (isObject(node.properties)) {
    for (const [name, sub] of Object.entries(node.properties)) {
      const meta = root && ["apiVersion", "kind", "metadata"].includes(name) ? name : undefined;
      walk(sub, `${path}.properties[${name}]`, {
        junctor: place.junctor,
        objectMeta: place.objectMeta ?? meta,
      }, errs);
    }
  }
  if (isObject(node.items)) walk(node.items, `${path}.items`, place, errs);
  if (isObject(node.additionalProperties)) {
    walk(node.additionalProperties, `${path}.additionalProperties`, place, errs);
  }
  for (const key of ["allOf", "anyOf", "oneOf"]) {
    const list = node[key];
    if (!Array.isArray(list)) continue;
    list.forEach((sub, i) => walk(sub, `${path}.${key}[${i}]`, { ...place, junctor: true }, errs));
  }
  if (isObject(node.not)) walk(node.not, `${path}.not`, { ...place, junctor: true }, errs);
}

/** The keys of a `map` list must be required or have a default: an item without one could
 * not be told apart. */
function listMapKeyDefaults(node: Json, path: string): FieldError[] {
  if (node["x-kubernetes-list-type"] !== "map" || !isObject(node.items)) return [];
  const keys = node["x-kubernetes-list-map-keys"];
  const props = node.items.properties;
  if (!Array.isArray(keys) || !isObject(props)) return [];
  const required = Array.isArray(node.items.required) ? node.items.required : [];
  return keys.filter((k) =>
    typeof k === "string" && Object.hasOwn(props, k) && !required.includes(k) &&
    defaultOf(props[k]) === undefined
  ).map((k) => ({
    type: "Required",
    field: `${path}.items.properties[${k}].default`,
    detail:
      "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
  }));
}

/** The default `value` of `node` is pruned already and passes the node's validation. Errors
 * are reported at `at` (`….default`) and below it. */
function checkDefault(node: SchemaNode, value: unknown, at: string): FieldError[] {
  // The node is validated as the one property `v` of an object, so that the value may be of
  // any type and embedded resources get their apiVersion, kind and metadata.
  const NAME = "default.check";
  const schemas = schemasWith({
    [NAME]: customResourceSchema({ type: "object", properties: { v: node } }),
  });
  const errs: FieldError[] = [];
  const pruned = structuredClone({ v: value });
  if (schemas.prune(pruned, NAME).length) {
    errs.push({ type: "Invalid", field: at, value, detail: "must not have unknown fields" });
  }
  for (const e of schemas.validate({ v: value }, NAME).errors) {
    const field = e.field === "v" ? at : e.field.startsWith("v") ? at + e.field.slice(1) : at;
    const detail = e.detail?.startsWith(`${e.field} `)
      ? field + e.detail.slice(e.field.length)
      : e.detail;
    errs.push({ ...e, field, detail });
  }
  return errs;
}

/** What a version's strategy calls to default an object: {@link applyDefaults} with
 * `schema`, or undefined when `schema` has no defaults (reads then cost nothing). */
export function defaulter(schema: unknown): ((obj: Record<string, Json>) => void) | undefined {
  if (!isObject(schema) || !hasDefaults(schema)) return undefined;
  return (obj) => applyDefaults(obj, schema);
}
