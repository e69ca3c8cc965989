/** The text of a configuration file named by a flag, and YAML (or JSON) text read into data, each
 * with one clear error. */

import { parseDocument } from "yaml";
import { ConfigError, osReason, quote } from "./config_error.ts";

/**
 * The text of the file `flag` names: `file` (default `path`, e.g. resolved against a working
 * directory) is read, messages name `path` as given.
 *
 * @throws {ConfigError} `<flag>: cannot read "<path>": <the OS's reason>`.
 */
export async function readConfigFile(flag: string, path: string, file = path): Promise<string> {
  try {
    return await Deno.readTextFile(file);
  } catch (err) {
    throw new ConfigError(`${flag}: cannot read ${quote(path)}: ${osReason(err)}`);
  }
}

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
