import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { ALL_VERBS, type ResourceDefinition } from "../../registry/definition.ts";
import { SchemaSet } from "../../schema/schema_set.ts";
import { groupCamel, tagOf } from "./names.ts";
import { PATCH_MEDIA } from "./model.ts";
import { operationsFor } from "./operations.ts";
import { OpenAPIService } from "./service.ts";

// ---- sample definitions (the real ones live in lib/resources/) ----

function def(
  group: string,
  kind: string,
  plural: string,
  schema: string,
  extra: Partial<ResourceDefinition> & { deleteReturnsObject?: boolean } = {},
): ResourceDefinition {
  return {
    group,
    version: "v1",
    kind,
    plural,
    singular: kind.toLowerCase(),
    namespaced: true,
    verbs: ALL_VERBS,
    schema,
    ...extra,
  };
}

const DEFS: ResourceDefinition[] = [
  def("", "Namespace", "namespaces", "io.k8s.api.core.v1.Namespace", {
    namespaced: false,
    verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
    subresources: ["status", "finalize"],
  }),
  def("", "ConfigMap", "configmaps", "io.k8s.api.core.v1.ConfigMap"),
  def("", "Secret", "secrets", "io.k8s.api.core.v1.Secret"),
  def("", "ServiceAccount", "serviceaccounts", "io.k8s.api.core.v1.ServiceAccount", {
    subresources: ["token"],
    deleteReturnsObject: true,
  }),
  def("", "Event", "events", "io.k8s.api.core.v1.Event"),
  def("coordination.platform.io", "Lease", "leases", "io.k8s.api.coordination.v1.Lease"),
  def("events.platform.io", "Event", "events", "io.k8s.api.events.v1.Event"),
  def(
    "certificates.platform.io",
    "CertificateSigningRequest",
    "certificatesigningrequests",
    "io.k8s.api.certificates.v1.CertificateSigningRequest",
    { namespaced: false, subresources: ["status", "approval"] },
  ),
];

const schemas = SchemaSet.builtin();
const service = new OpenAPIService(DEFS, schemas);

// deno-lint-ignore no-explicit-any
type Json = any;

function doc(path: string): Json {
  const d = service.document(path);
  assert.ok(d, `document ${path}`);
  return JSON.parse(d.body);
}

// ---- Kubernetes' documents (testdata/k8s-openapi) ----

const KUBE_DIR = new URL("../../../testdata/k8s-openapi/", import.meta.url);

function kubeDoc(file: string): Json {
  const text = Deno.readTextFileSync(new URL(file, KUBE_DIR));
  // Rename groups only (GVK entries and /apis/<group>/ routes), never descriptions.
  return JSON.parse(
    text
      .replace(/("group":\s*"[^"]*?)k8s\.io"/g, '$1platform.io"')
      .replace(/(\/apis\/[^/"]*?)k8s\.io\//g, "$1platform.io/"),
  );
}

/** The resource a route is about: `/api/v1/watch/namespaces/{namespace}/configmaps/{name}`
 * -> `configmaps`; `/api/v1/namespaces/{name}/status` -> `namespaces`. */
function resourceOf(path: string): string {
  const rest = path.replace(/^\/api\/v1\/|^\/apis\/[^/]+\/[^/]+\//, "").replace(/^watch\//, "");
  const parts = rest.split("/");
  if (parts[0] === "namespaces" && parts[1] === "{namespace}" && parts[2]) return parts[2];
  return parts[0];
}

/** Upstream alpha/beta parameters platform does not implement (see the documents' README). */
const UPSTREAM_ONLY_PARAMS = new Set([
  "shardSelector",
  "ignoreStoreReadErrorWithClusterBreakingPotential",
]);

interface OpSig {
  key: string;
  detail: string;
}

/** (path, method, action) of every operation with an action, plus its details. */
function operations(d: Json, served: Set<string>): OpSig[] {
  const out: OpSig[] = [];
  for (const [path, item] of Object.entries<Json>(d.paths)) {
    if (!served.has(resourceOf(path))) continue;
    for (const [method, op] of Object.entries<Json>(item)) {
      if (method === "parameters" || !op["x-kubernetes-action"]) continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])]
        .map((p: Json) => `${p.in}:${p.name}`)
        .filter((p: string) => !UPSTREAM_ONLY_PARAMS.has(p.split(":")[1]))
        .sort();
      const media = (content: Json) =>
        Object.keys(content ?? {}).filter((m) => !m.includes("cbor")).sort();
      const responses = Object.entries<Json>(op.responses).map(([code, r]) =>
        `${code}:${media(r.content)}:${
          Object.values<Json>(r.content ?? {})[0]?.schema?.$ref ?? "-"
        }`
      );
      out.push({
        key: `${path} ${method} ${op["x-kubernetes-action"]}`,
        detail: JSON.stringify({
          operationId: op.operationId,
          gvk: op["x-kubernetes-group-version-kind"],
          tags: op.tags,
          params,
          body: media(op.requestBody?.content),
          bodySchema: Object.values<Json>(op.requestBody?.content ?? {})[0]?.schema?.$ref,
          bodyRequired: op.requestBody?.required ?? false,
          responses,
        }),
      });
    }
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : 1));
}

