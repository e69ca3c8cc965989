/** Serializing response bodies and parsing request bodies (JSON, YAML). */

import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { badRequest } from "../api/errors.ts";
import type { Encoding } from "./negotiate.ts";

export function encodeBody(value: unknown, encoding: Encoding, pretty = false): string {
  if (encoding === "yaml") return stringifyYaml(value, { lineWidth: 0 });
  return pretty ? JSON.stringify(value, null, 2) + "\n" : JSON.stringify(value) + "\n";
}

/** Parses a request body; malformed input is 400 with the parser's reason. */
export function decodeBody(text: string, encoding: Encoding): unknown {
  if (encoding === "yaml") {
    try {
      return parseYaml(text);
    } catch (err) {
      throw badRequest(`error converting YAML to JSON: ${(err as Error).message.split("\n")[0]}`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(
      `couldn't get version/kind; json parse error: ${(err as Error).message}`,
    );
  }
}
