/**
 * `map` and `filter` build their result with `@result + [x]` per element. The engine's list
 * `+` is lazy and nests one level per element, so reading a long result gets slow, and copying
 * instead would be quadratic. The step is rewritten to `@append(@result, x)`, which appends in
 * place: the accumulator cannot be named in an expression, so no one else sees it grow.
 */

import { celFunc, type CelList, celList, CelScalar, type CelValue, listType } from "@bufbuild/cel";
import { type Expr, nodes } from "./ast.ts";
import { charge } from "./cost.ts";

const APPEND_FUNCTION = "@append";

/** The accumulators this module created, with the arrays behind them. */
const owned = new WeakMap<CelList, CelValue[]>();

export const appendFunction = celFunc(
  APPEND_FUNCTION,
  [listType(CelScalar.DYN), CelScalar.DYN],
  CelScalar.DYN,
  (accumulator, item) => {
    charge(1);
    const items = owned.get(accumulator);
    if (items !== undefined) {
      items.push(item);
      return accumulator;
    }
    const fresh = [...accumulator, item];
    const list = celList(fresh);
    owned.set(list, fresh);
    return list;
  },
);

/** Rewrites `accu + [x]` in the loop steps of comprehensions to `@append(accu, x)`, in place. */
export function appendInPlace(root: Expr): void {
  for (const n of nodes(root)) {
    if (n.exprKind.case !== "comprehensionExpr") continue;
    const { accuVar, loopStep } = n.exprKind.value;
    if (loopStep === undefined) continue;
    for (const step of nodes(loopStep)) {
      const k = step.exprKind;
      if (k.case !== "callExpr" || k.value.function !== "_+_") continue;
      const [accu, added] = k.value.args;
      const isAccu = accu?.exprKind.case === "identExpr" && accu.exprKind.value.name === accuVar;
      const single =
        added?.exprKind.case === "listExpr" && added.exprKind.value.elements.length === 1
          ? added.exprKind.value.elements[0]
          : undefined;
      if (isAccu && single !== undefined) {
        step.exprKind = {
          case: "callExpr",
          value: {
            $typeName: "cel.expr.Expr.Call",
            function: APPEND_FUNCTION,
            args: [accu, single],
          },
        };
      }
    }
  }
}