function compareWithKube(file: string, docPath: string) {
  const ours = doc(docPath);
  const served = new Set(DEFS.map((d) => d.plural));
  const theirs = operations(kubeDoc(file), served);
  const mine = operations(ours, served);
  // The set of (path, method, x-kubernetes-action) is the same …
  assert.deepEqual(mine.map((o) => o.key), theirs.map((o) => o.key));
  // … and so are ids, GVKs, tags, parameters, media types and schemas of each operation.
  for (let i = 0; i < mine.length; i++) {
    assert.deepEqual(JSON.parse(mine[i].detail), JSON.parse(theirs[i].detail), mine[i].key);
  }
}

Deno.test("v3 api/v1: same routes and operations as Kubernetes' core document", () =>
  compareWithKube("api__v1_openapi.trimmed.json", "api/v1"));

Deno.test("v3 certificates.platform.io/v1: same routes and operations as Kubernetes'", () =>
  compareWithKube(
    "apis__certificates.k8s.io__v1_openapi.json",
    "apis/certificates.platform.io/v1",
  ));

Deno.test("v3 coordination and events groups: same routes and operations as Kubernetes'", () => {
  compareWithKube(
    "apis__coordination.k8s.io__v1_openapi.json",
    "apis/coordination.platform.io/v1",
  );
  compareWithKube("apis__events.k8s.io__v1_openapi.json", "apis/events.platform.io/v1");
});

Deno.test("v3: component schemas match Kubernetes' (GVKs renamed)", () => {
  const theirs = kubeDoc("apis__certificates.k8s.io__v1_openapi.json").components.schemas;
  const ours = doc("apis/certificates.platform.io/v1").components.schemas;
  for (const name of Object.keys(theirs)) assert.ok(ours[name], name);
  const csr = "io.k8s.api.certificates.v1.CertificateSigningRequest";
  assert.deepEqual(ours[csr], theirs[csr]);
  assert.deepEqual(ours[`${csr}Spec`], theirs[`${csr}Spec`]);
});

// ---- documents on their own ----

