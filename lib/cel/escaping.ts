/**
 * Kubernetes' property-name escaping: a property whose name is not a CEL identifier (a claim
 * `foo-bar`, a key `a.b`) or is a CEL reserved word (`namespace`) is still reachable by field
 * selection, written with escape sequences (`claims.foo__dash__bar`, `claims.__namespace__`).
 */

/** CEL's reserved words: a property with one of these names is written `__word__`. */
export const CEL_RESERVED_WORDS: ReadonlySet<string> = new Set([
  "true",
  "false",
  "null",
  "in",
  "as",
  "break",
  "const",
  "continue",
  "else",
  "for",
  "function",
  "if",
  "import",
  "let",
  "loop",
  "package",
  "namespace",
  "return",
  "var",
  "void",
  "while",
]);

const ESCAPES: ReadonlyMap<string, string> = new Map([
  ["__", "__underscores__"],
  [".", "__dot__"],
  ["-", "__dash__"],
  ["/", "__slash__"],
]);

const UNESCAPES: ReadonlyMap<string, string> = new Map(
  [...ESCAPES].map(([raw, escaped]) => [escaped.slice(2, -2), raw]),
);

/** Only these property names can be reached by field selection (after escaping). */
const ESCAPABLE = /^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/;

/**
 * The CEL identifier for a property name, or undefined when the name cannot be written as one
 * (it must match `[a-zA-Z_.-/][a-zA-Z0-9_.-/]*`; other names are reached with `m["name"]`).
 */
export function escapePropertyName(name: string): string | undefined {
  if (!ESCAPABLE.test(name)) return undefined;
  if (CEL_RESERVED_WORDS.has(name)) return `__${name}__`;
  return name.replace(/__|[.\-/]/g, (s) => ESCAPES.get(s)!);
}

/**
 * The property name a selected field stands for, or undefined when it holds an unknown escape
 * sequence (`__x__` where x is none of underscores, dot, dash, slash or a whole reserved word).
 */
export function unescapePropertyName(field: string): string | undefined {
  let ok = true;
  const name = field.replace(/__[^_]+__/g, (seq) => {
    const inner = seq.slice(2, -2);
    const raw = UNESCAPES.get(inner);
    if (raw !== undefined) return raw;
    // A reserved word is only escaped as the whole name.
    if (!CEL_RESERVED_WORDS.has(inner) || seq.length !== field.length) ok = false;
    return inner;
  });
  return ok ? name : undefined;
}
