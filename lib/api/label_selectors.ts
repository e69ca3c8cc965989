/**
 * Label selectors, parsed, printed and matched as kube's apimachinery does: the
 * `labelSelector=` query parameter and the `LabelSelector` object of API types. Requirements are
 * joined by `,`:
 *
 * | form                | meaning                                         |
 * |---------------------|-------------------------------------------------|
 * | `k=v`, `k==v`       | label k is v                                    |
 * | `k!=v`              | label k is absent or not v                      |
 * | `k in (a,b)`        | label k is a or b (`()` means the empty value)  |
 * | `k notin (a,b)`     | label k is absent or neither a nor b            |
 * | `k`, `!k`           | label k exists / does not exist                 |
 * | `k>5`, `k<5`        | label k is an integer greater / less than 5     |
 *
 * Bad input throws a 400 {@link StatusError} (`badRequest`) with kube's message.
 *
 * @module
 */

import { badRequest } from "./errors.ts";
import { isQualifiedName, isValidLabelValue } from "./names.ts";

/** kube's selection operators as they appear in a parsed requirement. */
export type LabelOperator = "=" | "==" | "!=" | "in" | "notin" | "exists" | "!" | "gt" | "lt";

/** One requirement of a label selector. `values` are sorted and distinct. */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

/**
 * A parsed label selector: every requirement must hold. {@link LabelSelector.everything}
 * (the empty selector) matches all objects; {@link LabelSelector.nothing} matches none.
 */
export class LabelSelector {
  /** Requirements sorted by key. */
  readonly requirements: readonly LabelRequirement[];
  readonly #matchesNothing: boolean;

  private constructor(requirements: LabelRequirement[], matchesNothing: boolean) {
    this.requirements = Object.freeze(sortByKey(requirements));
    this.#matchesNothing = matchesNothing;
  }

  /** The empty selector: matches everything. */
  static everything(): LabelSelector {
    return new LabelSelector([], false);
  }

  /** Matches nothing: what an absent `LabelSelector` object means. */
  static nothing(): LabelSelector {
    return new LabelSelector([], true);
  }

  /** @internal Builds from requirements already validated by {@link newRequirement}. */
  static of(requirements: LabelRequirement[]): LabelSelector {
    return new LabelSelector(requirements, false);
  }

  /** True for the selector that matches everything. */
  isEmpty(): boolean {
    return !this.#matchesNothing && this.requirements.length === 0;
  }

