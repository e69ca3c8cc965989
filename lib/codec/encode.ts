/** Serializing response bodies: JSON (compact or pretty), YAML, protobuf. */

import type { Encoding } from "./negotiate.ts";
import { encodeObject } from "./protobuf/mod.ts";
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
