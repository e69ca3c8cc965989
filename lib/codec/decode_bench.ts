/**
 * `deno bench --allow-all lib/codec/decode_bench.ts`: decoding a request body of 3 MiB made of
 * one ConfigMap with ~140,000 data keys, as YAML and as JSON, with duplicate keys looked for
 * (what a create under the default field validation does). The `yaml` package's parse (what
 * decoded YAML before) took over ten minutes on such a body and is not run.
 */

import { decodeBody } from "./decode.ts";

/** A ConfigMap of `keys` data keys, as YAML and as JSON. */
export function manyKeys(keys: number): { yaml: string; json: string } {
  const data: Record<string, string> = {};
  for (let i = 0; i < keys; i++) data[`key${i}`] = `value${i}`;
  const lines = Object.entries(data).map(([k, v]) => `  ${k}: ${v}`);
  return {
    yaml: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n${lines.join("\n")}\n`,
    json: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "big" }, data }),
  };
}

const { yaml, json } = manyKeys(140_000);

Deno.bench(`${(yaml.length / 2 ** 20).toFixed(1)} MiB YAML, many keys`, { n: 5 }, () => {
  decodeBody(yaml, "yaml").duplicateFields();
});
Deno.bench(`${(json.length / 2 ** 20).toFixed(1)} MiB JSON, many keys`, { n: 5 }, () => {
  decodeBody(json, "json").duplicateFields();
});
