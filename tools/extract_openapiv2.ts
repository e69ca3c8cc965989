/**
 * Turns gnostic's `OpenAPIv2.proto` (the protobuf form of `/openapi/v2`, checked in under
 * `testdata/openapiv2/`) into `lib/server/openapi/v2_descriptor.json`, the protobufjs JSON
 * descriptor the server encodes with. The server embeds the JSON, so neither it nor a compiled
 * binary reads the .proto at run time.
 *
 *     deno run --allow-read --allow-write tools/extract_openapiv2.ts [proto-file] [output-file]
 *
 * `lib/server/openapi/v2_proto_test.ts` checks the committed JSON against the checked-in
 * .proto.
 */

import protobuf from "protobufjs";
import { readFileSync, writeFileSync } from "node:fs";

const DEFAULT_PROTO = "testdata/openapiv2/OpenAPIv2.proto";
const DEFAULT_OUTPUT = "lib/server/openapi/v2_descriptor.json";

/** The .proto parsed, field names kept as written (`vendor_extension`, `_ref`). */
export function parseOpenAPIv2(protoText: string): protobuf.Root {
  const root = new protobuf.Root();
  // The one import, google/protobuf/any.proto, is a well-known type protobufjs ships. (Nothing
  // the server writes uses it: gnostic's `Any.value` stays empty, `Any.yaml` holds the value.)
  root.addJSON(protobuf.common.get("google/protobuf/any.proto")!.nested!);
  protobuf.parse(protoText, root, { keepCase: true });
  root.resolveAll();
  return root;
}

/** The descriptor of `openapi.v2` (protobufjs JSON). */
export function extractOpenAPIv2(protoText: string): unknown {
  return parseOpenAPIv2(protoText).toJSON();
}

/** The JSON text written to the descriptor file. */
export function descriptorText(protoText: string): string {
  return JSON.stringify(extractOpenAPIv2(protoText), null, 2) + "\n";
}

if (import.meta.main) {
  const input = Deno.args[0] ?? DEFAULT_PROTO;
  const output = Deno.args[1] ?? DEFAULT_OUTPUT;
  writeFileSync(output, descriptorText(readFileSync(input, "utf8")));
  console.log(`wrote ${output}`);
}
