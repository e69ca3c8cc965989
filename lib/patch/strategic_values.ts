/**
 * Decoded JSON values as the strategic merge patch handles them, and the errors it answers in
 * Kubernetes' words. Keys are read with `Object.hasOwn` and written with {@link put}, which
 * defines `__proto__` as a data property; values compare as Go's `==` compares them. Error
 * messages print values as Go's `%v` and `%s` do (`map[a:1 b:[x y]]`), since clients and
 * tests match Kubernetes' text.
 *
 * @module
 */

import { badRequest, StatusError } from "../api/mod.ts";

/** A decoded JSON object. */
export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Sets an own data property, also for `__proto__` (plain assignment would set the
 * prototype). */
export function put(map: JsonObject, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(map, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  } else {
    map[key] = value;
  }
}

export function valueAt(item: unknown, key: string): unknown {
  return isObject(item) && Object.hasOwn(item, key) ? item[key] : undefined;
}

export function mergeKeyOf(item: unknown, mergeKey: string): unknown {
  if (!isObject(item)) throw badArgType("map[string]interface {}", item);
  if (!Object.hasOwn(item, mergeKey)) {
    throw badRequest(`map: ${goValue(item)} does not contain declared merge key: ${mergeKey}`);
  }
  return item[mergeKey];
}

/** Go's `==` on decoded JSON: scalars by value, maps and lists never equal. */
export function sameScalar(a: unknown, b: unknown): boolean {
  return a === b && (a === null || typeof a !== "object");
}

// ---- errors in Kubernetes' words ----

export function listsOfLists(): StatusError {
  return new StatusError(422, "Invalid", "lists of lists are not supported");
}

export function badPatchType(directive: unknown, map: JsonObject): StatusError {
  return badRequest(`unknown patch type: ${goString(directive)} in map: ${goValue(map)}`);
}

export function badArgType(expected: string, actual: unknown): StatusError {
  return badRequest(`expected a ${expected}, but received a ${goTypeName(actual)}`);
}

/** The Go type a decoded JSON value has in Kubernetes (integers stay int64). */
export function goType(value: unknown): string {
  if (value === null) return "nil";
  if (Array.isArray(value)) return "slice";
  switch (typeof value) {
    case "object":
      return "map";
    case "number":
      return Number.isInteger(value) ? "int64" : "float64";
    case "boolean":
      return "bool";
    default:
      return typeof value;
  }
}

function goTypeName(value: unknown): string {
  const t = goType(value);
  if (t === "nil") return "%!s(<nil>)";
  if (t === "map") return "map[string]interface {}";
  if (t === "slice") return "[]interface {}";
  return t;
}

/** Go's `%v` of a decoded JSON value: `map[a:1 b:[x y]]`, keys sorted. */
export function goValue(value: unknown): string {
  if (value === null || value === undefined) return "<nil>";
  if (Array.isArray(value)) return `[${value.map(goValue).join(" ")}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `map[${keys.map((k) => `${k}:${goValue(value[k])}`).join(" ")}]`;
  }
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : goFloat(value);
  return String(value);
}

/** Go's `%s`: strings as they are, other values flagged as Go does. */
function goString(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null) return "%!s(<nil>)";
  if (typeof value === "number" || typeof value === "boolean") {
    return `%!s(${goType(value)}=${goValue(value)})`;
  }
  return goValue(value);
}

/** Go's shortest `%v` of a float64: exponent form below 1e-4 and from 1e6 up. */
function goFloat(v: number): string {
  if (!Number.isFinite(v)) return Number.isNaN(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf";
  const [mantissa, e] = v.toExponential().split("e");
  const exp = Number(e);
  if (exp >= -4 && exp < 6) return String(v);
  return `${mantissa}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
}

export function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return "array";
  return typeof value === "boolean" ? "bool" : typeof value;
}
