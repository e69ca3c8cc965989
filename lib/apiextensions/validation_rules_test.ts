import * as assert from "node:assert/strict";
import { fieldErrorMessage } from "../api/mod.ts";
import { compile } from "../cel/mod.ts";
import { compileRules, costErrorMessage } from "./validation_rules.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const AT = "spec.versions[0].schema.openAPIV3Schema";

/** A root schema with `spec` as given. */
const root = (spec: Json, extra: Json = {}) => ({
  type: "object",
  properties: { spec },
  ...extra,
});

function writeErrors(schema: Json): string[] {
  return compileRules(schema, AT).errors.map(fieldErrorMessage);
}

/** The messages of validating `obj` (and `old`) against `schema`'s rules. */
function check(schema: Json, obj: Json, old?: Json): string[] {
  const compiled = compileRules(schema, AT);
  assert.deepEqual(compiled.errors.map(fieldErrorMessage), []);
  return compiled.validate!(obj, old).errors.map(fieldErrorMessage);
}

const rules = (...r: Json[]) => ({ "x-kubernetes-validations": r });

Deno.test("rules: self is typed from the schema; compile errors name the rule", () => {
  const spec = {
    type: "object",
    properties: { replicas: { type: "integer" }, name: { type: "string" } },
    ...rules({ rule: "self.replicas >= 0" }, { rule: "self.nope == 1" }, { rule: "self.name" }),
  };
  assert.deepEqual(writeErrors(root(spec)), [
    `${AT}.properties[spec].x-kubernetes-validations[1].rule: Invalid value: {"rule":"self.nope == 1"}: ` +
    "compilation failed: ERROR: <input>:1:5: undefined field 'nope' of object\n | self.nope == 1\n | ....^",
    `${AT}.properties[spec].x-kubernetes-validations[2].rule: Invalid value: {"rule":"self.name"}: ` +
    "cel expression must evaluate to a bool",
  ]);
  assert.deepEqual(
    writeErrors(root({ type: "integer", ...rules({ rule: "self > 'a'" }) })).length,
    1,
  );
});

Deno.test("rules: failures use the rule's message, messageExpression, reason and fieldPath", () => {
  const spec = {
    type: "object",
    properties: {
      min: { type: "integer" },
      max: { type: "integer" },
      labels: { type: "object", additionalProperties: { type: "string" } },
    },
    ...rules(
      { rule: "self.min <= self.max" },
      { rule: "self.min >= 0", message: "min must not be negative" },
      {
        rule: "self.max < 100",
        messageExpression: "'max is ' + string(self.max) + ', at most 99'",
        reason: "FieldValueForbidden",
        fieldPath: ".max",
      },
      {
        rule: "!has(self.labels) || 'app' in self.labels",
        reason: "FieldValueRequired",
        fieldPath: ".labels",
      },
      { rule: "self.min != 7", reason: "FieldValueDuplicate" },
    ),
  };
  const schema = root(spec);
  assert.deepEqual(check(schema, { spec: { min: 1, max: 5 } }), []);
  assert.deepEqual(check(schema, { spec: { min: 7, max: 500, labels: { x: "y" } } }), [
    "spec.max: Forbidden: max is 500, at most 99",
    "spec.labels: Required value: failed rule: !has(self.labels) || 'app' in self.labels",
    'spec: Duplicate value: "object"',
  ]);
  assert.deepEqual(check(schema, { spec: { min: -1, max: -5 } }), [
    'spec: Invalid value: "object": failed rule: self.min <= self.max',
    'spec: Invalid value: "object": min must not be negative',
  ]);
});

