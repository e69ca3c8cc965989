/**
 * Values crossing the boundary: JSON variables into CEL (integral numbers become int, since
 * @bufbuild/cel reads a JS number as a double and `claims.exp > 5` compares with an int), CEL
 * results back into plain JS, and the result kinds an expression must produce.
 */

import {
  type CelInput,
  celType,
  type CelValue,
  isCelList,
  isCelMap,
  isCelUint,
} from "@bufbuild/cel";
import { CelEvaluationError } from "./errors.ts";
import { opaqueTypeName } from "./opaque.ts";
import { isDyn, NULL, sameType, STRING, type Type, typeName } from "./types.ts";

/** The result type an expression must have. */
export type CelResultKind = "bool" | "string" | "string|list<string>" | "any";

const INT64_LIMIT = 2 ** 63;

/** Whether `v` is a plain object (a JSON object), not an instance of a class. */
export function isPlainObject(v: object): v is Record<string, unknown> {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** A value already converted for CEL (e.g. typed from a schema): passed through as it is. */
export class PreparedCelValue {
  constructor(readonly input: CelInput) {}
}

/** A JSON number for CEL: an integral one is an int (CEL reads a JS number as a double). */
export function numberToCel(n: number): bigint | number {
  return Number.isInteger(n) && n >= -INT64_LIMIT && n < INT64_LIMIT ? BigInt(n) : n;
}

/** The error for a value at `path` that is not JSON. */
export function notJsonError(value: unknown, path: string): CelEvaluationError {
  const what = typeof value === "object"
    ? `a ${value?.constructor?.name ?? "object"}`
    : typeof value;
  return new CelEvaluationError(`${path}: cannot pass ${what} to CEL`);
}

/** A JSON value (integers may already be bigint) as a CEL input; `path` names it in errors. */
export function toCelInput(value: unknown, path: string): CelInput {
  if (value instanceof PreparedCelValue) return value.input;
  switch (typeof value) {
    case "string":
    case "boolean":
    case "bigint":
      return value;
    case "number":
      return numberToCel(value);
    case "object":
      if (value === null || value instanceof Uint8Array) return value;
      if (Array.isArray(value)) return value.map((v, i) => toCelInput(v, `${path}[${i}]`));
      if (isPlainObject(value)) {
        const entries = Object.entries(value).filter(([, v]) => v !== undefined);
        return new Map(entries.map(([k, v]) => [k, toCelInput(v, `${path}.${k}`)]));
      }
  }
  throw notJsonError(value, path);
}

/** The CEL type name of a value, for messages. */
function valueTypeName(v: CelValue): string {
  return opaqueTypeName(v) ?? celType(v).name;
}

/** A CEL value as plain JS: bigint for int and uint, arrays, plain objects. */
function fromCel(v: CelValue): unknown {
  if (typeof v !== "object" || v === null || v instanceof Uint8Array) return v;
  if (isCelUint(v)) return v.value;
  if (opaqueTypeName(v) === undefined) {
    if (isCelList(v)) return [...v].map(fromCel);
    if (isCelMap(v)) {
      return Object.fromEntries(
        [...v].map(([k, x]) => [String(isCelUint(k) ? k.value : k), fromCel(x)]),
      );
    }
  }
  throw new CelEvaluationError(`a result of type ${valueTypeName(v)} cannot be used`);
}

const DESCRIPTIONS: Readonly<Record<CelResultKind, string>> = {
  bool: "a boolean",
  string: "a string",
  "string|list<string>": "a string or a list of strings",
  any: "a value",
};

const wrongResult = (expect: CelResultKind, got: string) =>
  `expression must evaluate to ${DESCRIPTIONS[expect]}, got ${got}`;

/** The evaluation result as the caller expects it; throws when it is of another type. */
export function resultValue(v: CelValue, expect: CelResultKind): unknown {
  switch (expect) {
    case "bool":
      if (typeof v === "boolean") return v;
      break;
    case "string":
      if (typeof v === "string") return v;
      break;
    case "string|list<string>":
      if (typeof v === "string" || v === null) return v;
      if (isCelList(v) && [...v].every((x) => typeof x === "string")) return [...v];
      if (isCelList(v)) {
        const other = [...v].find((x) => typeof x !== "string")!;
        throw new CelEvaluationError(wrongResult(expect, `a list with ${valueTypeName(other)}`));
      }
      break;
    case "any":
      return fromCel(v);
  }
  throw new CelEvaluationError(wrongResult(expect, valueTypeName(v)));
}

/** Whether values of static type `t` can be returned as plain JS (see {@link fromCel}). */
function convertible(t: Type): boolean {
  switch (t.kind) {
    case "opaque":
      return false;
    case "scalar":
      return t.name !== "type" && !t.name.startsWith("google.");
    case "list":
      return convertible(t.elem);
    case "map":
      return convertible(t.value);
    default:
      return true;
  }
}

/** Why an expression of static type `t` can never produce the expected result, if it cannot. */
export function resultTypeProblem(t: Type, expect: CelResultKind): string | undefined {
  if (isDyn(t)) return undefined;
  let ok: boolean;
  switch (expect) {
    case "any":
      ok = convertible(t);
      break;
    case "string|list<string>":
      ok = sameType(t, STRING) || sameType(t, NULL) ||
        (t.kind === "list" && (isDyn(t.elem) || sameType(t.elem, STRING)));
      break;
    default:
      ok = t.kind === "scalar" && t.name === expect;
  }
  return ok ? undefined : wrongResult(expect, typeName(t));
}
