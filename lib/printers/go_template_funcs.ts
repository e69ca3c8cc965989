/**
 * The functions a kubectl Go template can call: text/template's builtins (`and or not len index
 * slice print printf println html js urlquery eq ne lt le gt ge call`) and the two kubectl adds
 * (`exists`, `base64decode`). kubectl 1.32 registers no others (no sprig).
 *
 * Each function declares how its arguments arrive, as Go's reflection hands them over: `value`
 * (a `reflect.Value`: a missing value stays {@link NO_VALUE}), `any` (an `interface{}`: missing
 * becomes nil) or `string`. Errors are {@link FuncError}s with Go's message; the executor
 * prefixes `error calling NAME: `.
 *
 * @module
 */

import { goSprint, goSprintf, goSprintln } from "./go_fmt.ts";
import { GoFloat, GoInt, goTypeName, isGoInt, NO_VALUE } from "./go_value.ts";

export class FuncError extends Error {
  override name = "FuncError";
}

export type ParamKind = "value" | "any" | "string";

export interface TemplateFunc {
  /** The kinds of the fixed parameters; `variadic` the kind of the rest, if any. */
  params: ParamKind[];
  variadic?: ParamKind;
  call(args: unknown[]): unknown;
}

/** Go's truth of a value (`if`, `with`, `and`, `or`, `not`). */
export function truth(v: unknown): boolean {
  if (v === NO_VALUE || v === null || v === undefined) return false;
  if (v instanceof GoInt || v instanceof GoFloat) return v.value !== 0;
  if (Array.isArray(v)) return v.length > 0;
  switch (typeof v) {
    case "string":
      return v.length > 0;
    case "boolean":
      return v;
    case "number":
      return v !== 0;
  }
  return Object.keys(v as object).length > 0;
}

type Kind = "bool" | "int" | "uint" | "float" | "string" | "invalid" | "other";

function basicKind(v: unknown): Kind {
  if (v === NO_VALUE || v === null) return "invalid";
  if (v instanceof GoFloat) return "float";
  if (v instanceof GoInt) return v.type === "uint8" ? "uint" : "int";
  switch (typeof v) {
    case "boolean":
      return "bool";
    case "number":
      return isGoInt(v) ? "int" : "float";
    case "string":
      return "string";
  }
  return "other";
}

function num(v: unknown): number {
  return v instanceof GoInt || v instanceof GoFloat ? v.value : v as number;
}

const BAD_TYPE = "invalid type for comparison";
const BAD_COMPARISON = "incompatible types for comparison";

function eq(a: unknown, ...bs: unknown[]): boolean {
  if (bs.length === 0) throw new FuncError("missing argument for comparison");
  // Go's basicKind: maps, slices and missing values are all of the "invalid" kind.
  const kind = (v: unknown) => (basicKind(v) === "other" ? "invalid" : basicKind(v));
  const valid = (v: unknown) => v !== NO_VALUE && v !== null;
  const k1 = kind(a);
  for (const b of bs) {
    const k2 = kind(b);
    const ints = (k1 === "int" || k1 === "uint") && (k2 === "int" || k2 === "uint");
    if (k1 !== k2 && !ints) {
      if (valid(a) && valid(b)) throw new FuncError(BAD_COMPARISON);
      continue;
    }
    if (k1 === "invalid") {
      // A missing value equals only another missing value.
      if (!valid(a) || !valid(b)) {
        if (!valid(a) && !valid(b)) return true;
        continue;
      }
      if (goTypeName(a) !== goTypeName(b)) {
        throw new FuncError(
          goSprintf("non-comparable types %s: %v, %s: %v", [a, goTypeName(a), goTypeName(b), b]),
        );
      }
      throw new FuncError(goSprintf("non-comparable type %s: %v", [b, goTypeName(b)]));
    }
    if (k1 === "int" || k1 === "uint" || k1 === "float" ? num(a) === num(b) : a === b) return true;
  }
  return false;
}

function lt(a: unknown, b: unknown): boolean {
  const k1 = basicKind(a);
  const k2 = basicKind(b);
  if (k1 === "invalid" || k1 === "other" || k2 === "invalid" || k2 === "other") {
    throw new FuncError(BAD_TYPE);
  }
  const ints = (k1 === "int" || k1 === "uint") && (k2 === "int" || k2 === "uint");
  if (k1 !== k2 && !ints) throw new FuncError(BAD_COMPARISON);
  if (k1 === "bool") throw new FuncError(BAD_TYPE);
  return k1 === "string" ? (a as string) < (b as string) : num(a) < num(b);
}

