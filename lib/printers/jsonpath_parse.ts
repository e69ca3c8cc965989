/**
 * The parser of kubectl's JSONPath dialect (client-go's `util/jsonpath`), as kubectl parses
 * `-o jsonpath=…` and the server parses a CRD's `additionalPrinterColumns[].jsonPath`.
 *
 * A template is text with actions in `{…}`. Inside an action: `.field` (a `\` escapes a
 * terminator such as `.`), `..` recursive descent, `[n]`, `[a:b:c]` slices, `[*]`, `['key']`,
 * unions `[a,b]`, filters `[?(@.x=="y")]` (operators `== != < > <= >=`, or existence
 * `[?(@.x)]`), quoted text `"…"`/`'…'` with Go escapes, numbers, `true`/`false`, and the
 * identifiers `range`/`end`. `@` and `$` name the current object and are skipped, as are spaces.
 * kubectl's quirks are kept: `["key"]` is not a key (it is an invalid index), a `.` inside
 * `['a.b']` still splits fields, a tab inside an action is an error.
 *
 * Errors are {@link JsonPathParseError}s whose message is client-go's (e.g. `unclosed action`).
 *
 * @module
 */

/** Go's `ParamsEntry` of a slice `[a:b:c]`. `derived` marks the end of a single index `[n]`. */
export interface SliceParam {
  value: number;
  known: boolean;
  derived?: boolean;
}

export interface ListNode {
  type: "list";
  nodes: JsonPathNode[];
}

export type JsonPathNode =
  | ListNode
  | { type: "text"; text: string }
  | { type: "field"; name: string }
  | { type: "array"; params: [SliceParam, SliceParam, SliceParam] }
  | { type: "filter"; left: ListNode; right: ListNode; operator: string }
  | { type: "int"; value: number }
  | { type: "float"; value: number }
  | { type: "bool"; value: boolean }
  | { type: "wildcard" }
  | { type: "recursive" }
  | { type: "union"; lists: ListNode[] }
  | { type: "identifier"; name: string };

/** A template kubectl would refuse to parse; `message` is client-go's reason. */
export class JsonPathParseError extends Error {
  override name = "JsonPathParseError";
}

/** Parses a whole template into its top-level nodes (text nodes and action lists). */
export function parseJsonPath(template: string): ListNode {
  return new Parser(template).parseTemplate();
}

const SLICE = /^(-?\d*)(:-?\d*)?(:-?\d*)?$/;
const DICT_KEY = /^'([^']*)'$/;
const FILTER = /^([^!<>=]+)([!<>=]+)(.+?)$/;
const EOF = "";

class Parser {
  private pos = 0;
  private start = 0;
  private readonly root: ListNode = { type: "list", nodes: [] };

  constructor(private readonly input: string) {}

  parseTemplate(): ListNode {
    while (this.pos < this.input.length) {
      const brace = this.input.indexOf("{", this.pos);
      const textEnd = brace < 0 ? this.input.length : brace;
      if (textEnd > this.pos) {
        this.root.nodes.push({ type: "text", text: this.input.slice(this.pos, textEnd) });
      }
      if (brace < 0) break;
      this.pos = brace + 1;
      const action: ListNode = { type: "list", nodes: [] };
      this.root.nodes.push(action);
      this.parseAction(action);
    }
    return this.root;
  }

  /** The inside of one `{…}`, up to and including its `}`. */
  private parseAction(cur: ListNode): void {
    for (;;) {
      this.start = this.pos;
      const rest = this.input.slice(this.pos);
      if (rest.startsWith("}")) {
        this.pos++;
        return;
      }
      if (rest.startsWith("[?(")) {
        this.parseFilter(cur);
        continue;
      }
      if (rest.startsWith("..")) {
        this.parseRecursive(cur);
        continue;
      }
      const r = this.next();
      if (r === EOF || r === "\r" || r === "\n") throw new JsonPathParseError("unclosed action");
      if (r === " " || r === "@" || r === "$") continue;
      if (r === "[") this.parseArray(cur);
      else if (r === '"' || r === "'") this.parseQuote(cur, r);
      else if (r === ".") this.parseField(cur);
      else if (r === "+" || r === "-" || isDigit(r)) {
        this.pos = this.start;
        this.parseNumber(cur);
      } else if (isAlphaNumeric(r)) {
        this.pos = this.start;
        this.parseIdentifier(cur);
      } else throw new JsonPathParseError(`unrecognized character in action: ${goRune(r)}`);
    }
  }

