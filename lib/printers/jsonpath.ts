/**
 * kubectl's JSONPath: the evaluator and printer of client-go's `util/jsonpath`, for `-o jsonpath`,
 * `-o jsonpath-as-json`, `-o jsonpath-file` and a CRD's `additionalPrinterColumns[].jsonPath`.
 *
 * {@link compileJsonPath} parses once; `evaluate` gives the result sets (one per top-level node,
 * `{range}` repeating its body per value), `print` the text kubectl writes: the values of a set
 * joined by spaces, strings as they are, maps and arrays as compact JSON (keys sorted, `<>&`
 * escaped), numbers as Go prints an int64 or float64, `null` for a JSON null; with `json` every
 * set as an indented JSON array. A missing field is no value, or with `allowMissingKeys: false` a
 * {@link JsonPathError} `x is not found`.
 *
 * For printer columns the server parses `{` + jsonPath + `}` and reads the first value of the
 * first set (see `columnValue`).
 *
 * One deliberate difference: Go visits a map's keys in random order for `.*` and `..`; we visit
 * them sorted, so our output is one of kubectl's possible outputs.
 *
 * @module
 */

import { GoFloat, goFloat, goJson, goNumber, goPrint, isGoInt, sortedKeys } from "./go_value.ts";
import { type JsonPathNode, type ListNode, parseJsonPath } from "./jsonpath_parse.ts";

export { JsonPathParseError, parseJsonPath } from "./jsonpath_parse.ts";

/** An error while evaluating; `message` is client-go's (`x is not found`, …). */
export class JsonPathError extends Error {
  override name = "JsonPathError";
}

/** How a template is evaluated. */
export interface JsonPathOptions {
  /** Missing fields give no value rather than an error. @default true (kubectl's default) */
  allowMissingKeys?: boolean;
}

/** How a template's results are printed. */
export interface JsonPathPrintOptions extends JsonPathOptions {
  /** `jsonpath-as-json`: each result set as an indented JSON array. @default false */
  json?: boolean;
}

/** A parsed template. */
export interface CompiledJsonPath {
  readonly template: string;
  /** The result sets for `obj`, as plain JSON values. @throws {JsonPathError} */
  evaluate(obj: unknown, opts?: JsonPathOptions): unknown[][];
  /** The text kubectl prints for `obj` (no newline added). @throws {JsonPathError} */
  print(obj: unknown, opts?: JsonPathPrintOptions): string;
}

/**
 * Parses a kubectl JSONPath template.
 *
 * @example
 * ```ts
 * const p = compileJsonPath('{range .items[*]}{.metadata.name}{"\\n"}{end}');
 * p.print({ items: [{ metadata: { name: "a" } }] }); // "a\n"
 * ```
 * @throws {JsonPathParseError} with client-go's reason when the template does not parse.
 */
export function compileJsonPath(template: string): CompiledJsonPath {
  const root = parseJsonPath(template);
  return {
    template,
    evaluate(obj, opts = {}) {
      return run(root, obj, opts).map((set) => set.map(toPlain));
    },
    print(obj, opts = {}) {
      return run(root, obj, opts).map((set) => printSet(set, opts.json ?? false)).join("");
    },
  };
}

/**
 * The value a printer column shows for `jsonPath` (as written in a CRD, without braces): the
 * first value found, or undefined when there is none. Missing fields are not errors.
 */
export function columnValue(jsonPath: string, obj: unknown): unknown {
  const sets = compileJsonPath(`{${jsonPath}}`).evaluate(obj);
  return sets[0]?.[0];
}

/**
 * The text client-go prints for one value: what a printer column of type `string` shows for
 * its value (maps and arrays as compact JSON, numbers as Go prints them).
 */
export function jsonPathValueText(value: unknown): string {
  return printValue(value);
}

/** Go's invalid `reflect.Value`: what a `{range}` body sees for a nil or absent value. */
const NO_VALUE = Symbol("no value");
type Value = unknown;

interface RangeState {
  begin: number;
  inRange: number;
  end: number;
  lastEnd: number;
}

function run(root: ListNode, obj: unknown, opts: JsonPathOptions): Value[][] {
  const walker = new Walker(opts.allowMissingKeys ?? true);
  const st: RangeState = { begin: 0, inRange: 0, end: 0, lastEnd: -1 };
  return findResults(root.nodes, 0, obj, walker, st);
}