function isIndex(v: unknown): v is number | GoInt {
  return v instanceof GoInt || (typeof v === "number" && isGoInt(v));
}

function indexArg(v: unknown, cap: number, what: string): number {
  if (v === NO_VALUE || v === null) throw new FuncError(`cannot index ${what} with nil`);
  if (!isIndex(v)) throw new FuncError(`cannot index ${what} with type ${goTypeName(v)}`);
  const x = num(v);
  if (x < 0 || x >= cap) throw new FuncError(`index out of range: ${x}`);
  return x;
}

function index(item: unknown, ...indices: unknown[]): unknown {
  if (item === NO_VALUE || item === null) throw new FuncError("index of untyped nil");
  for (let i of indices) {
    if (item === null) throw new FuncError("index of nil pointer");
    if (typeof item === "string") {
      item = new GoInt(
        new TextEncoder().encode(
          item,
        )[indexArg(i, new TextEncoder().encode(item).length, "slice/array")],
        "uint8",
      );
    } else if (Array.isArray(item)) item = item[indexArg(i, item.length, "slice/array")];
    else if (
      item !== null && typeof item === "object" && !(item instanceof GoInt) &&
      !(item instanceof GoFloat)
    ) {
      if (i === NO_VALUE || i === null) i = "";
      if (typeof i !== "string") {
        throw new FuncError(`value has type ${goTypeName(i)}; should be string`);
      }
      const map = item as Record<string, unknown>;
      item = Object.hasOwn(map, i) ? map[i] : null;
    } else throw new FuncError(`can't index item of type ${goTypeName(item)}`);
  }
  return item;
}

function slice(item: unknown, ...indices: unknown[]): unknown {
  if (item === NO_VALUE || item === null) throw new FuncError("slice of untyped nil");
  if (indices.length > 3) throw new FuncError(`too many slice indexes: ${indices.length}`);
  let len: number;
  if (typeof item === "string") {
    if (indices.length === 3) throw new FuncError("cannot 3-index slice a string");
    len = new TextEncoder().encode(item).length;
  } else if (Array.isArray(item)) len = item.length;
  else throw new FuncError(`can't slice item of type ${goTypeName(item)}`);
  const idx = [0, len];
  indices.forEach((v, n) => {
    if (!isIndex(v)) throw new FuncError(`cannot index slice/array with type ${goTypeName(v)}`);
    const x = num(v);
    if (x < 0 || x > len) throw new FuncError(`index out of range: ${x}`);
    idx[n] = x;
  });
  if (idx[0] > idx[1]) throw new FuncError(`invalid slice index: ${idx[0]} > ${idx[1]}`);
  if (typeof item === "string") {
    return new TextDecoder().decode(new TextEncoder().encode(item).slice(idx[0], idx[1]));
  }
  return (item as unknown[]).slice(idx[0], idx[1]);
}

function length(item: unknown): GoInt {
  if (item === null) throw new FuncError("len of nil pointer");
  // Go panics inside reflection here; kubectl reports the panic's text.
  if (item === NO_VALUE) throw new FuncError("reflect: call of reflect.Value.Type on zero Value");
  if (typeof item === "string") return new GoInt(new TextEncoder().encode(item).length);
  if (Array.isArray(item)) return new GoInt(item.length);
  if (typeof item === "object" && !(item instanceof GoInt) && !(item instanceof GoFloat)) {
    return new GoInt(Object.keys(item as object).length);
  }
  throw new FuncError(`len of type ${goTypeName(item)}`);
}

/** text/template's `evalArgs`: one string as is, else `fmt.Sprint` with missing values shown. */
function evalArgs(args: unknown[]): string {
  if (args.length === 1 && typeof args[0] === "string") return args[0];
  return goSprint(args.map((a) => (a === null ? "<no value>" : a)));
}

