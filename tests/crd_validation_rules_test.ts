// deno-lint-ignore-file no-explicit-any
/**
 * CRD validation rules (`x-kubernetes-validations`) over real HTTPS and with the real kubectl:
 * a CRD whose rule cannot work is refused with a 422 naming the rule's field; custom resources
 * that break a rule are refused with the rule's message (create, update, transition rules, the
 * status subresource); `kubectl apply` shows that message.
 */

import assert from "node:assert/strict";
import { type KubectlEnv, kubectlEnv, kubectlInstalled } from "./kubectl.ts";

const CRDS = "/apis/apiextensions.platform.io/v1/customresourcedefinitions";
const GIZMOS = "/apis/rules.example.com/v1/namespaces/default/gizmos";

const crd = (schema: any, name = "gizmos") => ({
  apiVersion: "apiextensions.platform.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${name}.rules.example.com` },
  spec: {
    group: "rules.example.com",
    scope: "Namespaced",
    names: { plural: name, kind: name === "gizmos" ? "Gizmo" : "Other" },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      subresources: { status: {} },
      schema: { openAPIV3Schema: schema },
    }],
  },
});

/** The Gizmo schema: five rules of every kind. */
const GIZMO_SCHEMA = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        replicas: { type: "integer" },
        maxReplicas: { type: "integer" },
        mode: {
          type: "string",
          "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "mode is immutable" }],
        },
        tags: {
          type: "array",
          maxItems: 20,
          "x-kubernetes-list-type": "set",
          items: { type: "string", maxLength: 32 },
        },
      },
      "x-kubernetes-validations": [
        {
          rule: "self.replicas <= self.maxReplicas",
          message: "replicas must not exceed maxReplicas",
        },
        {
          rule: "self.replicas >= 0",
          messageExpression: "'replicas is ' + string(self.replicas) + ', must be at least 0'",
          fieldPath: ".replicas",
        },
        { rule: "!has(self.tags) || !('forbidden' in self.tags)", reason: "FieldValueForbidden" },
      ],
    },
    status: {
      type: "object",
      properties: { ready: { type: "integer" } },
      "x-kubernetes-validations": [{ rule: "self.ready >= 0", message: "ready counts pods" }],
    },
  },
};