  /** Whether an object with these labels is selected. */
  matches(labels: Record<string, string> | undefined): boolean {
    if (this.#matchesNothing) return false;
    const ls = labels ?? {};
    return this.requirements.every((r) => requirementMatches(r, ls));
  }

  /** The value `key` must have for a match (`k=v`, `k==v`, `k in (v)`), if there is one. */
  requiresExactMatch(key: string): string | undefined {
    for (const r of this.requirements) {
      if (r.key !== key) continue;
      if (r.operator === "=" || r.operator === "==" || r.operator === "in") {
        if (r.values.length === 1) return r.values[0];
      }
    }
    return undefined;
  }

  /** The canonical form, e.g. `a=b,c in (d,e),!f`; `""` for everything and nothing. */
  toString(): string {
    return this.requirements.map(requirementString).join(",");
  }
}

function sortByKey(reqs: LabelRequirement[]): LabelRequirement[] {
  return reqs.map((r, i) => ({ r, i }))
    .sort((a, b) => (a.r.key < b.r.key ? -1 : a.r.key > b.r.key ? 1 : a.i - b.i))
    .map((x) => x.r);
}

/** Go's `strconv.ParseInt(s, 10, 64)`; undefined when it would fail. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

function requirementMatches(r: LabelRequirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, r.key);
  switch (r.operator) {
    case "=":
    case "==":
    case "in":
      return has && r.values.includes(labels[r.key]);
    case "!=":
    case "notin":
      return !has || !r.values.includes(labels[r.key]);
    case "exists":
      return has;
    case "!":
      return !has;
    case "gt":
    case "lt": {
      if (!has || r.values.length !== 1) return false;
      const actual = parseInt64(labels[r.key]);
      const bound = parseInt64(r.values[0]);
      if (actual === undefined || bound === undefined) return false;
      return r.operator === "gt" ? actual > bound : actual < bound;
    }
  }
}

const OPERATOR_TEXT: Record<LabelOperator, string> = {
  "=": "=",
  "==": "==",
  "!=": "!=",
  "in": " in ",
  "notin": " notin ",
  "gt": ">",
  "lt": "<",
  "exists": "",
  "!": "",
};

function requirementString(r: LabelRequirement): string {
  if (r.operator === "exists") return r.key;
  if (r.operator === "!") return `!${r.key}`;
  const values = r.values.join(",");
  const set = r.operator === "in" || r.operator === "notin";
  return `${r.key}${OPERATOR_TEXT[r.operator]}${set ? `(${values})` : values}`;
}

/** Whether `labels` satisfy `selector` (undefined labels are an empty set). */
export function matchesLabels(
  selector: LabelSelector,
  labels: Record<string, string> | undefined,
): boolean {
  return selector.matches(labels);
}

// Go's fmt, for the value part of kube's field errors inside selector messages.
function goQuote(s: string): string {
  return JSON.stringify(s);
}

function goStringSlice(values: readonly string[] | undefined): string {
  if (values === undefined || values.length === 0) return "[]string(nil)";
  return `[]string{${values.map(goQuote).join(", ")}}`;
}

/** kube's error aggregate: one message alone, several in brackets, duplicates dropped. */
function aggregate(messages: string[]): string | undefined {
  const unique = [...new Set(messages)];
  if (unique.length === 0) return undefined;
  return unique.length === 1 ? unique[0] : `[${unique.join(", ")}]`;
}

/** A label key check as the selector parser words it (`<path>: Invalid value: …`). */
function labelKeyError(key: string, path: string): string | undefined {
  const errs = isQualifiedName(key);
  return errs.length ? `${path}: Invalid value: ${goQuote(key)}: ${errs.join("; ")}` : undefined;
}

/**
 * kube's `NewRequirement`: checks the key, the number of values the operator takes and each
 * value. Returns the requirement, or the aggregated error message.
 */
function newRequirement(
  key: string,
  operator: LabelOperator,
  values: string[],
): LabelRequirement | string {
  const errs: string[] = [];
  const keyErr = labelKeyError(key, "key");
  if (keyErr) errs.push(keyErr);
  const invalid = (path: string, value: string, detail: string) =>
    errs.push(`${path}: Invalid value: ${value}: ${detail}`);
  switch (operator) {
    case "in":
    case "notin":
      if (values.length === 0) {
        invalid(
          "values",
          goStringSlice(values),
          "for 'in', 'notin' operators, values set can't be empty",
        );
      }
      break;
    case "=":
    case "==":
    case "!=":
      if (values.length !== 1) {
        invalid(
          "values",
          goStringSlice(values),
          "exact-match compatibility requires one single value",
        );
      }
      break;
    case "exists":
    case "!":
      if (values.length !== 0) {
        invalid(
          "values",
          goStringSlice(values),
          "values set must be empty for exists and does not exist",
        );
      }
      break;
    case "gt":
    case "lt":
      if (values.length !== 1) {
        invalid(
          "values",
          goStringSlice(values),
          "for 'Gt', 'Lt' operators, exactly one value is required",
        );
      }
      for (const [i, v] of values.entries()) {
        if (parseInt64(v) === undefined) {
          invalid(
            `values[${i}]`,
            goQuote(v),
            "for 'Gt', 'Lt' operators, the value must be an integer",
          );
        }
      }
      break;
  }
  for (const [i, v] of values.entries()) {
    const msgs = isValidLabelValue(v);
    if (msgs.length) invalid(`values[${i}][${key}]`, goQuote(v), msgs.join("; "));
  }
  return aggregate(errs) ??
    { key, operator, values: Object.freeze([...new Set(values)].sort()) };
}

// The lexer. Tokens are their literal text, plus three kinds of their own.
type Token =
  | "identifier"
  | "end"
  | "error"
  | "("
  | ")"
  | ","
  | "!"
  | "="
  | "=="
  | "!="
  | ">"
  | "<"
  | "in"
  | "notin";

interface Item {
  tok: Token;
  lit: string;
}

const SYMBOL_TOKENS = new Set(["(", ")", ",", "!", "=", "==", "!=", ">", "<"]);
const KEYWORD_TOKENS = new Set(["in", "notin"]);

function isWhitespace(ch: string): boolean {
  return ch === " " || ch === "\t" || ch === "\r" || ch === "\n";
}

function isSpecial(ch: string): boolean {
  return "=!(),><".includes(ch);
}

/** Splits a selector into items, ending with `end`. Symbols are matched longest first. */
function lex(s: string): Item[] {
  const items: Item[] = [];
  let i = 0;
  for (;;) {
    while (i < s.length && isWhitespace(s[i])) i++;
    if (i >= s.length) {
      items.push({ tok: "end", lit: "" });
      return items;
    }
    const start = i;
    if (isSpecial(s[i])) {
      // Extend while the longer run is still a symbol; every single special char is one.
      let lit = s[i++];
      while (i < s.length && isSpecial(s[i]) && SYMBOL_TOKENS.has(lit + s[i])) lit += s[i++];
      items.push({ tok: lit as Token, lit });
    } else {
      while (i < s.length && !isSpecial(s[i]) && !isWhitespace(s[i])) i++;
      const lit = s.slice(start, i);
      items.push({ tok: KEYWORD_TOKENS.has(lit) ? lit as Token : "identifier", lit });
    }
  }
}

/** Thrown inside the parser; turned into a 400 at the boundary. */
class SelectorSyntaxError extends Error {}

/**
 * A recursive-descent parser over the lexed items. Where values are expected (context
 * `values`), the keywords `in` and `notin` read as identifiers.
 */
class Parser {
  #items: Item[];
  #pos = 0;

