/**
 * Equality and concatenation of lists that a schema declares as sets or maps
 * (`x-kubernetes-list-type`), as Kubernetes' CEL has them (spec 03): two set lists are equal
 * when they hold the same elements in any order, two map lists when they hold the same entries
 * by key; `X + Y` of set lists is X then the elements of Y not in X, of map lists X with the
 * entries of Y replacing those of X with the same key, then Y's new entries.
 *
 * The engine's `==` and `+` know nothing of this, so the checked tree is rewritten: where an
 * operand's static type holds such a list (also deep inside an object), the call becomes
 * `@typed_eq(a, b, n)` (`@typed_ne`, `@typed_concat`) with `n` naming the operand's type in a
 * table, and the runtime functions below compare or merge by that type.
 */

import {
  celFunc,
  celList,
  CelScalar,
  type CelValue,
  isCelList,
  isCelMap,
  listType,
} from "@bufbuild/cel";
import { type Expr, intNode, maxId, nodes } from "./ast.ts";
import { charge } from "./cost.ts";
import { callStandard } from "./standard.ts";
import type { Type } from "./types.ts";

const EQ = "@typed_eq";
const NE = "@typed_ne";
const CONCAT = "@typed_concat";

/** The types the rewritten calls name, by number. Schemas change rarely; entries are small. */
const typeTable: Type[] = [];
const typeIds = new WeakMap<Type, number>();

function typeId(t: Type): number {
  let id = typeIds.get(t);
  if (id === undefined) {
    id = typeTable.push(t) - 1;
    typeIds.set(t, id);
  }
  return id;
}

/** Whether values of `t` compare differently from plain CEL values. */
function hasSemantics(t: Type | undefined, depth = 0): boolean {
  if (t === undefined || depth > 32) return false;
  switch (t.kind) {
    case "list":
      return t.listType !== undefined || hasSemantics(t.elem, depth + 1);
    case "map":
      return hasSemantics(t.value, depth + 1);
    case "object":
      return Object.values(t.fields).some((f) => hasSemantics(f, depth + 1));
    default:
      return false;
  }
}

/** Rewrites `==`, `!=` and `+` whose operands are typed set or map lists (see above). */
export function rewriteListSemantics(root: Expr, types: ReadonlyMap<bigint, Type>): void {
  let next = maxId(root);
  for (const n of nodes(root)) {
    const k = n.exprKind;
    if (k.case !== "callExpr" || k.value.target || k.value.args.length !== 2) continue;
    const [a, b] = k.value.args;
    const ta = types.get(a.id);
    const tb = types.get(b.id);
    const fn = k.value.function;
    let typed: Type | undefined;
    if (fn === "_==_" || fn === "_!=_") {
      typed = hasSemantics(ta) ? ta : hasSemantics(tb) ? tb : undefined;
    } else if (fn === "_+_" && ta?.kind === "list" && ta.listType) {
      typed = ta;
    }
    if (typed === undefined) continue;
    k.value.function = fn === "_+_" ? CONCAT : fn === "_==_" ? EQ : NE;
    k.value.args = [a, b, intNode(++next, BigInt(typeId(typed)))];
  }
}

function field(v: CelValue, name: string): CelValue | undefined {
  return isCelMap(v) ? v.get(name) : undefined;
}

/** Equality of two values of type `t` (either may be anything at run time). */
export function typedEqual(a: CelValue, b: CelValue, t: Type): boolean {
  if (t.kind === "list" && isCelList(a) && isCelList(b)) {
    if (a.size !== b.size) return false;
    charge(a.size);
    const elems = [...b];
    if (t.listType?.kind === "set") {
      return [...a].every((x) => elems.some((y) => typedEqual(x, y, t.elem)));
    }
    const semantics = t.listType;
    if (semantics?.kind === "map") {
      const byKey = new Map(elems.map((y) => [entryKey(y, semantics), y]));
      return [...a].every((x) => {
        const y = byKey.get(entryKey(x, semantics));
        return y !== undefined && typedEqual(x, y, t.elem);
      });
    }
    return [...a].every((x, i) => typedEqual(x, elems[i], t.elem));
  }
  if ((t.kind === "object" || t.kind === "map") && isCelMap(a) && isCelMap(b)) {
    if (a.size !== b.size) return false;
    charge(a.size);
    for (const [key, x] of a) {
      if (!b.has(key)) return false;
      const sub = t.kind === "map" ? t.value : t.fields[String(key)];
      const y = b.get(key)!;
      if (sub === undefined ? !plainEqual(x, y) : !typedEqual(x, y, sub)) return false;
    }
    return true;
  }
  return plainEqual(a, b);
}

function plainEqual(a: CelValue, b: CelValue): boolean {
  return callStandard("_==_", undefined, [a, b]) === true;
}

/** The identity of a map list's entry: its key fields (absent ones as null). */
function entryKey(v: CelValue, semantics: { readonly keys: readonly string[] }): string {
  return semantics.keys.map((k) => {
    const x = field(v, k);
    return typeof x === "bigint" ? `i${x}` : `${typeof x}:${String(x)}`;
  }).join("\u0000");
}

/** `a + b` for lists of type `t` (a set or a map list). */
export function typedConcat(a: CelValue, b: CelValue, t: Type): CelValue {
  if (t.kind !== "list" || !isCelList(a) || !isCelList(b)) {
    return callStandard("_+_", undefined, [a, b]);
  }
  charge(a.size + b.size);
  const semantics = t.listType;
  if (semantics?.kind === "set") {
    const out = [...a];
    for (const y of b) if (!out.some((x) => typedEqual(x, y, t.elem))) out.push(y);
    return celList(out);
  }
  if (semantics?.kind === "map") {
    const out = [...a];
    const index = new Map(out.map((x, i) => [entryKey(x, semantics), i]));
    for (const y of b) {
      const at = index.get(entryKey(y, semantics));
      if (at === undefined) {
        index.set(entryKey(y, semantics), out.length);
        out.push(y);
      } else {
        out[at] = y;
      }
    }
    return celList(out);
  }
  return callStandard("_+_", undefined, [a, b]);
}

const typeOf = (n: bigint): Type => typeTable[Number(n)];

/** The runtime functions of the rewritten calls. */
export const listSemanticsFunctions = [
  celFunc(EQ, [CelScalar.DYN, CelScalar.DYN, CelScalar.INT], CelScalar.BOOL, (a, b, n) => {
    charge(1);
    return typedEqual(a, b, typeOf(n));
  }),
  celFunc(NE, [CelScalar.DYN, CelScalar.DYN, CelScalar.INT], CelScalar.BOOL, (a, b, n) => {
    charge(1);
    return !typedEqual(a, b, typeOf(n));
  }),
  celFunc(
    CONCAT,
    [listType(CelScalar.DYN), listType(CelScalar.DYN), CelScalar.INT],
    CelScalar.DYN,
    (a, b, n) => typedConcat(a, b, typeOf(n)),
  ),
];