/**
 * client-go's range machinery, kept step for step because kubectl users rely on its edges: a
 * `{range}` runs the following nodes once per value until an `{end}` breaks the block, then
 * resumes after that `{end}`; a range without `{end}` runs the rest of the template per value
 * and then once more on the outer object.
 */
function findResults(
  nodes: JsonPathNode[],
  from: number,
  data: Value,
  w: Walker,
  st: RangeState,
): Value[][] {
  const full: Value[][] = [];
  for (let i = from; i < nodes.length; i++) {
    const results = w.walk([data], nodes[i], st);
    if (st.end > 0 && st.end <= st.inRange) {
      st.end--;
      st.lastEnd = i;
      break;
    }
    if (st.begin > 0) {
      st.begin--;
      st.inRange++;
      if (results.length > 0) {
        for (const v of results) {
          full.push(...findResults(nodes, i + 1, v === null ? NO_VALUE : v, w, st));
        }
      } else findResults(nodes, i + 1, NO_VALUE, w, st);
      st.inRange--;
      if (st.lastEnd > i) i = st.lastEnd;
      continue;
    }
    full.push(results);
  }
  return full;
}

class Walker {
  constructor(private readonly allowMissingKeys: boolean) {}

  walk(input: Value[], node: JsonPathNode, st: RangeState): Value[] {
    switch (node.type) {
      case "list":
        return node.nodes.reduce((cur, n) => this.walk(cur, n, st), input);
      case "text":
        return [node.text];
      case "field":
        return this.field(input, node.name);
      case "array":
        return array(input, node.params);
      case "filter":
        return this.filter(input, node, st);
      case "int":
      case "bool":
        return input.map(() => node.value);
      case "float":
        return input.map(() => new GoFloat(node.value));
      case "wildcard":
        return input.flatMap(children);
      case "recursive":
        return recursive(input);
      case "union":
        return node.lists.flatMap((list) => this.walk(input, list, st));
      case "identifier":
        return identifier(input, node.name, st);
    }
  }

  private field(input: Value[], name: string): Value[] {
    const results: Value[] = [];
    for (const v of input) {
      if (isMap(v) && Object.hasOwn(v, name)) results.push(v[name]);
    }
    if (results.length === 0 && input.length > 0 && !this.allowMissingKeys) {
      throw new JsonPathError(`${name} is not found`);
    }
    return results;
  }

  private filter(
    input: Value[],
    node: Extract<JsonPathNode, { type: "filter" }>,
    st: RangeState,
  ): Value[] {
    const results: Value[] = [];
    for (const v of input) {
      if (!Array.isArray(v)) {
        throw new JsonPathError(
          `${goReflectPrint(v)} is not array or slice and cannot be filtered`,
        );
      }
      for (const item of v) {
        let lefts: Value[];
        try {
          lefts = this.walk([item], node.left, st);
        } catch (e) {
          if (node.operator === "exists") continue;
          throw e;
        }
        if (node.operator === "exists") {
          if (lefts.length > 0) results.push(item);
          continue;
        }
        if (lefts.length === 0) continue;
        if (lefts.length > 1) throw new JsonPathError("can only compare one element at a time");
        const rights = this.walk([item], node.right, st);
        if (rights.length === 0) continue;
        if (rights.length > 1) throw new JsonPathError("can only compare one element at a time");
        if (compare(lefts[0], rights[0], node.operator)) results.push(item);
      }
    }
    return results;
  }
}

function identifier(input: Value[], name: string, st: RangeState): Value[] {
  if (name === "range") {
    st.begin++;
    return input;
  }
  if (name === "end") {
    if (st.inRange === 0) throw new JsonPathError("not in range, nothing to end");
    st.end++;
    return [];
  }
  throw new JsonPathError(`unrecognized identifier ${name}`);
}