  constructor(s: string) {
    this.#items = lex(s);
  }

  #peek(values: boolean): Item {
    const item = this.#items[this.#pos];
    return values && KEYWORD_TOKENS.has(item.tok) ? { tok: "identifier", lit: item.lit } : item;
  }

  #next(values: boolean): Item {
    const item = this.#peek(values);
    if (this.#pos < this.#items.length - 1) this.#pos++;
    return item;
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.#peek(true);
      if (tok === "end") return reqs;
      if (tok !== "identifier" && tok !== "!") {
        throw new SelectorSyntaxError(
          `found '${lit}', expected: !, identifier, or 'end of string'`,
        );
      }
      try {
        reqs.push(this.#requirement());
      } catch (e) {
        if (e instanceof SelectorSyntaxError) {
          throw new SelectorSyntaxError(`unable to parse requirement: ${e.message}`);
        }
        throw e;
      }
      const after = this.#next(true);
      if (after.tok === "end") return reqs;
      if (after.tok !== ",") {
        throw new SelectorSyntaxError(`found '${after.lit}', expected: ',' or 'end of string'`);
      }
      const following = this.#peek(true);
      if (following.tok !== "identifier" && following.tok !== "!") {
        throw new SelectorSyntaxError(
          `found '${following.lit}', expected: identifier after ','`,
        );
      }
    }
  }

  #requirement(): LabelRequirement {
    let unary: LabelOperator | undefined;
    let item = this.#next(true);
    if (item.tok === "!") {
      unary = "!";
      item = this.#next(true);
    }
    if (item.tok !== "identifier") {
      throw new SelectorSyntaxError(`found '${item.lit}', expected: identifier`);
    }
    const key = item.lit;
    const keyErr = labelKeyError(key, "<nil>");
    if (keyErr) throw new SelectorSyntaxError(keyErr);
    const ahead = this.#peek(true).tok;
    if (unary === undefined && (ahead === "end" || ahead === ",")) unary = "exists";
    if (unary !== undefined) return this.#build(key, unary, []);

