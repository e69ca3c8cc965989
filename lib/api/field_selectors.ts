/**
 * Field selectors, parsed, printed and matched as kube's apimachinery does (`fieldSelector=`):
 * `field=value`, `field==value`, `field!=value` joined by `,`; `\,`, `\=` and `\\` escape those
 * characters in values (`\!` is also accepted).
 *
 * Bad input throws a 400 {@link StatusError} (`badRequest`) with kube's message.
 *
 * @module
 */

import { badRequest } from "./errors.ts";

/** One term of a field selector; `==` is read as `=`. The value is unescaped. */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: "=" | "!=";
  readonly value: string;
}

/** A parsed field selector: every requirement must hold; no requirements match everything. */
export class FieldSelector {
  /** Requirements in the order of their sorted source terms. */
  readonly requirements: readonly FieldRequirement[];

  constructor(requirements: FieldRequirement[]) {
    this.requirements = Object.freeze(requirements.map((r) => Object.freeze({ ...r })));
  }

  isEmpty(): boolean {
    return this.requirements.length === 0;
  }

  /** Whether an object with these field values is selected; a missing field reads as `""`. */
  matches(fields: Record<string, string>): boolean {
    return this.requirements.every((r) => {
      const actual = Object.hasOwn(fields, r.field) ? fields[r.field] : "";
      return r.operator === "=" ? actual === r.value : actual !== r.value;
    });
  }

  /**
   * The value `field` must equal for a match (`metadata.name=x` lets a watch or list target a
   * single object), if the selector pins one.
   */
  requiresExactMatch(field: string): string | undefined {
    return this.requirements.find((r) => r.field === field && r.operator === "=")?.value;
  }

  /** The canonical form, values escaped, e.g. `metadata.name=a\,b,status.phase!=Done`. */
  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator}${escapeFieldValue(r.value)}`)
      .join(",");
  }
}

/** Whether an object with these field values satisfies `selector`. */
export function matchesFields(selector: FieldSelector, fields: Record<string, string>): boolean {
  return selector.matches(fields);
}

/** Escapes `\`, `,` and `=` for use as a field selector value. */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** Splits on commas that are not escaped; the backslashes stay in the terms. */
function splitTerms(s: string): string[] {
  if (s === "") return [];
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < s.length; i++) {
    if (escaped) escaped = false;
    else if (s[i] === "\\") escaped = true;
    else if (s[i] === ",") {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

const TERM_OPERATORS = ["!=", "==", "="] as const;

/** Splits at the first operator; the field part has no escaping. */
function splitTerm(term: string): [string, (typeof TERM_OPERATORS)[number], string] | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of TERM_OPERATORS) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)];
    }
  }
  return undefined;
}

function unescapeFieldValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = "";
  let escaped = false;
  for (const c of s) {
    if (escaped) {
      if (c !== "\\" && c !== "," && c !== "=" && c !== "!") {
        throw badRequest(`invalid field selector: invalid escape sequence: \\${c}`);
      }
      out += c;
      escaped = false;
    } else if (c === "\\") {
      escaped = true;
    } else if (c === "," || c === "=") {
      // kube prints the character's code point here.
      throw badRequest(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else {
      out += c;
    }
  }
  if (escaped) throw badRequest("invalid field selector: invalid escape sequence: \\");
  return out;
}

/**
 * Parses a field selector (the `fieldSelector` query parameter) and checks its fields against
 * those the resource supports. Empty terms are skipped, so `""` selects everything.
 *
 * @throws {StatusError} 400 BadRequest: `invalid selector: '<s>'; can't understand '<term>'`
 *   for a term without an operator, an escape error, or `field label not supported: <field>`.
 *
 * @example
 * ```ts
 * const sel = parseFieldSelector("metadata.name=web", ["metadata.name", "metadata.namespace"]);
 * sel.requiresExactMatch("metadata.name"); // "web"
 * ```
 */
export function parseFieldSelector(
  s: string,
  allowed: Set<string> | readonly string[],
): FieldSelector {
  const supported = allowed instanceof Set ? allowed : new Set(allowed);
  const selector = parseFieldSelectorSyntax(s);
  for (const r of selector.requirements) {
    if (!supported.has(r.field)) throw badRequest(`field label not supported: ${r.field}`);
  }
  return selector;
}

/**
 * Parses a field selector without checking its fields against a resource's: what request
 * parsing reads before the resource is known. Values are kept exactly as sent (unescaped,
 * never trimmed), as {@link parseFieldSelector} keeps them.
 *
 * @throws {StatusError} 400 BadRequest as {@link parseFieldSelector}, but for the fields.
 */
export function parseFieldSelectorSyntax(s: string): FieldSelector {
  const terms = splitTerms(s).sort();
  const reqs: FieldRequirement[] = [];
  for (const term of terms) {
    if (term === "") continue;
    const parts = splitTerm(term);
    if (!parts) throw badRequest(`invalid selector: '${s}'; can't understand '${term}'`);
    const [field, op, raw] = parts;
    reqs.push({ field, operator: op === "!=" ? "!=" : "=", value: unescapeFieldValue(raw) });
  }
  return new FieldSelector(reqs);
}
