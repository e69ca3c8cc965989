/**
 * The static types of the load-time checker: CEL's types, the platform's declared objects
 * (UserInfo, SubjectAccessReviewSpec) and the libraries' opaque values (Quantity, URL, the
 * authorizer chain). @bufbuild/cel has no public checker, so {@link check} works on these.
 */

import type { CelType } from "@bufbuild/cel";

type ScalarName =
  | "bool"
  | "int"
  | "uint"
  | "double"
  | "string"
  | "bytes"
  | "null_type"
  | "type"
  | "google.protobuf.Timestamp"
  | "google.protobuf.Duration";

export type Type =
  | { readonly kind: "dyn" }
  /** The element type of an empty literal: it joins with anything. */
  | { readonly kind: "none" }
  | { readonly kind: "scalar"; readonly name: ScalarName; readonly maxElements?: number }
  | {
    readonly kind: "list";
    readonly elem: Type;
    /** How equality and `+` treat the list (`x-kubernetes-list-type`); plain when absent. */
    readonly listType?: ListSemantics;
    readonly maxElements?: number;
  }
  | {
    readonly kind: "map";
    readonly key: Type;
    readonly value: Type;
    readonly maxElements?: number;
  }
  /** A record with declared fields; at run time a map, so `has()` works on it. */
  | {
    readonly kind: "object";
    readonly name: string;
    readonly fields: Readonly<Record<string, Type>>;
    /** Other fields may be there too (preserved unknown fields), read as dyn. */
    readonly open?: boolean;
  }
  /** A library value with methods and no fields; `params` for a generic one (optional(T)). */
  | { readonly kind: "opaque"; readonly name: string; readonly params?: readonly Type[] }
  /** A type parameter of a library overload, bound per call. */
  | { readonly kind: "param"; readonly name: string };

/** Set lists compare as sets and concatenate as unions; map lists are keyed by `keys`. */
export type ListSemantics =
  | { readonly kind: "set" }
  | { readonly kind: "map"; readonly keys: readonly string[] };

export const DYN: Type = { kind: "dyn" };
export const NONE: Type = { kind: "none" };
const scalar = (name: ScalarName): Type => ({ kind: "scalar", name });
export const BOOL = scalar("bool");
export const INT = scalar("int");
export const UINT = scalar("uint");
export const DOUBLE = scalar("double");
export const STRING = scalar("string");
export const BYTES = scalar("bytes");
export const NULL = scalar("null_type");
export const TYPE = scalar("type");
export const TIMESTAMP = scalar("google.protobuf.Timestamp");
export const DURATION = scalar("google.protobuf.Duration");

export const listOf = (elem: Type): Type => ({ kind: "list", elem });
export const mapOf = (key: Type, value: Type): Type => ({ kind: "map", key, value });
export const opaque = (name: string, params?: readonly Type[]): Type =>
  params ? { kind: "opaque", name, params } : { kind: "opaque", name };
export const param = (name: string): Type => ({ kind: "param", name });
export const object = (name: string, fields: Record<string, Type>): Type => ({
  kind: "object",
  name,
  fields,
});

export function typeName(t: Type): string {
  switch (t.kind) {
    case "dyn":
    case "none":
      return "dyn";
    case "list":
      return `list(${typeName(t.elem)})`;
    case "map":
      return `map(${typeName(t.key)}, ${typeName(t.value)})`;
    case "opaque":
      return t.params ? `${t.name}(${t.params.map(typeName).join(", ")})` : t.name;
    default:
      return t.name;
  }
}

/** Values of this type may be anything at run time (the checker knows nothing more). */
export function isDyn(t: Type): boolean {
  return t.kind === "dyn" || t.kind === "none" || t.kind === "param";
}

/** The narrowest type both fit in, or undefined when they are different concrete types. */
export function join(a: Type, b: Type): Type | undefined {
  if (a.kind === "none") return b;
  if (b.kind === "none") return a;
  if (a.kind === "dyn" || b.kind === "dyn") return DYN;
  switch (a.kind) {
    case "list":
      return b.kind === "list" ? listOf(join(a.elem, b.elem) ?? DYN) : undefined;
    case "map":
      return b.kind === "map"
        ? mapOf(join(a.key, b.key) ?? DYN, join(a.value, b.value) ?? DYN)
        : undefined;
    default:
      return b.kind === a.kind && "name" in b && b.name === a.name ? a : undefined;
  }
}

export function sameType(a: Type, b: Type): boolean {
  if (a.kind === "list" && b.kind === "list") return sameType(a.elem, b.elem);
  if (a.kind === "map" && b.kind === "map") {
    return sameType(a.key, b.key) && sameType(a.value, b.value);
  }
  return a.kind === b.kind && typeName(a) === typeName(b);
}

/**
 * Whether an argument of type `arg` may be passed where `p` is declared, binding type
 * parameters in `bindings` (a parameter takes the join of everything bound to it).
 */
export function assignable(p: Type, arg: Type, bindings: Map<string, Type>): boolean {
  if (p.kind === "param") {
    const bound = bindings.get(p.name);
    const joined = bound === undefined ? arg : join(bound, arg);
    if (joined === undefined) return false;
    bindings.set(p.name, joined);
    return true;
  }
  if (p.kind === "dyn" || arg.kind === "dyn" || arg.kind === "none") return true;
  switch (p.kind) {
    case "list":
      return arg.kind === "list" && assignable(p.elem, arg.elem, bindings);
    case "map":
      return arg.kind === "map" && assignable(p.key, arg.key, bindings) &&
        assignable(p.value, arg.value, bindings);
    case "none":
      return false;
    case "opaque":
      return arg.kind === "opaque" && arg.name === p.name &&
        (p.params ?? []).every((x, i) => assignable(x, arg.params?.[i] ?? DYN, bindings));
    default:
      return arg.kind === p.kind && "name" in arg && arg.name === p.name;
  }
}

/** `t` with its type parameters replaced by their bindings (unbound ones are dyn). */
export function substitute(t: Type, bindings: Map<string, Type>): Type {
  switch (t.kind) {
    case "param":
      return bindings.get(t.name) ?? DYN;
    case "list":
      return listOf(substitute(t.elem, bindings));
    case "map":
      return mapOf(substitute(t.key, bindings), substitute(t.value, bindings));
    case "opaque":
      return t.params ? opaque(t.name, t.params.map((x) => substitute(x, bindings))) : t;
    default:
      return t;
  }
}

const TIMESTAMP_NAME = "google.protobuf.Timestamp";
const DURATION_NAME = "google.protobuf.Duration";

/** The checker's view of a @bufbuild/cel type (the standard library's declarations). */
export function fromCelType(t: CelType): Type {
  switch (t.kind) {
    case "list":
      return listOf(fromCelType(t.element));
    case "map":
      return mapOf(fromCelType(t.key), fromCelType(t.value));
    case "object":
      return t.name === TIMESTAMP_NAME || t.name === DURATION_NAME
        ? scalar(t.name)
        : opaque(t.name);
    default:
      return t.scalar === "dyn" ? DYN : scalar(t.scalar);
  }
}
