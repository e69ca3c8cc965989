// deno-lint-ignore-file no-explicit-any
/**
 * CEL's optional syntax in a CustomResourceDefinition's validation rules over real HTTPS: a
 * rule with `self.?spec.?replicas.orValue(…)` holds for objects without the field and checks
 * those with it; a rule naming a field the schema does not have is refused at CRD write.
 */

import assert from "node:assert/strict";
import { type TestServer, testServer } from "./harness.ts";

const CRDS = "/apis/apiextensions.platform.io/v1/customresourcedefinitions";
const GADGETS = "/apis/opt.example.com/v1/namespaces/default/gadgets";

function gadgetsCrd(rules: unknown[]): any {
  return {
    apiVersion: "apiextensions.platform.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "gadgets.opt.example.com" },
    spec: {
      group: "opt.example.com",
      scope: "Namespaced",
      names: { plural: "gadgets", singular: "gadget", kind: "Gadget", listKind: "GadgetList" },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            "x-kubernetes-validations": rules,
            properties: {
              spec: {
                type: "object",
                properties: {
                  replicas: { type: "integer" },
                  maxReplicas: { type: "integer" },
                  labels: { type: "object", additionalProperties: { type: "string" } },
                },
              },
            },
          },
        },
      }],
    },
  };
}

async function served(t: TestServer): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await t.json("GET", GADGETS)).status === 200) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("gadgets never served");
}

const gadget = (name: string, spec?: unknown) => ({
  apiVersion: "opt.example.com/v1",
  kind: "Gadget",
  metadata: { name },
  ...(spec === undefined ? {} : { spec }),
});

Deno.test("crd rules: the optional syntax checks fields only where they are set", async () => {
  await using t = await testServer();
  const res = await t.json("POST", CRDS, {
    body: gadgetsCrd([
      {
        rule: "self.?spec.?replicas.orValue(1) <= self.?spec.?maxReplicas.orValue(10)",
        message: "replicas must not exceed maxReplicas",
      },
      { rule: "self.?spec.?labels[?'tier'].orValue('web') != 'forbidden'", message: "bad tier" },
    ]),
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  await served(t);

  // No spec, no replicas, no labels: every optional is none and the defaults hold.
  for (const [name, spec] of [["empty", undefined], ["bare", {}], ["fits", { replicas: 10 }]]) {
    const made = await t.json("POST", GADGETS, { body: gadget(name as string, spec) });
    assert.equal(made.status, 201, `${name}: ${JSON.stringify(made.body)}`);
  }
  let bad = await t.json("POST", GADGETS, { body: gadget("big", { replicas: 11 }) });
  assert.equal(bad.status, 422, JSON.stringify(bad.body));
  assert.equal(
    bad.body.message,
    'Gadget.opt.example.com "big" is invalid: <nil>: Invalid value: "object": ' +
      "replicas must not exceed maxReplicas",
  );
  const raised = await t.json("POST", GADGETS, {
    body: gadget("raised", { replicas: 11, maxReplicas: 20, labels: { tier: "db" } }),
  });
  assert.equal(raised.status, 201, JSON.stringify(raised.body));
  bad = await t.json("POST", GADGETS, {
    body: gadget("tier", { labels: { tier: "forbidden" } }),
  });
  assert.equal(bad.status, 422, JSON.stringify(bad.body));
  assert.match(bad.body.message, /<nil>: Invalid value: "object": bad tier$/);
});

Deno.test("crd rules: an optional selection of a field the schema lacks is refused", async () => {
  await using t = await testServer();
  const res = await t.json("POST", CRDS, {
    body: gadgetsCrd([{ rule: "self.?spec.?nope.hasValue()" }]),
  });
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.match(res.body.message, /compilation failed: ERROR: <input>:1:11: undefined field 'nope'/);
});