Deno.test("v3: kind schemas carry their platform.io GVK", () => {
  const core = doc("api/v1").components.schemas;
  assert.deepEqual(core["io.k8s.api.core.v1.ConfigMap"]["x-kubernetes-group-version-kind"], [
    { group: "", kind: "ConfigMap", version: "v1" },
  ]);
  assert.deepEqual(
    core["io.k8s.api.core.v1.ConfigMapList"]["x-kubernetes-group-version-kind"],
    [{ group: "", kind: "ConfigMapList", version: "v1" }],
  );
  assert.deepEqual(
    core["io.k8s.api.authentication.v1.TokenRequest"]["x-kubernetes-group-version-kind"],
    [{ group: "authentication.platform.io", kind: "TokenRequest", version: "v1" }],
  );
  const lease = doc("apis/coordination.platform.io/v1").components.schemas;
  assert.deepEqual(lease["io.k8s.api.coordination.v1.Lease"]["x-kubernetes-group-version-kind"], [
    { group: "coordination.platform.io", kind: "Lease", version: "v1" },
  ]);
  // Shared kinds list only the document's group-version (and core v1).
  const del = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
  assert.deepEqual(core[del]["x-kubernetes-group-version-kind"], [
    { group: "", kind: "DeleteOptions", version: "v1" },
  ]);
  assert.deepEqual(lease[del]["x-kubernetes-group-version-kind"], [
    { group: "", kind: "DeleteOptions", version: "v1" },
    { group: "coordination.platform.io", kind: "DeleteOptions", version: "v1" },
  ]);
  // Nothing named k8s.io remains in any GVK.
  for (const path of service.paths()) {
    const text = service.document(path)!.body;
    assert.ok(!/"group":"[^"]*k8s\.io"/.test(text), path);
  }
});

Deno.test("v3: every $ref of a document resolves inside it", () => {
  for (const path of service.paths()) {
    const d = doc(path);
    const refs = new Set<string>();
    const walk = (n: Json) => {
      if (Array.isArray(n)) n.forEach(walk);
      else if (n && typeof n === "object") {
        for (const [k, v] of Object.entries(n)) {
          if (k === "$ref") refs.add(String(v));
          else walk(v);
        }
      }
    };
    walk(d);
    for (const r of refs) {
      const name = r.replace("#/components/schemas/", "");
      assert.ok(d.components.schemas[name], `${path}: ${r}`);
    }
    assert.equal(d.openapi, "3.0.0");
  }
});

Deno.test("v3: operation shapes", () => {
  const paths = doc("api/v1").paths;
  const cm = paths["/api/v1/namespaces/{namespace}/configmaps/{name}"];
  assert.deepEqual(cm.parameters.map((p: Json) => p.name), ["name", "namespace", "pretty"]);
  assert.deepEqual(Object.keys(cm.patch.requestBody.content), PATCH_MEDIA);
  assert.deepEqual(cm.patch.parameters.map((p: Json) => p.name), [
    "dryRun",
    "fieldManager",
    "fieldValidation",
    "force",
  ]);
  assert.deepEqual(Object.keys(cm.get.responses["200"].content), [
    "application/json",
    "application/vnd.kubernetes.protobuf",
    "application/yaml",
  ]);
  const list = paths["/api/v1/namespaces/{namespace}/configmaps"].get;
  assert.equal(list["x-kubernetes-action"], "list");
  assert.ok(list.responses["200"].content["application/json;stream=watch"]);
  assert.deepEqual(
    list.parameters.map((p: Json) => p.name),
    [
      "allowWatchBookmarks",
      "continue",
      "fieldSelector",
      "labelSelector",
      "limit",
      "resourceVersion",
      "resourceVersionMatch",
      "sendInitialEvents",
      "timeoutSeconds",
      "watch",
    ],
  );
  assert.equal(paths["/api/v1/configmaps"].get.operationId, "listCoreV1ConfigMapForAllNamespaces");
  assert.equal(paths["/api/v1/watch/namespaces/{name}"].get["x-kubernetes-action"], "watch");
  assert.equal(
    paths["/api/v1/namespaces/{name}/finalize"].put.operationId,
    "replaceCoreV1NamespaceFinalize",
  );
  assert.deepEqual(Object.keys(paths["/api/v1/namespaces/{name}/finalize"]), ["parameters", "put"]);
  assert.equal(paths["/api/v1/"].get.operationId, "getCoreV1APIResources");
});