async function api(env: KubectlEnv, method: string, path: string, body?: unknown) {
  const client = Deno.createHttpClient({ caCerts: [env.server.caCertPem] });
  try {
    const res = await fetch(env.server.url + path, {
      method,
      client,
      headers: {
        Authorization: `Bearer ${env.server.adminToken}`,
        "Content-Type": "application/json",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json(), warning: res.headers.get("warning") };
  } finally {
    client.close();
  }
}

const gizmo = (name: string, spec: any) => ({
  apiVersion: "rules.example.com/v1",
  kind: "Gizmo",
  metadata: { name, namespace: "default" },
  spec,
});

Deno.test({
  name: "validation rules: CRDs refused at write time, objects refused with the rule's message",
  ignore: !kubectlInstalled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  await using env = await kubectlEnv();

  await t.step("a rule that does not compile refuses the CRD with a 422 naming it", async () => {
    const bad = structuredClone(GIZMO_SCHEMA);
    bad.properties.spec["x-kubernetes-validations"][0].rule = "self.replica <= self.maxReplicas";
    const res = await api(env, "POST", CRDS, crd(bad));
    assert.equal(res.status, 422);
    assert.equal(res.body.reason, "Invalid");
    const field =
      "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule";
    assert.deepEqual(res.body.details.causes.map((c: any) => c.field), [field]);
    assert.match(
      res.body.message,
      /compilation failed: ERROR: <input>:1:5: undefined field 'replica' of object\n \| self\.replica <= self\.maxReplicas\n \| \.\.\.\.\^/,
    );
  });

  await t.step("a rule whose estimated cost is too high refuses the CRD", async () => {
    const costly = {
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: { names: { type: "array", items: { type: "string" } } },
          "x-kubernetes-validations": [{
            rule: "self.names.all(x, self.names.all(y, x == y || x != y))",
          }],
        },
      },
    };
    const res = await api(env, "POST", CRDS, crd(costly, "others"));
    assert.equal(res.status, 422);
    const fields = res.body.details.causes.map((c: any) => c.field);
    assert.ok(
      fields.includes(
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule",
      ),
    );
    assert.match(
      res.body.message,
      /estimated rule cost exceeds budget by factor of more than 100x \(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared\)/,
    );
  });

  await t.step("the CRD with working rules is established", async () => {
    assert.equal((await api(env, "POST", CRDS, crd(GIZMO_SCHEMA))).status, 201);
    await env.ok([
      "wait",
      "--for=condition=Established",
      "crd/gizmos.rules.example.com",
      "--timeout=20s",
    ]);
  });

  await t.step("creates are refused with each rule's message", async () => {
    const ok = await api(env, "POST", GIZMOS, gizmo("g1", { replicas: 1, maxReplicas: 3 }));
    assert.equal(ok.status, 201);
    const res = await api(
      env,
      "POST",
      GIZMOS,
      gizmo("g2", { replicas: -5, maxReplicas: -6, tags: ["a", "forbidden"] }),
    );
    assert.equal(res.status, 422);
    assert.equal(
      res.body.message,
      'Gizmo.rules.example.com "g2" is invalid: [' +
        'spec: Invalid value: "object": replicas must not exceed maxReplicas, ' +
        'spec.replicas: Invalid value: "object": replicas is -5, must be at least 0, ' +
        "spec: Forbidden: failed rule: !has(self.tags) || !('forbidden' in self.tags)]",
    );
    assert.deepEqual(res.body.details.causes.map((c: any) => [c.reason, c.field]), [
      ["FieldValueInvalid", "spec"],
      ["FieldValueInvalid", "spec.replicas"],
      ["FieldValueForbidden", "spec"],
    ]);
  });

  await t.step("a transition rule refuses the update, not the create", async () => {
    const created = await api(
      env,
      "POST",
      GIZMOS,
      gizmo("g3", { replicas: 1, maxReplicas: 2, mode: "fast" }),
    );
    assert.equal(created.status, 201);
    const changed = structuredClone(created.body);
    changed.spec.mode = "slow";
    const res = await api(env, "PUT", `${GIZMOS}/g3`, changed);
    assert.equal(res.status, 422);
    assert.equal(
      res.body.message,
      'Gizmo.rules.example.com "g3" is invalid: spec.mode: Invalid value: "string": mode is immutable',
    );
  });

  await t.step("the status subresource is checked by the status rules", async () => {
    const current = (await api(env, "GET", `${GIZMOS}/g1`)).body;
    const res = await api(env, "PUT", `${GIZMOS}/g1/status`, { ...current, status: { ready: -1 } });
    assert.equal(res.status, 422);
    assert.equal(
      res.body.message,
      'Gizmo.rules.example.com "g1" is invalid: status: Invalid value: "object": ready counts pods',
    );
    const fine = await api(env, "PUT", `${GIZMOS}/g1/status`, { ...current, status: { ready: 2 } });
    assert.equal(fine.status, 200);
  });

  await t.step(
    "a rule added later does not refuse updates that leave the value alone",
    async () => {
      // g1 has replicas 1; a new rule wants at least 2.
      const current = (await api(env, "GET", `${CRDS}/gizmos.rules.example.com`)).body;
      const schema = current.spec.versions[0].schema.openAPIV3Schema;
      schema.properties.spec.properties.replicas["x-kubernetes-validations"] = [
        { rule: "self >= 2", message: "at least 2 replicas" },
      ];
      assert.equal(
        (await api(env, "PUT", `${CRDS}/gizmos.rules.example.com`, current)).status,
        200,
      );
      let res: { status: number; body: any; warning: string | null } | undefined;
      // The CRD is served again with the new rule shortly after the update.
      for (let i = 0; i < 100; i++) {
        const g1 = (await api(env, "GET", `${GIZMOS}/g1`)).body;
        g1.spec.replicas = 0;
        res = await api(env, "PUT", `${GIZMOS}/g1?dryRun=All`, g1);
        if (res.status === 422) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(res!.status, 422);
      assert.match(
        res!.body.message,
        /spec\.replicas: Invalid value: "integer": at least 2 replicas/,
      );
      const g1 = (await api(env, "GET", `${GIZMOS}/g1`)).body;
      g1.spec.maxReplicas = 4;
      const kept = await api(env, "PUT", `${GIZMOS}/g1`, g1);
      assert.equal(kept.status, 200);
      assert.equal(
        kept.warning,
        '299 - "spec.replicas: Invalid value: \\"integer\\": at least 2 replicas"',
      );
    },
  );

  await t.step("kubectl apply of a bad object shows the rule's message", async () => {
    const yaml = `apiVersion: rules.example.com/v1
kind: Gizmo
metadata: {name: g4, namespace: default}
spec: {replicas: 9, maxReplicas: 3}
`;
    const run = await env.kubectl(["apply", "-f", "-"], yaml);
    assert.notEqual(run.code, 0);
    assert.match(
      run.stderr,
      /The Gizmo "g4" is invalid: spec: Invalid value: "object": replicas must not exceed maxReplicas/,
    );
    assert.match(
      await env.ok(["apply", "-f", "-"], yaml.replace("replicas: 9", "replicas: 2")),
      /^gizmo.rules.example.com\/g4 created\n$/,
    );
  });
});