Deno.test("rules: at the root (<nil>), on items, map values and scalars", () => {
  const schema = root({
    type: "object",
    properties: {
      ports: {
        type: "array",
        items: { type: "integer", ...rules({ rule: "self > 0 && self < 65536" }) },
      },
      env: {
        type: "object",
        additionalProperties: { type: "string", ...rules({ rule: "self.size() < 5" }) },
      },
    },
  }, rules({ rule: "self.metadata.name.startsWith('ok-')", message: "name must start with ok-" }));
  assert.deepEqual(
    check(schema, {
      apiVersion: "x.io/v1",
      kind: "K",
      metadata: { name: "bad", labels: { a: "b" } },
      spec: { ports: [80, 0], env: { A: "short", B: "ok" } },
    }),
    [
      '<nil>: Invalid value: "object": name must start with ok-',
      'spec.ports[1]: Invalid value: "integer": failed rule: self > 0 && self < 65536',
      'spec.env[A]: Invalid value: "string": failed rule: self.size() < 5',
    ],
  );
});

Deno.test("rules: int-or-string and preserved unknown fields are dyn; embedded resources typed", () => {
  const schema = root({
    type: "object",
    properties: {
      port: {
        "x-kubernetes-int-or-string": true,
        ...rules({ rule: "type(self) == int ? self < 10 : self.endsWith('%')" }),
      },
      extra: {
        type: "object",
        "x-kubernetes-preserve-unknown-fields": true,
        ...rules({ rule: "!has(self.anything) || self.anything == 'ok'" }),
      },
      template: {
        type: "object",
        "x-kubernetes-embedded-resource": true,
        "x-kubernetes-preserve-unknown-fields": true,
        ...rules({ rule: "self.kind == 'Pod' && self.metadata.name != ''" }),
      },
    },
  });
  const template = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" } };
  assert.deepEqual(
    check(schema, { spec: { port: "50%", extra: { anything: "ok" }, template } }),
    [],
  );
  assert.deepEqual(check(schema, { spec: { port: 5, extra: {}, template } }), []);
  assert.deepEqual(
    check(schema, {
      spec: { port: 50, extra: { anything: 1 }, template: { ...template, kind: "Job" } },
    }),
    [
      `spec.port: Invalid value: "": failed rule: type(self) == int ? self < 10 : self.endsWith('%')`,
      `spec.extra: Invalid value: "object": failed rule: !has(self.anything) || self.anything == 'ok'`,
      `spec.template: Invalid value: "object": failed rule: self.kind == 'Pod' && self.metadata.name != ''`,
    ],
  );
  // Only name and generateName of an embedded resource's metadata are there for rules.
  assert.match(
    writeErrors(root({
      type: "object",
      "x-kubernetes-embedded-resource": true,
      "x-kubernetes-preserve-unknown-fields": true,
      ...rules({ rule: "self.metadata.labels.size() > 0" }),
    }))[0],
    /compilation failed: ERROR: <input>:1:14: undefined field 'labels'/,
  );
});

Deno.test("rules: set and map lists compare and concatenate by their list type", () => {
  const schema = root({
    type: "object",
    properties: {
      tags: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" },
      plain: { type: "array", items: { type: "string" } },
      entries: {
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        items: {
          type: "object",
          required: ["name"],
          properties: { name: { type: "string" }, value: { type: "integer" } },
        },
      },
    },
    ...rules(
      { rule: "self.tags == ['b', 'a']", message: "set equality ignores order" },
      { rule: "self.plain != ['b', 'a']", message: "plain lists keep order" },
      { rule: "self.tags + ['c', 'a'] == ['a', 'b', 'c']", message: "set union" },
      {
        rule: "self.entries == [{'name': 'y', 'value': 2}, {'name': 'x', 'value': 1}]",
        message: "map lists compare by key",
      },
      {
        rule: "(self.entries + [{'name': 'x', 'value': 9}])[0].value == 9 && " +
          "size(self.entries + [{'name': 'z', 'value': 0}]) == 3",
        message: "map lists merge by key",
      },
    ),
  });
  const spec = {
    tags: ["a", "b"],
    plain: ["a", "b"],
    entries: [{ name: "x", value: 1 }, { name: "y", value: 2 }],
  };
  assert.deepEqual(check(schema, { spec }), []);
  assert.deepEqual(check(schema, { spec: { ...spec, tags: ["a", "d"] } }), [
    'spec: Invalid value: "object": set equality ignores order',
    'spec: Invalid value: "object": set union',
  ]);
});

