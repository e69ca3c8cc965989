/**
 * Problems a zod schema finds in a configuration file, as the one-line messages users see:
 * `path: what is wrong`, with the offending value read from the file's data. Every file that
 * is checked against a schema (the server configuration, the authorization, authentication and
 * encryption configurations) words its shape errors here.
 *
 * Two wordings: the plain one (`timeout: expected a string, got 5`) and kube's field errors
 * (`jwt: Invalid value: "<mapping>": must be a list`) for files whose other messages follow
 * kube's validation.
 *
 * @module
 */

import type { z } from "zod";
import { fieldErrorMessage } from "../api/mod.ts";
import { quote } from "./config_error.ts";

/** One problem zod found. */
export type SchemaIssue = z.core.$ZodIssue;

/** Options of {@link fieldPath}. */
export interface FieldPathOptions {
  /** Whether a name with `-` is written after a dot (`a.b-c`) rather than quoted in brackets
   * (`a["b-c"]`, as kube writes it). @default true */
  hyphens?: boolean;
}

/**
 * A zod path as a field path: `featureGates.WatchList`, `runtimeConfig["apps/v1"]`,
 * `tlsSANs[0]`.
 */
export function fieldPath(path: readonly PropertyKey[], opts: FieldPathOptions = {}): string {
  const name = opts.hyphens === false ? /^[A-Za-z_][A-Za-z0-9_]*$/ : /^[A-Za-z_][A-Za-z0-9_-]*$/;
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (typeof seg === "string" && name.test(seg)) out += out === "" ? seg : `.${seg}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}

/** The value at `path` in `data`; `undefined` when the path leads nowhere. */
export function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let cur = data;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}

/** A value as shown after "got": strings quoted, containers by kind. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return quote(value);
}

/** The field of `fields` that `key` misspells (`data-dir`, `datadir`, `data_dir` → `dataDir`). */
export function similarField(key: string, fields: readonly string[]): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[-_]/g, "");
  return fields.find((f) => f !== key && norm(f) === norm(key));
}

/** Options of {@link formatIssue}. */
export interface IssueFormat {
  /**
   * Whether a scalar type takes an article: `expected a string` (the authorization
   * configuration) rather than `expected string` (the server configuration). Mappings and
   * lists always do. @default false
   */
  articles?: boolean;
  /** The known field an unknown `key` of the object at `path` misspells, for a hint. */
  suggest?: (key: string, path: readonly PropertyKey[]) => string | undefined;
  /** What the field at `path` expects when its type says too little (`a duration such as
   * "30s"`); `undefined` to name the type. */
  expects?: (path: readonly PropertyKey[]) => string | undefined;
}

/**
 * One issue as `path: what is wrong` lines: one line, or one per key for unknown keys.
 *
 * @example
 * ```ts
 * formatIssue(issue, { timeout: 5 }, { articles: true }); // ["timeout: expected a string, got 5"]
 * ```
 */
export function formatIssue(issue: SchemaIssue, data: unknown, format: IssueFormat = {}): string[] {
  const input = valueAt(data, issue.path);
  const path = fieldPath(issue.path);
  const prefix = path === "" ? "" : `${path}: `;
  switch (issue.code) {
    case "unrecognized_keys":
      return issue.keys.map((key) => {
        const hint = format.suggest?.(key, issue.path);
        return `${fieldPath([...issue.path, key])}: unknown field` +
          (hint ? ` (did you mean ${quote(hint)}?)` : "");
      });
    case "invalid_type": {
      if (input === undefined) return [`${prefix}required field is missing`];
      const want = format.expects?.(issue.path) ??
        typeName(issue.expected, format.articles ?? false);
      return [`${prefix}expected ${want}, got ${describeValue(input)}`];
    }
    case "invalid_value": {
      const expected = issue.values.map((v) => JSON.stringify(v));
      const want = expected.length === 1 ? expected[0] : `one of ${expected.join(", ")}`;
      if (input === undefined) return [`${prefix}required field is missing (expected ${want})`];
      return [`${prefix}expected ${want}, got ${describeValue(input)}`];
    }
    default:
      return [`${prefix}${issue.message}`];
  }
}

function typeName(expected: string, articles: boolean): string {
  switch (expected) {
    case "record":
    case "object":
      return "a mapping";
    case "array":
      return "a list";
    case "int":
      return articles ? "an integer" : "integer";
    default:
      return articles ? `a ${expected}` : expected;
  }
}

/**
 * One issue in kube's words, as files validated the way kube validates them report it:
 * `jwt[0].extra: unknown field`, `jwt: Invalid value: "<mapping>": must be a list`. Paths
 * are written as kube writes them (a name with `-` in brackets).
 */
export function formatIssueAsFieldError(issue: SchemaIssue, data: unknown): string[] {
  const at = (path: readonly PropertyKey[]) => fieldPath(path, { hyphens: false });
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => `${at([...issue.path, key])}: unknown field`);
  }
  if (issue.code === "invalid_type") {
    const value = valueAt(data, issue.path);
    const shown = Array.isArray(value) ? "<list>" : typeof value === "object" ? "<mapping>" : value;
    const kind = issue.expected === "array"
      ? "list"
      : issue.expected === "object"
      ? "mapping"
      : issue.expected;
    return [fieldErrorMessage({
      type: "TypeInvalid",
      field: at(issue.path),
      value: shown,
      detail: `must be a ${kind}`,
    })];
  }
  return [`${at(issue.path)}: ${issue.message}`];
}
