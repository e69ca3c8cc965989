/**
 * CEL's optional values, as functions: `optional.of(x)`, `optional.ofNonZeroValue(x)`,
 * `optional.none()` and the members `hasValue()`, `value()`, `orValue(x)` and `or(o)`. They
 * type `oldSelf` of a validation rule with `optionalOldSelf: true`.
 *
 * The optional syntax (parsed in optional_syntax.ts) runs on these functions: `@opt_field`
 * (`x.?f`, cel-go's `_?._`) and `@opt_key` (`x[?k]`, `_[?_]`) give none for a missing field,
 * key or index; `@opt_select` and
 * `@opt_index` are `.f` and `[k]` on an optional (none stays none, a value is selected
 * strictly); `@opt_map` builds a map literal with `{?k: v}` entries.
 */

import { celMap, type CelValue, isCelList, isCelMap, isCelUint } from "@bufbuild/cel";
import type { Library, Overload } from "../library.ts";
import {
  identityKey,
  type OpaqueKind,
  opaqueTypeName,
  unwrapOpaque,
  wrapOpaque,
} from "../opaque.ts";
import { BOOL, DYN, listOf, opaque, param, STRING, type Type } from "../types.ts";

/** What an optional holds: a value or nothing. */
interface Held {
  readonly value?: CelValue;
}

/** Equal optionals: both none, or values of one scalar (other values are equal only to
 * themselves). */
function optionalKey(h: Held): string {
  const v = h.value;
  if (v === undefined) return "none";
  if (typeof v === "bigint" || typeof v === "number") return `n:${Number(v)}`;
  if (typeof v === "string" || typeof v === "boolean") return `${typeof v}:${v}`;
  return identityKey(h);
}

const OPTIONAL_KIND: OpaqueKind<Held> = { name: "optional_type", key: optionalKey };

/** The type of optionals of `t`. */
export const optionalOf = (t: Type): Type => opaque(OPTIONAL_KIND.name, [t]);

/** The type an optional type holds, or undefined for a type that is no optional. */
export function optionalValueType(t: Type): Type | undefined {
  return t.kind === "opaque" && t.name === OPTIONAL_KIND.name ? t.params?.[0] ?? DYN : undefined;
}

/** An optional CEL value: `value`, or none when undefined. */
export function wrapOptional(value: CelValue | undefined): CelValue {
  return wrapOpaque(OPTIONAL_KIND, value === undefined ? {} : { value });
}

const A = param("A");
const OPT = optionalOf(A);
const held = (v: CelValue | undefined) => unwrapOpaque(OPTIONAL_KIND, v!);

function isZero(v: CelValue): boolean {
  if (v === null || v === false || v === "" || v === 0 || v === 0n) return true;
  if (v instanceof Uint8Array) return v.length === 0;
  if (isCelList(v) || isCelMap(v)) return v.size === 0;
  return false;
}

const overloads: Overload[] = [
  {
    name: "optional.none",
    args: [],
    result: OPT,
    impl: () => wrapOptional(undefined),
    cost: () => 1,
  },
  {
    name: "optional.of",
    args: [A],
    result: OPT,
    impl: (_, [v]) => wrapOptional(v),
    cost: () => 1,
  },
  {
    name: "optional.ofNonZeroValue",
    args: [A],
    result: OPT,
    impl: (_, [v]) => wrapOptional(isZero(v) ? undefined : v),
    cost: () => 1,
  },
  {
    name: "hasValue",
    target: OPT,
    args: [],
    result: BOOL,
    impl: (self) => held(self).value !== undefined,
    cost: () => 1,
  },
  {
    name: "value",
    target: OPT,
    args: [],
    result: A,
    impl: (self) => {
      const v = held(self).value;
      if (v === undefined) throw new Error("optional.none() dereference");
      return v;
    },
    cost: () => 1,
  },
  {
    name: "orValue",
    target: OPT,
    args: [A],
    result: A,
    impl: (self, [other]) => held(self).value ?? other,
    cost: () => 1,
  },
  {
    name: "or",
    target: OPT,
    args: [OPT],
    result: OPT,
    impl: (self, [other]) => held(self).value === undefined ? other : self!,
    cost: () => 1,
  },
];

