/**
 * A small, fast YAML emitter for JSON-shaped values (objects, arrays, strings, numbers, booleans,
 * null), laid out the way kubectl / go-yaml print Kubernetes objects:
 *
 * ```yaml
 * apiVersion: v1
 * items:
 * - metadata:
 *     labels: {}
 *     name: foo
 *   data:
 *     script: |
 *       echo hello
 * ```
 *
 * - block style, nested mappings indented 2 spaces, sequence items (`- `) at the indentation of
 *   the key that holds them; `{}` and `[]` for empty collections; key order as given; the text
 *   ends with a newline;
 * - strings are plain when no YAML 1.1 or 1.2 reader (the `yaml` package, go-yaml v2/v3,
 *   PyYAML) could take them for anything but that same string, literal block scalars (`|`, `|-`,
 *   `|+`) when multi-line and safe for it, and double-quoted (JSON-style escapes, which are valid
 *   YAML escapes) otherwise; keys follow the same rules;
 * - the value is what `JSON.stringify` would write: `toJSON()` is honoured, `undefined`,
 *   functions and symbols are left out of objects and are `null` in arrays, non-finite numbers
 *   are `null`, `-0` is `0`.
 *
 * It is one recursive pass that appends to a string; every string is checked with a few
 * precompiled regular expressions (keys through a small cache, since they repeat).
 */

/**
 * Strings that cannot be plain for syntax reasons: empty; leading or trailing whitespace (any
 * Unicode space, to be safe); a leading indicator character; a `...` document-end lookalike;
 * `: ` or ` #` inside; a trailing `:`; any control character (C0 incl. tab and newline, DEL, C1
 * incl. NEL), a line or paragraph separator, a BOM or a non-character. (Lone surrogates are
 * checked apart, so that emoji can stay plain.)
 */