  private next(): string {
    if (this.pos >= this.input.length) return EOF;
    const r = String.fromCodePoint(this.input.codePointAt(this.pos)!);
    this.pos += r.length;
    return r;
  }

  private peek(): string {
    const at = this.pos;
    const r = this.next();
    this.pos = at;
    return r;
  }

  private parseIdentifier(cur: ListNode): void {
    while (!isTerminator(this.peek())) this.next();
    const value = this.input.slice(this.start, this.pos);
    if (value === "true" || value === "false") {
      cur.nodes.push({ type: "bool", value: value === "true" });
    } else cur.nodes.push({ type: "identifier", name: value });
  }

  private parseRecursive(cur: ListNode): void {
    if (cur.nodes.at(-1)?.type === "recursive") {
      throw new JsonPathParseError("invalid multiple recursive descent");
    }
    this.pos += 2;
    cur.nodes.push({ type: "recursive" });
    if (isAlphaNumeric(this.peek())) {
      this.start = this.pos;
      this.parseField(cur);
    }
  }

  private parseNumber(cur: ListNode): void {
    const first = this.peek();
    if (first === "+" || first === "-") this.next();
    for (;;) {
      const r = this.peek();
      if (r !== "." && !isDigit(r)) break;
      this.next();
    }
    const text = this.input.slice(this.start, this.pos);
    if (/^[+-]?\d+$/.test(text) && Math.abs(Number(text)) < 2 ** 63) {
      cur.nodes.push({ type: "int", value: Number(text) });
    } else if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(text)) {
      cur.nodes.push({ type: "float", value: Number(text) });
    } else throw new JsonPathParseError(`cannot parse number ${text}`);
  }

  private parseArray(cur: ListNode): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === "\n") throw new JsonPathParseError("unterminated array");
      if (r === "]") break;
    }
    let text = this.input.slice(this.start + 1, this.pos - 1);
    if (text === "*") text = ":";

    const parts = text.split(",");
    if (parts.length > 1) {
      const lists = parts.map((part) => parseSubAction(`[${trimSpaces(part)}]`));
      cur.nodes.push({ type: "union", lists });
      return;
    }
    const key = DICT_KEY.exec(text);
    if (key) {
      cur.nodes.push(...parseSubAction(`.${key[1]}`).nodes);
      return;
    }
    const slice = SLICE.exec(text);
    if (!slice) throw new JsonPathParseError(`invalid array index ${text}`);
    const params: SliceParam[] = [];
    for (let i = 0; i < 3; i++) {
      let part = slice[i + 1];
      if (part !== undefined && part !== "") {
        if (i > 0) part = part.slice(1);
        if (i > 0 && part === "") params.push({ value: 0, known: false });
        else {
          if (!/^-?\d+$/.test(part)) {
            throw new JsonPathParseError(`array index ${part} is not a number`);
          }
          params.push({ value: Number(part), known: true });
        }
      } else if (i === 1) params.push({ value: params[0].value + 1, known: true, derived: true });
      else params.push({ value: 0, known: false });
    }
    cur.nodes.push({ type: "array", params: params as [SliceParam, SliceParam, SliceParam] });
  }

  private parseFilter(cur: ListNode): void {
    this.pos += 3;
    const bodyStart = this.pos;
    let begin = false;
    let end = false;
    let pair = "";
    for (;;) {
      const r = this.next();
      if (r === EOF || r === "\n") throw new JsonPathParseError("unterminated filter");
      if (r === '"' || r === "'") {
        if (!begin) {
          begin = true;
          pair = r;
          continue;
        }
        if (this.input[this.pos - 2] !== "\\" && r === pair) end = true;
      } else if (r === ")" && begin === end) break;
    }
    if (this.next() !== "]") throw new JsonPathParseError("unclosed array expect ]");
    const text = this.input.slice(bodyStart, this.pos - 2);
    const m = FILTER.exec(text);
    if (!m) {
      cur.nodes.push({
        type: "filter",
        left: parseSubAction(text),
        right: { type: "list", nodes: [] },
        operator: "exists",
      });
      return;
    }
    cur.nodes.push({
      type: "filter",
      left: parseSubAction(m[1]),
      right: parseSubAction(m[3]),
      operator: m[2],
    });
  }

  private parseQuote(cur: ListNode, quote: string): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === "\n") throw new JsonPathParseError("unterminated quoted string");
      if (r === quote && this.input[this.pos - 2] !== "\\") break;
    }
    const value = this.input.slice(this.start, this.pos);
    const text = unquoteExtended(value);
    if (text === undefined) {
      throw new JsonPathParseError(`unquote string ${value} error invalid syntax`);
    }
    cur.nodes.push({ type: "text", text });
  }

  private parseField(cur: ListNode): void {
    const from = this.pos;
    for (;;) {
      const r = this.peek();
      if (r === "\\") {
        this.next();
        this.next();
      } else if (isTerminator(r)) break;
      else this.next();
    }
    const value = this.input.slice(from, this.pos);
    if (value === "*") cur.nodes.push({ type: "wildcard" });
    else cur.nodes.push({ type: "field", name: value.replaceAll("\\", "") });
  }
}

