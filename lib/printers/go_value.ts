/**
 * How Go prints the values kubectl decodes from JSON, so that our printers give kubectl's bytes.
 *
 * kubectl decodes an object into `map[string]interface{}` with integers as `int64` and other
 * numbers as `float64` (apimachinery's JSON decoding), so a JavaScript number that is a whole
 * number within int64 range prints as an integer here, anything else as a Go float64.
 *
 * - {@link goPrint}: `fmt.Print`/`%v` (`map[a:1 b:x]`, `[1 2.5]`, `<nil>`, `1e+06`).
 * - {@link goSharpV}: `%#v` (`map[string]interface {}{"a":1}`), used in kubectl's error text.
 * - {@link goJson}: `encoding/json` (keys sorted, `<>&` escaped as `\u003c` …).
 * - {@link goQuote}: `strconv.Quote` / `%q`.
 *
 * @module
 */

/** A float64 that holds a whole number (a JSONPath literal such as `1.0`), kept apart from int64. */
export class GoFloat {
  constructor(readonly value: number) {}
}

/** An integer the template engine made (a literal, a `len`): Go's `int`, or `uint8` for a byte. */
export class GoInt {
  constructor(readonly value: number, readonly type: "int" | "uint8" = "int") {}
}

/** Go's invalid `reflect.Value`: a missing map key or field, printed `<no value>` by templates. */
export const NO_VALUE: unique symbol = Symbol("no value");

/** The Go type name of a JSON-decoded value as kubectl holds it (`%T`). */
export function goTypeName(v: unknown): string {
  if (v === null || v === undefined || v === NO_VALUE) return "<nil>";
  if (v instanceof GoFloat) return "float64";
  if (v instanceof GoInt) return v.type;
  switch (typeof v) {
    case "string":
      return "string";
    case "number":
      return isGoInt(v) ? "int64" : "float64";
    case "boolean":
      return "bool";
  }
  return Array.isArray(v) ? "[]interface {}" : "map[string]interface {}";
}

/** Whether kubectl would hold `n` as an int64 (rather than a float64). */
export function isGoInt(n: number): boolean {
  return Number.isInteger(n) && Math.abs(n) < 2 ** 63 && !Object.is(n, -0);
}

/** Go's `%v` of a float64: the shortest digits, in exponent form below 1e-4 and from 1e+06. */
export function goFloat(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v === 0) return Object.is(v, -0) ? "-0" : "0";
  const [mantissa, expText] = v.toExponential().split("e");
  const exp = Number(expText);
  // %v is strconv's 'g' with the shortest precision: %e when exp < -4 || exp >= 6.
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? "-" : "+";
    const digits = String(Math.abs(exp)).padStart(2, "0");
    return `${mantissa}e${sign}${digits}`;
  }
  return String(v);
}

/** `fmt.Print` of a number as kubectl holds it (int64 or float64). */
export function goNumber(n: number): string {
  return isGoInt(n) ? String(n) : goFloat(n);
}

/** `fmt.Sprint(v)`: Go's `%v` of a JSON-decoded value. */
export function goPrint(v: unknown): string {
  if (v === null || v === undefined || v === NO_VALUE) return "<nil>";
  if (v instanceof GoFloat) return goFloat(v.value);
  if (v instanceof GoInt) return String(v.value);
  switch (typeof v) {
    case "string":
      return v;
    case "number":
      return goNumber(v);
    case "boolean":
      return String(v);
  }
  if (Array.isArray(v)) return `[${v.map(goPrint).join(" ")}]`;
  if (v instanceof Uint8Array) return `[${Array.from(v).join(" ")}]`;
  const obj = v as Record<string, unknown>;
  return `map[${sortedKeys(obj).map((k) => `${k}:${goPrint(obj[k])}`).join(" ")}]`;
}

/** `fmt.Sprintf("%#v", v)` of a JSON-decoded value (the top-level nil prints `<nil>`). */
export function goSharpV(v: unknown, nested = false): string {
  if (v === null || v === undefined || v === NO_VALUE) {
    return nested ? "interface {}(nil)" : "<nil>";
  }
  if (v instanceof GoFloat) return goFloat(v.value);
  if (v instanceof GoInt) return v.type === "uint8" ? `0x${v.value.toString(16)}` : String(v.value);
  switch (typeof v) {
    case "string":
      return goQuote(v);
    case "number":
      return goNumber(v);
    case "boolean":
      return String(v);
  }
  if (Array.isArray(v)) return `[]interface {}{${v.map((e) => goSharpV(e, true)).join(", ")}}`;
  const obj = v as Record<string, unknown>;
  const entries = sortedKeys(obj).map((k) => `${goQuote(k)}:${goSharpV(obj[k], true)}`);
  return `map[string]interface {}{${entries.join(", ")}}`;
}

/** Go's `unicode.IsPrint` (letters, marks, numbers, punctuation, symbols; space apart). */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** Go's `strconv.Quote`: printable characters kept, the rest escaped Go's way. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case "\\":
        out += "\\\\";
        continue;
      case "\x07":
        out += "\\a";
        continue;
      case "\b":
        out += "\\b";
        continue;
      case "\f":
        out += "\\f";
        continue;
      case "\n":
        out += "\\n";
        continue;
      case "\r":
        out += "\\r";
        continue;
      case "\t":
        out += "\\t";
        continue;
      case "\v":
        out += "\\v";
        continue;
    }
    if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, "0")}`;
    else if (ch === " " || PRINTABLE.test(ch)) out += ch;
    else if (c <= 0xffff) out += `\\u${c.toString(16).padStart(4, "0")}`;
    else out += `\\U${c.toString(16).padStart(8, "0")}`;
  }
  return out + '"';
}

/**
 * `encoding/json`'s `Marshal` (compact) or `MarshalIndent(v, "", "    ")` of a JSON-decoded
 * value: map keys sorted, and `<`, `>`, `&`, U+2028 and U+2029 escaped as Go does.
 */
export function goJson(v: unknown, opts: { indent?: boolean } = {}): string {
  return jsonValue(v, opts.indent ? "\n" : "");
}

/** Writes keys in Go's order (a rebuilt object would put integer-like keys first). */
function jsonValue(v: unknown, newline: string): string {
  if (v instanceof GoFloat || v instanceof GoInt) return JSON.stringify(v.value);
  if (v === null || v === undefined || v === NO_VALUE) return "null";
  const inner = newline ? newline + "    " : "";
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    return `[${inner}${v.map((e) => jsonValue(e, inner)).join("," + inner)}${newline}]`;
  }
  if (typeof v === "object") {
    const obj = v as Record<string, unknown>;
    const keys = sortedKeys(obj);
    if (keys.length === 0) return "{}";
    const sep = newline ? ": " : ":";
    const entries = keys.map((k) => jsonString(k) + sep + jsonValue(obj[k], inner));
    return `{${inner}${entries.join("," + inner)}${newline}}`;
  }
  if (typeof v === "string") return jsonString(v);
  return JSON.stringify(v);
}

/** A JSON string as Go writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped too. */
function jsonString(s: string): string {
  return JSON.stringify(s).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** Go sorts map keys by their bytes; for the keys objects carry, code-unit order agrees. */
export function sortedKeys(obj: Record<string, unknown>): string[] {
  return Object.keys(obj).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
