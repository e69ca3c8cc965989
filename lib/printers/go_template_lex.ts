/**
 * The lexer of Go's text/template (the `{{ }}` language of kubectl's `-o go-template`): text,
 * actions with `{{-`/`-}}` trimming, comments, identifiers and keywords, `.field`s, `$variables`,
 * numbers, strings, raw strings, characters, `|`, `(`, `)`, `:=`, `=` and `,`.
 *
 * Positions are string offsets into the template; errors are reported by line, as Go does.
 *
 * @module
 */

export type ItemType =
  | "text"
  | "leftDelim"
  | "rightDelim"
  | "space"
  | "identifier"
  | "keyword"
  | "field"
  | "variable"
  | "dot"
  | "number"
  | "string"
  | "rawString"
  | "char"
  | "bool"
  | "nil"
  | "pipe"
  | "leftParen"
  | "rightParen"
  | "declare"
  | "assign"
  | "comma"
  | "punct"
  | "error"
  | "eof";

export interface Item {
  type: ItemType;
  value: string;
  pos: number;
  line: number;
}

export const KEYWORDS = new Set([
  "if",
  "else",
  "end",
  "range",
  "with",
  "define",
  "template",
  "block",
  "break",
  "continue",
]);

/** A template Go refuses: `message` is Go's text after `template: NAME:LINE: `. */
export class TemplateSyntaxError extends Error {
  override name = "TemplateSyntaxError";
  constructor(message: string, readonly line: number) {
    super(message);
  }
}

const TRIM = /^[ \t\r\n]/;

/**
 * Splits a template into items, ending with an `eof` item, or with an `error` item where the
 * lexer gave up: like Go's lexer, which the parser drives, a lexing error only surfaces when
 * the parser reaches it, so an earlier parse error wins.
 */
export function lexTemplate(input: string): Item[] {
  const items: Item[] = [];
  try {
    lexInto(input, items);
  } catch (e) {
    if (!(e instanceof TemplateSyntaxError)) throw e;
    items.push({ type: "error", value: e.message, pos: input.length, line: e.line });
  }
  return items;
}

function lexInto(input: string, items: Item[]): void {
  let pos = 0;
  let line = 1;
  const lineAt = (p: number) => line + count(input.slice(pos, p), "\n");
  const emit = (type: ItemType, start: number, end: number, ln: number) =>
    items.push({ type, value: input.slice(start, end), pos: start, line: ln });

  while (pos < input.length) {
    const open = input.indexOf("{{", pos);
    if (open < 0) break;
    // `{{- ` trims the white space before the action.
    const trimLeft = input[open + 2] === "-" && TRIM.test(input[open + 3] ?? "");
    let textEnd = open;
    if (trimLeft) { while (textEnd > pos && TRIM.test(input[textEnd - 1])) textEnd--; }
    if (textEnd > pos) emit("text", pos, textEnd, line);
    line = lineAt(open);
    pos = open;
    const inner = open + (trimLeft ? 4 : 2);
    // A comment: `{{/* … */}}`, nothing else in the action.
    if (input.startsWith("/*", inner)) {
      const close = input.indexOf("*/", inner + 2);
      if (close < 0) throw new TemplateSyntaxError("unclosed comment", line);
      let after = close + 2;
      const trimRight = input.startsWith(" -}}", after) || input.startsWith("\t-}}", after) ||
        input.startsWith("\n-}}", after) || input.startsWith("\r-}}", after);
      if (trimRight) after += 4;
      else if (input.startsWith("}}", after)) after += 2;
      else throw new TemplateSyntaxError("comment ends before closing delimiter", line);
      line = lineAt(after);
      pos = after;
      if (trimRight) { while (pos < input.length && TRIM.test(input[pos])) pos++; }
      line = lineAt(pos);
      continue;
    }
    items.push({ type: "leftDelim", value: "{{", pos: open, line });
    const r = lexInside(input, inner, line, items);
    line = r.line;
    pos = r.pos;
    if (r.trimRight) {
      const start = pos;
      while (pos < input.length && TRIM.test(input[pos])) pos++;
      line += count(input.slice(start, pos), "\n");
    }
  }
  if (pos < input.length) emit("text", pos, input.length, line);
  items.push({ type: "eof", value: "", pos: input.length, line: lineAt(input.length) });
}

