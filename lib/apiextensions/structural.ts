/**
 * Structural schemas: the rules a CustomResourceDefinition's `openAPIV3Schema` must follow
 * before the server can validate, prune and apply custom resources with it. A structural
 * schema says the type of every field it specifies, keeps value validations (`anyOf`,
 * `oneOf`, `allOf`, `not`) free of types, and uses the `x-kubernetes-*` markers only where
 * they make sense. Errors are worded and placed as Kubernetes places them
 * (`spec.versions[0].schema.openAPIV3Schema.properties[spec].type`).
 *
 * Validation rules (`x-kubernetes-validations`) are compiled and checked by
 * validation_rules.ts once the schema is structural.
 */

import type { FieldError } from "../api/mod.ts";
import { compilePattern } from "../schema/mod.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const TYPES = ["array", "boolean", "integer", "number", "object", "string"];

/** Keywords a structural schema may not use, and why. */
const FORBIDDEN: Record<string, string> = {
  $ref: "$ref is not supported",
  definitions: "definitions is not supported",
  patternProperties: "patternProperties is not supported",
  dependencies: "dependencies is not supported",
  additionalItems: "additionalItems is not supported",
  id: "id is not supported",
  $schema: "$schema is not supported",
};

type Level = "root" | "field" | "item" | "junctor";

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Errors of one `openAPIV3Schema` at `path`
 * (e.g. `spec.versions[0].schema.openAPIV3Schema`); empty when it is structural and uses only
 * what the server supports.
 */
export function validateStructuralSchema(schema: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isObject(schema)) {
    errs.push({ type: "Required", field: path, detail: "schemas are required" });
    return errs;
  }
  walk(schema, path, "root", errs);
  return errs;
}