Deno.test("rules: transition rules run only with an old value, optionalOldSelf always", () => {
  const schema = root({
    type: "object",
    properties: {
      size: {
        type: "integer",
        ...rules({ rule: "self >= oldSelf", message: "size may not shrink" }),
      },
      mode: {
        type: "string",
        ...rules({
          rule: "oldSelf.hasValue() ? self == oldSelf.value() : self == 'initial'",
          optionalOldSelf: true,
          message: "mode starts as initial and never changes",
        }),
      },
      items: {
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["id"],
        items: {
          type: "object",
          properties: { id: { type: "string" }, v: { type: "integer" } },
          ...rules({ rule: "self.v >= oldSelf.v", message: "v may not decrease" }),
        },
      },
    },
  });
  assert.deepEqual(check(schema, { spec: { size: 1, mode: "initial" } }), []);
  assert.deepEqual(check(schema, { spec: { size: 1, mode: "other" } }), [
    'spec.mode: Invalid value: "string": mode starts as initial and never changes',
  ]);
  const old = { spec: { size: 5, mode: "initial", items: [{ id: "a", v: 3 }, { id: "b", v: 1 }] } };
  assert.deepEqual(
    check(
      schema,
      { spec: { size: 4, mode: "x", items: [{ id: "b", v: 0 }, { id: "c", v: 0 }] } },
      old,
    ),
    [
      'spec.size: Invalid value: "integer": size may not shrink',
      'spec.mode: Invalid value: "string": mode starts as initial and never changes',
      'spec.items[0]: Invalid value: "object": v may not decrease',
    ],
  );
  // An unchanged field is not refused again (ratcheting): the failure becomes a warning.
  const ratchet = root({
    type: "object",
    properties: { a: { type: "integer", ...rules({ rule: "self < 10" }) }, b: { type: "integer" } },
  });
  const compiled = compileRules(ratchet, AT);
  const result = compiled.validate!({ spec: { a: 50, b: 2 } }, { spec: { a: 50, b: 1 } });
  assert.deepEqual(result.errors, []);
  assert.deepEqual(result.warnings, ['spec.a: Invalid value: "integer": failed rule: self < 10']);
  assert.equal(compiled.validate!({ spec: { a: 51 } }, { spec: { a: 50 } }).errors.length, 1);
});

Deno.test("rules: the CRD's rule fields are checked as kube checks them", () => {
  const spec = {
    type: "object",
    properties: {
      list: {
        type: "array",
        maxItems: 10,
        items: { type: "string", maxLength: 10, ...rules({ rule: "self == oldSelf" }) },
      },
      n: { type: "integer" },
    },
    ...rules(
      { rule: "" },
      { rule: "self.n > 0", message: " " },
      { rule: "self.n > 0", message: "a\nb" },
      { rule: "self.n > 0 &&\nself.n < 5" },
      { rule: "self.n > 0", reason: "Nope" },
      { rule: "self.n > 0", fieldPath: ".missing" },
      { rule: "self.n > 0", optionalOldSelf: true },
      { rule: "self.n > 0", messageExpression: "self.n" },
      { rule: "self.n > 0", messageExpression: " " },
    ),
  };
  const p = `${AT}.properties[spec]`;
  const v = (i: number) => `${p}.x-kubernetes-validations[${i}]`;
  assert.deepEqual(writeErrors(root(spec)), [
    `${v(0)}.rule: Required value: rule is not specified`,
    `${v(1)}.message: Invalid value: " ": must be non-empty if specified`,
    `${v(2)}.message: Invalid value: "a\\nb": must not contain line breaks`,
    `${v(3)}.message: Required value: message must be specified if rule contains line breaks`,
    `${
      v(4)
    }.reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
    `${v(5)}.fieldPath: Invalid value: ".missing": must be a valid path`,
    `${v(6)}.optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`,
    `${
      v(7)
    }.messageExpression: Invalid value: {"rule":"self.n > 0","messageExpression":"self.n"}: messageExpression must evaluate to a string`,
    `${v(8)}.messageExpression: Required value: messageExpression must be non-empty if specified`,
    `${p}.properties[list].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": ` +
    `oldSelf cannot be used on the uncorrelatable portion of the schema within ${p}.properties[list]`,
  ]);
});