function htmlEscape(s: string): string {
  return s.replace(
    /[\0"'&<>]/g,
    (c) =>
      ({ "\0": "\uFFFD", '"': "&#34;", "'": "&#39;", "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]!,
  );
}

function jsEscape(s: string): string {
  let out = "";
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === "'") out += "\\'";
    else if (ch === '"') out += '\\"';
    else if (ch === "<") out += "\\u003C";
    else if (ch === ">") out += "\\u003E";
    else if (ch === "&") out += "\\u0026";
    else if (ch === "=") out += "\\u003D";
    else if (c < 0x20) out += `\\u${c.toString(16).toUpperCase().padStart(4, "0")}`;
    else out += ch;
  }
  return out;
}

function urlQueryEscape(s: string): string {
  let out = "";
  for (const b of new TextEncoder().encode(s)) {
    const ch = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(ch)) out += ch;
    else if (ch === " ") out += "+";
    else out += `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** kubectl's `exists`: whether `index` would find a value at these indices. */
function exists(item: unknown, ...indices: unknown[]): boolean {
  let v = item;
  for (const i of indices) {
    if (v === null || v === NO_VALUE) return false;
    if (Array.isArray(v) || typeof v === "string") {
      if (!isIndex(i)) return false;
      const x = num(i);
      const len = typeof v === "string" ? new TextEncoder().encode(v).length : v.length;
      if (x < 0 || x >= len) return false;
      v = typeof v === "string" ? x : v[x];
    } else if (typeof v === "object" && !(v instanceof GoInt) && !(v instanceof GoFloat)) {
      if (typeof i !== "string") return false;
      const map = v as Record<string, unknown>;
      v = Object.hasOwn(map, i) ? map[i] : null;
    } else return false;
  }
  return v !== null && v !== NO_VALUE;
}

function base64decode(s: unknown): string {
  const text = s as string;
  const bad = /[^A-Za-z0-9+/=]/.exec(text);
  const padOk = /^[A-Za-z0-9+/]*={0,2}$/.test(text) && text.length % 4 === 0;
  if (bad || !padOk) {
    const at = bad ? bad.index : (() => {
      const eq = text.indexOf("=");
      return text.length % 4 !== 0 && eq < 0
        ? text.length - (text.length % 4 === 1 ? 1 : 0)
        : Math.max(eq, 0);
    })();
    throw new FuncError(`base64 decode failed: illegal base64 data at input byte ${at}`);
  }
  const bin = atob(text);
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

/** The functions in scope for kubectl's Go templates, by name. */
export const TEMPLATE_FUNCS: ReadonlyMap<string, TemplateFunc> = new Map<string, TemplateFunc>([
  // and/or short-circuit; the executor evaluates their arguments itself.
  ["and", { params: ["value"], variadic: "value", call: () => undefined }],
  ["or", { params: ["value"], variadic: "value", call: () => undefined }],
  ["not", { params: ["value"], call: ([a]) => !truth(a) }],
  ["len", { params: ["value"], call: ([a]) => length(a) }],
  ["index", { params: ["value"], variadic: "value", call: ([a, ...r]) => index(a, ...r) }],
  ["slice", { params: ["value"], variadic: "value", call: ([a, ...r]) => slice(a, ...r) }],
  ["print", { params: [], variadic: "any", call: (a) => goSprint(a) }],
  ["printf", {
    params: ["string"],
    variadic: "any",
    call: ([f, ...r]) => goSprintf(f as string, r),
  }],
  ["println", { params: [], variadic: "any", call: (a) => goSprintln(a) }],
  ["html", { params: [], variadic: "any", call: (a) => htmlEscape(evalArgs(a)) }],
  ["js", { params: [], variadic: "any", call: (a) => jsEscape(evalArgs(a)) }],
  ["urlquery", { params: [], variadic: "any", call: (a) => urlQueryEscape(evalArgs(a)) }],
  ["eq", { params: ["value"], variadic: "value", call: ([a, ...r]) => eq(a, ...r) }],
  ["ne", { params: ["value", "value"], call: ([a, b]) => !eq(a, b) }],
  ["lt", { params: ["value", "value"], call: ([a, b]) => lt(a, b) }],
  ["le", { params: ["value", "value"], call: ([a, b]) => lt(a, b) || eq(a, b) }],
  ["gt", { params: ["value", "value"], call: ([a, b]) => !(lt(a, b) || eq(a, b)) }],
  ["ge", { params: ["value", "value"], call: ([a, b]) => !lt(a, b) }],
  [
    "call",
    {
      params: ["value"],
      variadic: "value",
      call: ([fn]) => {
        if (fn === null || fn === NO_VALUE) throw new FuncError("call of nil");
        throw new FuncError(`non-function of type ${goTypeName(fn)}`);
      },
    },
  ],
  ["exists", { params: ["any"], variadic: "any", call: ([a, ...r]) => exists(a, ...r) }],
  ["base64decode", { params: ["string"], call: ([s]) => base64decode(s) }],
]);