function walk(s: Record<string, Json>, path: string, level: Level, errs: FieldError[]): void {
  const at = (key: string) => `${path}.${key}`;
  for (const [key, why] of Object.entries(FORBIDDEN)) {
    if (s[key] !== undefined && s[key] !== null) {
      errs.push({ type: "Forbidden", field: at(key), detail: why });
    }
  }
  if (s.uniqueItems === true) {
    errs.push({
      type: "Forbidden",
      field: at("uniqueItems"),
      detail: "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
    });
  }
  const type: string | undefined = typeof s.type === "string" && s.type ? s.type : undefined;
  const intOrString = s["x-kubernetes-int-or-string"] === true;
  const preserve = s["x-kubernetes-preserve-unknown-fields"];
  const embedded = s["x-kubernetes-embedded-resource"] === true;

  if (level === "junctor") {
    if (type) {
      errs.push({ type: "Forbidden", field: at("type"), detail: "must be empty to be structural" });
    }
    for (const key of ["additionalProperties", "x-kubernetes-preserve-unknown-fields"]) {
      if (s[key] !== undefined) {
        errs.push({
          type: "Forbidden",
          field: at(key),
          detail: "must be undefined to be structural",
        });
      }
    }
  } else if (type && !TYPES.includes(type)) {
    errs.push({ type: "NotSupported", field: at("type"), value: type, detail: supported(TYPES) });
  } else if (intOrString && type) {
    errs.push({
      type: "Invalid",
      field: at("type"),
      value: type,
      detail: "must be empty if x-kubernetes-int-or-string is true",
    });
  } else if (embedded && type !== "object") {
    errs.push({
      type: type ? "Invalid" : "Required",
      field: at("type"),
      value: type,
      detail: "must be object if x-kubernetes-embedded-resource is true",
    });
  } else if (level === "root" && type && type !== "object") {
    errs.push({
      type: "Invalid",
      field: at("type"),
      value: type,
      detail: "must be object at the root",
    });
  } else if (!type && !intOrString && preserve !== true) {
    const detail = level === "root"
      ? "must not be empty at the root"
      : level === "item"
      ? "must not be empty for specified array items"
      : "must not be empty for specified object fields";
    errs.push({ type: "Required", field: at("type"), detail });
  }

  if (preserve !== undefined && preserve !== true) {
    errs.push({
      type: "Invalid",
      field: at("x-kubernetes-preserve-unknown-fields"),
      value: preserve,
      detail: "must be true or undefined",
    });
  }
  if (embedded && !isObject(s.properties) && preserve !== true) {
    errs.push({
      type: "Required",
      field: at("properties"),
      detail:
        "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
    });
  }
  if (embedded && s.additionalProperties !== undefined) {
    errs.push({
      type: "Forbidden",
      field: at("additionalProperties"),
      detail: "must not be used if x-kubernetes-embedded-resource is set",
    });
  }

  if (typeof s.pattern === "string" && !compilePattern(s.pattern)) {
    errs.push({
      type: "Invalid",
      field: at("pattern"),
      value: s.pattern,
      detail: "must be a valid regular expression",
    });
  }

  markers(s, path, type, errs);

  if (level === "root") rootMetadata(s, path, errs);

  // Children.
  const props = s.properties;
  if (props !== undefined && !isObject(props)) {
    errs.push({
      type: "Invalid",
      field: at("properties"),
      value: props,
      detail: "must be an object",
    });
  } else if (props) {
    if (s.additionalProperties !== undefined && s.additionalProperties !== true) {
      errs.push({
        type: "Forbidden",
        field: at("additionalProperties"),
        detail: "additionalProperties and properties are mutual exclusive",
      });
    }
    for (const [name, sub] of Object.entries(props)) {
      const p = `${path}.properties[${name}]`;
      if (isObject(sub)) walk(sub, p, level === "junctor" ? "junctor" : "field", errs);
      else errs.push({ type: "Invalid", field: p, value: sub, detail: "must be a schema object" });
    }
  }
  const extra = s.additionalProperties;
  if (isObject(extra)) {
    walk(extra, at("additionalProperties"), level === "junctor" ? "junctor" : "field", errs);
  } else if (extra === false) {
    errs.push({
      type: "Forbidden",
      field: at("additionalProperties"),
      detail: "additionalProperties cannot be set to false",
    });
  }
  if (Array.isArray(s.items)) {
    errs.push({
      type: "Forbidden",
      field: at("items"),
      detail: "items must be a schema object and not an array",
    });
  } else if (isObject(s.items)) {
    walk(s.items, at("items"), level === "junctor" ? "junctor" : "item", errs);
  } else if (type === "array" && level !== "junctor") {
    errs.push({ type: "Required", field: at("items"), detail: "must be specified" });
  }
  for (const key of ["allOf", "anyOf", "oneOf"]) {
    const list = s[key];
    if (list === undefined || list === null) continue;
    if (intOrString && key !== "oneOf" && isIntOrStringPair(list)) continue;
    if (!Array.isArray(list)) {
      errs.push({ type: "Invalid", field: at(key), value: list, detail: "must be an array" });
      continue;
    }
    list.forEach((sub, i) => {
      if (isObject(sub)) walk(sub, `${at(key)}[${i}]`, "junctor", errs);
    });
  }
  if (isObject(s.not)) walk(s.not, at("not"), "junctor", errs);
}

/** `[{type: integer}, {type: string}]`: how an int-or-string node may spell its two types. */
function isIntOrStringPair(list: unknown): boolean {
  if (!Array.isArray(list) || list.length !== 2) return false;
  const types = list.map((x) => (isObject(x) && Object.keys(x).length === 1 ? x.type : undefined));
  return types.includes("integer") && types.includes("string");
}