/** The inside of an action, up to and including `}}` (or ` -}}`). */
function lexInside(
  input: string,
  start: number,
  startLine: number,
  items: Item[],
): { pos: number; line: number; trimRight: boolean } {
  let pos = start;
  let line = startLine;
  let parens = 0;
  const emit = (type: ItemType, from: number, to: number) => {
    items.push({ type, value: input.slice(from, to), pos: from, line });
    line += count(input.slice(from, to), "\n");
  };
  for (;;) {
    if (
      input.startsWith("}}", pos) ||
      (TRIM.test(input[pos] ?? "") && input.startsWith("-}}", pos + 1))
    ) {
      if (parens > 0) throw new TemplateSyntaxError("unclosed left paren", line);
      const trimRight = !input.startsWith("}}", pos);
      if (trimRight) {
        emit("space", pos, pos + 1);
        pos += 1;
      }
      items.push({ type: "rightDelim", value: "}}", pos, line });
      return { pos: pos + (trimRight ? 3 : 2), line, trimRight };
    }
    const c = input[pos];
    if (c === undefined) throw new TemplateSyntaxError("unclosed action", line);
    if (c === "\n" || c === " " || c === "\t" || c === "\r") {
      // A run of spaces, stopping before one that starts a ` -}}` (handled above).
      let end = pos + 1;
      while (end < input.length && TRIM.test(input[end]) && !input.startsWith("-}}", end + 1)) {
        end++;
      }
      emit("space", pos, end);
      pos = end;
      continue;
    }
    if (c === "=") {
      emit("assign", pos, pos + 1);
      pos++;
    } else if (c === ":") {
      if (input[pos + 1] !== "=") throw new TemplateSyntaxError("expected :=", line);
      emit("declare", pos, pos + 2);
      pos += 2;
    } else if (c === "|") {
      emit("pipe", pos, pos + 1);
      pos++;
    } else if (c === ",") {
      emit("comma", pos, pos + 1);
      pos++;
    } else if (c === "(") {
      parens++;
      emit("leftParen", pos, pos + 1);
      pos++;
    } else if (c === ")") {
      if (--parens < 0) throw new TemplateSyntaxError("unexpected right paren", line);
      emit("rightParen", pos, pos + 1);
      pos++;
    } else if (c === '"') {
      let end = pos + 1;
      for (;;) {
        const ch = input[end];
        if (ch === "\\") end += 2;
        else if (ch === undefined || ch === "\n") {
          throw new TemplateSyntaxError("unterminated quoted string", line);
        } else if (ch === '"') break;
        else end++;
      }
      emit("string", pos, end + 1);
      pos = end + 1;
    } else if (c === "`") {
      const end = input.indexOf("`", pos + 1);
      if (end < 0) throw new TemplateSyntaxError("unterminated raw quoted string", line);
      emit("rawString", pos, end + 1);
      pos = end + 1;
    } else if (c === "'") {
      let end = pos + 1;
      for (;;) {
        const ch = input[end];
        if (ch === "\\") end += 2;
        else if (ch === undefined || ch === "\n") {
          throw new TemplateSyntaxError("unterminated character constant", line);
        } else if (ch === "'") break;
        else end++;
      }
      emit("char", pos, end + 1);
      pos = end + 1;
    } else if (c === "$") {
      const end = scanWord(input, pos + 1, line);
      emit("variable", pos, end);
      pos = end;
    } else if (c === ".") {
      // As in Go, a "." at the very end lexes as a (bad) number.
      if (pos + 1 >= input.length || /[0-9]/.test(input[pos + 1])) {
        pos = scanNumber(input, pos, line, emit);
      } else {
        const end = scanWord(input, pos + 1, line);
        emit(end === pos + 1 ? "dot" : "field", pos, end);
        pos = end;
      }
    } else if (/[0-9+-]/.test(c)) {
      pos = scanNumber(input, pos, line, emit);
    } else if (/[\p{L}_]/u.test(c)) {
      const end = scanWord(input, pos, line);
      const word = input.slice(pos, end);
      emit(
        KEYWORDS.has(word)
          ? "keyword"
          : word === "true" || word === "false"
          ? "bool"
          : word === "nil"
          ? "nil"
          : "identifier",
        pos,
        end,
      );
      pos = end;
    } else if (c >= " " && c <= "~") {
      // Other printable ASCII is an item of its own, which the parser then rejects.
      emit("punct", pos, pos + 1);
      pos++;
    } else {
      throw new TemplateSyntaxError(`unrecognized character in action: ${goRune(c)}`, line);
    }
  }
}

/** The end of a word (identifier, `.field`, `$var`), which must be followed by a terminator. */
function scanWord(input: string, pos: number, line = 0): number {
  while (pos < input.length && /[\p{L}\p{Nd}_]/u.test(input[pos])) pos++;
  const next = input[pos];
  if (next !== undefined && !" \t\r\n.,|:()".includes(next) && !input.startsWith("}}", pos)) {
    throw new TemplateSyntaxError(
      `bad character ${goRune(String.fromCodePoint(input.codePointAt(pos)!))}`,
      line,
    );
  }
  return pos;
}

/** Go's `scanNumber`: the end of a number at `pos`, or -1 (just past the bad character). */
function scanGoNumber(input: string, pos: number): { end: number; ok: boolean } {
  const accept = (chars: string) => {
    if (pos < input.length && chars.includes(input[pos])) {
      pos++;
      return true;
    }
    return false;
  };
  const acceptRun = (chars: string) => {
    while (pos < input.length && chars.includes(input[pos])) pos++;
  };
  accept("+-");
  let digits = "0123456789_";
  if (accept("0")) {
    if (accept("xX")) digits = "0123456789abcdefABCDEF_";
    else if (accept("oO")) digits = "01234567_";
    else if (accept("bB")) digits = "01_";
  }
  acceptRun(digits);
  if (accept(".")) acceptRun(digits);
  if (digits.length === 11 && accept("eE")) {
    accept("+-");
    acceptRun("0123456789_");
  }
  if (digits.length === 23 && accept("pP")) {
    accept("+-");
    acceptRun("0123456789_");
  }
  accept("i");
  if (pos < input.length && /[\p{L}\p{Nd}_]/u.test(input[pos])) return { end: pos + 1, ok: false };
  return { end: pos, ok: true };
}

function scanNumber(
  input: string,
  pos: number,
  line: number,
  emit: (type: ItemType, from: number, to: number) => void,
): number {
  const r = scanGoNumber(input, pos);
  if (!r.ok || input[r.end] === "+" || input[r.end] === "-") {
    // A sign after a number would start a complex number, which we do not support.
    const end = r.ok ? scanGoNumber(input, r.end).end : r.end;
    throw new TemplateSyntaxError(`bad number syntax: "${input.slice(pos, end)}"`, line);
  }
  emit("number", pos, r.end);
  return r.end;
}

function count(s: string, ch: string): number {
  let n = 0;
  for (const c of s) if (c === ch) n++;
  return n;
}

function goRune(r: string): string {
  const c = r.codePointAt(0)!;
  const hex = `U+${c.toString(16).toUpperCase().padStart(4, "0")}`;
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(r) ? `${hex} '${r}'` : hex;
}
