/**
 * YAML as kubectl's `-o yaml` writes it (sigs.k8s.io/yaml: the object's JSON re-read and
 * written by go-yaml v2), which differs from a general YAML emitter in ways users see:
 *
 * - keys in go-yaml's order (letters after other characters, digit runs compared as numbers);
 * - strings plain when go-yaml would read them back as strings, else double-quoted (`"yes"`,
 *   `"123"`, `""`, `"2026-01-02T03:04:05Z"`, `"n"`); single-quoted when plain is not allowed
 *   (`'a: b'`, `'#x'`, `' lead'`); literal blocks (`|`, `|-`, `|+`) for multi-line strings;
 * - plain and quoted strings folded at a space once a line passes 80 columns;
 * - block sequences not indented under their key; floats as Go's `%g` (`1e+20`).
 *
 * @module
 */

import { goFloat, isGoInt } from "./go_value.ts";

/** The YAML kubectl prints for a JSON value (a document ending in a newline). */
export function kubectlYaml(value: unknown): string {
  const e = new Emitter();
  e.node(foldNextLines(value), 0, "top");
  // A literal block at the very end has already ended its line.
  return e.out.endsWith("\n") ? e.out : e.out + "\n";
}

/**
 * kubectl hands go-yaml the object as JSON, where U+0085 stays unescaped; go-yaml reads it as
 * a line break inside a double-quoted scalar and folds it (with the blanks around it) into a
 * space, or n of them into n-1 newlines.
 */
function foldNextLines(v: unknown): unknown {
  const fold = (s: string) =>
    s.includes("\u0085")
      ? s.replace(/[ \t]*\u0085(?:[ \t]*\u0085)*[ \t]*/g, (m) => {
        const n = m.split("\u0085").length - 1;
        return n === 1 ? " " : "\n".repeat(n - 1);
      })
      : s;
  if (typeof v === "string") return fold(v);
  if (Array.isArray(v)) return v.map(foldNextLines);
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [fold(k), foldNextLines(x)]));
  }
  return v;
}

const BEST_WIDTH = 80;

class Emitter {
  out = "";
  private column = 0;
  private atLineStart = true;

  write(s: string): void {
    this.out += s;
    const nl = s.lastIndexOf("\n");
    this.column = nl < 0 ? this.column + Array.from(s).length : Array.from(s.slice(nl + 1)).length;
    this.atLineStart = false;
  }

  /** A new line (unless at the start of one) and `indent` spaces. */
  indent(indent: number): void {
    if (this.out.length > 0 && !this.atLineStart) this.out += "\n";
    this.out += " ".repeat(indent);
    this.column = indent;
    this.atLineStart = false;
  }

  private lineBreak(): void {
    this.out += "\n";
    this.column = 0;
    this.atLineStart = true;
  }

  /**
   * A value at `indent` (the indentation of its container's entries). `where` says what precedes
   * it: nothing (`top`), `key: ` (`value`) or `- ` (`item`).
   */
  node(v: unknown, indent: number, where: "top" | "value" | "item"): void {
    if (Array.isArray(v)) {
      if (v.length === 0) return this.inline(where, "[]");
      // Under a key, a block sequence is not indented.
      const itemIndent = where === "item" ? indent + 2 : indent;
      v.forEach((item, i) => {
        if (!(where === "item" && i === 0)) this.indent(itemIndent);
        this.write("- ");
        this.node(item, itemIndent, "item");
      });
      return;
    }
    if (v !== null && typeof v === "object") {
      const obj = v as Record<string, unknown>;
      const keys = Object.keys(obj).sort(goYamlKeyCompare);
      if (keys.length === 0) return this.inline(where, "{}");
      const keyIndent = where === "top" ? 0 : indent + 2;
      keys.forEach((k, i) => {
        if (!(where === "item" && i === 0)) this.indent(keyIndent);
        if (isSimpleKey(k)) {
          this.scalar(k, keyIndent, true);
          this.write(":");
          this.node(obj[k], keyIndent, "value");
        } else {
          // go-yaml writes a multi-line or long key as an explicit `? key` / `: value` pair,
          // the value starting on the `:` line as a sequence item would.
          this.write("? ");
          this.scalar(k, keyIndent + 2, false);
          this.indent(keyIndent);
          this.write(": ");
          this.node(obj[k], keyIndent, "item");
        }
      });
      return;
    }
    if (where === "value") this.write(" ");
    this.scalar(v, indent + 2, false);
  }

