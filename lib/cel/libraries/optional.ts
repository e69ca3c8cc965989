/**
 * CEL's optional values, as functions: `optional.of(x)`, `optional.ofNonZeroValue(x)`,
 * `optional.none()` and the members `hasValue()`, `value()`, `orValue(x)` and `or(o)`. They
 * type `oldSelf` of a validation rule with `optionalOldSelf: true`. The `.?field` and `[?key]`
 * syntax is not parsed (the parser the platform builds on does not know it).
 */

import { type CelValue, isCelList, isCelMap } from "@bufbuild/cel";
import type { Library, Overload } from "../library.ts";
import { identityKey, type OpaqueKind, unwrapOpaque, wrapOpaque } from "../opaque.ts";
import { BOOL, opaque, param, type Type } from "../types.ts";

/** What an optional holds: a value or nothing. */
interface Held {
  readonly value?: CelValue;
}

const OPTIONAL_KIND: OpaqueKind<Held> = { name: "optional_type", key: (h) => identityKey(h) };

/** The type of optionals of `t`. */
export const optionalOf = (t: Type): Type => opaque(OPTIONAL_KIND.name, [t]);

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

export const optional: Library = { overloads };