Deno.test("rules: estimated costs over the limits refuse the CRD", () => {
  const unbounded = root({
    type: "object",
    properties: {
      names: {
        type: "array",
        items: { type: "string" },
        ...rules({ rule: "self.all(x, self.all(y, x == y || x != y))" }),
      },
      bounded: {
        type: "array",
        maxItems: 10,
        items: { type: "string", maxLength: 10 },
        ...rules({ rule: "self.all(x, self.all(y, x == y || x != y))" }),
      },
    },
  });
  assert.deepEqual(writeErrors(unbounded), [
    `${AT}.properties[spec].properties[names].x-kubernetes-validations[0].rule: Forbidden: ` +
    costErrorMessage("estimated rule cost", 2e11, 1e7),
    `${AT}.properties[spec].properties[names].x-kubernetes-validations[0].rule: Forbidden: ` +
    "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
    // The most expensive rules are named, also those within the limit on their own.
    `${AT}.properties[spec].properties[bounded].x-kubernetes-validations[0].rule: Forbidden: ` +
    "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
    `${AT}: Forbidden: ` +
    costErrorMessage(
      "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
      2e11,
      1e8,
    ),
  ]);
  assert.match(costErrorMessage("x", 2e11, 1e7), /exceeds budget by factor of more than 100x/);
  assert.match(costErrorMessage("x", 1.2e7, 1e7), /factor of 1\.200000x/);
  assert.match(costErrorMessage("x", 3e7, 1e7), /factor of 3\.0x/);
});

Deno.test("rules: the runtime limits stop rules the estimate could not bound", () => {
  // Preserved unknown fields have no declared size: the estimate passes, evaluation does not.
  const rule = "self.all(x, self.all(y, self.all(z, x != 'q')))";
  const perCall = root({
    type: "object",
    properties: {
      names: { type: "array", items: { "x-kubernetes-preserve-unknown-fields": true } },
      dyn: { "x-kubernetes-preserve-unknown-fields": true, ...rules({ rule }) },
    },
  });
  const names = Array.from({ length: 200 }, (_, i) => String(i));
  assert.deepEqual(check(perCall, { spec: { dyn: names } }), [
    `spec.dyn: Invalid value: "": 'operation cancelled: actual cost limit exceeded': ` +
    `no further validation rules will be run due to call cost exceeds limit for rule: ${rule}`,
  ]);
  // Each item's rule is within the per-call limit; together they exceed the object's budget.
  const total = root({
    type: "object",
    properties: {
      items: {
        type: "array",
        maxItems: 100,
        items: {
          "x-kubernetes-preserve-unknown-fields": true,
          ...rules({ rule: "self.all(x, self.all(y, x != 'q'))" }),
        },
      },
    },
  });
  const item = Array.from({ length: 250 }, (_, i) => String(i));
  assert.deepEqual(check(total, { spec: { items: Array(100).fill(item) } }), [
    `spec.items[${
      Math.floor(10_000_000 / costOfOne(item))
    }]: Invalid value: "": validation failed due to running out of cost budget, no further validation rules will be run`,
  ]);
});

/** What the per-item rule of the budget test costs on one item (measured, not assumed). */
function costOfOne(item: string[]): number {
  const rule = compile("crdRule", "self.all(x, self.all(y, x != 'q'))", { expect: "bool" });
  return rule.evaluateWithCost({ self: item, oldSelf: null }).cost;
}

