/**
 * The runtime cost budget. @bufbuild/cel has no cost tracking, so every evaluated node pays
 * through a function call: the tree is rewritten so that identifiers, selections, operators and
 * literals pass their value through `@cost(value, n)`, and every library function charges for
 * its call (more for work that grows with its inputs). Comprehensions pay per iteration through
 * the nodes of their loop, so nested macros over big lists run out of budget. The figures follow
 * cel-go and Kubernetes: 1 per access or call, list literal 10, map literal 30, strings 0.1 per
 * character, regexes (string length × 0.1) × (pattern length × 0.25), authorization check 350000.
 */

import { celFunc, CelScalar, type CelValue, isCelList, isCelMap } from "@bufbuild/cel";
import { callNode, type Expr, intNode, maxId } from "./ast.ts";

/** Kubernetes' per-expression limit: room for two authorization checks. */
export const DEFAULT_COST_LIMIT = 1_000_000;
export const AUTHZ_CHECK_COST = 350_000;
const STRING_TRAVERSAL_FACTOR = 0.1;
const REGEX_LENGTH_FACTOR = 0.25;
const ACCESS_COST = 1;
const LIST_LITERAL_COST = 10;
const MAP_LITERAL_COST = 30;

/** The internal function the rewrite inserts; its name cannot be written in an expression. */
const COST_FUNCTION = "@cost";

/** Operators the engine evaluates itself rather than through a library function. */
const BUILTIN_OPERATORS = new Set(["_&&_", "_||_", "_?_:_", "_[_]", "@not_strictly_false"]);

/** Functions whose work is proportional to the elements of their collection arguments. */
const SCANS_COLLECTIONS = new Set(["_==_", "_!=_", "@in", "join", "format"]);

/** The budget of one evaluation. */
export class Meter {
  used = 0;
  constructor(readonly limit: number) {}

  get exceeded(): boolean {
    return this.used > this.limit;
  }
}

// Evaluation is synchronous, but an authorizer may evaluate other expressions inside a check:
// the innermost evaluation's meter is the one charged.
const meters: Meter[] = [];

/** Runs an evaluation against a budget. */
export function withMeter<T>(meter: Meter, run: () => T): T {
  meters.push(meter);
  try {
    return run();
  } finally {
    meters.pop();
  }
}

/** Charges the running evaluation; throws once its budget is spent (outside one, free). */
export function charge(cost: number): void {
  const meter = meters.at(-1);
  if (meter === undefined) return;
  meter.used += cost;
  if (meter.exceeded) throw new Error(`cost budget of ${meter.limit} exceeded`);
}

/** Passes a node's value through after charging the node's cost (see {@link instrument}). */
export const costFunction = celFunc(
  COST_FUNCTION,
  [CelScalar.DYN, CelScalar.INT],
  CelScalar.DYN,
  (value, cost) => {
    charge(Number(cost));
    return value;
  },
);

/** Characters of strings and bytes, scaled. */
export function stringCost(v: CelValue | undefined): number {
  if (typeof v === "string") return Math.ceil(v.length * STRING_TRAVERSAL_FACTOR);
  if (v instanceof Uint8Array) return Math.ceil(v.length * STRING_TRAVERSAL_FACTOR);
  return 0;
}

/** Elements of a list or entries of a map. */
export function elementCount(v: CelValue | undefined): number {
  return isCelList(v) || isCelMap(v) ? v.size : 0;
}

/** Running a pattern over a string: linear in both for an RE2 engine. */
export function regexCost(input: string, pattern: string): number {
  return Math.ceil((1 + input.length) * STRING_TRAVERSAL_FACTOR) *
    Math.ceil(pattern.length * REGEX_LENGTH_FACTOR);
}

/** The cost of a call that declares none of its own: 1, plus the inputs it traverses. */
export function defaultCallCost(
  name: string,
  target: CelValue | undefined,
  args: readonly CelValue[],
): number {
  if (name === "size") return 1;
  if (name === "matches" && typeof target === "string" && typeof args[0] === "string") {
    return 1 + regexCost(target, args[0]);
  }
  let cost = 1;
  for (const v of target === undefined ? args : [target, ...args]) {
    cost += stringCost(v) + (SCANS_COLLECTIONS.has(name) ? elementCount(v) : 0);
  }
  return cost;
}

/**
 * Rewrites a checked tree in place (returning its new root) so that evaluating a node charges
 * its cost: constants and comprehensions themselves are free, library calls charge themselves.
 */
export function instrument(root: Expr): Expr {
  let next = maxId(root);
  const wrap = (e: Expr, cost: number): Expr =>
    callNode(++next, COST_FUNCTION, [e, intNode(++next, BigInt(cost))]);
  const visit = (e: Expr): Expr => {
    const k = e.exprKind;
    switch (k.case) {
      case "identExpr":
        return wrap(e, ACCESS_COST);
      case "selectExpr":
        if (k.value.operand) k.value.operand = visit(k.value.operand);
        return wrap(e, ACCESS_COST);
      case "callExpr":
        if (k.value.target) k.value.target = visit(k.value.target);
        k.value.args = k.value.args.map(visit);
        return BUILTIN_OPERATORS.has(k.value.function) ? wrap(e, ACCESS_COST) : e;
      case "listExpr":
        k.value.elements = k.value.elements.map(visit);
        return wrap(e, LIST_LITERAL_COST);
      case "structExpr":
        for (const entry of k.value.entries) {
          if (entry.keyKind.case === "mapKey") entry.keyKind.value = visit(entry.keyKind.value);
          if (entry.value) entry.value = visit(entry.value);
        }
        return wrap(e, MAP_LITERAL_COST);
      case "comprehensionExpr": {
        const c = k.value;
        if (c.iterRange) c.iterRange = visit(c.iterRange);
        if (c.accuInit) c.accuInit = visit(c.accuInit);
        if (c.loopCondition) c.loopCondition = visit(c.loopCondition);
        if (c.loopStep) c.loopStep = visit(c.loopStep);
        if (c.result) c.result = visit(c.result);
        return e;
      }
      default:
        return e;
    }
  };
  return visit(root);
}
