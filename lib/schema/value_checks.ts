/**
 * The validation primitives a {@link SchemaSet} compiles schemas into: a {@link Check} is a
 * closure over one schema node that walks a value and records errors and unknown fields in a
 * {@link Ctx}. Here are the checks that need no other schema (integer ranges, the JSON Schema
 * value validations of custom resources: bounds, lengths, patterns, item and property
 * counts) and the error wording they share with the set (Kubernetes' and go-openapi's).
 *
 * @module
 */

import type { FieldError } from "../api/mod.ts";
import type { SchemaNode } from "./schema_node.ts";
import { compilePattern, runeCount } from "./formats.ts";

// ---- validation primitives ----

export interface Ctx {
  errors: FieldError[];
  /** Where unknown field paths go; null when they are not wanted. */
  unknown: string[] | null;
  /** Remove unknown fields from the object while walking. */
  prune: boolean;
}

export type Check = (value: unknown, path: string, ctx: Ctx) => void;

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const INT64_LIMIT = 9223372036854775808; // 2^63; doubles cannot tell 2^63-1 from 2^63

export function child(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

/** The JSON type name of a value, as used in type error messages. */
export function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

export function typeError(ctx: Ctx, path: string, value: unknown, expected: string): void {
  ctx.errors.push({
    type: "TypeInvalid",
    field: path || "<root>",
    value: jsonType(value),
    detail: `must be of type ${expected}`,
  });
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function enumDetail(values: unknown[]): string {
  return `supported values: ${values.map((v) => JSON.stringify(v)).join(", ")}`;
}

/** A check that accepts anything (free-form nodes such as RawExtension or FieldsV1). */
export const ANY: Check = () => {};

/** An Invalid error worded as go-openapi words value validation failures:
 * `spec.replicas in body should be less than or equal to 10`. */
export function inBody(path: string, value: unknown, what: string): FieldError {
  return {
    type: "Invalid",
    field: path || "<root>",
    value,
    detail: `${path || "<root>"} in body ${what}`,
  };
}

function numberKeyword(node: SchemaNode, key: string): number | undefined {
  const v = node[key];
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/**
 * The value validations of JSON Schema that custom resource schemas use (`maximum`,
 * `minimum` and their exclusive forms, `multipleOf`, `maxLength`, `minLength`, `pattern`,
 * `maxItems`, `minItems`, `maxProperties`, `minProperties`), each applying only to values of
 * its JSON type. Undefined when the node has none. Messages follow Kubernetes.
 */
export function valueChecks(node: SchemaNode): Check | undefined {
  const checks: Check[] = [];
  const max = numberKeyword(node, "maximum");
  if (max !== undefined) {
    const exclusive = node.exclusiveMaximum === true;
    checks.push((v, p, c) => {
      if (typeof v !== "number") return;
      if (exclusive ? v >= max : v > max) {
        c.errors.push(
          inBody(p, v, `should be less than ${exclusive ? "" : "or equal to "}${max}`),
        );
      }
    });
  }
  const min = numberKeyword(node, "minimum");
  if (min !== undefined) {
    const exclusive = node.exclusiveMinimum === true;
    checks.push((v, p, c) => {
      if (typeof v !== "number") return;
      if (exclusive ? v <= min : v < min) {
        c.errors.push(
          inBody(p, v, `should be greater than ${exclusive ? "" : "or equal to "}${min}`),
        );
      }
    });
  }
  const multipleOf = numberKeyword(node, "multipleOf");
  if (multipleOf !== undefined && multipleOf > 0) {
    checks.push((v, p, c) => {
      if (typeof v !== "number") return;
      const q = v / multipleOf;
      if (Math.abs(q - Math.round(q)) > 1e-9) {
        c.errors.push(inBody(p, v, `should be a multiple of ${multipleOf}`));
      }
    });
  }
  const maxLength = numberKeyword(node, "maxLength");
  if (maxLength !== undefined) {
    checks.push((v, p, c) => {
      if (typeof v === "string" && v.length > maxLength && runeCount(v) > maxLength) {
        const unit = maxLength === 1 ? "byte" : "bytes";
        c.errors.push({
          type: "TooLong",
          field: p,
          detail: `may not be more than ${maxLength} ${unit}`,
        });
      }
    });
  }
  const minLength = numberKeyword(node, "minLength");
  if (minLength !== undefined) {
    checks.push((v, p, c) => {
      if (typeof v === "string" && runeCount(v) < minLength) {
        c.errors.push(inBody(p, v, `should be at least ${minLength} chars long`));
      }
    });
  }
  if (typeof node.pattern === "string") {
    const pattern = node.pattern;
    const re = compilePattern(pattern);
    if (re) {
      checks.push((v, p, c) => {
        if (typeof v === "string" && !re.test(v)) {
          c.errors.push(inBody(p, v, `should match '${pattern}'`));
        }
      });
    }
  }
  const maxItems = numberKeyword(node, "maxItems");
  if (maxItems !== undefined) {
    checks.push((v, p, c) => {
      if (Array.isArray(v) && v.length > maxItems) {
        c.errors.push({ type: "TooMany", field: p, detail: `must have at most ${maxItems} items` });
      }
    });
  }
  const minItems = numberKeyword(node, "minItems");
  if (minItems !== undefined) {
    checks.push((v, p, c) => {
      if (Array.isArray(v) && v.length < minItems) {
        c.errors.push(inBody(p, v, `should have at least ${minItems} items`));
      }
    });
  }
  const maxProperties = numberKeyword(node, "maxProperties");
  if (maxProperties !== undefined) {
    checks.push((v, p, c) => {
      if (isPlainObject(v) && Object.keys(v).length > maxProperties) {
        c.errors.push({
          type: "TooMany",
          field: p,
          detail: `must have at most ${maxProperties} items`,
        });
      }
    });
  }
  const minProperties = numberKeyword(node, "minProperties");
  if (minProperties !== undefined) {
    checks.push((v, p, c) => {
      if (isPlainObject(v) && Object.keys(v).length < minProperties) {
        c.errors.push(inBody(p, v, `should have at least ${minProperties} properties`));
      }
    });
  }
  if (!checks.length) return undefined;
  if (checks.length === 1) return checks[0];
  return (v, p, c) => {
    for (const check of checks) check(v, p, c);
  };
}

export function integerCheck(format: string | undefined): Check {
  if (format === "int32") {
    return (v, p, c) => {
      if (v === null) return;
      if (typeof v !== "number" || !Number.isInteger(v)) return typeError(c, p, v, "integer");
      if (v < INT32_MIN || v > INT32_MAX) typeError(c, p, v, "int32");
    };
  }
  return (v, p, c) => {
    if (v === null) return;
    if (typeof v !== "number" || !Number.isInteger(v)) return typeError(c, p, v, "integer");
    if (v < -INT64_LIMIT || v >= INT64_LIMIT) typeError(c, p, v, "int64");
  };
}