Deno.test("names: group camel case and tags", () => {
  assert.equal(groupCamel(""), "Core");
  assert.equal(groupCamel("certificates.platform.io"), "Certificates");
  assert.equal(groupCamel("rbac.authorization.platform.io"), "RbacAuthorization");
  assert.equal(groupCamel("stable.example.com"), "StableExampleCom");
  assert.equal(tagOf("rbac.authorization.platform.io", "v1"), "rbacAuthorization_v1");
  assert.equal(tagOf("", "v1"), "core_v1");
  const ops = operationsFor(DEFS[1]);
  assert.ok(ops.some((o) => o.operationId === "deleteCoreV1CollectionNamespacedConfigMap"));
  assert.ok(ops.some((o) => o.operationId === "watchCoreV1ConfigMapListForAllNamespaces"));
  // A definition without some verbs gets no routes for them.
  const readOnly = operationsFor({ ...DEFS[1], verbs: ["get", "list"] });
  assert.deepEqual(readOnly.map((o) => o.action).sort(), ["get", "list", "list"]);
});

Deno.test("index: hashed URLs of every document", () => {
  const index = service.index();
  assert.deepEqual(Object.keys(index.paths), [
    "api",
    "api/v1",
    "apis",
    "apis/certificates.platform.io",
    "apis/certificates.platform.io/v1",
    "apis/coordination.platform.io",
    "apis/coordination.platform.io/v1",
    "apis/events.platform.io",
    "apis/events.platform.io/v1",
    "version",
  ]);
  for (const [path, { serverRelativeURL }] of Object.entries(index.paths)) {
    const d = service.document(path)!;
    assert.match(d.hash, /^[0-9A-F]{128}$/);
    assert.equal(d.hash, createHash("sha512").update(d.body).digest("hex").toUpperCase());
    assert.equal(serverRelativeURL, `/openapi/v3/${path}?hash=${d.hash}`);
  }
  // Built once, then cached.
  assert.equal(service.document("api/v1"), service.document("/openapi/v3/api/v1/"));
  assert.equal(service.document("apis/nope.platform.io/v1"), undefined);
  assert.equal(service.index(), index);
  // Discovery documents.
  assert.ok(doc("apis").paths["/apis/"].get);
  assert.equal(
    doc("apis/certificates.platform.io").paths["/apis/certificates.platform.io/"].get.operationId,
    "getCertificatesAPIGroup",
  );
  assert.ok(doc("version").components.schemas["io.k8s.apimachinery.pkg.version.Info"]);
});

Deno.test("v2: Swagger 2.0 with definitions, paths and x-kubernetes markers", () => {
  const v2 = JSON.parse(service.v2());
  assert.equal(v2.swagger, "2.0");
  const cm = v2.definitions["io.k8s.api.core.v1.ConfigMap"];
  assert.deepEqual(cm["x-kubernetes-group-version-kind"], [
    { group: "", kind: "ConfigMap", version: "v1" },
  ]);
  assert.equal(
    cm.properties.metadata.$ref,
    "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
  );
  assert.equal(cm.properties.metadata.allOf, undefined);
  const list = v2.paths["/api/v1/namespaces/{namespace}/configmaps"];
  assert.equal(list.get["x-kubernetes-action"], "list");
  assert.deepEqual(list.post.parameters[0], {
    in: "body",
    name: "body",
    required: true,
    schema: { $ref: "#/definitions/io.k8s.api.core.v1.ConfigMap" },
  });
  const patch =
    v2.paths["/apis/certificates.platform.io/v1/certificatesigningrequests/{name}/approval"]
      .patch;
  assert.deepEqual(patch.consumes, PATCH_MEDIA);
  assert.deepEqual(patch["x-kubernetes-group-version-kind"], {
    group: "certificates.platform.io",
    kind: "CertificateSigningRequest",
    version: "v1",
  });
  // Every reference resolves; no OpenAPI v3 construct is left.
  const text = service.v2();
  assert.ok(!text.includes("#/components/"));
  for (const m of text.matchAll(/"\$ref":"#\/definitions\/([^"]+)"/g)) {
    assert.ok(v2.definitions[m[1]], m[1]);
  }
  assert.equal(service.v2(), text);
});