const PLAIN_SYNTAX_UNSAFE =
  // deno-lint-ignore no-control-regex
  /^$|^[\s\-?:,[\]{}#&*!|>'"%@`]|^\.\.\.|\s$|:$|: | #|[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/;

/** Surrogates: emoji and other astral characters are fine if paired (see isWellFormed). */
const SURROGATE = /[\ud800-\udfff]/;

/**
 * Plain strings that a YAML 1.1 or 1.2 reader resolves to something else: booleans and nulls of
 * YAML 1.1 (in any case; `y`/`n` as go-yaml v2 reads them), `=` (1.1 value key) and `<<` (merge
 * key).
 */
const WORDS = /^(?:y|n|yes|no|true|false|on|off|null|~|=|<<)$/i;

/**
 * Plain strings that look like a number or timestamp to some reader: starting with a digit
 * (optionally after a sign and/or a dot) and made only of characters numbers and timestamps use
 * (digits, hex letters, `x`/`o` prefixes, `_`, `.`, `:` for sexagesimal, `+`/`-`, `t`/`z` and
 * spaces for timestamps). Over-broad on purpose: `10.0.0.1` gets quoted, `100m` and `1Gi` do not.
 */
const NUMBERISH = /^[-+]?\.?[0-9][-+0-9a-fA-F_.:xXoOtTzZ ]*$/;

/** `.inf`, `.nan` in any case and sign; `.`, `+.`, `.1.2` (YAML 1.1's float pattern). */
const DOT_FLOAT = /^[-+]?\.(?:inf|nan|[0-9.]*)$/i;

/**
 * Multi-line strings that cannot be a literal block scalar: a leading space or newline (the
 * indentation would be misread), a space before a line break or at the end, any control
 * character but `\n` (tab and CR included), or an other line break of YAML 1.1.
 */
const LITERAL_UNSAFE =
  // deno-lint-ignore no-control-regex
  /^[ \n]| \n| $|[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/;

/**
 * Characters `JSON.stringify` leaves raw that must be escaped in a YAML double-quoted scalar:
 * DEL and C1 controls (not printable in YAML), NEL and U+2028/U+2029 (line breaks in YAML 1.1,
 * which would be folded), BOM and the non-characters U+FFFE/U+FFFF.
 */
const QUOTED_ESCAPE = /[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/g;

function escapeChar(c: string): string {
  return "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0");
}

/** A double-quoted YAML scalar: JSON's escapes plus the few YAML needs beyond them. */
export function quoteYamlString(s: string): string {
  const json = JSON.stringify(s);
  QUOTED_ESCAPE.lastIndex = 0;
  return QUOTED_ESCAPE.test(json) ? json.replace(QUOTED_ESCAPE, escapeChar) : json;
}

/** Whether `s` can be written as a plain scalar and read back as the same string. */
export function isPlainSafe(s: string): boolean {
  if (PLAIN_SYNTAX_UNSAFE.test(s)) return false;
  if (SURROGATE.test(s) && !s.isWellFormed()) return false;
  const c = s.charCodeAt(0);
  // Digits, signs and dots may start a number; the words are at most 5 characters.
  if ((c >= 48 && c <= 57) || c === 43 || c === 46) {
    return !NUMBERISH.test(s) && !DOT_FLOAT.test(s);
  }
  return s.length > 5 || !WORDS.test(s);
}

/** A single-line scalar for `s` (plain or double-quoted). */
function flowString(s: string): string {
  return isPlainSafe(s) ? s : quoteYamlString(s);
}

/**
 * Keys repeat a lot (every item of a list has the same ones): their text, with the `:`, is
 * cached.
 */
const keyCache = new Map<string, string>();
const KEY_CACHE_MAX = 4096;

/** Implicit keys must be at most 1024 characters; longer ones use `? key` (explicit) syntax. */
const MAX_IMPLICIT_KEY = 1000;

/** `key:` for a mapping key (plain or double-quoted, like any string). */
function keyText(k: string): string {
  let t = keyCache.get(k);
  if (t === undefined) {
    t = flowString(k) + ":";
    if (k.length <= 256) {
      if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
      keyCache.set(k, t);
    }
  }
  return t;
}

/**
 * The text of a multi-line string after its key or `- ` (header, newline, content lines at
 * `indent`), or undefined when it must be double-quoted.
 */
function literalBlock(s: string, indent: string): string | undefined {
  if (LITERAL_UNSAFE.test(s) || (SURROGATE.test(s) && !s.isWellFormed())) return undefined;
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 10) end--;
  const trailing = s.length - end;
  const header = trailing === 0 ? "|-" : trailing === 1 ? "|" : "|+";
  const lines = s.slice(0, end).split("\n");
  let out = header;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    out += line.length === 0 ? "\n" : "\n" + indent + line;
  }
  out += "\n";
  // Keep chomping: the newlines after the last line are empty lines.
  for (let i = 1; i < trailing; i++) out += "\n";
  return out;
}

/** A number as JSON writes it, with `.0` before an exponent (PyYAML needs a dot to see a float). */
function numberText(n: number): string {
  if (!Number.isFinite(n)) return "null";
  const t = String(n);
  const e = t.indexOf("e");
  return e > 0 && t.indexOf(".") < 0 ? t.slice(0, e) + ".0" + t.slice(e) : t;
}

/** JSON's view of a value: `toJSON()` applied; undefined for what JSON leaves out. */
function jsonValue(v: unknown, key: string | number): unknown {
  if (v !== null && typeof v === "object") {
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") return toJSON.call(v, String(key));
    return v;
  }
  if (typeof v === "function" || typeof v === "symbol") return undefined;
  return v;
}

/** Whether an object has at least one key JSON would write. */
function hasEntries(o: Record<string, unknown>): boolean {
  const keys = Object.keys(o);
  for (let i = 0; i < keys.length; i++) {
    if (jsonValue(o[keys[i]], keys[i]) !== undefined) return true;
  }
  return false;
}

