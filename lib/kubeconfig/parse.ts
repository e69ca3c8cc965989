/**
 * Reading one kubeconfig v1 file: the YAML, its named lists (`clusters`, `users`, `contexts`,
 * entries `{name, <inner>: {...}}`) and `current-context`, with field paths for every error
 * (`clusters[0].cluster: expected a mapping`). Unknown fields are kept (kubeconfigs carry
 * extensions and preferences); what a field means is for the reader of the entry.
 *
 * @module
 */

import { parseDocument } from "yaml";

/** A YAML mapping as parsed. */
export type Obj = Record<string, unknown>;

/** One entry of `clusters`, `users` or `contexts`. */
export interface NamedEntry {
  /** The entry's `name` ("" when missing). */
  name: string;
  /** The inner mapping (`cluster`, `user` or `context`), `{}` when missing. */
  value: Obj;
  /** Where the inner mapping is in its file, e.g. `clusters[0].cluster`. */
  path: string;
  /** The file it was read from: relative paths in it resolve against its directory. */
  file: string;
}

/** One parsed kubeconfig file. */
export interface KubeconfigFile {
  /** The path as given. */
  path: string;
  /** The whole document (a mapping; `{}` for an empty file). */
  raw: Obj;
  clusters: NamedEntry[];
  users: NamedEntry[];
  contexts: NamedEntry[];
  /** `current-context`, when set and not empty. */
  currentContext?: string;
}

/** A kubeconfig problem: the message names the field (`users[1].user.exec: expected a mapping`). */
export class KubeconfigError extends Error {
  override name = "KubeconfigError";
}

/**
 * Parses the text of a kubeconfig file.
 *
 * @throws {KubeconfigError} for invalid YAML (`invalid YAML at line 3, column 1`), a document
 * that is not a mapping, or a list or entry of the wrong shape.
 */
export function parseKubeconfig(text: string, path: string): KubeconfigFile {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    const pos = doc.errors[0].linePos?.[0];
    fail(`invalid YAML${pos ? ` at line ${pos.line}, column ${pos.col}` : ""}`);
  }
  const raw = doc.toJS() ?? {};
  if (!isObj(raw)) fail("expected a kubeconfig mapping");
  const current = stringField(raw, "current-context", "current-context");
  return {
    path,
    raw,
    clusters: namedEntries(raw, "clusters", "cluster", path),
    users: namedEntries(raw, "users", "user", path),
    contexts: namedEntries(raw, "contexts", "context", path),
    currentContext: current || undefined,
  };
}

/** `clusters`, `users` or `contexts` of a kubeconfig mapping. */
export function namedEntries(config: Obj, list: string, inner: string, file = ""): NamedEntry[] {
  const items = config[list] ?? [];
  if (!Array.isArray(items)) fail(`${list}: expected a list`);
  return items.map((item, i) => {
    const at = `${list}[${i}]`;
    if (!isObj(item)) fail(`${at}: expected a mapping`);
    const value = item[inner] ?? {};
    if (!isObj(value)) fail(`${at}.${inner}: expected a mapping`);
    return {
      name: stringField(item, "name", `${at}.name`) ?? "",
      value,
      path: `${at}.${inner}`,
      file,
    };
  });
}

/** A string field, `undefined` when absent or null. @throws {KubeconfigError} when not a string. */
export function stringField(obj: Obj, key: string, at: string): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") fail(`${at}: expected a string`);
  return v;
}

/** A boolean field, `undefined` when absent. @throws {KubeconfigError} when not a boolean. */
export function boolField(obj: Obj, key: string, at: string): boolean | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") fail(`${at}: expected true or false`);
  return v;
}

export function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** JSON-quotes a value for a message. */
export function quote(value: string): string {
  return JSON.stringify(value);
}

/** The OS reason of a file-system error without Deno's `(os error N)` tail. */
export function osReason(err: unknown): string {
  if (err instanceof Deno.errors.NotFound) return "No such file or directory";
  if (err instanceof Deno.errors.PermissionDenied) return "Permission denied";
  if (err instanceof Deno.errors.IsADirectory) return "Is a directory";
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/ \(os error \d+\).*$/s, "");
}

function fail(message: string): never {
  throw new KubeconfigError(message);
}
