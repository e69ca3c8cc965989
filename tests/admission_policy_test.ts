/**
 * ValidatingAdmissionPolicy end to end: a policy and its binding written over HTTPS take effect
 * for the next request; params come from a ConfigMap; Warn reaches the client's Warning header.
 */

import { assert, assertEquals } from "./assert.ts";
import { type TestServer, testServer } from "./harness.ts";

const GROUP_PATH = "/apis/admissionregistration.platform.io/v1";
const CONFIGMAPS = "/api/v1/namespaces/default/configmaps";

Deno.test("admission policy: a policy with params denies over the limit, warns where bound to Warn", async () => {
  await using ts = await testServer();
  const limits = await ts.json("POST", CONFIGMAPS, {
    body: { metadata: { name: "limits", labels: { role: "limits" } }, data: { max: "2" } },
  });
  assertEquals(limits.status, 201);
  const policy = await ts.json("POST", `${GROUP_PATH}/validatingadmissionpolicies`, {
    body: {
      metadata: { name: "max-keys" },
      spec: {
        paramKind: { apiVersion: "v1", kind: "ConfigMap" },
        matchConstraints: {
          resourceRules: [{
            operations: ["CREATE", "UPDATE"],
            apiGroups: [""],
            apiVersions: ["v1"],
            resources: ["configmaps"],
          }],
        },
        matchConditions: [{
          name: "not-the-params",
          expression: "object.metadata.name != 'limits'",
        }],
        variables: [{ name: "keys", expression: "has(object.data) ? size(object.data) : 0" }],
        validations: [{
          expression: "variables.keys <= int(params.data.max)",
          messageExpression:
            "'at most ' + params.data.max + ' keys, not ' + string(variables.keys)",
        }],
      },
    },
  });
  assertEquals(policy.status, 201, JSON.stringify(policy.body));
  assertEquals(policy.body.spec.failurePolicy, "Fail");
  // The status controller type-checks it against ConfigMap's schema: nothing to say.
  assertEquals((await policyStatus(ts, "max-keys")).typeChecking, { expressionWarnings: [] });
  const binding = await ts.json("POST", `${GROUP_PATH}/validatingadmissionpolicybindings`, {
    body: {
      metadata: { name: "max-keys-default" },
      spec: {
        policyName: "max-keys",
        paramRef: { name: "limits", namespace: "default" },
        validationActions: ["Deny"],
        matchResources: {
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "default" } },
        },
      },
    },
  });
  assertEquals(binding.status, 201, JSON.stringify(binding.body));
  const three = await ts.json("POST", CONFIGMAPS, {
    body: { metadata: { name: "three" }, data: { a: "1", b: "2", c: "3" } },
  });
  assertEquals(three.status, 422);
  assertEquals(
    three.body.message,
    "ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-default' denied request: at most 2 keys, not 3",
  );
  assertEquals(
    (await ts.json("POST", CONFIGMAPS, {
      body: { metadata: { name: "two" }, data: { a: "1", b: "2" } },
    }))
      .status,
    201,
  );
  // Other namespaces are not bound.
  assertEquals(
    (await ts.json("POST", "/api/v1/namespaces/platform-public/configmaps", {
      body: { metadata: { name: "three" }, data: { a: "1", b: "2", c: "3" } },
    })).status,
    201,
  );
  // The same binding switched to Warn: allowed, and the client is told.
  const current =
    (await ts.json("GET", `${GROUP_PATH}/validatingadmissionpolicybindings/max-keys-default`)).body;
  current.spec.validationActions = ["Warn"];
  assertEquals(
    (await ts.json("PUT", `${GROUP_PATH}/validatingadmissionpolicybindings/max-keys-default`, {
      body: current,
    }))
      .status,
    200,
  );
  const res = await ts.request("POST", CONFIGMAPS, {
    body: { metadata: { name: "four" }, data: { a: "1", b: "2", c: "3", d: "4" } },
  });
  assertEquals(res.status, 201);
  await res.arrayBuffer();
  const warning = res.headers.get("warning") ?? "";
  assert(
    warning.includes(
      "Validation failed for ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-default': at most 2 keys, not 4",
    ),
    warning,
  );
});

/** A policy's status once the controller has seen its generation. */
async function policyStatus(ts: TestServer, name: string) {
  for (let i = 0; i < 100; i++) {
    const p = (await ts.json("GET", `${GROUP_PATH}/validatingadmissionpolicies/${name}`)).body;
    if (p.status?.observedGeneration === p.metadata.generation) return p.status;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the status of ${name} never caught up`);
}

Deno.test("admission policy: status.typeChecking warns about fields the matched kind does not have", async () => {
  await using ts = await testServer();
  const made = await ts.json("POST", `${GROUP_PATH}/validatingadmissionpolicies`, {
    body: {
      metadata: { name: "replicas" },
      spec: {
        matchConstraints: {
          resourceRules: [{
            operations: ["CREATE"],
            apiGroups: [""],
            apiVersions: ["v1"],
            resources: ["configmaps"],
          }],
        },
        validations: [{ expression: "object.spec.replicas <= 3" }],
      },
    },
  });
  assertEquals(made.status, 201, JSON.stringify(made.body));
  const status = await policyStatus(ts, "replicas");
  assertEquals(status.observedGeneration, 1);
  assertEquals(status.typeChecking.expressionWarnings.length, 1);
  assertEquals(
    status.typeChecking.expressionWarnings[0].fieldRef,
    "spec.validations[0].expression",
  );
  assert(
    status.typeChecking.expressionWarnings[0].warning.startsWith(
      "v1, Kind=ConfigMap: ERROR: undefined field 'spec'",
    ),
    status.typeChecking.expressionWarnings[0].warning,
  );
});
