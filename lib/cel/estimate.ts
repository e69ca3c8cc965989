/**
 * The static (worst-case) cost of a checked expression, for refusing expressions that could
 * run too long before they are stored (a CRD's validation rules). It follows the figures of the
 * runtime meter (cost.ts): 1 per variable, field access and call, 10 per list literal, 30 per
 * map literal, 0.1 per character a string function reads, regexes by input and pattern length;
 * a comprehension pays its loop once per element of its range. Sizes come from the types: a
 * schema-made type carries the most elements (or characters) its values can have
 * (`maxElements`); a value of unknown size counts as empty, so the estimate is a lower bound
 * where types say nothing. `bounded` says when it is not: when every value the expression
 * reads has a static type, and every sized one a known size, the estimate is an upper bound.
 */

import type { Expr } from "./ast.ts";
import type { Type } from "./types.ts";

const STRING_FACTOR = 0.1;
const REGEX_FACTOR = 0.25;

/** Functions whose cost grows with the characters or elements of their arguments. */
const TRAVERSING = new Set([
  "_==_",
  "_!=_",
  "_<_",
  "_<=_",
  "_>_",
  "_>=_",
  "@in",
  "contains",
  "startsWith",
  "endsWith",
  "lowerAscii",
  "upperAscii",
  "trim",
  "replace",
  "split",
  "join",
  "indexOf",
  "lastIndexOf",
  "substring",
  "url",
  "isURL",
  "quantity",
  "isQuantity",
  "ip",
  "isIP",
  "ip.isCanonical",
  "cidr",
  "isCIDR",
  "containsIP",
  "containsCIDR",
  "semver",
  "isSemver",
  "validate",
  "@typed_eq",
  "@typed_ne",
]);

interface Estimate {
  cost: number;
  /** The most elements or characters the value can have. */
  size: number;
}

/** The worst-case cost of evaluating `root`, given the type of every node. */
export function estimateCost(
  root: Expr,
  types: ReadonlyMap<bigint, Type>,
): { cost: number; bounded: boolean } {
  const estimator = new Estimator(types);
  const { cost } = estimator.visit(root, new Map());
  return { cost, bounded: estimator.bounded };
}

const SIZED = new Set(["string", "bytes"]);

/** Whether values of `t` can hold anything (dyn) or have a size no type gives. */
function unknownSize(t: Type | undefined): boolean {
  if (t === undefined) return true;
  switch (t.kind) {
    case "dyn":
    case "none":
    case "param":
      return true;
    case "list":
    case "map":
      return t.maxElements === undefined;
    case "scalar":
      return SIZED.has(t.name) && t.maxElements === undefined;
    default:
      return false;
  }
}

type Scope = ReadonlyMap<string, number>;

class Estimator {
  /** False once a value of unknown size or type was read (see estimateCost). */
  bounded = true;
  constructor(readonly types: ReadonlyMap<bigint, Type>) {}

  /** The size the node's static type allows, if it says. */
  typeSize(e: Expr): number | undefined {
    const t = this.types.get(e.id);
    return t && "maxElements" in t ? t.maxElements : undefined;
  }

  visit(e: Expr, scope: Scope): Estimate {
    const k = e.exprKind;
    switch (k.case) {
      case "constExpr": {
        const c = k.value.constantKind;
        const size = c.case === "stringValue" || c.case === "bytesValue" ? c.value.length : 0;
        return { cost: 0, size };
      }
      case "identExpr": {
        const local = scope.get(k.value.name);
        if (local === undefined && unknownSize(this.types.get(e.id))) this.bounded = false;
        return { cost: 1, size: local ?? this.typeSize(e) ?? 0 };
      }
      case "selectExpr": {
        if (unknownSize(this.types.get(e.id))) this.bounded = false;
        const operand = this.visit(k.value.operand!, scope);
        return { cost: operand.cost + 1, size: this.typeSize(e) ?? 0 };
      }
      case "listExpr": {
        const parts = k.value.elements.map((x) => this.visit(x, scope));
        return { cost: 10 + sum(parts), size: parts.length };
      }
      case "structExpr": {
        let cost = 30;
        for (const entry of k.value.entries) {
          if (entry.keyKind.case === "mapKey") cost += this.visit(entry.keyKind.value, scope).cost;
          if (entry.value) cost += this.visit(entry.value, scope).cost;
        }
        return { cost, size: k.value.entries.length };
      }
      case "callExpr":
        return this.call(e, k.value, scope);
      case "comprehensionExpr": {
        const c = k.value;
        const range = this.visit(c.iterRange!, scope);
        const rangeType = this.types.get(c.iterRange!.id);
        const elemSize = rangeType?.kind === "list"
          ? sizeOf(rangeType.elem)
          : rangeType?.kind === "map"
          ? sizeOf(rangeType.key)
          : 0;
        const inner = new Map(scope).set(c.iterVar, elemSize);
        if (c.iterVar2) {
          inner.set(c.iterVar2, rangeType?.kind === "map" ? sizeOf(rangeType.value) : 0);
        }
        const init = this.visit(c.accuInit!, scope);
        const loop = this.visit(c.loopCondition!, inner).cost + this.visit(c.loopStep!, inner).cost;
        const result = this.visit(c.result!, inner);
        return {
          cost: range.cost + init.cost + range.size * loop + result.cost,
          size: this.typeSize(e) ?? range.size,
        };
      }
      default:
        return { cost: 0, size: 0 };
    }
  }

  call(e: Expr, call: Extract<Expr["exprKind"], { case: "callExpr" }>["value"], scope: Scope) {
    if (unknownSize(this.types.get(e.id))) this.bounded = false;
    const target = call.target ? this.visit(call.target, scope) : undefined;
    const args = call.args.map((a) => this.visit(a, scope));
    const all = target ? [target, ...args] : args;
    const base = sum(all);
    const fn = call.function;
    if (fn === "_?_:_") {
      return {
        cost: args[0].cost + Math.max(args[1].cost, args[2].cost) + 1,
        size: Math.max(args[1].size, args[2].size),
      };
    }
    if (fn === "_&&_" || fn === "_||_" || fn === "@not_strictly_false" || fn === "size") {
      return { cost: base + 1, size: 0 };
    }
    if (fn === "matches" || fn === "find" || fn === "findAll") {
      const input = (target ?? args[0]).size;
      const pattern = (target ? args[0] : args[1]).size;
      const regex = Math.ceil((1 + input) * STRING_FACTOR) * Math.ceil(pattern * REGEX_FACTOR);
      return { cost: base + 1 + regex, size: this.typeSize(e) ?? input };
    }
    if (fn === "_+_" || fn === "@typed_concat") {
      const size = args[0].size + (args[1]?.size ?? 0);
      return { cost: base + 1 + Math.ceil(size * STRING_FACTOR), size };
    }
    if (TRAVERSING.has(fn)) {
      const read = all.reduce((n, x) => n + x.size, 0);
      return { cost: base + 1 + Math.ceil(read * STRING_FACTOR), size: this.typeSize(e) ?? read };
    }
    return { cost: base + 1, size: this.typeSize(e) ?? 0 };
  }
}

function sizeOf(t: Type): number {
  return "maxElements" in t ? t.maxElements ?? 0 : 0;
}

function sum(parts: Estimate[]): number {
  return parts.reduce((n, p) => n + p.cost, 0);
}
