// deno-lint-ignore-file no-explicit-any
/**
 * Protobuf over HTTP for every built-in kind this server serves: a protobuf create answers in
 * protobuf what a JSON GET shows, and a protobuf GET and list decode to the JSON ones.
 */

import { assertEquals } from "./assert.ts";
import { testServer, WITHOUT_POLICY_STATUS } from "./harness.ts";
import { decodeObject, encodeObject } from "../lib/codec/mod.ts";

const PB = "application/vnd.platform.protobuf";

/** One object per kind, with the collection it is created in. */
const KINDS: { path: string; obj: any }[] = [
  {
    path: "/api/v1/namespaces",
    obj: { apiVersion: "v1", kind: "Namespace", metadata: { name: "pbns" } },
  },
  {
    path: "/api/v1/namespaces/default/configmaps",
    obj: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "pbcm" }, data: { a: "1" } },
  },
  {
    path: "/api/v1/namespaces/default/secrets",
    obj: {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "pbs" },
      type: "Opaque",
      data: { a: "MQ==" },
    },
  },
  {
    path: "/api/v1/namespaces/default/serviceaccounts",
    obj: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "pbsa" } },
  },
  {
    // Every IntOrString form (a number, a name) and the allocated cluster IP and node ports.
    path: "/api/v1/namespaces/default/services",
    obj: {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "pbsvc" },
      spec: {
        type: "NodePort",
        selector: { app: "pb" },
        ports: [
          { name: "http", port: 80, targetPort: 8080 },
          { name: "named", port: 81, targetPort: "web", appProtocol: "http" },
        ],
        sessionAffinity: "ClientIP",
      },
    },
  },
  {
    path: "/api/v1/namespaces/default/events",
    obj: {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "pbev" },
      involvedObject: { kind: "ConfigMap", name: "pbcm", namespace: "default" },
      reason: "Tested",
      message: "protobuf",
      type: "Normal",
    },
  },
  {
    path: "/apis/events.platform.io/v1/namespaces/default/events",
    obj: {
      apiVersion: "events.platform.io/v1",
      kind: "Event",
      metadata: { name: "pbev2" },
      eventTime: "2026-01-01T00:00:00.000000Z",
      regarding: { kind: "ConfigMap", name: "pbcm", namespace: "default" },
      action: "Test",
      reason: "Tested",
      reportingController: "example.com/test",
      reportingInstance: "test-1",
      type: "Normal",
    },
  },
  {
    path: "/apis/coordination.platform.io/v1/namespaces/default/leases",
    obj: {
      apiVersion: "coordination.platform.io/v1",
      kind: "Lease",
      metadata: { name: "pbl" },
      spec: { holderIdentity: "me", leaseDurationSeconds: 15 },
    },
  },
  {
    path: "/apis/rbac.authorization.platform.io/v1/namespaces/default/roles",
    obj: {
      apiVersion: "rbac.authorization.platform.io/v1",
      kind: "Role",
      metadata: { name: "pbr" },
      rules: [{ verbs: ["get"], apiGroups: [""], resources: ["configmaps"], resourceNames: ["a"] }],
    },
  },
  {
    path: "/apis/rbac.authorization.platform.io/v1/clusterroles",
    obj: {
      apiVersion: "rbac.authorization.platform.io/v1",
      kind: "ClusterRole",
      metadata: { name: "pbcr" },
      rules: [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }],
    },
  },
  {
    path: "/apis/rbac.authorization.platform.io/v1/namespaces/default/rolebindings",
    obj: {
      apiVersion: "rbac.authorization.platform.io/v1",
      kind: "RoleBinding",
      metadata: { name: "pbrb" },
      roleRef: { apiGroup: "rbac.authorization.platform.io", kind: "Role", name: "pbr" },
      subjects: [{ kind: "ServiceAccount", name: "pbsa", namespace: "default" }],
    },
  },
  {
    path: "/apis/rbac.authorization.platform.io/v1/clusterrolebindings",
    obj: {
      apiVersion: "rbac.authorization.platform.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "pbcrb" },
      roleRef: { apiGroup: "rbac.authorization.platform.io", kind: "ClusterRole", name: "pbcr" },
      subjects: [{ kind: "Group", apiGroup: "rbac.authorization.platform.io", name: "g" }],
    },
  },
  {
    // RuleWithOperations embeds its Rule inline; the defaults fill the pointer fields.
    path: "/apis/admissionregistration.platform.io/v1/validatingwebhookconfigurations",
    obj: {
      apiVersion: "admissionregistration.platform.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "pbvwc" },
      webhooks: [{
        name: "check.pb.example.com",
        clientConfig: { service: { namespace: "default", name: "hook", path: "/v" } },
        rules: [{
          operations: ["CREATE"],
          apiGroups: [""],
          apiVersions: ["v1"],
          resources: ["configmaps"],
        }],
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        matchConditions: [{ name: "not-system", expression: "request.name != 'x'" }],
      }],
    },
  },
  {
    path: "/apis/admissionregistration.platform.io/v1/mutatingwebhookconfigurations",
    obj: {
      apiVersion: "admissionregistration.platform.io/v1",
      kind: "MutatingWebhookConfiguration",
      metadata: { name: "pbmwc" },
      webhooks: [{
        name: "mutate.pb.example.com",
        clientConfig: { url: "https://hook.example.com/m" },
        sideEffects: "NoneOnDryRun",
        admissionReviewVersions: ["v1"],
      }],
    },
  },
  {
    path: "/apis/admissionregistration.platform.io/v1/validatingadmissionpolicies",
    obj: {
      apiVersion: "admissionregistration.platform.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name: "pbvap" },
      spec: {
        paramKind: { apiVersion: "v1", kind: "ConfigMap" },
        matchConstraints: {
          resourceRules: [{
            operations: ["*"],
            apiGroups: ["apps"],
            apiVersions: ["v1"],
            resources: ["deployments"],
          }],
        },
        validations: [{ expression: "object.spec.replicas < 5", reason: "Forbidden" }],
      },
    },
  },
  {
    path: "/apis/admissionregistration.platform.io/v1/validatingadmissionpolicybindings",
    obj: {
      apiVersion: "admissionregistration.platform.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name: "pbvapb" },
      spec: {
        policyName: "pbvap",
        paramRef: { name: "limits", namespace: "default" },
        validationActions: ["Deny", "Audit"],
      },
    },
  },
];

