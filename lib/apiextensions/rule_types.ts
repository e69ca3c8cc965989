/**
 * The CEL type of the values a custom resource schema node describes, as validation rules see
 * them (`self`, `oldSelf`), after Kubernetes' `SchemaDeclType`: objects with their properties as
 * fields, `additionalProperties` as maps, arrays as lists (set and map lists keep their
 * `x-kubernetes-list-type`, see lib/cel/list_semantics.ts), `int-or-string` as dyn, formatted
 * strings as bytes, durations or timestamps, and the root of a resource (and every
 * `x-kubernetes-embedded-resource`) with `apiVersion`, `kind` and `metadata.name` and
 * `metadata.generateName`. Preserved unknown fields are dyn: a node without a type is dyn, an
 * object shows its unknown fields as dyn (Kubernetes hides them).
 *
 * Each type carries the most elements (characters) its values can have, for the cost estimate:
 * `maxItems`, `maxProperties`, `maxLength`, else as many as the largest request could hold.
 */

import {
  BOOL,
  BYTES,
  DOUBLE,
  DURATION,
  DYN,
  INT,
  type ListSemantics,
  mapOf,
  object,
  STRING,
  TIMESTAMP,
  type Type,
} from "../cel/mod.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** Kubernetes' limit on a request body: the bound of every unbounded size. */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

/** A schema node's type and the fewest bytes a value of it takes in JSON. */
export interface DeclType {
  type: Type;
  minSize: number;
}

const MIN_STRING_SIZE = 2; // ""
const MIN_NUMBER_SIZE = 1;
const MIN_BOOL_SIZE = 4; // true
const MIN_DURATION_SIZE = 4; // "0s"
const MIN_DATE_TIME_SIZE = 22; // "2006-01-02T15:04:05Z"
const DATE_SIZE = 12; // "2006-01-02"
const MAX_DURATION_SIZE = 64;
const MAX_DATE_TIME_SIZE = 37;

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const nonNegative = (n: unknown) => typeof n === "number" && n >= 0 ? n : undefined;

/** What `apiVersion`, `kind` and `metadata` look like to rules at a resource's root. */
function withTypeAndObjectMeta(s: Record<string, Json>): Record<string, Json> {
  const str = { type: "string" };
  return {
    ...s,
    type: "object",
    properties: {
      ...(isObject(s.properties) ? s.properties : {}),
      apiVersion: str,
      kind: str,
      metadata: { type: "object", properties: { name: str, generateName: str } },
    },
  };
}

/**
 * The type of values of schema node `s`; undefined when rules cannot see them (a node
 * without a type that neither is int-or-string nor preserves unknown fields).
 */
export function declType(s: unknown, isResourceRoot: boolean): DeclType | undefined {
  if (!isObject(s)) return undefined;
  if (s["x-kubernetes-int-or-string"] === true) return { type: DYN, minSize: 1 };
  if (isResourceRoot) s = withTypeAndObjectMeta(s);
  const node = s as Record<string, Json>;
  const preserve = node["x-kubernetes-preserve-unknown-fields"] === true;
  switch (node.type) {
    case "array":
      return arrayType(node);
    case "object":
      return objectType(node, preserve);
    case "string":
      return stringType(node);
    case "boolean":
      return { type: BOOL, minSize: MIN_BOOL_SIZE };
    case "number":
      return { type: DOUBLE, minSize: MIN_NUMBER_SIZE };
    case "integer":
      return { type: INT, minSize: MIN_NUMBER_SIZE };
    default:
      return preserve ? { type: DYN, minSize: 1 } : undefined;
  }
}

function arrayType(s: Record<string, Json>): DeclType | undefined {
  if (!isObject(s.items)) return undefined;
  const items = declType(s.items, s.items["x-kubernetes-embedded-resource"] === true);
  if (items === undefined) return undefined;
  const maxElements = nonNegative(s.maxItems) ??
    Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (items.minSize + 1));
  const listType: ListSemantics | undefined = s["x-kubernetes-list-type"] === "set"
    ? { kind: "set" }
    : s["x-kubernetes-list-type"] === "map"
    ? { kind: "map", keys: [...(s["x-kubernetes-list-map-keys"] ?? [])] }
    : undefined;
  return {
    type: { kind: "list", elem: items.type, maxElements, ...(listType ? { listType } : {}) },
    minSize: 2,
  };
}

function objectType(s: Record<string, Json>, preserve: boolean): DeclType | undefined {
  const extra = s.additionalProperties;
  if (isObject(extra)) {
    const values = declType(extra, extra["x-kubernetes-embedded-resource"] === true);
    if (values === undefined) return undefined;
    const maxElements = nonNegative(s.maxProperties) ??
      Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (values.minSize + 6));
    return { type: { ...mapOf(STRING, values.type), maxElements } as Type, minSize: 2 };
  }
  const required = new Set<string>(Array.isArray(s.required) ? s.required : []);
  const fields: Record<string, Type> = {};
  let minSize = 2;
  for (const [name, prop] of Object.entries(isObject(s.properties) ? s.properties : {})) {
    const t = declType(prop, isObject(prop) && prop["x-kubernetes-embedded-resource"] === true);
    if (t === undefined) continue;
    fields[name] = t.type;
    if (required.has(name) && (prop as Json).default === undefined) {
      minSize += name.length + t.minSize + 4;
    }
  }
  const t = object("object", fields);
  return { type: preserve ? { ...t, open: true } as Type : t, minSize };
}

function stringType(s: Record<string, Json>): DeclType {
  const maxLength = nonNegative(s.maxLength);
  const unbounded = MAX_REQUEST_SIZE_BYTES - 2;
  const sized = (t: Type, maxElements: number): Type => ({ ...t, maxElements } as Type);
  switch (s.format) {
    case "byte":
      return { type: sized(BYTES, maxLength ?? unbounded), minSize: MIN_STRING_SIZE };
    case "duration":
      return { type: sized(DURATION, MAX_DURATION_SIZE), minSize: MIN_DURATION_SIZE };
    case "date":
      return { type: sized(TIMESTAMP, DATE_SIZE), minSize: DATE_SIZE };
    case "date-time":
      return { type: sized(TIMESTAMP, MAX_DATE_TIME_SIZE), minSize: MIN_DATE_TIME_SIZE };
  }
  let max = unbounded;
  if (maxLength !== undefined) max = maxLength * 4;
  else if (Array.isArray(s.enum) && s.enum.length) {
    max = Math.max(...s.enum.map((e: unknown) => typeof e === "string" ? e.length : 0));
  }
  return { type: sized(STRING, max), minSize: MIN_STRING_SIZE };
}

/**
 * How many times data of `minSize` bytes could appear in one request: the worst-case number
 * of evaluations of a rule under lists or maps without a bound.
 */
export function maxCardinality(minSize: number): number {
  return Math.floor(MAX_REQUEST_SIZE_BYTES / (minSize + 1));
}
