/**
 * kubectl's `-o` output formats, byte for byte as kubectl 1.32 prints them:
 *
 * - `json`: Go's encoding/json, 4-space indent, keys sorted, `<>&` escaped;
 * - `yaml`: go-yaml v2's document (`yaml_kubectl.ts`: key order, quoting, folding at 80
 *   columns, literal blocks);
 * - `name`: `kind[.group]/name`, one line per item of a list;
 * - `jsonpath`, `jsonpath-as-json`, `jsonpath-file`: client-go's JSONPath (`jsonpath.ts`), also
 *   used for CRD printer columns ({@link compileJsonPath}, {@link columnValue});
 * - `go-template`, `go-template-file` and their aliases `template`, `templatefile`: Go's
 *   text/template with kubectl's functions (`go_template.ts`).
 *
 * json and yaml leave out `metadata.managedFields` unless `showManagedFields`; JSONPath and
 * templates always see them (as in kubectl). A command that prints several objects prints one
 * {@link listForPrinting}.
 *
 * The contract the client relies on: {@link parseOutputFormat} checks an `-o` value (and the
 * `--template` flag) up front, throwing kubectl's one-line message; {@link printObject} renders
 * an object to kubectl's exact standard output, or rejects with a {@link PrintError} carrying
 * what kubectl writes to standard output and after `error: ` on standard error.
 *
 * @module
 */

import { compileGoTemplate, syntaxErrorText, TemplateSyntaxError } from "./go_template.ts";
import { goJson, goPrint, goQuote, goSharpV } from "./go_value.ts";
import { kubectlYaml } from "./yaml_kubectl.ts";
import { compileJsonPath, JsonPathError, JsonPathParseError } from "./jsonpath.ts";
export {
  type CompiledGoTemplate,
  compileGoTemplate,
  TemplateExecError,
  TemplateSyntaxError,
} from "./go_template.ts";

export {
  columnValue,
  type CompiledJsonPath,
  compileJsonPath,
  JsonPathError,
  type JsonPathOptions,
  JsonPathParseError,
  type JsonPathPrintOptions,
  jsonPathValueText,
} from "./jsonpath.ts";

/** A parsed `-o` value. `argument` is what follows `=` (a template or a file path). */
export interface OutputFormat {
  name: string;
  argument?: string;
}

/** How an object is printed. */
export interface PrintOptions {
  /** `--allow-missing-template-keys` (kubectl's default: true). */
  allowMissingTemplateKeys?: boolean;
  /**
   * `--show-managed-fields` (default false: json and yaml leave out `metadata.managedFields`;
   * JSONPath and templates always see it, as in kubectl).
   */
  showManagedFields?: boolean;
}

/**
 * A failure kubectl reports: `stdout` is what kubectl still wrote to standard output (a Go
 * template's partial output and its debugging text), `message` what follows `error: ` on
 * standard error (kubectl adds a newline unless the message ends with one).
 */
export class PrintError extends Error {
  override name = "PrintError";
  constructor(message: string, readonly stdout = "") {
    super(message);
  }
}

const SIMPLE = ["json", "yaml", "name"];
const JSONPATH = ["jsonpath", "jsonpath-as-json", "jsonpath-file"];
const TEMPLATE = ["go-template", "go-template-file", "template", "templatefile"];
/** kubectl's list in its message, sorted as kubectl sorts it. */
const ALLOWED = [...SIMPLE, ...JSONPATH, ...TEMPLATE].sort();

/**
 * The `-o` value `spec` (`json`, `jsonpath={.x}`, `go-template-file=t.tmpl`, …), with the
 * `--template` flag's value if given: as in kubectl, `--template` alone means go-template, and
 * with `-o jsonpath` (a template format without `=`) it is the template.
 * @throws {Error} kubectl's one-line message for an unknown format or a template format without
 * a template.
 */
export function parseOutputFormat(spec: string, template?: string): OutputFormat {
  if (template) {
    if (spec === "") return { name: "go-template", argument: template };
    if (SIMPLE.includes(spec)) return { name: spec };
    if (JSONPATH.includes(spec) || TEMPLATE.includes(spec)) {
      return { name: spec, argument: template };
    }
    throw unknownFormat(spec);
  }
  const eq = spec.indexOf("=");
  const name = eq < 0 ? spec : spec.slice(0, eq);
  const argument = eq < 0 ? undefined : spec.slice(eq + 1);
  if (SIMPLE.includes(name) && argument === undefined) return { name };
  if (JSONPATH.includes(name) || TEMPLATE.includes(name)) {
    if (!argument) throw new Error("template format specified but no template given");
    return { name, argument };
  }
  throw unknownFormat(spec);
}

function unknownFormat(spec: string): Error {
  return new Error(
    `unable to match a printer suitable for the output format "${spec}", allowed formats are: ` +
      ALLOWED.join(","),
  );
}

/**
 * The object kubectl prints when a command names several objects (or a list): a `v1` `List`
 * of the items, each carrying its `apiVersion` and `kind` (taken from the server's list kind,
 * `ConfigMapList` → `ConfigMap`, where the server left them out), with an empty
 * `resourceVersion`.
 */
