/**
 * Kubernetes' quantity library: `quantity(s)`, `isQuantity(s)` and the Quantity members
 * `isInteger`, `asInteger`, `asApproximateFloat`, `sign`, `add`, `sub`, `isLessThan`,
 * `isGreaterThan` and `compareTo` (`add`/`sub` take a Quantity or an int).
 */

import type { CelValue } from "@bufbuild/cel";
import type { Library, Overload } from "../library.ts";
import { type OpaqueKind, unwrapOpaque, wrapOpaque } from "../opaque.ts";
import { BOOL, DOUBLE, INT, opaque, STRING, type Type } from "../types.ts";
import { parseQuantity, Quantity } from "./quantity_value.ts";

const QUANTITY_KIND: OpaqueKind<Quantity> = {
  name: "kubernetes.Quantity",
  key: (q) => q.key(),
};
const QUANTITY = opaque(QUANTITY_KIND.name);

const q = (v: CelValue | undefined) => unwrapOpaque(QUANTITY_KIND, v!);
const wrap = (value: Quantity) => wrapOpaque(QUANTITY_KIND, value);

function problem(s: string): string | undefined {
  try {
    parseQuantity(s);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** A member of Quantity with one nominal cost, like Kubernetes' accessors. */
const member = (
  name: string,
  args: Type[],
  result: Type,
  impl: (self: Quantity, args: CelValue[]) => CelValue,
): Overload => ({
  name,
  target: QUANTITY,
  args,
  result,
  impl: (self, values) => impl(q(self), values),
  cost: () => 1,
});

function asInteger(self: Quantity): bigint {
  const n = self.asInt64();
  if (n === undefined) throw new Error("cannot convert value to integer");
  return n;
}

export const quantity: Library = {
  overloads: [
    {
      name: "quantity",
      args: [STRING],
      result: QUANTITY,
      impl: (_, [s]) => wrap(parseQuantity(s as string)),
    },
    {
      name: "isQuantity",
      args: [STRING],
      result: BOOL,
      impl: (_, [s]) => problem(s as string) === undefined,
    },
    member("isInteger", [], BOOL, (self) => self.asInt64() !== undefined),
    member("asInteger", [], INT, asInteger),
    member("asApproximateFloat", [], DOUBLE, (self) => self.asApproximateFloat()),
    member("sign", [], INT, (self) => BigInt(self.sign())),
    // Kubernetes declares sign as a function of a Quantity; both spellings work here.
    { name: "sign", args: [QUANTITY], result: INT, impl: (_, [v]) => BigInt(q(v).sign()) },
    member("add", [QUANTITY], QUANTITY, (self, [o]) => wrap(self.add(q(o)))),
    member("add", [INT], QUANTITY, (self, [n]) => wrap(self.add(Quantity.fromInt(n as bigint)))),
    member("sub", [QUANTITY], QUANTITY, (self, [o]) => wrap(self.sub(q(o)))),
    member("sub", [INT], QUANTITY, (self, [n]) => wrap(self.sub(Quantity.fromInt(n as bigint)))),
    member("isLessThan", [QUANTITY], BOOL, (self, [o]) => self.compare(q(o)) < 0),
    member("isGreaterThan", [QUANTITY], BOOL, (self, [o]) => self.compare(q(o)) > 0),
    member("compareTo", [QUANTITY], INT, (self, [o]) => BigInt(self.compare(q(o)))),
  ],
  literalChecks: [{ function: "quantity", arg: 0, problem }],
};
