/** Serializing response bodies and parsing request bodies (JSON, YAML, protobuf). */

import { parse as parseYaml } from "yaml";
import { badRequest } from "../api/errors.ts";
import type { Encoding } from "./negotiate.ts";
import { decodeObject, encodeObject } from "./protobuf/mod.ts";
import { emitYaml } from "./yaml_emit.ts";

export function encodeBody(
  value: unknown,
  encoding: Encoding,
  pretty = false,
): string | Uint8Array<ArrayBuffer> {
  if (encoding === "protobuf") return encodeObject(value as object) as Uint8Array<ArrayBuffer>;
  if (encoding === "yaml") return emitYaml(value);
  return pretty ? JSON.stringify(value, null, 2) + "\n" : JSON.stringify(value) + "\n";
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Parses a request body given as bytes; malformed input is 400 saying what and where. */
export function decodeBytes(bytes: Uint8Array, encoding: Encoding): unknown {
  if (encoding === "protobuf") {
    try {
      return decodeObject(bytes);
    } catch (err) {
      throw badRequest(`error decoding the protobuf body: ${(err as Error).message}`);
    }
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw badRequest("the request body is not valid UTF-8");
  }
  return decodeBody(text, encoding);
}

/** Parses a request body; malformed input is 400 with the parser's reason. */
export function decodeBody(text: string, encoding: Encoding): unknown {
  if (encoding === "yaml") {
    // JSON is YAML, and JSON.parse is many times faster than the YAML parser: try it first on
    // what looks like a JSON object (kubectl and most clients send JSON as apply bodies).
    if (text.trimStart().startsWith("{")) {
      try {
        return JSON.parse(text);
      } catch { /* YAML flow mapping, or invalid: the YAML parser decides */ }
    }
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