    const operator = this.#operator();
    const values = operator === "in" || operator === "notin"
      ? this.#valueSet()
      : this.#exactValue();
    return this.#build(key, operator, [...new Set(values)].sort());
  }

  #build(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
    const r = newRequirement(key, operator, values);
    if (typeof r === "string") throw new SelectorSyntaxError(r);
    return r;
  }

  #operator(): LabelOperator {
    const { tok, lit } = this.#next(false);
    switch (tok) {
      case "in":
      case "notin":
      case "=":
      case "==":
      case "!=":
        return tok;
      case ">":
        return "gt";
      case "<":
        return "lt";
      default:
        throw new SelectorSyntaxError(`found '${lit}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  }

  #valueSet(): string[] {
    const open = this.#next(true);
    if (open.tok !== "(") throw new SelectorSyntaxError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.#peek(true);
    if (tok === ")") {
      this.#next(true);
      return [""];
    }
    if (tok !== "identifier" && tok !== ",") {
      throw new SelectorSyntaxError(`found '${lit}', expected: ',', ')' or identifier`);
    }
    const values = this.#identifierList();
    if (this.#next(true).tok !== ")") {
      throw new SelectorSyntaxError(`found '${lit}', expected: ')'`);
    }
    return values;
  }

  /** Values up to (not including) `)`. Empty slots (`(,a)`, `(a,)`, `(a,,b)`) are `""`. */
  #identifierList(): string[] {
    const values: string[] = [];
    for (;;) {
      const { tok, lit } = this.#next(true);
      if (tok === "identifier") {
        values.push(lit);
        const ahead = this.#peek(true);
        if (ahead.tok === ",") continue;
        if (ahead.tok === ")") return values;
        throw new SelectorSyntaxError(`found '${ahead.lit}', expected: ',' or ')'`);
      }
      if (tok === ",") {
        if (values.length === 0) values.push("");
        const ahead = this.#peek(true).tok;
        if (ahead === ")") {
          values.push("");
          return values;
        }
        if (ahead === ",") {
          this.#next(true);
          values.push("");
        }
        continue;
      }
      throw new SelectorSyntaxError(`found '${lit}', expected: ',', or identifier`);
    }
  }

  #exactValue(): string[] {
    const ahead = this.#peek(true).tok;
    if (ahead === "end" || ahead === ",") return [""];
    const { tok, lit } = this.#next(true);
    if (tok === "identifier") return [lit];
    throw new SelectorSyntaxError(`found '${lit}', expected: identifier`);
  }
}

/**
 * Parses a label selector string (the `labelSelector` query parameter). An empty or blank
 * string selects everything. Keys must be qualified names and values label values.
 *
 * @throws {StatusError} 400 BadRequest with kube's message, e.g.
 *   `unable to parse requirement: found '', expected: in, notin, =, ==, !=, gt, lt`.
 *
 * @example
 * ```ts
 * const sel = parseLabelSelector("app=web, tier in (front,back), !canary");
 * matchesLabels(sel, { app: "web", tier: "front" }); // true
 * sel.toString(); // "!canary,app=web,tier in (back,front)"
 * ```
 */
export function parseLabelSelector(s: string): LabelSelector {
  try {
    return LabelSelector.of(new Parser(s).parse());
  } catch (e) {
    if (e instanceof SelectorSyntaxError) throw badRequest(e.message);
    throw e;
  }
}

const EXPRESSION_OPERATORS: Record<string, LabelOperator> = {
  In: "in",
  NotIn: "notin",
  Exists: "exists",
  DoesNotExist: "!",
};

/** The JSON form of a label selector, as in `spec.selector` of many kinds. */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string> | null;
  matchExpressions?:
    | { key: string; operator: string; values?: string[] | null }[]
    | null;
}

/**
 * Converts the JSON form of a label selector (kube's `LabelSelectorAsSelector`): an absent
 * (null/undefined) selector matches nothing, an empty one everything. Operators are `In`,
 * `NotIn`, `Exists` and `DoesNotExist`.
 *
 * @throws {StatusError} 400 BadRequest for a bad key, value, operator or value count.
 */
export function labelSelectorFromObject(
  obj: LabelSelectorObject | null | undefined,
): LabelSelector {
  if (obj === undefined || obj === null) return LabelSelector.nothing();
  if (typeof obj !== "object" || Array.isArray(obj)) {
    throw badRequest("invalid label selector: must be an object");
  }
  const reqs: LabelRequirement[] = [];
  const add = (r: LabelRequirement | string) => {
    if (typeof r === "string") throw badRequest(r);
    reqs.push(r);
  };
  const matchLabels = obj.matchLabels ?? {};
  if (typeof matchLabels !== "object" || Array.isArray(matchLabels)) {
    throw badRequest("invalid label selector: matchLabels must be an object");
  }
  for (const [key, value] of Object.entries(matchLabels)) {
    if (typeof value !== "string") {
      throw badRequest(`invalid label selector: matchLabels[${key}] must be a string`);
    }
    add(newRequirement(key, "=", [value]));
  }
  const expressions = obj.matchExpressions ?? [];
  if (!Array.isArray(expressions)) {
    throw badRequest("invalid label selector: matchExpressions must be an array");
  }
  for (const [i, expr] of expressions.entries()) {
    const values = expr?.values ?? [];
    if (
      typeof expr !== "object" || expr === null || typeof expr.key !== "string" ||
      typeof expr.operator !== "string" || !Array.isArray(values) ||
      !values.every((v) => typeof v === "string")
    ) {
      throw badRequest(
        `invalid label selector: matchExpressions[${i}] must have a string key and operator ` +
          "and string values",
      );
    }
    const op = Object.hasOwn(EXPRESSION_OPERATORS, expr.operator)
      ? EXPRESSION_OPERATORS[expr.operator]
      : undefined;
    if (op === undefined) {
      throw badRequest(`${goQuote(expr.operator)} is not a valid label selector operator`);
    }
    add(newRequirement(expr.key, op, [...values]));
  }
  return LabelSelector.of(reqs);
}