Deno.test("rules: a value of the wrong type or a missing required field stops the rules", () => {
  const schema = root({
    type: "object",
    properties: { n: { type: "integer" } },
    ...rules({ rule: "self.n > 0" }),
  });
  const required = root({
    type: "object",
    required: ["n"],
    properties: { n: { type: "integer" } },
    ...rules({ rule: "self.n > 0" }),
  });
  assert.deepEqual(check(required, { spec: { n: 1 } }), []);
  assert.deepEqual(check(required, { spec: {} }), [
    '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
  ]);
  assert.deepEqual(check(schema, { spec: { n: "x" } }), [
    '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
  ]);
});

Deno.test("rules: inside allOf, anyOf, oneOf and not they are refused as kube refuses them", () => {
  const nested = { "x-kubernetes-validations": [{ rule: "self > 0" }] };
  assert.deepEqual(
    writeErrors(root({ type: "integer", allOf: [nested, { anyOf: [nested] }], not: nested })),
    [
      `${AT}.properties[spec].allOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural`,
      `${AT}.properties[spec].allOf[1].anyOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural`,
      `${AT}.properties[spec].not.x-kubernetes-validations: Forbidden: must be empty to be structural`,
    ],
  );
});

Deno.test("rules: fieldPath names fields and map keys, quoted or not", () => {
  const spec = {
    type: "object",
    properties: {
      labels: { type: "object", additionalProperties: { type: "string" } },
      "odd.name": { type: "object", properties: { x: { type: "integer" } } },
    },
    ...rules(
      { rule: "!('app' in self.labels) || self.labels.app != ''", fieldPath: ".labels['app']" },
      { rule: "self.odd__dot__name.x > 0", fieldPath: "['odd.name'].x" },
      { rule: "true", fieldPath: ".labels.app.more" },
      { rule: "true", fieldPath: ".labels[0]" },
    ),
  };
  const p = `${AT}.properties[spec].x-kubernetes-validations`;
  assert.deepEqual(writeErrors(root(spec)), [
    `${p}[2].fieldPath: Invalid value: ".labels.app.more": must be a valid path`,
    `${p}[3].fieldPath: Invalid value: ".labels[0]": must be a valid path`,
  ]);
  spec["x-kubernetes-validations"].splice(2);
  assert.deepEqual(check(root(spec), { spec: { labels: { app: "" }, "odd.name": { x: 0 } } }), [
    "spec.labels[app]: Invalid value: \"object\": failed rule: !('app' in self.labels) || self.labels.app != ''",
    'spec.odd.name.x: Invalid value: "object": failed rule: self.odd__dot__name.x > 0',
  ]);
});

Deno.test("rules: formatted strings are timestamps, durations and bytes", () => {
  const schema = root({
    type: "object",
    properties: {
      start: { type: "string", format: "date-time" },
      day: { type: "string", format: "date" },
      timeout: { type: "string", format: "duration" },
      data: { type: "string", format: "byte" },
    },
    ...rules(
      { rule: "self.start < timestamp('2030-01-01T00:00:00Z')", message: "start before 2030" },
      { rule: "self.day.getFullYear() == 2026", message: "day in 2026" },
      { rule: "self.timeout <= duration('1h')", message: "timeout at most 1h" },
      { rule: "size(self.data) == 3", message: "three bytes" },
    ),
  });
  const ok = { start: "2026-11-27T10:00:00Z", day: "2026-11-27", timeout: "30m", data: "YWJj" };
  assert.deepEqual(check(schema, { spec: ok }), []);
  assert.deepEqual(
    check(schema, {
      spec: { start: "2031-01-01T00:00:00Z", day: "2025-01-01", timeout: "2h", data: "YQ==" },
    }),
    [
      'spec: Invalid value: "object": start before 2030',
      'spec: Invalid value: "object": day in 2026',
      'spec: Invalid value: "object": timeout at most 1h',
      'spec: Invalid value: "object": three bytes',
    ],
  );
});