  private inline(where: "top" | "value" | "item", text: string): void {
    this.write(where === "value" ? ` ${text}` : text);
  }

  /** A scalar; `indent` is where folded and block lines continue. */
  scalar(v: unknown, indent: number, isKey: boolean): void {
    if (v === null || v === undefined) return this.write("null");
    if (typeof v === "boolean") return this.write(String(v));
    if (typeof v === "number") return this.write(yamlNumber(v));
    const s = String(v);
    const a = analyze(s);
    let style: "plain" | "single" | "double" | "literal";
    if (s.includes("\n")) style = "literal";
    else style = readsAsString(s) && !BASE60_FLOAT.test(s) ? "plain" : "double";
    if (style === "plain" && (!a.blockPlain || (s.length === 0 && isKey))) style = "single";
    if (style === "single" && !a.singleQuoted) style = "double";
    if (style === "literal" && (!a.block || isKey)) style = "double";
    if (isKey && a.multiline) style = "double";
    switch (style) {
      case "plain":
        return this.plain(s, indent, !isKey);
      case "single":
        return this.singleQuoted(s, indent, !isKey);
      case "double":
        return this.doubleQuoted(s, indent, !isKey);
      case "literal":
        return this.literal(s, indent);
    }
  }

  private plain(s: string, indent: number, allowBreaks: boolean): void {
    const chars = Array.from(s);
    let spaces = false;
    chars.forEach((c, i) => {
      if (c === " ") {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && chars[i + 1] !== " ") {
          this.indent(indent);
        } else this.write(c);
        spaces = true;
      } else {
        this.write(c);
        spaces = false;
      }
    });
  }

  private singleQuoted(s: string, indent: number, allowBreaks: boolean): void {
    const chars = Array.from(s);
    this.write("'");
    let spaces = false;
    let breaks = false;
    chars.forEach((c, i) => {
      if (c === " ") {
        const fold = allowBreaks && !spaces && this.column > BEST_WIDTH && i > 0 &&
          i < chars.length - 1 &&
          chars[i + 1] !== " ";
        if (fold) this.indent(indent);
        else this.write(c);
        spaces = true;
      } else if (isBreak(c)) {
        // go-yaml doubles a newline and copies the other line breaks as they are.
        if (c === "\n") {
          if (!breaks) this.lineBreak();
          this.lineBreak();
        } else {
          this.out += c;
          this.column = 0;
          this.atLineStart = true;
        }
        breaks = true;
      } else {
        if (breaks) this.indent(indent);
        this.write(c === "'" ? "''" : c);
        spaces = false;
        breaks = false;
      }
    });
    this.write("'");
  }

  private doubleQuoted(s: string, indent: number, allowBreaks: boolean): void {
    const chars = Array.from(s);
    this.write('"');
    let spaces = false;
    chars.forEach((c, i) => {
      const code = c.codePointAt(0)!;
      if (!isPrintable(code) || code === 0xfeff || isBreak(c) || c === '"' || c === "\\") {
        this.write(escapeDouble(c, code));
        spaces = false;
      } else if (c === " ") {
        if (
          allowBreaks && !spaces && this.column > BEST_WIDTH && i !== 0 && i !== chars.length - 1
        ) {
          this.indent(indent);
          if (chars[i + 1] === " ") this.write("\\");
        } else this.write(c);
        spaces = true;
      } else {
        this.write(c);
        spaces = false;
      }
    });
    this.write('"');
  }

  private literal(s: string, indent: number): void {
    let hints = "";
    if (s[0] === " " || isBreak(s[0])) hints += "2";
    if (!isBreak(s.at(-1)!)) hints += "-";
    else if (s.length === 1 || isBreak(s.at(-2)!)) hints += "+";
    this.write("|" + hints);
    this.lineBreak();
    let breaks = true;
    for (const c of s) {
      if (isBreak(c)) {
        this.lineBreak();
        breaks = true;
      } else {
        if (breaks) {
          this.out += " ".repeat(indent);
          this.column = indent;
          this.atLineStart = false;
          breaks = false;
        }
        this.write(c);
      }
    }
  }
}

