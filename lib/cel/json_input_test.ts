import { deepStrictEqual, match, strictEqual, throws } from "node:assert/strict";
import { compile, preparedInput } from "./mod.ts";

const OBJECT = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name: "web-1",
    labels: { app: "web", tier: "front" },
    annotations: undefined,
    managedFields: [{ manager: "kubectl", fieldsV1: { "f:data": { "f:a": {} } } }],
  },
  data: { a: "1", b: "2" },
  spec: { replicas: 3, ratio: 0.5, ports: [{ port: 80 }, { port: 443 }], empty: null },
};

/** What `expression` gives over `object` converted whole (each evaluation converts what it
 * binds), and over the same object read lazily. */
function both(expression: string, object: unknown = OBJECT): [unknown, unknown] {
  const e = compile("admissionPolicy", expression, { expect: "any", authorizer: false });
  return [e.evaluate({ object }), e.evaluate({ object: preparedInput(object, "object") })];
}

Deno.test("lazy JSON input: expressions see what the whole conversion gives them", () => {
  const expressions = [
    "object.metadata.name",
    "size(object.data)",
    "size(object.metadata)", // an undefined property is absent
    "has(object.metadata.annotations)",
    "has(object.metadata.labels) && 'app' in object.metadata.labels",
    "'missing' in object.data",
    "object.spec.replicas == 3 && object.spec.replicas + 1 == 4", // integral numbers are ints
    "object.spec.ratio * 2.0",
    "object.spec.ports.map(p, p.port)",
    "object.spec.ports[1].port",
    "object.spec.empty == null",
    "object.metadata.labels.all(k, object.metadata.labels[k].size() > 2)",
    "object.data.exists(k, k == 'b')",
    "object.data.map(k, object.data[k])",
    "object.data == {'a': '1', 'b': '2'}",
    "{'a': '1', 'b': '2'} == object.data",
    "object.data != {'a': '1'}",
    "[object.data] == [{'b': '2', 'a': '1'}]",
    "object.metadata.managedFields[0].fieldsV1",
    "object.?metadata.?labels.?app.orValue('none')",
    "object.?metadata.?labels.?nope.orValue('none')",
    "object",
  ];
  for (const expression of expressions) {
    const [whole, lazy] = both(expression);
    deepStrictEqual(lazy, whole, expression);
  }
  strictEqual(both("object.data.b")[1], "2");
});

Deno.test("lazy JSON input: a part that is not JSON fails only the expressions that read it", () => {
  const object = { metadata: { name: "x" }, spec: { when: new Date(0), list: [1, () => 2] } };
  const name = compile("admissionPolicy", "object.metadata.name", { expect: "string" });
  strictEqual(name.evaluate({ object: preparedInput(object, "object") }), "x");
  const e = compile("admissionPolicy", "object.spec.when == 1", { expect: "bool" });
  throws(() => e.evaluate({ object: preparedInput(object, "object") }), (err: Error) => {
    match(err.message, /object\.spec\.when: cannot pass a Date to CEL/);
    return true;
  });
  const f = compile("admissionPolicy", "size(object.spec.list) == 2", { expect: "bool" });
  throws(() => f.evaluate({ object: preparedInput(object, "object") }), /object\.spec\.list\[1\]/);
  // A missing field is CEL's own error, as for an object converted whole.
  const g = compile("admissionPolicy", "object.spec.nope == 1", { expect: "bool" });
  const message = (object: unknown) => {
    try {
      g.evaluate({ object });
    } catch (err) {
      return (err as Error).message;
    }
  };
  const json = { spec: { replicas: 1 } };
  strictEqual(message(preparedInput(json, "object")), message(json));
  match(message(json) ?? "", /nope/);
});

Deno.test("lazy JSON input: each field is converted once, however many expressions read it", () => {
  let reads = 0;
  const metadata = { name: "x" };
  const object = {
    get metadata() {
      reads++;
      return metadata;
    },
  };
  const prepared = preparedInput(object, "object");
  const e = compile("admissionPolicy", "object.metadata.name == 'x'", { expect: "bool" });
  for (let i = 0; i < 3; i++) strictEqual(e.evaluate({ object: prepared }), true);
  strictEqual(reads, 1);
});