/** What `x` holds when it is an optional (`{}` for none); undefined when it is none. */
function optionalHeld(x: CelValue): Held | undefined {
  return opaqueTypeName(x) === OPTIONAL_KIND.name ? held(x) : undefined;
}

type MapKey = Parameters<ReturnType<typeof celMap>["get"]>[0];

/** The element of a list or the value of a map at `key`; undefined when there is none. */
function lookup(container: CelValue, key: CelValue): CelValue | undefined {
  if (isCelList(container)) {
    if (typeof key !== "bigint" && !isCelUint(key)) {
      throw new Error(`no such overload: list index of type ${typeof key}`);
    }
    const i = Number(typeof key === "bigint" ? key : key.value);
    return i >= 0 && i < container.size ? container.get(i) : undefined;
  }
  if (isCelMap(container) && opaqueTypeName(container) === undefined) {
    const k = key as MapKey;
    return container.has(k as never) ? container.get(k) : undefined;
  }
  throw new Error("no such overload: index or field selection on a value that has none");
}

/** `x.?f` / `x[?k]`: an optional of what is there (on an optional `x`, in its value). */
function optionalLookup(x: CelValue, key: CelValue): CelValue {
  const h = optionalHeld(x);
  if (h !== undefined && h.value === undefined) return x;
  return wrapOptional(lookup(h?.value ?? x, key));
}

/** `.f` / `[k]` on an optional: none stays none; a value must have the field. */
function chainedLookup(x: CelValue, key: CelValue): CelValue {
  const h = optionalHeld(x);
  if (h === undefined) throw new Error("expected an optional");
  if (h.value === undefined) return x;
  const v = lookup(h.value, key);
  if (v === undefined) {
    throw new Error(isCelList(h.value) ? "index out of bounds" : `no such key: ${String(key)}`);
  }
  return wrapOptional(v);
}

const syntaxOverloads: Overload[] = ([
  {
    name: "@opt_field",
    args: [DYN, STRING],
    result: DYN,
    impl: (_, [x, f]) => optionalLookup(x, f),
  },
  { name: "@opt_key", args: [DYN, DYN], result: DYN, impl: (_, [x, k]) => optionalLookup(x, k) },
  {
    name: "@opt_select",
    args: [DYN, STRING],
    result: DYN,
    impl: (_, [x, f]) => chainedLookup(x, f),
  },
  { name: "@opt_index", args: [DYN, DYN], result: DYN, impl: (_, [x, k]) => chainedLookup(x, k) },
  {
    name: "@opt_map",
    args: [listOf(DYN), listOf(DYN), listOf(BOOL)],
    result: DYN,
    impl: (_, [keys, values, optionals]) => {
      if (!isCelList(keys) || !isCelList(values) || !isCelList(optionals)) {
        throw new Error("invalid map literal");
      }
      const entries = new Map<MapKey, CelValue>();
      for (let i = 0; i < keys.size; i++) {
        const key = keys.get(i) as MapKey;
        let value: CelValue = values.get(i)!;
        if (optionals.get(i) === true) {
          const h = optionalHeld(value);
          if (h === undefined) throw new Error("an optional map entry's value is no optional");
          if (h.value === undefined) continue;
          value = h.value;
        }
        if (entries.has(key)) throw new Error(`map key conflict: ${String(key)}`);
        entries.set(key, value);
      }
      return celMap(entries as never);
    },
  },
] satisfies Overload[]).map((o) => ({ ...o, cost: () => 1 }));

export const optional: Library = { overloads: [...overloads, ...syntaxOverloads] };
