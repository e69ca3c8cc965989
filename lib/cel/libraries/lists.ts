/** Kubernetes' list library: `isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`. */

import { type CelList, celType, type CelValue } from "@bufbuild/cel";
import { elementCount, stringCost } from "../cost.ts";
import type { Library, Overload } from "../library.ts";
import { callStandard } from "../standard.ts";
import {
  BOOL,
  BYTES,
  DOUBLE,
  DURATION,
  INT,
  listOf,
  param,
  STRING,
  TIMESTAMP,
  type Type,
  typeName,
  UINT,
} from "../types.ts";

const A = param("A");
const COMPARABLE: readonly Type[] = [INT, UINT, DOUBLE, BOOL, DURATION, TIMESTAMP, STRING, BYTES];
const SUMMABLE: readonly Type[] = [INT, UINT, DOUBLE, DURATION];

const less = (a: CelValue, b: CelValue) => callStandard("_<_", undefined, [a, b]) === true;
const equal = (a: CelValue, b: CelValue) => callStandard("_==_", undefined, [a, b]) === true;

function isSorted(list: CelList): boolean {
  let prev: CelValue | undefined;
  for (const next of list) {
    if (prev !== undefined && less(next, prev)) return false;
    prev = next;
  }
  return true;
}

const SUMMABLE_NAMES = new Set(SUMMABLE.map(typeName));

/** The empty sum is int 0: at run time the element type of an empty list is unknown. */
function sum(list: CelList): CelValue {
  let acc: CelValue | undefined;
  for (const next of list) {
    if (!SUMMABLE_NAMES.has(celType(next).name)) {
      throw new Error(`found no matching overload for 'sum' on a list with ${celType(next).name}`);
    }
    acc = acc === undefined ? next : callStandard("_+_", undefined, [acc, next]);
  }
  return acc ?? 0n;
}

function extreme(name: string, list: CelList, better: (a: CelValue, b: CelValue) => boolean) {
  let best: CelValue | undefined;
  for (const next of list) if (best === undefined || better(next, best)) best = next;
  if (best === undefined) throw new Error(`${name} called on empty list`);
  return best;
}

function indexOf(list: CelList, item: CelValue, fromEnd: boolean): bigint {
  for (let n = 0; n < list.size; n++) {
    const i = fromEnd ? list.size - 1 - n : n;
    if (equal(list.get(i)!, item)) return BigInt(i);
  }
  return -1n;
}

/** One comparison per element. */
const traversal = (target: CelValue | undefined, args: CelValue[]) =>
  1 + elementCount(target) + args.reduce((n: number, a) => n + stringCost(a), 0);

const member = (
  name: string,
  target: Type,
  args: Type[],
  result: Type,
  impl: (list: CelList, args: CelValue[]) => CelValue,
): Overload => ({
  name,
  target,
  args,
  result,
  impl: (self, values) => impl(self as CelList, values),
  cost: traversal,
});

export const lists: Library = {
  overloads: [
    ...COMPARABLE.map((t) => member("isSorted", listOf(t), [], BOOL, isSorted)),
    ...SUMMABLE.map((t) => member("sum", listOf(t), [], t, sum)),
    ...COMPARABLE.map((t) =>
      member("min", listOf(t), [], t, (list) => extreme("min", list, (a, b) => less(a, b)))
    ),
    ...COMPARABLE.map((t) =>
      member("max", listOf(t), [], t, (list) => extreme("max", list, (a, b) => less(b, a)))
    ),
    member("indexOf", listOf(A), [A], INT, (list, [item]) => indexOf(list, item, false)),
    member("lastIndexOf", listOf(A), [A], INT, (list, [item]) => indexOf(list, item, true)),
  ],
};