/** client-go parses the parts of unions, keys and filters as templates `{part}` of their own. */
function parseSubAction(text: string): ListNode {
  const root = new Parser(`{${text}}`).parseTemplate();
  return root.nodes[0] as ListNode;
}

function trimSpaces(s: string): string {
  return s.replace(/^ +| +$/g, "");
}

function isDigit(r: string): boolean {
  return /^\p{Nd}$/u.test(r);
}

function isAlphaNumeric(r: string): boolean {
  return r === "_" || /^[\p{L}\p{Nd}]$/u.test(r);
}

function isTerminator(r: string): boolean {
  return r === EOF || " \t\r\n.,[]$@{}".includes(r);
}

/** Go's `%#U`: `U+0009`, or `U+007E '~'` for a printable rune. */
function goRune(r: string): string {
  const c = r.codePointAt(0)!;
  const hex = `U+${c.toString(16).toUpperCase().padStart(4, "0")}`;
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(r) || r === " " ? `${hex} '${r}'` : hex;
}

/**
 * client-go's `UnquoteExtend`: Go's `strconv.Unquote` for `"…"` and also for `'…'` strings.
 * Returns undefined where Go reports invalid syntax.
 */
export function unquoteExtended(s: string): string | undefined {
  if (s.length < 2) return undefined;
  const quote = s[0];
  if (quote !== s.at(-1) || (quote !== '"' && quote !== "'")) return undefined;
  let body = s.slice(1, -1);
  if (!body.includes("\\") && !body.includes(quote)) return body;
  let out = "";
  while (body.length > 0) {
    const c = body[0];
    if (c === quote) return undefined;
    if (c !== "\\") {
      const ch = String.fromCodePoint(body.codePointAt(0)!);
      out += ch;
      body = body.slice(ch.length);
      continue;
    }
    const e = body[1];
    const simple: Record<string, string> = {
      a: "\x07",
      b: "\b",
      f: "\f",
      n: "\n",
      r: "\r",
      t: "\t",
      v: "\v",
      "\\": "\\",
    };
    if (e === undefined) return undefined;
    if (e in simple) {
      out += simple[e];
      body = body.slice(2);
    } else if (e === "'" || e === '"') {
      if (e !== quote) return undefined;
      out += e;
      body = body.slice(2);
    } else if (e === "x" || e === "u" || e === "U") {
      const n = e === "x" ? 2 : e === "u" ? 4 : 8;
      const hex = body.slice(2, 2 + n);
      if (hex.length < n || !/^[0-9a-fA-F]+$/.test(hex)) return undefined;
      const code = parseInt(hex, 16);
      if (e !== "x" && (code > 0x10ffff || (code >= 0xd800 && code < 0xe000))) return undefined;
      out += String.fromCodePoint(code);
      body = body.slice(2 + n);
    } else if (e >= "0" && e <= "7") {
      const oct = body.slice(1, 4);
      if (!/^[0-7]{3}$/.test(oct) || parseInt(oct, 8) > 255) return undefined;
      out += String.fromCodePoint(parseInt(oct, 8));
      body = body.slice(4);
    } else return undefined;
  }
  return out;
}
