/** Parsing request bodies (JSON, YAML, protobuf) into values, with their repeated keys. */

import { badRequest, jsonTooDeep, MAX_NESTING_DEPTH } from "../api/mod.ts";
import type { Encoding } from "./negotiate.ts";
import { decodeObject } from "./protobuf/mod.ts";
import { decodeYaml } from "./yaml_decode.ts";
import { duplicateFields } from "./json_duplicates.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A decoded request body. */
export interface DecodedBody {
  value: unknown;
  /** Paths of keys repeated within one object, in document order (for field validation).
   * Found on demand: for JSON it takes a second pass over the text. */
  duplicateFields(): string[];
}

const NONE = () => [];

/** Parses a request body given as bytes; malformed input is 400 saying what and where. */
export function decodeBytes(bytes: Uint8Array, encoding: Encoding): DecodedBody {
  if (encoding === "protobuf") {
    try {
      return { value: decodeObject(bytes), duplicateFields: NONE };
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

/**
 * Parses a JSON or YAML request body in time linear in its size; malformed input and nesting
 * deeper than {@link MAX_NESTING_DEPTH} are 400.
 */
export function decodeBody(text: string, encoding: Encoding): DecodedBody {
  // JSON is YAML, and JSON.parse is many times faster than the YAML parser: try it first on
  // what looks like a JSON object (kubectl and most clients send JSON as apply bodies).
  if (encoding === "yaml" && !text.trimStart().startsWith("{")) return yamlBody(text);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // A YAML flow mapping, or invalid: the YAML parser decides.
    if (encoding === "yaml") return yamlBody(text);
    throw badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
  // JSON.parse does not recurse, but what handles the value later does.
  if (jsonTooDeep(text)) {
    throw encoding === "yaml"
      ? badRequest(
        `error converting YAML to JSON: yaml: exceeded max depth of ${MAX_NESTING_DEPTH}`,
      )
      : badRequest("couldn't get version/kind; json parse error: exceeded max depth");
  }
  return { value, duplicateFields: () => duplicateFields(text, value) };
}

function yamlBody(text: string): DecodedBody {
  const { value, duplicateFields } = decodeYaml(text);
  return { value, duplicateFields: () => duplicateFields };
}