/** `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and `x-kubernetes-map-type`. */
function markers(
  s: Record<string, Json>,
  path: string,
  type: string | undefined,
  errs: FieldError[],
) {
  const at = (key: string) => `${path}.${key}`;
  const listType = s["x-kubernetes-list-type"];
  const keys = s["x-kubernetes-list-map-keys"];
  if (listType !== undefined && listType !== null) {
    if (!["atomic", "set", "map"].includes(listType)) {
      errs.push({
        type: "NotSupported",
        field: at("x-kubernetes-list-type"),
        value: listType,
        detail: supported(["atomic", "map", "set"]),
      });
    } else if (type !== "array") {
      errs.push({
        type: "Invalid",
        field: at("x-kubernetes-list-type"),
        value: listType,
        detail: "must only be used with type array",
      });
    } else if (listType === "map") {
      const items = isObject(s.items) ? s.items : {};
      if (!Array.isArray(keys) || keys.length === 0) {
        errs.push({
          type: "Required",
          field: at("x-kubernetes-list-map-keys"),
          detail: "must not be empty if x-kubernetes-list-type is map",
        });
      } else if (items.type !== "object") {
        errs.push({
          type: "Invalid",
          field: at("items.type"),
          value: items.type,
          detail: "must be object if parent array's x-kubernetes-list-type is map",
        });
      } else {
        const props = isObject(items.properties) ? items.properties : {};
        keys.forEach((k: unknown, i: number) => {
          const prop = typeof k === "string" && Object.hasOwn(props, k) ? props[k] : undefined;
          if (!prop) {
            errs.push({
              type: "Required",
              field: `${at("x-kubernetes-list-map-keys")}[${i}]`,
              detail: "entries must all be names of item properties",
            });
          } else if (
            isObject(prop) && !["string", "integer", "number", "boolean"].includes(prop.type) &&
            prop["x-kubernetes-int-or-string"] !== true
          ) {
            errs.push({
              type: "Invalid",
              field: `${path}.items.properties[${k}].type`,
              value: prop.type,
              detail: "must be a scalar type if parent array's x-kubernetes-list-type is map",
            });
          }
        });
      }
    } else if (listType === "set") {
      const items = isObject(s.items) ? s.items : {};
      if (items.type === "object" && items["x-kubernetes-map-type"] !== "atomic") {
        errs.push({
          type: "Invalid",
          field: at("items.x-kubernetes-map-type"),
          value: items["x-kubernetes-map-type"] ?? null,
          detail: "must be atomic as item of a list with x-kubernetes-list-type=set",
        });
      }
    }
  }
  if (keys !== undefined && keys !== null && listType !== "map") {
    errs.push({
      type: "Forbidden",
      field: at("x-kubernetes-list-map-keys"),
      detail: "must not be set if x-kubernetes-list-type is not map",
    });
  }
  const mapType = s["x-kubernetes-map-type"];
  if (mapType !== undefined && mapType !== null) {
    if (!["granular", "atomic"].includes(mapType)) {
      errs.push({
        type: "NotSupported",
        field: at("x-kubernetes-map-type"),
        value: mapType,
        detail: supported(["atomic", "granular"]),
      });
    } else if (type !== "object") {
      errs.push({
        type: "Invalid",
        field: at("x-kubernetes-map-type"),
        value: mapType,
        detail: "must only be used with type object",
      });
    }
  }
}

/** At the root, `metadata` may only restrict `name` and `generateName`: the server supplies
 * the rest of ObjectMeta. */
function rootMetadata(s: Record<string, Json>, path: string, errs: FieldError[]): void {
  const props = isObject(s.properties) ? s.properties : {};
  const meta = props.metadata;
  if (meta === undefined) return;
  const allowed = isObject(meta) &&
    Object.keys(meta).every((k) => k === "type" || k === "properties" || k === "description") &&
    (meta.type === undefined || meta.type === "object") &&
    (meta.properties === undefined || (isObject(meta.properties) &&
      Object.entries(meta.properties).every(([k, v]) =>
        (k === "name" || k === "generateName") && isObject(v) && v.type === "string"
      )));
  if (!allowed) {
    errs.push({
      type: "Forbidden",
      field: `${path}.properties[metadata]`,
      detail:
        "must not specify anything other than name and generateName, but metadata is implicitly specified",
    });
  }
}

function supported(values: string[]): string {
  return `supported values: ${values.map((v) => JSON.stringify(v)).join(", ")}`;
}