Deno.test("protobuf: every built-in kind is created, read and listed in protobuf", async (t) => {
  // Objects are read back as written: no controller may write a policy's status meanwhile.
  await using ts = await testServer({ controllers: WITHOUT_POLICY_STATUS });
  const client = Deno.createHttpClient({ caCerts: [ts.server.caCertPem] });
  try {
    for (const { path, obj } of KINDS) {
      await t.step(`${obj.apiVersion} ${obj.kind}`, async () => {
        const created = await fetch(ts.server.url + path, {
          method: "POST",
          body: encodeObject(obj) as Uint8Array<ArrayBuffer>,
          client,
          headers: {
            Authorization: `Bearer ${ts.server.adminToken}`,
            "Content-Type": PB,
            Accept: PB,
          },
        });
        const bytes = new Uint8Array(await created.arrayBuffer());
        assertEquals(created.status, 201, new TextDecoder().decode(bytes));
        assertEquals(created.headers.get("content-type"), PB);
        const answered = withoutEmptyStructs(decodeObject(bytes));
        const json = await ts.json("GET", `${path}/${obj.metadata.name}`);
        json.body = withoutEmptyStructs(json.body);
        assertEquals(answered, json.body);

        const got = await ts.request("GET", `${path}/${obj.metadata.name}`, {
          headers: { Accept: PB },
        });
        assertEquals(
          withoutEmptyStructs(decodeObject(new Uint8Array(await got.arrayBuffer()))),
          json.body,
        );
        const list = await ts.request("GET", path, { headers: { Accept: PB } });
        const decoded = decodeObject(new Uint8Array(await list.arrayBuffer())) as any;
        decoded.items = decoded.items.map(withoutEmptyStructs);
        const jsonList = (await ts.json("GET", path)).body;
        // Items of a protobuf list carry no apiVersion and kind (the list's type says them).
        jsonList.items = jsonList.items.map((item: any) => {
          delete item.apiVersion;
          delete item.kind;
          return withoutEmptyStructs(item);
        });
        assertEquals(decoded, jsonList);
      });
    }
  } finally {
    client.close();
  }
});

/** Protobuf always carries Go's value structs (events' `deprecatedSource`), empty when unset;
 * JSON leaves them out. Drop top-level empty objects to compare the two. */
function withoutEmptyStructs(obj: unknown): any {
  const out: any = { ...(obj as object) };
  for (const [k, v] of Object.entries(out)) {
    if (v && typeof v === "object" && !Array.isArray(v) && !Object.keys(v).length) delete out[k];
  }
  return out;
}

Deno.test("protobuf: CustomResourceDefinitions are created, read and listed in protobuf", async () => {
  await using ts = await testServer();
  const path = "/apis/apiextensions.platform.io/v1/customresourcedefinitions";
  const crd = {
    apiVersion: "apiextensions.platform.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "things.pb.example.com" },
    spec: {
      group: "pb.example.com",
      scope: "Namespaced",
      names: { plural: "things", kind: "Thing" },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                properties: {
                  size: { type: "integer", minimum: 1, default: 3 },
                  mode: { type: "string", enum: ["a", "b"] },
                  tags: { type: "array", items: { type: "string" } },
                },
              },
            },
          },
        },
      }],
    },
  };
  const client = Deno.createHttpClient({ caCerts: [ts.server.caCertPem] });
  const created = await fetch(ts.server.url + path, {
    method: "POST",
    body: encodeObject(crd) as Uint8Array<ArrayBuffer>,
    client,
    headers: { Authorization: `Bearer ${ts.server.adminToken}`, "Content-Type": PB, Accept: PB },
  });
  client.close();
  const bytes = new Uint8Array(await created.arrayBuffer());
  assertEquals(created.status, 201, new TextDecoder().decode(bytes));
  const answered = decodeObject(bytes) as any;
  assertEquals(answered.spec.versions[0].schema, crd.spec.versions[0].schema);
  assertEquals(answered.spec.names.plural, "things");

  const json = (await ts.json("GET", `${path}/${crd.metadata.name}`)).body;
  const got = await ts.request("GET", `${path}/${crd.metadata.name}`, { headers: { Accept: PB } });
  const fromPb = decodeObject(new Uint8Array(await got.arrayBuffer())) as any;
  assertEquals(fromPb.spec, json.spec);
  assertEquals(fromPb.metadata.uid, json.metadata.uid);
  const list = await ts.request("GET", path, { headers: { Accept: PB } });
  const decoded = decodeObject(new Uint8Array(await list.arrayBuffer())) as any;
  assertEquals(decoded.kind, "CustomResourceDefinitionList");
  assertEquals(decoded.items.map((i: any) => i.metadata.name), [crd.metadata.name]);
});
