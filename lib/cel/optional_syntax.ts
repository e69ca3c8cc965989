/**
 * CEL's optional syntax on a parser that does not know it: `x.?f` (optional field selection),
 * `x[?k]` (optional index) and `{?k: v}` (an entry set only when `v` has a value).
 *
 * The text is rewritten into calls the parser reads with the same precedence (a member call
 * is a suffix like `.f` and `[k]`), then the AST is turned into cel-go's form:
 *
 * - `x.?f`    -> `x.__opt_select__(f)`  -> `_?._(x, "f")`
 * - `x[?k]`   -> `x.__opt_index__(k)`   -> `_[?_](x, k)`
 * - `{?k: v}` -> `{__opt_entry__(k): v}` -> the entry with `optionalEntry` set
 *
 * Positions the parser records are mapped back onto the original text, so errors point where
 * the user wrote. Strings and comments are left alone.
 */

import { callNode, type Expr, maxId, nodes, type ParsedExpr } from "./ast.ts";
import { ExprError } from "./errors.ts";
import { unescapePropertyName } from "./escaping.ts";
import { optionalValueType } from "./libraries/optional.ts";
import { DYN, type Type } from "./types.ts";

export const OPT_SELECT = "_?._";
export const OPT_INDEX = "_[?_]";

const SELECT_MARK = "__opt_select__";
const INDEX_MARK = "__opt_index__";
const ENTRY_MARK = "__opt_entry__";

/** A rewritten text and, per offset of it, the offset in the original. */
export interface Desugared {
  text: string;
  /** `original[i]`: where the rewritten text's offset `i` came from. */
  original: number[];
}

const IDENT = /[_a-zA-Z][_a-zA-Z0-9]*/y;

/**
 * Rewrites the optional syntax of `source` into marker calls (see the module comment). Text
 * without it comes back unchanged.
 */
export function desugarOptionalSyntax(source: string): Desugared {
  let text = "";
  const original: number[] = [];
  const emit = (s: string, from: number) => {
    text += s;
    for (let i = 0; i < s.length; i++) original.push(from);
  };
  const copy = (from: number, to: number) => {
    text += source.slice(from, to);
    for (let i = from; i < to; i++) original.push(i);
  };
  /** Open brackets: the character, whether `[?` opened it, and for `{` whether an optional
   * key waits for its `:`. */
  const stack: { ch: string; optional: boolean; keyOpen: boolean }[] = [];
  /** Where a `{` entry may start: after `{` or `,` (spaces aside). */
  let entryStart = false;
  let i = 0;
  while (i < source.length) {
    const ch = source[i];
    const skipped = skipLiteral(source, i);
    if (skipped > i) {
      copy(i, skipped);
      i = skipped;
      entryStart = false;
      continue;
    }
    if (/\s/.test(ch)) {
      copy(i, i + 1);
      i++;
      continue;
    }
    const top = stack.at(-1);
    if (ch === "?" && entryStart && top?.ch === "{") {
      emit(`${ENTRY_MARK}(`, i);
      top.keyOpen = true;
      i++;
      entryStart = false;
      continue;
    }
    entryStart = false;
    if (ch === "." && source[i + 1] === "?") {
      let j = i + 2;
      while (j < source.length && /\s/.test(source[j])) j++;
      IDENT.lastIndex = j;
      const name = IDENT.exec(source);
      if (name) {
        copy(i, i + 1);
        emit(`${SELECT_MARK}(`, i + 1);
        copy(j, j + name[0].length);
        emit(")", j + name[0].length);
        i = j + name[0].length;
        continue;
      }
    }
    if (ch === "[" && source[i + 1] === "?") {
      emit(`.${INDEX_MARK}(`, i);
      stack.push({ ch: "[", optional: true, keyOpen: false });
      i += 2;
      continue;
    }
    if (ch === "(" || ch === "[" || ch === "{") {
      stack.push({ ch, optional: false, keyOpen: false });
      entryStart = ch === "{";
    } else if (ch === ")" || ch === "]" || ch === "}") {
      const open = stack.pop();
      if (open?.optional && ch === "]") {
        emit(")", i);
        i++;
        continue;
      }
    } else if (ch === ":" && top?.ch === "{" && top.keyOpen) {
      emit(")", i);
      top.keyOpen = false;
    } else if (ch === "," && top?.ch === "{") {
      entryStart = true;
    }
    copy(i, i + 1);
    i++;
  }
  original.push(source.length);
  return { text, original };
}