/** go-yaml's `check_simple_key` for a string key: one line, at most 128 bytes. */
function isSimpleKey(k: string): boolean {
  return !analyze(k).multiline && new TextEncoder().encode(k).length <= 128;
}

function yamlNumber(n: number): string {
  // Whole numbers go-yaml reads as int64 or uint64 print in full (as JSON wrote them).
  if (isGoInt(n) || (Number.isInteger(n) && n >= 0 && n < 2 ** 64)) return String(n);
  if (n === Infinity) return ".inf";
  if (n === -Infinity) return "-.inf";
  if (Number.isNaN(n)) return ".nan";
  return goFloat(n);
}

function isBreak(c: string | undefined): boolean {
  return c === "\n" || c === "\r" || c === "\u0085" || c === "\u2028" || c === "\u2029";
}

function isPrintable(c: number): boolean {
  return c === 0x0a || (c >= 0x20 && c <= 0x7e) || c === 0x85 || (c >= 0xa0 && c <= 0xd7ff) ||
    (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
}

function escapeDouble(c: string, code: number): string {
  const named: Record<string, string> = {
    "\0": "\\0",
    "\x07": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
    '"': '\\"',
    "\\": "\\\\",
    "\u0085": "\\N",
    "\u00a0": "\\_",
    "\u2028": "\\L",
    "\u2029": "\\P",
  };
  if (named[c]) return named[c];
  const hex = code.toString(16).toUpperCase();
  if (code <= 0xff) return `\\x${hex.padStart(2, "0")}`;
  if (code <= 0xffff) return `\\u${hex.padStart(4, "0")}`;
  return `\\U${hex.padStart(8, "0")}`;
}

interface Analysis {
  multiline: boolean;
  blockPlain: boolean;
  singleQuoted: boolean;
  block: boolean;
}

/** go-yaml's `yaml_emitter_analyze_scalar`, for block context. */
function analyze(s: string): Analysis {
  if (s.length === 0) {
    return { multiline: false, blockPlain: false, singleQuoted: true, block: false };
  }
  let blockIndicators = s.startsWith("---") || s.startsWith("...");
  let special = false;
  let lineBreaks = false;
  let leadingSpace = false, leadingBreak = false, trailingSpace = false, trailingBreak = false;
  let breakSpace = false, spaceBreak = false, previousSpace = false, previousBreak = false;
  const chars = Array.from(s);
  let precededByWhitespace = true;
  chars.forEach((c, i) => {
    const followedByWhitespace = i + 1 >= chars.length || isBlank(chars[i + 1]);
    if (i === 0) {
      if ("#,[]{}&*!|>'\"%@`".includes(c)) blockIndicators = true;
      if ((c === "?" || c === ":") && followedByWhitespace) blockIndicators = true;
      if (c === "-" && followedByWhitespace) blockIndicators = true;
    } else {
      if (c === ":" && followedByWhitespace) blockIndicators = true;
      if (c === "#" && precededByWhitespace) blockIndicators = true;
    }
    const code = c.codePointAt(0)!;
    if (!isPrintable(code) || code === 0xfeff) special = true;
    if (c === " ") {
      if (i === 0) leadingSpace = true;
      if (i === chars.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (i === 0) leadingBreak = true;
      if (i === chars.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousBreak = true;
      previousSpace = false;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = isBlank(c);
  });
  let blockPlain = true, singleQuoted = true, block = true;
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) blockPlain = false;
  if (trailingSpace) block = false;
  if (breakSpace) blockPlain = singleQuoted = false;
  if (spaceBreak || special) blockPlain = singleQuoted = block = false;
  if (lineBreaks) blockPlain = false;
  if (blockIndicators) blockPlain = false;
  return { multiline: lineBreaks, blockPlain, singleQuoted, block };
}

function isBlank(c: string): boolean {
  return c === " " || c === "\t" || isBreak(c);
}

const RESOLVES_NON_STRING = new Set([
  "y",
  "Y",
  "yes",
  "Yes",
  "YES",
  "true",
  "True",
  "TRUE",
  "on",
  "On",
  "ON",
  "n",
  "N",
  "no",
  "No",
  "NO",
  "false",
  "False",
  "FALSE",
  "off",
  "Off",
  "OFF",
  "",
  "~",
  "null",
  "Null",
  "NULL",
  ".nan",
  ".NaN",
  ".NAN",
  ".inf",
  ".Inf",
  ".INF",
  "+.inf",
  "+.Inf",
  "+.INF",
  "-.inf",
  "-.Inf",
  "-.INF",
]); // prettier-ignore

const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;
const GO_INT = /^[-+]?(0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|[1-9][0-9]*|0)$/;
const TIMESTAMP =
  /^(\d{4})-(\d{1,2})-(\d{1,2})(?:(?:[Tt]|[ \t]+)(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d+)?(?:[ \t]*(Z|[-+]\d{1,2}(?::?\d{2})?))?)?$/;

/** Whether go-yaml reads `s`, written plain, back as a string (not a bool, number, null or time). */
function readsAsString(s: string): boolean {
  if (RESOLVES_NON_STRING.has(s)) return false;
  const first = s[0];
  if (first === ".") return !/^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(s);
  if (!/[-+0-9]/.test(first)) return true;
  if (isTimestamp(s)) return false;
  const plain = s.replaceAll("_", "");
  if (GO_INT.test(plain)) return false;
  if (YAML_FLOAT.test(plain)) return false;
  return true;
}

/** go-yaml tries the layouts `2006-1-2T15:4:5.999999999Z07:00`, `2006-1-2 15:4:5.999999999`, `2006-1-2`. */
function isTimestamp(s: string): boolean {
  const m =
    /^(\d{4})-(\d{1,2})-(\d{1,2})(?:([Tt])(\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d+)?(Z|[-+]\d{2}:\d{2})|( )(\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d+)?)?$/
      .exec(s);
  if (!m || !TIMESTAMP.test(s)) return false;
  const month = Number(m[2]), day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1 || day > 31) return false;
  const hour = Number(m[5] ?? m[11] ?? 0),
    min = Number(m[6] ?? m[12] ?? 0),
    sec = Number(m[7] ?? m[13] ?? 0);
  return hour < 24 && min < 60 && sec < 60;
}

/** go-yaml's key order: runes compared, letters after non-letters, digit runs as numbers. */
export function goYamlKeyCompare(a: string, b: string): number {
  const ar = Array.from(a), br = Array.from(b);
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = /\p{L}/u.test(ar[i]), bl = /\p{L}/u.test(br[i]);
    if (al && bl) return ar[i] < br[i] ? -1 : 1;
    if (al || bl) return bl ? -1 : 1;
    let an = 0, bn = 0;
    if (ar[i] === "0" || br[i] === "0") {
      for (let j = i - 1; j >= 0 && /\d/.test(ar[j]); j--) {
        if (ar[j] !== "0") {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    let ai = i, bi = i;
    for (; ai < ar.length && /\d/.test(ar[ai]); ai++) an = an * 10 + Number(ar[ai]);
    for (; bi < br.length && /\d/.test(br[bi]); bi++) bn = bn * 10 + Number(br[bi]);
    if (an !== bn) return an < bn ? -1 : 1;
    if (ai !== bi) return ai < bi ? -1 : 1;
    return ar[i] < br[i] ? -1 : 1;
  }
  return ar.length - br.length;
}