export function listForPrinting(
  items: Record<string, unknown>[],
  from: { apiVersion?: string; kind?: string } = {},
): Record<string, unknown> {
  const itemKind = from.kind?.endsWith("List") ? from.kind.slice(0, -4) : undefined;
  return {
    apiVersion: "v1",
    items: items.map((i) =>
      i.kind === undefined && i.apiVersion === undefined && itemKind
        ? { ...i, apiVersion: from.apiVersion, kind: itemKind }
        : i
    ),
    kind: "List",
    metadata: { resourceVersion: "" },
  };
}

/** The text kubectl prints for `obj` in `format`. */
export async function printObject(
  obj: Record<string, unknown>,
  format: OutputFormat,
  opts: PrintOptions = {},
): Promise<string> {
  switch (format.name) {
    case "json":
      return goJson(shownFields(obj, opts), { indent: true }) + "\n";
    case "yaml":
      return kubectlYaml(shownFields(obj, opts));
    case "name":
      // A list prints one line per item, as kubectl's name printer does.
      if (Array.isArray(obj.items) && String(obj.kind ?? "").endsWith("List")) {
        const items = obj.items as Record<string, unknown>[];
        return items.map((i) => `${qualifiedKind(i)}/${nameOf(i)}\n`).join("");
      }
      return `${qualifiedKind(obj)}/${nameOf(obj)}\n`;
    // JSONPath and templates see the whole object, managedFields included, as in kubectl.
    case "jsonpath":
    case "jsonpath-as-json":
      return printJsonPath(obj, format.argument ?? "", format.name, opts);
    case "jsonpath-file":
      return printJsonPath(obj, await readTemplate(format.argument ?? ""), format.name, opts);
    case "go-template":
    case "template":
      return printGoTemplate(obj, format.argument ?? "", opts);
    case "go-template-file":
    case "templatefile":
      return printGoTemplate(obj, await readTemplate(format.argument ?? ""), opts);
  }
  throw unknownFormat(format.name);
}

/** Like kubectl, json and yaml leave out managedFields unless `--show-managed-fields`. */
function shownFields(obj: Record<string, unknown>, opts: PrintOptions): Record<string, unknown> {
  return opts.showManagedFields ? obj : withoutManagedFields(obj);
}

/** A `*-file` format's template, with kubectl's message when it cannot be read. */
async function readTemplate(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    // Go's os.ReadFile wording: "open P: no such file or directory", "read P: is a directory".
    const reason = e instanceof Deno.errors.NotFound
      ? `open ${path}: no such file or directory`
      : e instanceof Deno.errors.IsADirectory
      ? `read ${path}: is a directory`
      : e instanceof Deno.errors.PermissionDenied
      ? `open ${path}: permission denied`
      : `open ${path}: ${(e as Error).message}`;
    throw new PrintError(`error reading --template ${path}, ${reason}\n`);
  }
}

/** kubectl's JSONPath printer, with its messages for templates that fail to parse or run. */
function printJsonPath(
  obj: Record<string, unknown>,
  template: string,
  format: string,
  opts: PrintOptions,
): string {
  let compiled;
  try {
    compiled = compileJsonPath(template);
  } catch (e) {
    if (!(e instanceof JsonPathParseError)) throw e;
    throw new PrintError(`error parsing jsonpath ${template}, ${e.message}\n`);
  }
  try {
    return compiled.print(obj, {
      allowMissingKeys: opts.allowMissingTemplateKeys ?? true,
      json: format === "jsonpath-as-json",
    });
  } catch (e) {
    if (!(e instanceof JsonPathError)) throw e;
    const debug =
      `Error executing template: ${e.message}. Printing more information for debugging the template:\n` +
      `\ttemplate was:\n\t\t${template}\n` +
      `\tobject given to jsonpath engine was:\n\t\t${goSharpV(obj)}\n\n`;
    throw new PrintError(`error executing jsonpath ${goQuote(template)}: ${debug}\n`);
  }
}

/**
 * kubectl's Go-template printer. On a failure kubectl has already written the partial output
 * and a debugging text to standard output ({@link PrintError.stdout}).
 */
function printGoTemplate(
  obj: Record<string, unknown>,
  template: string,
  opts: PrintOptions,
): string {
  let compiled;
  try {
    compiled = compileGoTemplate(template);
  } catch (e) {
    if (!(e instanceof TemplateSyntaxError)) throw e;
    throw new PrintError(`error parsing template ${template}, ${syntaxErrorText(e)}\n`);
  }
  const result = compiled.execute(obj, {
    missingKeyError: !(opts.allowMissingTemplateKeys ?? true),
  });
  if (!result.error) return result.output;
  const err = result.error.message;
  const stdout = result.output +
    `Error executing template: ${err}. Printing more information for debugging the template:\n` +
    `\ttemplate was:\n\t\t${template}\n` +
    `\traw data was:\n\t\t${goJson(obj)}\n` +
    `\tobject given to template engine was:\n\t\t${goPrint(obj)}\n\n`;
  throw new PrintError(`error executing template ${goQuote(template)}: ${err}`, stdout);
}

/** The object without `metadata.managedFields`, and so each item of a list. */
function withoutManagedFields(obj: Record<string, unknown>): Record<string, unknown> {
  if (Array.isArray(obj.items)) {
    const items = (obj.items as Record<string, unknown>[]).map((i) =>
      isObject(i) ? withoutManagedFields(i) : i
    );
    obj = { ...obj, items };
  }
  const meta = obj.metadata as Record<string, unknown> | undefined;
  if (!meta || !("managedFields" in meta)) return obj;
  const { managedFields: _, ...rest } = meta;
  return { ...obj, metadata: rest };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
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