/** The end of a string literal or comment starting at `i`, or `i` when none starts there. */
function skipLiteral(s: string, i: number): number {
  if (s.startsWith("//", i)) {
    const end = s.indexOf("\n", i);
    return end === -1 ? s.length : end;
  }
  let j = i;
  // Prefixes: r, b, and both in either order.
  while (j < i + 2 && /[rRbB]/.test(s[j] ?? "")) j++;
  const q = s[j];
  if (q !== '"' && q !== "'") return i;
  if (j > i && /[_a-zA-Z0-9]/.test(s[i - 1] ?? "")) return i; // part of an identifier
  const raw = /[rR]/.test(s.slice(i, j));
  const delim = s.startsWith(q.repeat(3), j) ? q.repeat(3) : q;
  let k = j + delim.length;
  while (k < s.length) {
    if (!raw && s[k] === "\\") {
      k += 2;
      continue;
    }
    if (s.startsWith(delim, k)) return k + delim.length;
    if (delim.length === 1 && s[k] === "\n") return k;
    k++;
  }
  return s.length;
}

/**
 * Turns the marker calls of a parsed {@link desugarOptionalSyntax} text into cel-go's form
 * and maps the recorded positions back onto the original text.
 */
export function restoreOptionalSyntax(parsed: ParsedExpr, desugared: Desugared): void {
  const info = parsed.sourceInfo;
  if (info) {
    for (const [id, offset] of Object.entries(info.positions)) {
      info.positions[id] = desugared.original[offset] ?? offset;
    }
  }
  if (parsed.expr) restore(parsed.expr);
}

function restore(e: Expr): void {
  const k = e.exprKind;
  switch (k.case) {
    case "selectExpr":
      if (k.value.operand) restore(k.value.operand);
      return;
    case "callExpr": {
      const call = k.value;
      if (call.target) restore(call.target);
      call.args.forEach(restore);
      if (call.function === SELECT_MARK && call.target && call.args.length === 1) {
        const arg = call.args[0];
        if (arg.exprKind.case !== "identExpr") break;
        const field = unescapePropertyName(arg.exprKind.value.name);
        if (field === undefined) {
          throw new ExprError(
            `invalid escape sequence in field name '${arg.exprKind.value.name}'`,
            arg.id,
          );
        }
        arg.exprKind = stringNode(arg.id, field).exprKind;
        call.function = OPT_SELECT;
        call.args = [call.target, arg];
        call.target = undefined;
      } else if (call.function === INDEX_MARK && call.target && call.args.length === 1) {
        call.function = OPT_INDEX;
        call.args = [call.target, call.args[0]];
        call.target = undefined;
      } else if (call.function === INDEX_MARK && !call.target) {
        throw new ExprError("unsupported syntax: optional list elements ([?x])", e.id);
      } else if (call.function === SELECT_MARK || call.function === INDEX_MARK) {
        throw new ExprError("syntax error: invalid optional syntax", e.id);
      } else if (call.function === "has" && call.args[0]?.exprKind.case === "callExpr") {
        // The parser expands has() only around a plain selection; `has(x.?f)` is no such.
        const fn = call.args[0].exprKind.value.function;
        if (fn === OPT_SELECT || fn === OPT_INDEX) {
          throw new ExprError("invalid argument to has() macro", e.id);
        }
      }
      return;
    }
    case "listExpr":
      k.value.elements.forEach(restore);
      return;
    case "structExpr":
      for (const entry of k.value.entries) {
        if (entry.value) restore(entry.value);
        if (entry.keyKind.case !== "mapKey") continue;
        const key = entry.keyKind.value;
        restore(key);
        const kk = key.exprKind;
        if (
          kk.case === "callExpr" && kk.value.function === ENTRY_MARK && !kk.value.target &&
          kk.value.args.length === 1
        ) {
          entry.keyKind.value = kk.value.args[0];
          entry.optionalEntry = true;
        }
      }
      return;
    case "comprehensionExpr":
      for (
        const x of [
          k.value.iterRange,
          k.value.accuInit,
          k.value.loopCondition,
          k.value.loopStep,
          k.value.result,
        ]
      ) {
        if (x) restore(x);
      }
      return;
    default:
      return;
  }
  // A marker that did not come from the syntax (a user's own call) is left as written.
}

