/**
 * kubectl's Go-template printer (`-o go-template`, `go-template-file`, and their aliases
 * `template`, `templatefile`): Go's text/template with the functions kubectl 1.32 registers
 * (text/template's builtins plus `exists` and `base64decode`; see `go_template_funcs.ts`).
 *
 * Supported: text and actions with `{{-`/`-}}` trimming and comments; fields, `$` and variables
 * (`:=`, `=`); pipelines with `|` and parentheses; `if`/`else if`/`else`, `with`/`else`,
 * `range`/`else` (arrays in order, maps by sorted key, `$i, $e :=`), `break`/`continue`;
 * `define`/`template`/`block`; literals (strings, raw strings, characters, numbers, booleans,
 * nil). Values print as Go prints kubectl's decoded JSON (`map[a:1 b:x]`, `[1 2.5]`, `1e+06`
 * for a float64, `<no value>` for a missing or null value). Missing keys print `<no value>`,
 * or with `missingKeyError` (kubectl's `--allow-missing-template-keys=false`) fail with Go's
 * `map has no entry for key "x"`.
 *
 * Not supported: methods and struct fields (kubectl's data has none), complex numbers, hex
 * floats, `%x` of floats and `%[n]` argument indexes in printf.
 *
 * @module
 */

import { type ExecResult, executeTemplate } from "./go_template_exec.ts";
import { TEMPLATE_FUNCS } from "./go_template_funcs.ts";
import { parseTemplate, type Templates, type TemplateSyntaxError } from "./go_template_parse.ts";

export { TemplateExecError } from "./go_template_exec.ts";
export { TemplateSyntaxError } from "./go_template_parse.ts";

/** A parsed Go template named `output`, as kubectl names it. */
export interface CompiledGoTemplate {
  readonly template: string;
  /**
   * Runs the template on `data` (a JSON value). Go writes as it runs, so `output` holds what
   * was written before an `error`.
   */
  execute(data: unknown, opts?: { missingKeyError?: boolean }): ExecResult;
}

/** The name kubectl gives its template (it appears in error messages). */
export const TEMPLATE_NAME = "output";

/**
 * Parses a Go template.
 *
 * @example
 * ```ts
 * const t = compileGoTemplate('{{range .items}}{{.metadata.name}}{{"\\n"}}{{end}}');
 * t.execute({ items: [{ metadata: { name: "a" } }] }).output; // "a\n"
 * ```
 * @throws {TemplateSyntaxError} with Go's message and line.
 */
export function compileGoTemplate(template: string): CompiledGoTemplate {
  const templates: Templates = parseTemplate(
    TEMPLATE_NAME,
    template,
    new Set(TEMPLATE_FUNCS.keys()),
  );
  return {
    template,
    execute(data, opts = {}) {
      return executeTemplate(templates, TEMPLATE_NAME, template, data, {
        missingKeyError: opts.missingKeyError ?? false,
      });
    },
  };
}

/** Go's full text of a parse error: `template: output:1: function "x" not defined`. */
export function syntaxErrorText(e: TemplateSyntaxError): string {
  return `template: ${TEMPLATE_NAME}:${e.line}: ${e.message}`;
}