function array(
  input: Value[],
  params: Extract<JsonPathNode, { type: "array" }>["params"],
): Value[] {
  const result: Value[] = [];
  for (const v of input) {
    if (v === null) continue;
    if (!Array.isArray(v)) throw new JsonPathError(`${goTypeName(v)} is not array or slice`);
    const len = v.length;
    let start = params[0].known ? params[0].value : 0;
    if (start < 0) start += len;
    let end = params[1].known ? params[1].value : len;
    if (end < 0 || (end === 0 && params[1].derived)) end += len;
    // client-go returns what it has so far when a slice asks for no elements.
    if (end === start) return result;
    if (start >= len || start < 0) {
      throw new JsonPathError(`array index out of bounds: index ${start}, length ${len}`);
    }
    if (end > len || end < 0) {
      throw new JsonPathError(`array index out of bounds: index ${end - 1}, length ${len}`);
    }
    if (start > end) {
      throw new JsonPathError(`starting index ${start} is greater than ending index ${end}`);
    }
    let step = 1;
    if (params[2].known) {
      if (params[2].value <= 0) throw new JsonPathError("step must be > 0");
      step = params[2].value;
    }
    for (let i = start; i < end; i += step) result.push(v[i]);
  }
  return result;
}

/** The children Go's reflection sees: map values, array elements, a string's UTF-8 bytes. */
function children(v: Value): Value[] {
  if (Array.isArray(v)) return v;
  if (typeof v === "string") return Array.from(new TextEncoder().encode(v));
  if (isMap(v)) return sortedKeys(v).map((k) => v[k]);
  return [];
}

/** `..`: every value that has children (pre-order), including the starting ones. */
function recursive(input: Value[]): Value[] {
  const out: Value[] = [];
  for (const v of input) {
    const kids = children(v);
    if (kids.length === 0) continue;
    out.push(v);
    out.push(...recursive(kids));
  }
  return out;
}

type Kind = "bool" | "int" | "float" | "string";

/** The forked text/template comparison kubectl's filters use (`template.Less`, `Equal`, …). */
function compare(left: Value, right: Value, op: string): boolean {
  const k1 = basicKind(left);
  const k2 = basicKind(right);
  const a = left instanceof GoFloat ? left.value : left as number | string | boolean;
  const b = right instanceof GoFloat ? right.value : right as number | string | boolean;
  if (!["==", "!=", "<", ">", "<=", ">="].includes(op)) {
    throw new JsonPathError(`unrecognized filter operator ${op}`);
  }
  if (k1 !== k2) throw new JsonPathError("incompatible types for comparison");
  if (op === "==") return a === b;
  if (op === "!=") return a !== b;
  if (k1 === "bool") throw new JsonPathError("invalid type for comparison");
  switch (op) {
    case "<":
      return a < b;
    case ">":
      return a > b;
    case "<=":
      return a <= b;
    default:
      return a >= b;
  }
}

function basicKind(v: Value): Kind {
  if (v instanceof GoFloat) return "float";
  switch (typeof v) {
    case "boolean":
      return "bool";
    case "number":
      return isGoInt(v) ? "int" : "float";
    case "string":
      return "string";
  }
  throw new JsonPathError("invalid type for comparison");
}

function printSet(set: Value[], json: boolean): string {
  if (json) return goJson(set.map(toPlain), { indent: true }) + "\n";
  return set.map(printValue).join(" ");
}

function printValue(v: Value): string {
  if (v === NO_VALUE) return "<no value>";
  if (v === null) return "null";
  if (v instanceof GoFloat) return goFloat(v.value);
  if (typeof v === "object") return goJson(v);
  if (typeof v === "number") return goNumber(v);
  return String(v);
}

function toPlain(v: Value): unknown {
  if (v === NO_VALUE) return null;
  if (v instanceof GoFloat) return v.value;
  return v;
}

function isMap(v: Value): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof GoFloat);
}

/** Go's name of the dynamic type kubectl holds `v` as. */
function goTypeName(v: Value): string {
  if (v instanceof GoFloat) return "float64";
  if (v === NO_VALUE) return "<nil>";
  switch (typeof v) {
    case "string":
      return "string";
    case "number":
      return isGoInt(v) ? "int64" : "float64";
    case "boolean":
      return "bool";
  }
  return "map[string]interface {}";
}

/** `%v` of a `reflect.Value`, as in client-go's filter error. */
function goReflectPrint(v: Value): string {
  return v === NO_VALUE ? "<invalid reflect.Value>" : goPrint(v);
}