/**
 * Everything after `key:` or `-` for a value (a leading space or newline included), with
 * `indent` the indentation of the key or dash. `inSeq`: the value is a sequence item (its
 * mapping's first key goes on the dash's line).
 */
function emitValue(v: unknown, indent: string, inSeq: boolean): string {
  switch (typeof v) {
    case "string": {
      if (v.indexOf("\n") >= 0) {
        const block = literalBlock(v, indent + "  ");
        if (block !== undefined) return " " + block;
        return " " + quoteYamlString(v) + "\n";
      }
      return " " + flowString(v) + "\n";
    }
    case "number":
      return " " + numberText(v) + "\n";
    case "boolean":
      return v ? " true\n" : " false\n";
    case "bigint":
      return " " + v.toString() + "\n";
    case "object": {
      if (v === null) return " null\n";
      if (Array.isArray(v)) {
        if (v.length === 0) return " []\n";
        // A sequence as a mapping value sits at the key's indentation (kubectl's layout); as a
        // sequence item it starts on the dash's line, indented past the dash.
        if (inSeq) return " " + emitSequence(v, indent + "  ", true);
        return "\n" + emitSequence(v, indent, false);
      }
      const o = v as Record<string, unknown>;
      if (!hasEntries(o)) return " {}\n";
      if (inSeq) return " " + emitMapping(o, indent + "  ", true);
      return "\n" + emitMapping(o, indent + "  ", false);
    }
    default:
      return " null\n";
  }
}

/** A block sequence at `indent`; `first`: its first dash goes on the current line. */
function emitSequence(a: unknown[], indent: string, first: boolean): string {
  let out = "";
  for (let i = 0; i < a.length; i++) {
    let v = jsonValue(a[i], i);
    if (v === undefined) v = null;
    out += (first && i === 0 ? "-" : indent + "-") + emitValue(v, indent, true);
  }
  return out;
}

/** A block mapping at `indent`; `first`: its first key goes on the current line. */
function emitMapping(o: Record<string, unknown>, indent: string, first: boolean): string {
  let out = "";
  let firstLine = first;
  const keys = Object.keys(o);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    const v = jsonValue(o[k], k);
    if (v === undefined) continue;
    const key = keyText(k);
    const lead = firstLine ? "" : indent;
    firstLine = false;
    if (key.length <= MAX_IMPLICIT_KEY) {
      out += lead + key + emitValue(v, indent, false);
    } else {
      // Explicit key; the value indented past the `:` so that any kind of node fits.
      out += lead + "? " + key.slice(0, -1) + "\n" + indent + ":" +
        emitExplicitValue(v, indent + "  ");
    }
  }
  return out;
}

/** The value of an explicit (`? key`) entry, after its `:`, its content at `indent`. */
function emitExplicitValue(v: unknown, indent: string): string {
  if (v !== null && typeof v === "object") {
    if (Array.isArray(v)) {
      if (v.length > 0) return "\n" + emitSequence(v, indent, false);
    } else if (hasEntries(v as Record<string, unknown>)) {
      return "\n" + emitMapping(v as Record<string, unknown>, indent, false);
    }
  }
  return emitValue(v, indent.slice(2), false);
}

/**
 * The YAML text of a JSON-shaped value (see the module comment), ending with a newline. A value
 * JSON would not write at all (undefined, a function) is `null`.
 */
export function emitYaml(value: unknown): string {
  let v = jsonValue(value, "");
  if (v === undefined) v = null;
  if (v !== null && typeof v === "object") {
    if (Array.isArray(v)) return v.length === 0 ? "[]\n" : emitSequence(v, "", false);
    const o = v as Record<string, unknown>;
    return hasEntries(o) ? emitMapping(o, "", false) : "{}\n";
  }
  // A scalar document: the same text as after a key, without the leading space.
  return emitValue(v, "", false).slice(1);
}
