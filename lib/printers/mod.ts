/**
 * kubectl's `-o` output formats for objects the client prints: `json`, `yaml`, `name`, and
 * (filled in by the JSONPath and Go-template modules) `jsonpath`, `jsonpath-as-json`,
 * `jsonpath-file`, `go-template`, `go-template-file`, `template`, `templatefile`.
 *
 * The contract the client (`lib/client`) relies on: {@link parseOutputFormat} checks an `-o`
 * value up front (a one-line Error for an unknown or malformed one), {@link printObject}
 * renders one object to the exact text kubectl prints.
 *
 * @module
 */

import { emitYaml } from "../codec/mod.ts";

/** A parsed `-o` value. `argument` is what follows `=` (a template or a file path). */
export interface OutputFormat {
  name: string;
  argument?: string;
}

/** How an object is printed. */
export interface PrintOptions {
  /** `--allow-missing-template-keys` (kubectl's default: true). */
  allowMissingTemplateKeys?: boolean;
  /** `--show-managed-fields` (default false: `metadata.managedFields` is left out). */
  showManagedFields?: boolean;
}

const SIMPLE = ["json", "yaml", "name"];

/** The `-o` value `spec` (`json`, `jsonpath={.x}`, …). @throws {Error} when unknown. */
export function parseOutputFormat(spec: string): OutputFormat {
  const eq = spec.indexOf("=");
  const name = eq < 0 ? spec : spec.slice(0, eq);
  const argument = eq < 0 ? undefined : spec.slice(eq + 1);
  if (SIMPLE.includes(name) && argument === undefined) return { name };
  throw new Error(
    `unable to match a printer suitable for the output format "${spec}", allowed formats are: ` +
      SIMPLE.join(","),
  );
}

/** The text kubectl prints for `obj` in `format`. */
export function printObject(
  obj: Record<string, unknown>,
  format: OutputFormat,
  opts: PrintOptions = {},
): Promise<string> {
  const shown = opts.showManagedFields ? obj : withoutManagedFields(obj);
  switch (format.name) {
    case "json":
      return Promise.resolve(JSON.stringify(shown, null, 4) + "\n");
    case "yaml":
      return Promise.resolve(emitYaml(shown));
    case "name":
      return Promise.resolve(`${qualifiedKind(obj)}/${nameOf(obj)}\n`);
  }
  return Promise.reject(new Error(`unsupported output format "${format.name}"`));
}

function withoutManagedFields(obj: Record<string, unknown>): Record<string, unknown> {
  const meta = obj.metadata as Record<string, unknown> | undefined;
  if (!meta || !("managedFields" in meta)) return obj;
  const { managedFields: _, ...rest } = meta;
  return { ...obj, metadata: rest };
}

/** `configmap`, `deployment.apps`: the lower-case kind, with the group when there is one. */
function qualifiedKind(obj: Record<string, unknown>): string {
  const kind = String(obj.kind ?? "").toLowerCase();
  const apiVersion = String(obj.apiVersion ?? "");
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? kind : `${kind}.${apiVersion.slice(0, slash)}`;
}

function nameOf(obj: Record<string, unknown>): string {
  const meta = obj.metadata as Record<string, unknown> | undefined;
  return String(meta?.name ?? "");
}
