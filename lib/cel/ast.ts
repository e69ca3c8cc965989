/**
 * The parsed syntax tree: its types (taken from @bufbuild/cel's parse, whose protobuf types are
 * not a direct dependency), positions, traversal, node construction, and the rewrites every
 * expression gets before checking: escaped field names and qualified function names.
 */

import type { parse } from "@bufbuild/cel";
import { unescapePropertyName } from "./escaping.ts";
import { type CelPosition, ExprError } from "./errors.ts";

export type ParsedExpr = ReturnType<typeof parse>;
export type Expr = ParsedExpr["expr"];
export type SourceInfo = NonNullable<ParsedExpr["sourceInfo"]>;
type ExprKind = Expr["exprKind"];
export type Call = Extract<ExprKind, { case: "callExpr" }>["value"];
export type Comprehension = Extract<ExprKind, { case: "comprehensionExpr" }>["value"];

/** The 1-based line and column of a 0-based offset into `text`. */
export function positionAt(text: string, offset: number): CelPosition {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf("\n") + 1;
  return {
    line: before.split("\n").length,
    column: offset - lineStart + 1,
    offset,
  };
}

/**
 * The position of a node, when the parser recorded one. The parser places an operator at the
 * whitespace before it; the position skips to the operator.
 */
export function nodePosition(
  text: string,
  info: SourceInfo | undefined,
  id: bigint,
): CelPosition | undefined {
  const offset = info?.positions[String(id)];
  if (offset === undefined) return undefined;
  return positionAt(text, offset + /^\s*/.exec(text.slice(offset))![0].length);
}

/** Where the expression starts: the leftmost recorded position. */
export function startPosition(text: string, info: SourceInfo | undefined): CelPosition {
  const offsets = Object.values(info?.positions ?? {});
  return positionAt(text, offsets.length > 0 ? Math.min(...offsets) : 0);
}

/** The direct sub-expressions of a node. */
function children(e: Expr): Expr[] {
  const k = e.exprKind;
  switch (k.case) {
    case "selectExpr":
      return k.value.operand ? [k.value.operand] : [];
    case "callExpr":
      return k.value.target ? [k.value.target, ...k.value.args] : [...k.value.args];
    case "listExpr":
      return [...k.value.elements];
    case "structExpr":
      return k.value.entries.flatMap((entry) => [
        ...(entry.keyKind.case === "mapKey" ? [entry.keyKind.value] : []),
        ...(entry.value ? [entry.value] : []),
      ]);
    case "comprehensionExpr": {
      const c = k.value;
      return [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result].filter(
        (x): x is Expr => x !== undefined,
      );
    }
    default:
      return [];
  }
}

/** Every node of the tree, parents first. */
export function* nodes(e: Expr): Generator<Expr> {
  yield e;
  for (const child of children(e)) yield* nodes(child);
}

/** The largest node id, so that rewrites can add nodes with fresh ids. */
export function maxId(e: Expr): bigint {
  let max = 0n;
  for (const n of nodes(e)) if (n.id > max) max = n.id;
  return max;
}

export function callNode(id: bigint, fn: string, args: Expr[]): Expr {
  return {
    $typeName: "cel.expr.Expr",
    id,
    exprKind: {
      case: "callExpr",
      value: { $typeName: "cel.expr.Expr.Call", function: fn, args },
    },
  };
}

export function intNode(id: bigint, value: bigint): Expr {
  return {
    $typeName: "cel.expr.Expr",
    id,
    exprKind: {
      case: "constExpr",
      value: { $typeName: "cel.expr.Constant", constantKind: { case: "int64Value", value } },
    },
  };
}

/** The string value of a string literal node. */
export function stringLiteral(e: Expr | undefined): string | undefined {
  const k = e?.exprKind;
  return k?.case === "constExpr" && k.value.constantKind.case === "stringValue"
    ? k.value.constantKind.value
    : undefined;
}

/** `a.b.c` as "a.b.c" when the expression is a plain dotted name. */
function qualifiedName(e: Expr): string | undefined {
  const k = e.exprKind;
  if (k.case === "identExpr") return k.value.name;
  if (k.case === "selectExpr" && !k.value.testOnly && k.value.operand) {
    const parent = qualifiedName(k.value.operand);
    return parent === undefined ? undefined : `${parent}.${k.value.field}`;
  }
  return undefined;
}

/**
 * Rewrites the tree in place so that later stages see plain names: escaped field names become
 * the property names they stand for, and `strings.quote(x)` becomes a call of the function
 * named "strings.quote".
 */
export function normalize(e: Expr, isFunction: (name: string) => boolean): void {
  for (const n of nodes(e)) {
    const k = n.exprKind;
    if (k.case === "selectExpr") {
      const name = unescapePropertyName(k.value.field);
      if (name === undefined) {
        throw new ExprError(
          `invalid escape sequence in field name '${k.value.field}' ` +
            "(escapes are __underscores__, __dot__, __dash__, __slash__ and __<reserved word>__)",
          n.id,
        );
      }
      k.value.field = name;
    } else if (k.case === "callExpr" && k.value.target) {
      const qualifier = qualifiedName(k.value.target);
      if (qualifier !== undefined && isFunction(`${qualifier}.${k.value.function}`)) {
        k.value.function = `${qualifier}.${k.value.function}`;
        k.value.target = undefined;
      }
    }
  }
}

/** The identifiers an expression names. */
export function identifiers(e: Expr): Set<string> {
  const names = new Set<string>();
  for (const n of nodes(e)) if (n.exprKind.case === "identExpr") names.add(n.exprKind.value.name);
  return names;
}

/** The fields read directly from a variable: `v.f`, `has(v.f)` and `v["f"]`. */
export function fieldsOf(e: Expr, variable: string): Set<string> {
  const isVariable = (x: Expr | undefined) =>
    x?.exprKind.case === "identExpr" && x.exprKind.value.name === variable;
  const fields = new Set<string>();
  for (const n of nodes(e)) {
    const k = n.exprKind;
    if (k.case === "selectExpr" && isVariable(k.value.operand)) fields.add(k.value.field);
    if (k.case === "callExpr" && k.value.function === "_[_]" && isVariable(k.value.args[0])) {
      const key = stringLiteral(k.value.args[1]);
      if (key !== undefined) fields.add(key);
    }
  }
  return fields;
}
