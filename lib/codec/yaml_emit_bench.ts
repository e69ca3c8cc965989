/**
 * `deno bench --allow-all lib/codec/yaml_emit_bench.ts`: the YAML emitter against the `yaml`
 * package's stringify (what served YAML before) and JSON.stringify, on one configmap and on a
 * list of 1,000.
 */

import { stringify } from "yaml";
import { emitYaml } from "./yaml_emit.ts";
import { sampleConfigMap, sampleConfigMapList } from "./yaml_emit_testdata.ts";

const one = sampleConfigMap(7);
const list = sampleConfigMapList(1000);

Deno.bench("one configmap: emitYaml", { group: "one", baseline: true }, () => {
  emitYaml(one);
});
Deno.bench("one configmap: yaml stringify", { group: "one" }, () => {
  stringify(one, { lineWidth: 0 });
});
Deno.bench("one configmap: JSON.stringify", { group: "one" }, () => {
  JSON.stringify(one);
});

Deno.bench("1,000-configmap list: emitYaml", { group: "list", baseline: true }, () => {
  emitYaml(list);
});
Deno.bench("1,000-configmap list: yaml stringify", { group: "list", n: 5 }, () => {
  stringify(list, { lineWidth: 0 });
});
Deno.bench("1,000-configmap list: JSON.stringify", { group: "list" }, () => {
  JSON.stringify(list);
});
