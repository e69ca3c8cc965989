/** The text of a YAML (or JSON) configuration file, read into data with one clear error. */

import { parseDocument } from "yaml";
import { ConfigError } from "./config_error.ts";

/**
 * The data of a configuration file's text; messages name the file as `file` says.
 *
 * @throws {ConfigError} `<file>:<line>:<column>: invalid YAML: <reason>` for the first error.
 * @example
 * ```ts
 * parseYamlConfig("a: [", "c.yaml"); // throws "c.yaml:1:5: invalid YAML: …"
 * ```
 */
export function parseYamlConfig(text: string, file: string): unknown {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const pos = e.linePos?.[0];
    const loc = pos ? `:${pos.line}:${pos.col}` : "";
    const reason = e.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
    throw new ConfigError(`${file}${loc}: invalid YAML: ${reason}`);
  }
  return doc.toJS();
}