/**
 * After checking: what the engine cannot run itself becomes a call of the optional library
 * (libraries/optional.ts): `_?._` and `_[?_]` (the engine has optionals of its own, not
 * ours: `@opt_field`, `@opt_key`), `.f` and `[k]` on an optional (`@opt_select`,
 * `@opt_index`) and map literals with `{?k: v}` entries (`@opt_map(keys, values, flags)`).
 */
export function rewriteOptionalChains(root: Expr, types: ReadonlyMap<bigint, Type>): void {
  let next = maxId(root);
  const isOptional = (e: Expr | undefined) =>
    e !== undefined && optionalValueType(types.get(e.id) ?? DYN) !== undefined;
  for (const n of [...nodes(root)]) {
    const k = n.exprKind;
    if (k.case === "selectExpr" && !k.value.testOnly && isOptional(k.value.operand)) {
      n.exprKind = callNode(n.id, "@opt_select", [
        k.value.operand!,
        stringNode(++next, k.value.field),
      ]).exprKind;
    } else if (k.case === "callExpr" && k.value.function === OPT_SELECT) {
      k.value.function = "@opt_field";
    } else if (k.case === "callExpr" && k.value.function === OPT_INDEX) {
      k.value.function = "@opt_key";
    } else if (
      k.case === "callExpr" && k.value.function === "_[_]" && isOptional(k.value.args[0])
    ) {
      k.value.function = "@opt_index";
    } else if (
      k.case === "structExpr" && k.value.messageName === "" &&
      k.value.entries.some((x) => x.optionalEntry)
    ) {
      const keys: Expr[] = [];
      const values: Expr[] = [];
      const flags: Expr[] = [];
      for (const entry of k.value.entries) {
        if (entry.keyKind.case !== "mapKey" || !entry.value) continue;
        keys.push(entry.keyKind.value);
        values.push(entry.value);
        flags.push(boolNode(++next, entry.optionalEntry));
      }
      n.exprKind = callNode(n.id, "@opt_map", [
        listNode(++next, keys),
        listNode(++next, values),
        listNode(++next, flags),
      ]).exprKind;
    }
  }
}

function constNode(id: bigint, constantKind: Constant["constantKind"]): Expr {
  return {
    $typeName: "cel.expr.Expr",
    id,
    exprKind: { case: "constExpr", value: { $typeName: "cel.expr.Constant", constantKind } },
  } as Expr;
}

type Constant = Extract<Expr["exprKind"], { case: "constExpr" }>["value"];

function stringNode(id: bigint, value: string): Expr {
  return constNode(id, { case: "stringValue", value });
}

function boolNode(id: bigint, value: boolean): Expr {
  return constNode(id, { case: "boolValue", value });
}

function listNode(id: bigint, elements: Expr[]): Expr {
  return {
    $typeName: "cel.expr.Expr",
    id,
    exprKind: {
      case: "listExpr",
      value: { $typeName: "cel.expr.Expr.CreateList", elements, optionalIndices: [] },
    },
  } as Expr;
}
