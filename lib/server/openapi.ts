/**
 * OpenAPI documents, derived from the resource definitions and their schemas:
 *
 * - `GET /openapi/v3` -> {@link OpenAPIService.index}: one entry per document with its hashed
 *   URL (`/openapi/v3/api/v1?hash=…`, hash = upper-case hex SHA-512 of the document);
 * - `GET /openapi/v3/<path>` -> {@link OpenAPIService.document}: an OpenAPI 3.0 document per
 *   group-version (`api/v1`, `apis/<group>/<version>`) with every route the server serves for
 *   that group-version and the closure of the schemas they use, plus the small discovery
 *   documents `api`, `apis`, `apis/<group>` and `version`;
 * - `GET /openapi/v2` -> {@link OpenAPIService.v2}: one Swagger 2.0 document for everything.
 *
 * Routes, operation ids and `x-kubernetes-*` markers have the shapes Kubernetes generates, so
 * kubectl (`explain`, `apply`, client-side validation) and generated clients work unchanged.
 * Documents are built on first use and cached as serialized JSON.
 */

import { createHash } from "node:crypto";
import { apiVersionOf, listKindOf, type ResourceDefinition } from "../registry/definition.ts";
import { REF_PREFIX, type SchemaNode, type SchemaSet } from "../registry/schema.ts";
import type { Catalogue } from "../registry/catalogue.ts";
import { isBuiltinGroup, kubeGroup } from "../api/group_names.ts";

// ---- names ----

type Method = "get" | "put" | "post" | "patch" | "delete";
export type Action =
  | "get"
  | "list"
  | "watch"
  | "watchlist"
  | "post"
  | "put"
  | "patch"
  | "delete"
  | "deletecollection";

interface GVK {
  group: string;
  kind: string;
  version: string;
}

const GVK_KEY = "x-kubernetes-group-version-kind";
const META = "io.k8s.apimachinery.pkg.apis.meta.v1.";
const DELETE_OPTIONS = `${META}DeleteOptions`;
const STATUS = `${META}Status`;
const WATCH_EVENT = `${META}WatchEvent`;
const PATCH = `${META}Patch`;
const API_RESOURCE_LIST = `${META}APIResourceList`;
const API_VERSIONS = `${META}APIVersions`;
const API_GROUP_LIST = `${META}APIGroupList`;
const API_GROUP = `${META}APIGroup`;
const VERSION_INFO = "io.k8s.apimachinery.pkg.version.Info";

/** Kubernetes' spelling of the protobuf media type in OpenAPI documents. */
const PROTOBUF = "application/vnd.kubernetes.protobuf";
const OBJECT_MEDIA = ["application/json", PROTOBUF, "application/yaml"];
const STREAM_MEDIA = [
  "application/json",
  "application/json;stream=watch",
  PROTOBUF,
  `${PROTOBUF};stream=watch`,
  "application/yaml",
];
export const PATCH_MEDIA = [
  "application/apply-patch+yaml",
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/strategic-merge-patch+json",
];

/** The `GVK` suffix the platform gives the groups it serves. */
const GROUP_SUFFIX = ".platform.io";
const KUBE_GROUP_SUFFIX = ".k8s.io";

function words(s: string): string[] {
  return s.split(/[.\-]/).filter(Boolean);
}

function upperFirst(s: string): string {
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}

function lowerFirst(s: string): string {
  return s ? s[0].toLowerCase() + s.slice(1) : s;
}

/** `""` -> `Core`, `certificates.platform.io` -> `Certificates`,
 * `rbac.authorization.platform.io` -> `RbacAuthorization`, `stable.example.com` ->
 * `StableExampleCom`. */
export function groupCamel(group: string): string {
  if (!group) return "Core";
  const base = group.endsWith(GROUP_SUFFIX)
    ? group.slice(0, -GROUP_SUFFIX.length)
    : isBuiltinGroup(group)
    ? group.slice(0, -KUBE_GROUP_SUFFIX.length)
    : group;
  return words(base).map(upperFirst).join("");
}

/** The tag of a group-version's operations: `core_v1`, `rbacAuthorization_v1`. */
export function tagOf(group: string, version: string): string {
  return `${lowerFirst(groupCamel(group))}_${version}`;
}

/** The document path of a group-version: `api/v1`, `apis/certificates.platform.io/v1`. */
export function documentPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

function article(word: string): string {
  return /^[AEIOU]/.test(word) ? "an" : "a";
}

function gvString(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

// ---- parameters ----

interface Param {
  name: string;
  in: "query" | "path";
  type: "string" | "boolean" | "integer";
  description: string;
}

function query(name: string, type: Param["type"], description: string): Param {
  return { name, in: "query", type, description };
}

/** Query parameters, in our own words. */
const Q = {
  allowWatchBookmarks: query(
    "allowWatchBookmarks",
    "boolean",
    "With watch=true, ask for BOOKMARK events, which carry only a resourceVersion to resume " +
      "from. Servers may send them at any time; clients must not rely on when.",
  ),
  continue: query(
    "continue",
    "string",
    "The token of a previous paginated list response (metadata.continue) to read the next " +
      "page. Use it with the same query parameters. An expired token yields 410 Gone. Not " +
      "valid with watch=true.",
  ),
  dryRun: query(
    "dryRun",
    "string",
    "When set to All, the request is validated and admitted but nothing is stored. Any other " +
      "value is rejected.",
  ),
  fieldManager: query(
    "fieldManager",
    "string",
    "The name of the actor making the change, recorded in metadata.managedFields. At most 128 " +
      "printable characters. Required for apply patches; optional otherwise.",
  ),
  fieldSelector: query(
    "fieldSelector",
    "string",
    "Restrict the result to objects whose fields match, e.g. metadata.name=x. Empty selects " +
      "everything.",
  ),
  fieldValidation: query(
    "fieldValidation",
    "string",
    "What to do with fields the schema does not know and with duplicate fields: Ignore drops " +
      "them silently, Warn (the default) drops them and returns a Warning header for each, " +
      "Strict fails the request.",
  ),
  force: query(
    "force",
    "boolean",
    "For apply patches only: take ownership of fields other managers own instead of failing " +
      "with a conflict. Must be unset for other patch types.",
  ),
  gracePeriodSeconds: query(
    "gracePeriodSeconds",
    "integer",
    "Seconds to wait before the object is deleted; a non-negative integer, 0 means now. " +
      "Unset uses the resource's default.",
  ),
  labelSelector: query(
    "labelSelector",
    "string",
    "Restrict the result to objects whose labels match, e.g. app=web,tier!=db. Empty selects " +
      "everything.",
  ),
  limit: query(
    "limit",
    "integer",
    "The largest number of items to return. When more remain, metadata.continue holds a " +
      "token for the next page. Not valid with watch=true.",
  ),
  orphanDependents: query(
    "orphanDependents",
    "boolean",
    "Deprecated, use propagationPolicy. true orphans dependent objects, false deletes them. " +
      "Set at most one of the two.",
  ),
  pretty: query("pretty", "string", "If 'true', indent the response for humans."),
  propagationPolicy: query(
    "propagationPolicy",
    "string",
    "How dependents are garbage collected: Orphan, Background or Foreground. Unset uses the " +
      "object's finalizers and the resource's default.",
  ),
  resourceVersion: query(
    "resourceVersion",
    "string",
    "Which version of the data may serve the request: unset for the most recent, 0 for any, " +
      "or a specific resourceVersion (see resourceVersionMatch).",
  ),
  resourceVersionMatch: query(
    "resourceVersionMatch",
    "string",
    "How resourceVersion applies to a list: NotOlderThan or Exact. Set it whenever " +
      "resourceVersion is set for a list.",
  ),
  sendInitialEvents: query(
    "sendInitialEvents",
    "boolean",
    "With watch=true, start the stream with ADDED events for the current objects, followed " +
      "by a BOOKMARK annotated as the end of the initial events. Requires " +
      "resourceVersionMatch=NotOlderThan.",
  ),
  timeoutSeconds: query(
    "timeoutSeconds",
    "integer",
    "The most seconds the list or watch call may take, whether or not anything happens.",
  ),
  watch: query(
    "watch",
    "boolean",
    "Stream add, update and delete notifications for the selected objects instead of " +
      "returning a list. Pair with resourceVersion to resume.",
  ),
};

const LIST_PARAMS = [
  Q.allowWatchBookmarks,
  Q.continue,
  Q.fieldSelector,
  Q.labelSelector,
  Q.limit,
  Q.resourceVersion,
  Q.resourceVersionMatch,
  Q.sendInitialEvents,
  Q.timeoutSeconds,
  Q.watch,
];
const WRITE_PARAMS = [Q.dryRun, Q.fieldManager, Q.fieldValidation];
const PATCH_PARAMS = [...WRITE_PARAMS, Q.force];
const DELETE_PARAMS = [Q.dryRun, Q.gracePeriodSeconds, Q.orphanDependents, Q.propagationPolicy];
const DELETE_COLLECTION_PARAMS = [
  Q.continue,
  Q.dryRun,
  Q.fieldSelector,
  Q.gracePeriodSeconds,
  Q.labelSelector,
  Q.limit,
  Q.orphanDependents,
  Q.propagationPolicy,
  Q.resourceVersion,
  Q.resourceVersionMatch,
  Q.sendInitialEvents,
  Q.timeoutSeconds,
];

function nameParam(kind: string): Param {
  return { name: "name", in: "path", type: "string", description: `name of the ${kind}` };
}

const NAMESPACE_PARAM: Param = {
  name: "namespace",
  in: "path",
  type: "string",
  description: "the namespace of the object, which scopes its name and authorization",
};

// ---- operations: one model, rendered as OpenAPI v3 and Swagger 2.0 ----

interface Response {
  description: string;
  schema?: string;
  media?: string[];
}

interface Operation {
  path: string;
  method: Method;
  operationId: string;
  description: string;
  tag: string;
  action?: Action;
  gvk?: GVK;
  params: Param[];
  body?: { schema: string; required: boolean; media: string[] };
  responses: Record<string, Response>;
}

const UNAUTHORIZED: Response = { description: "Unauthorized" };

function ok(schema: string, media = OBJECT_MEDIA): Response {
  return { description: "OK", schema, media };
}

function created(schema: string): Response {
  return { description: "Created", schema, media: OBJECT_MEDIA };
}

function accepted(schema: string): Response {
  return { description: "Accepted", schema, media: OBJECT_MEDIA };
}

/** How a subresource is served when it is not the usual get/put/patch of the parent kind. */
interface SubresourceShape {
  methods: Method[];
  /** The kind of the request and response body, when not the parent's. */
  body?: { gvk: GVK; schema: string };
}

const SUBRESOURCES: Record<string, SubresourceShape> = {
  finalize: { methods: ["put"] },
  token: {
    methods: ["post"],
    body: {
      gvk: { group: `authentication${GROUP_SUFFIX}`, kind: "TokenRequest", version: "v1" },
      schema: "io.k8s.api.authentication.v1.TokenRequest",
    },
  },
};
const DEFAULT_SUBRESOURCE: SubresourceShape = { methods: ["get", "put", "patch"] };

/**
 * Definition fields this module reads that {@link ResourceDefinition} does not declare (yet):
 * `deleteReturnsObject` — DELETE answers with the deleted object rather than a Status (as
 * Kubernetes does for ServiceAccounts and custom resources).
 */
export interface OpenAPIDefinitionExtras {
  deleteReturnsObject?: boolean;
}

/** The list schema of a kind schema: `…ConfigMap` -> `…ConfigMapList`. */
export function listSchemaName(schema: string): string {
  return `${schema}List`;
}

/** Every operation the server serves for one definition, in Kubernetes' shapes. */
export function operationsFor(def: ResourceDefinition): Operation[] {
  const prefix = def.group ? `/apis/${def.group}/${def.version}` : `/api/${def.version}`;
  const gv = groupCamel(def.group) + upperFirst(def.version);
  const tag = tagOf(def.group, def.version);
  const K = def.kind;
  const ns = def.namespaced ? "Namespaced" : "";
  const gvk: GVK = { group: def.group, kind: K, version: def.version };
  const rel = def.namespaced ? `namespaces/{namespace}/${def.plural}` : def.plural;
  const scope = def.namespaced ? [NAMESPACE_PARAM] : [];
  const coll = `${prefix}/${rel}`;
  const item = `${coll}/{name}`;
  const itemScope = [...scope, nameParam(K)];
  const list = listSchemaName(def.schema);
  const verbs = new Set(def.verbs);
  const ops: Operation[] = [];
  const op = (o: Omit<Operation, "tag" | "gvk"> & { gvk?: GVK }) =>
    ops.push({ tag, gvk, ...o, params: [...o.params, Q.pretty] });

  if (verbs.has("list")) {
    const listOp = (path: string, operationId: string, params: Param[]) =>
      op({
        path,
        method: "get",
        operationId,
        description: `list or watch ${K} objects`,
        action: "list",
        params: [...params, ...LIST_PARAMS],
        responses: { "200": ok(list, STREAM_MEDIA), "401": UNAUTHORIZED },
      });
    listOp(coll, `list${gv}${ns}${K}`, scope);
    if (def.namespaced) listOp(`${prefix}/${def.plural}`, `list${gv}${K}ForAllNamespaces`, []);
  }
  if (verbs.has("create")) {
    op({
      path: coll,
      method: "post",
      operationId: `create${gv}${ns}${K}`,
      description: `create ${article(K)} ${K}`,
      action: "post",
      params: [...scope, ...WRITE_PARAMS],
      body: { schema: def.schema, required: true, media: ["*/*"] },
      responses: {
        "200": ok(def.schema),
        "201": created(def.schema),
        "202": accepted(def.schema),
        "401": UNAUTHORIZED,
      },
    });
  }
  if (verbs.has("deletecollection")) {
    op({
      path: coll,
      method: "delete",
      operationId: `delete${gv}Collection${ns}${K}`,
      description: `delete a collection of ${K} objects`,
      action: "deletecollection",
      params: [...scope, ...DELETE_COLLECTION_PARAMS],
      body: { schema: DELETE_OPTIONS, required: false, media: ["*/*"] },
      responses: { "200": ok(STATUS), "401": UNAUTHORIZED },
    });
  }
  if (verbs.has("get")) {
    op({
      path: item,
      method: "get",
      operationId: `read${gv}${ns}${K}`,
      description: `read the specified ${K}`,
      action: "get",
      params: itemScope,
      responses: { "200": ok(def.schema), "401": UNAUTHORIZED },
    });
  }
  if (verbs.has("update")) {
    op({
      path: item,
      method: "put",
      operationId: `replace${gv}${ns}${K}`,
      description: `replace the specified ${K}`,
      action: "put",
      params: [...itemScope, ...WRITE_PARAMS],
      body: { schema: def.schema, required: true, media: ["*/*"] },
      responses: { "200": ok(def.schema), "201": created(def.schema), "401": UNAUTHORIZED },
    });
  }
  if (verbs.has("patch")) {
    op({
      path: item,
      method: "patch",
      operationId: `patch${gv}${ns}${K}`,
      description: `partially update the specified ${K}`,
      action: "patch",
      params: [...itemScope, ...PATCH_PARAMS],
      body: { schema: PATCH, required: true, media: PATCH_MEDIA },
      responses: { "200": ok(def.schema), "201": created(def.schema), "401": UNAUTHORIZED },
    });
  }
  if (verbs.has("delete")) {
    const deleted = (def as OpenAPIDefinitionExtras).deleteReturnsObject ? def.schema : STATUS;
    op({
      path: item,
      method: "delete",
      operationId: `delete${gv}${ns}${K}`,
      description: `delete the specified ${K}`,
      action: "delete",
      params: [...itemScope, ...DELETE_PARAMS],
      body: { schema: DELETE_OPTIONS, required: false, media: ["*/*"] },
      responses: { "200": ok(deleted), "202": accepted(deleted), "401": UNAUTHORIZED },
    });
  }
  if (verbs.has("watch")) {
    const watchResponses = { "200": ok(WATCH_EVENT, STREAM_MEDIA), "401": UNAUTHORIZED };
    const deprecated = "deprecated: use a list request with watch=true";
    op({
      path: `${prefix}/watch/${rel}`,
      method: "get",
      operationId: `watch${gv}${ns}${K}List`,
      description: `watch changes to ${K} objects; ${deprecated}`,
      action: "watchlist",
      params: [...scope, ...LIST_PARAMS],
      responses: watchResponses,
    });
    op({
      path: `${prefix}/watch/${rel}/{name}`,
      method: "get",
      operationId: `watch${gv}${ns}${K}`,
      description: `watch changes to one ${K}; ${deprecated} and a metadata.name fieldSelector`,
      action: "watch",
      params: [...itemScope, ...LIST_PARAMS],
      responses: watchResponses,
    });
    if (def.namespaced) {
      op({
        path: `${prefix}/watch/${def.plural}`,
        method: "get",
        operationId: `watch${gv}${K}ListForAllNamespaces`,
        description: `watch changes to ${K} objects in all namespaces; ${deprecated}`,
        action: "watchlist",
        params: LIST_PARAMS,
        responses: watchResponses,
      });
    }
  }
  for (const sub of def.subresources ?? []) {
    const shape = SUBRESOURCES[sub] ?? DEFAULT_SUBRESOURCE;
    const path = `${item}/${sub}`;
    const S = upperFirst(sub);
    const schema = shape.body?.schema ?? def.schema;
    const subGVK = shape.body?.gvk ?? gvk;
    const bodyKind = shape.body?.gvk.kind ?? K;
    const params = [...scope, nameParam(bodyKind)];
    for (const method of shape.methods) {
      switch (method) {
        case "get":
          op({
            path,
            method,
            gvk: subGVK,
            operationId: `read${gv}${ns}${K}${S}`,
            description: `read ${sub} of the specified ${K}`,
            action: "get",
            params,
            responses: { "200": ok(schema), "401": UNAUTHORIZED },
          });
          break;
        case "put":
          op({
            path,
            method,
            gvk: subGVK,
            operationId: `replace${gv}${ns}${K}${S}`,
            description: `replace ${sub} of the specified ${K}`,
            action: "put",
            params: [...params, ...WRITE_PARAMS],
            body: { schema, required: true, media: ["*/*"] },
            responses: { "200": ok(schema), "201": created(schema), "401": UNAUTHORIZED },
          });
          break;
        case "patch":
          op({
            path,
            method,
            gvk: subGVK,
            operationId: `patch${gv}${ns}${K}${S}`,
            description: `partially update ${sub} of the specified ${K}`,
            action: "patch",
            params: [...params, ...PATCH_PARAMS],
            body: { schema: PATCH, required: true, media: PATCH_MEDIA },
            responses: { "200": ok(schema), "201": created(schema), "401": UNAUTHORIZED },
          });
          break;
        case "post":
          op({
            path,
            method,
            gvk: subGVK,
            operationId: `create${gv}${ns}${K}${S}`,
            description: `create ${sub} of ${article(K)} ${K}`,
            action: "post",
            params: [...params, ...WRITE_PARAMS],
            body: { schema, required: true, media: ["*/*"] },
            responses: {
              "200": ok(schema),
              "201": created(schema),
              "202": accepted(schema),
              "401": UNAUTHORIZED,
            },
          });
          break;
      }
    }
  }
  return def.customResource ? ops.map(customResourceMedia) : ops;
}

/** Custom resources take no strategic merge patch and have no protobuf form: their
 * operations do not offer them (kubectl picks its patch type from these lists). */
function customResourceMedia(o: Operation): Operation {
  const keep = (m: string) =>
    m !== "application/strategic-merge-patch+json" && !m.startsWith(PROTOBUF);
  const responses: Record<string, Response> = {};
  for (const [code, r] of Object.entries(o.responses)) {
    responses[code] = r.media ? { ...r, media: r.media.filter(keep) } : r;
  }
  return { ...o, body: o.body && { ...o.body, media: o.body.media.filter(keep) }, responses };
}

/** `GET /api/v1/`, `GET /apis/<group>/<version>/`: the group-version's resource list. */
function resourceListOperation(group: string, version: string): Operation {
  const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`;
  return {
    path: `${prefix}/`,
    method: "get",
    operationId: `get${groupCamel(group)}${upperFirst(version)}APIResources`,
    description: "get available resources",
    tag: tagOf(group, version),
    params: [],
    responses: { "200": ok(API_RESOURCE_LIST), "401": UNAUTHORIZED },
  };
}

function discoveryOperation(
  path: string,
  operationId: string,
  tag: string,
  schema: string,
  description: string,
  media = OBJECT_MEDIA,
): Operation {
  return {
    path,
    method: "get",
    operationId,
    description,
    tag,
    params: [],
    responses: { "200": ok(schema, media), "401": UNAUTHORIZED },
  };
}

/** Schemas of the discovery documents that the Kubernetes group documents do not carry. */
function ref(name: string): SchemaNode {
  return { $ref: REF_PREFIX + name };
}
const str = (description: string): SchemaNode => ({ type: "string", description, default: "" });
const TYPE_META: Record<string, SchemaNode> = {
  apiVersion: { type: "string", description: "The versioned schema of this object." },
  kind: { type: "string", description: "The kind of this object." },
};
export const DISCOVERY_SCHEMAS: Record<string, SchemaNode> = {
  [API_VERSIONS]: {
    description: "The API versions of the core group (GET /api).",
    type: "object",
    required: ["versions", "serverAddressByClientCIDRs"],
    properties: {
      ...TYPE_META,
      serverAddressByClientCIDRs: {
        description: "Addresses clients may use to reach the server, by client network.",
        type: "array",
        items: ref(`${META}ServerAddressByClientCIDR`),
        "x-kubernetes-list-type": "atomic",
      },
      versions: {
        description: "The versions of the core group, e.g. v1.",
        type: "array",
        items: { type: "string", default: "" },
        "x-kubernetes-list-type": "atomic",
      },
    },
    [GVK_KEY]: [{ group: "", kind: "APIVersions", version: "v1" }],
  },
  [API_GROUP_LIST]: {
    description: "Every API group the server serves (GET /apis).",
    type: "object",
    required: ["groups"],
    properties: {
      ...TYPE_META,
      groups: {
        description: "The groups.",
        type: "array",
        items: ref(API_GROUP),
        "x-kubernetes-list-type": "atomic",
      },
    },
    [GVK_KEY]: [{ group: "", kind: "APIGroupList", version: "v1" }],
  },
  [API_GROUP]: {
    description: "One API group and its versions (GET /apis/<group>).",
    type: "object",
    required: ["name", "versions"],
    properties: {
      ...TYPE_META,
      name: str("The name of the group."),
      preferredVersion: {
        description: "The version clients should use when they have no preference.",
        allOf: [ref(`${META}GroupVersionForDiscovery`)],
        default: {},
      },
      serverAddressByClientCIDRs: {
        description: "Addresses clients may use to reach the server, by client network.",
        type: "array",
        items: ref(`${META}ServerAddressByClientCIDR`),
        "x-kubernetes-list-type": "atomic",
      },
      versions: {
        description: "The versions of the group the server serves.",
        type: "array",
        items: ref(`${META}GroupVersionForDiscovery`),
        "x-kubernetes-list-type": "atomic",
      },
    },
    [GVK_KEY]: [{ group: "", kind: "APIGroup", version: "v1" }],
  },
  [`${META}GroupVersionForDiscovery`]: {
    description: "One version of an API group.",
    type: "object",
    required: ["groupVersion", "version"],
    properties: {
      groupVersion: str("group/version, e.g. certificates.platform.io/v1."),
      version: str("The version alone, e.g. v1."),
    },
  },
  [`${META}ServerAddressByClientCIDR`]: {
    description: "The server address clients from one network should use.",
    type: "object",
    required: ["clientCIDR", "serverAddress"],
    properties: {
      clientCIDR: str("The client network, in CIDR notation."),
      serverAddress: str("host:port, or an IP address, of the server for those clients."),
    },
  },
  [VERSION_INFO]: {
    description: "The version of the server (GET /version).",
    type: "object",
    required: [
      "major",
      "minor",
      "gitVersion",
      "gitCommit",
      "gitTreeState",
      "buildDate",
      "goVersion",
      "compiler",
      "platform",
    ],
    properties: {
      buildDate: str("When the binary was built."),
      compiler: str("The compiler or runtime that built the binary."),
      gitCommit: str("The source commit."),
      gitTreeState: str("Whether the source tree was clean or dirty."),
      gitVersion: str("The full version, e.g. v0.1.0."),
      goVersion: str("The language runtime version."),
      major: str("The major version."),
      minor: str("The minor version."),
      platform: str("os/arch of the binary."),
    },
  },
};

const SECURITY_SCHEME = {
  BearerToken: {
    description: "Bearer Token authentication",
    in: "header",
    name: "authorization",
    type: "apiKey",
  },
};

// ---- rendering ----

// deno-lint-ignore no-explicit-any
type Json = any;

function paramKey(p: Param): string {
  return `${p.in}:${p.name}`;
}

function sortParams(params: Param[]): Param[] {
  const unique = new Map<string, Param>();
  for (const p of params) unique.set(paramKey(p), p);
  return [...unique.values()].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : a.in < b.in ? -1 : 1
  );
}

/** Groups operations by path; the parameters every operation of a path shares move to the
 * path (as Kubernetes' generator does). */
function byPath(ops: Operation[]): Map<string, { shared: Param[]; ops: Operation[] }> {
  const groups = new Map<string, Operation[]>();
  for (const o of ops) {
    const list = groups.get(o.path);
    if (list) list.push(o);
    else groups.set(o.path, [o]);
  }
  const out = new Map<string, { shared: Param[]; ops: Operation[] }>();
  for (const path of [...groups.keys()].sort()) {
    const list = groups.get(path)!;
    let shared = new Set(list[0].params.map(paramKey));
    for (const o of list.slice(1)) {
      const keys = new Set(o.params.map(paramKey));
      shared = new Set([...shared].filter((k) => keys.has(k)));
    }
    const sharedParams = sortParams(list[0].params.filter((p) => shared.has(paramKey(p))));
    out.set(path, {
      shared: sharedParams,
      ops: list
        .map((o) => ({
          ...o,
          params: sortParams(o.params.filter((p) => !shared.has(paramKey(p)))),
        }))
        .sort((a, b) => (a.method < b.method ? -1 : 1)),
    });
  }
  return out;
}

function v3Param(p: Param): Json {
  const out: Json = { description: p.description, in: p.in, name: p.name };
  if (p.in === "path") out.required = true;
  out.schema = { type: p.type, uniqueItems: true };
  return out;
}

function v3Content(schema: string, media: string[]): Json {
  const content: Json = {};
  for (const m of media) content[m] = { schema: ref(schema) };
  return content;
}

function v3Operation(o: Operation): Json {
  const out: Json = { description: o.description, operationId: o.operationId };
  if (o.params.length) out.parameters = o.params.map(v3Param);
  if (o.body) {
    out.requestBody = { content: v3Content(o.body.schema, o.body.media) };
    if (o.body.required) out.requestBody.required = true;
  }
  out.responses = {};
  for (const [code, r] of Object.entries(o.responses)) {
    out.responses[code] = r.schema
      ? { content: v3Content(r.schema, r.media ?? OBJECT_MEDIA), description: r.description }
      : { description: r.description };
  }
  out.tags = [o.tag];
  if (o.action) out["x-kubernetes-action"] = o.action;
  if (o.gvk) out[GVK_KEY] = { group: o.gvk.group, kind: o.gvk.kind, version: o.gvk.version };
  return out;
}

function v3Paths(ops: Operation[]): Json {
  const paths: Json = {};
  for (const [path, { shared, ops: list }] of byPath(ops)) {
    const item: Json = {};
    const entries: [string, Json][] = list.map((o) => [o.method, v3Operation(o)]);
    if (shared.length) entries.push(["parameters", shared.map(v3Param)]);
    entries.sort(([a], [b]) => (a < b ? -1 : 1));
    for (const [k, v] of entries) item[k] = v;
    paths[path] = item;
  }
  return paths;
}

function referencedSchemas(ops: Operation[]): string[] {
  const names = new Set<string>();
  for (const o of ops) {
    if (o.body) names.add(o.body.schema);
    for (const r of Object.values(o.responses)) if (r.schema) names.add(r.schema);
  }
  return [...names];
}

/**
 * The schema as a document shows it: GVK lists that name several group-versions (shared types
 * such as DeleteOptions, Status, WatchEvent) keep only the group-versions in `keepGVs`, and
 * `ensure` adds the GVK of a served kind if the data lacks it.
 */
function presentSchema(node: SchemaNode, keepGVs: Set<string>, ensure: GVK[]): SchemaNode {
  let list = node[GVK_KEY];
  if (!list && ensure.length === 0) return node;
  list = [...(list ?? [])];
  for (const g of ensure) {
    if (!list.some((x) => x.group === g.group && x.version === g.version && x.kind === g.kind)) {
      list.push(g);
    }
  }
  // A document of a group under Kubernetes' name shows the GVKs of the data (written in the
  // canonical spelling) in that name.
  for (const g of [...list]) {
    const kube = { ...g, group: kubeGroup(g.group) };
    if (kube.group === g.group || !keepGVs.has(gvString(kube.group, kube.version))) continue;
    if (!list.some((x) => x.group === kube.group && x.version === g.version && x.kind === g.kind)) {
      list.push(kube);
    }
  }
  // After the served GVKs are in: a kind served under Kubernetes' group name lists only
  // that spelling in its group-version's document.
  if (list.length > 1) list = list.filter((g) => keepGVs.has(gvString(g.group, g.version)));
  return { ...node, [GVK_KEY]: list };
}

// ---- Swagger 2.0 ----

function v2Ref(name: string): Json {
  return { $ref: `#/definitions/${name}` };
}

/** OpenAPI v3 keywords Swagger 2.0 lacks (custom resource schemas use them): dropped from
 * the v2 document, as Kubernetes does, so v2 clients can parse it. */
const V3_ONLY = new Set(["nullable", "anyOf", "oneOf", "not"]);

/** A schema node rewritten for Swagger 2.0: references into `#/definitions/`, and
 * `allOf: [{$ref}]` wrappers turned back into a plain `$ref` (with its description). */
function v2Schema(node: unknown): Json {
  if (Array.isArray(node)) return node.map(v2Schema);
  if (node === null || typeof node !== "object") return node;
  const n = node as SchemaNode;
  if (Array.isArray(n.allOf) && n.allOf.length === 1 && typeof n.allOf[0].$ref === "string") {
    const { allOf, default: _d, ...rest } = n;
    return { ...v2Schema(rest), $ref: v2Schema(allOf[0]).$ref };
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(n)) {
    if (k === "$ref" && typeof v === "string" && v.startsWith(REF_PREFIX)) {
      out.$ref = `#/definitions/${v.slice(REF_PREFIX.length)}`;
    } else if (
      k === "description" || k === GVK_KEY || k === "enum" || k === "default" ||
      k === "example"
    ) {
      out[k] = v;
    } else if (V3_ONLY.has(k)) {
      continue;
    } else if (k === "properties" && v && typeof v === "object" && !Array.isArray(v)) {
      // Property names are names, not keywords: keep every one.
      const props: Json = {};
      for (const [name, sub] of Object.entries(v)) props[name] = v2Schema(sub);
      out[k] = props;
    } else {
      out[k] = v2Schema(v);
    }
  }
  return out;
}

function v2Param(p: Param): Json {
  const out: Json = { description: p.description, in: p.in, name: p.name };
  if (p.in === "path") out.required = true;
  out.type = p.type;
  out.uniqueItems = true;
  return out;
}

function v2Operation(o: Operation): Json {
  const out: Json = {};
  if (o.body) out.consumes = o.body.media;
  out.description = o.description;
  out.operationId = o.operationId;
  const params = o.params.map(v2Param);
  if (o.body) {
    const body: Json = { in: "body", name: "body", schema: v2Ref(o.body.schema) };
    if (o.body.required) body.required = true;
    params.unshift(body);
  }
  if (params.length) out.parameters = params;
  out.produces = o.responses["200"]?.media ?? OBJECT_MEDIA;
  out.responses = {};
  for (const [code, r] of Object.entries(o.responses)) {
    out.responses[code] = r.schema
      ? { description: r.description, schema: v2Ref(r.schema) }
      : { description: r.description };
  }
  out.schemes = ["https"];
  out.tags = [o.tag];
  if (o.action) out["x-kubernetes-action"] = o.action;
  if (o.gvk) out[GVK_KEY] = { group: o.gvk.group, kind: o.gvk.kind, version: o.gvk.version };
  return out;
}

// ---- the service ----

export interface OpenAPIDocument {
  /** The serialized JSON document. */
  body: string;
  /** Upper-case hex SHA-512 of `body`: the `hash` of its URL and its ETag. */
  hash: string;
}

export interface OpenAPIIndex {
  paths: Record<string, { serverRelativeURL: string }>;
}

interface DocSpec {
  ops: Operation[];
  /** Group-versions whose entries shared GVK lists keep. */
  keepGVs: Set<string>;
  /** GVKs to make sure of, by schema name. */
  ensure: Map<string, GVK[]>;
}

function sha512Hex(text: string): string {
  return createHash("sha512").update(text).digest("hex").toUpperCase();
}

/**
 * Builds and caches the OpenAPI documents for a set of definitions. Rebuild (construct anew)
 * when the definitions change, e.g. when a CRD is added.
 */
export class OpenAPIService {
  readonly #defs: ResourceDefinition[];
  readonly #schemas: SchemaSet;
  #specs: Map<string, DocSpec> | undefined;
  readonly #docs = new Map<string, OpenAPIDocument>();
  #index: OpenAPIIndex | undefined;
  #v2: string | undefined;

  constructor(defs: ResourceDefinition[], schemas: SchemaSet) {
    this.#defs = [...defs];
    const extra: Record<string, SchemaNode> = {};
    for (const [name, node] of Object.entries(DISCOVERY_SCHEMAS)) {
      if (!schemas.has(name)) extra[name] = node;
    }
    for (const def of defs) {
      const list = listSchemaName(def.schema);
      if (!schemas.has(list) && !extra[list]) extra[list] = syntheticList(def);
    }
    this.#schemas = Object.keys(extra).length ? schemas.extend(extra) : schemas;
  }

  /** The document paths served under `/openapi/v3/`, sorted. */
  paths(): string[] {
    return [...this.#docSpecs().keys()].sort();
  }

  /** The body of `GET /openapi/v3`. */
  index(): OpenAPIIndex {
    if (!this.#index) {
      const paths: OpenAPIIndex["paths"] = {};
      for (const path of this.paths()) {
        paths[path] = {
          serverRelativeURL: `/openapi/v3/${path}?hash=${this.document(path)!.hash}`,
        };
      }
      this.#index = { paths };
    }
    return this.#index;
  }

  /** The document at `/openapi/v3/<path>` (`api/v1`, `apis/coordination.platform.io/v1`,
   * `api`, `apis`, `version`, …), or undefined when there is none. */
  document(path: string): OpenAPIDocument | undefined {
    const key = path.replace(/^\/+/, "").replace(/^openapi\/v3\/?/, "").replace(/\/+$/, "");
    const cached = this.#docs.get(key);
    if (cached) return cached;
    const spec = this.#docSpecs().get(key);
    if (!spec) return undefined;
    const body = JSON.stringify(this.#render(spec));
    const doc = { body, hash: sha512Hex(body) };
    this.#docs.set(key, doc);
    return doc;
  }

  /** The Swagger 2.0 document of `GET /openapi/v2` (JSON). */
  v2(): string {
    if (this.#v2 === undefined) {
      const ops: Operation[] = [];
      const ensure = new Map<string, GVK[]>();
      const keep = new Set<string>(["v1"]);
      for (const spec of this.#docSpecs().values()) {
        ops.push(...spec.ops);
        for (const gv of spec.keepGVs) keep.add(gv);
        for (const [name, list] of spec.ensure) {
          ensure.set(name, [...(ensure.get(name) ?? []), ...list]);
        }
      }
      const seen = new Set<string>();
      const unique = ops.filter((o) => {
        const k = `${o.method} ${o.path}`;
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      });
      const paths: Json = {};
      for (const [path, { shared, ops: list }] of byPath(unique)) {
        const item: Json = {};
        const entries: [string, Json][] = list.map((o) => [o.method, v2Operation(o)]);
        if (shared.length) entries.push(["parameters", shared.map(v2Param)]);
        entries.sort(([a], [b]) => (a < b ? -1 : 1));
        for (const [k, v] of entries) item[k] = v;
        paths[path] = item;
      }
      const definitions: Json = {};
      for (const name of this.#schemas.closure(referencedSchemas(unique))) {
        const node = presentSchema(this.#schemas.get(name)!, keep, ensure.get(name) ?? []);
        definitions[name] = v2Schema(node);
      }
      this.#v2 = JSON.stringify({
        definitions,
        info: { title: "Platform", version: "unversioned" },
        paths,
        security: [{ BearerToken: [] }],
        securityDefinitions: SECURITY_SCHEME,
        swagger: "2.0",
      });
    }
    return this.#v2;
  }

  #render(spec: DocSpec): Json {
    const schemas: Json = {};
    for (const name of this.#schemas.closure(referencedSchemas(spec.ops))) {
      schemas[name] = presentSchema(
        this.#schemas.get(name)!,
        spec.keepGVs,
        spec.ensure.get(name) ?? [],
      );
    }
    return {
      components: { schemas, securitySchemes: SECURITY_SCHEME },
      info: { title: "Platform", version: "unversioned" },
      openapi: "3.0.0",
      paths: v3Paths(spec.ops),
    };
  }

  #docSpecs(): Map<string, DocSpec> {
    if (this.#specs) return this.#specs;
    const specs = new Map<string, DocSpec>();
    const groups = new Map<string, Set<string>>();
    for (const def of this.#defs) {
      const path = documentPath(def.group, def.version);
      let spec = specs.get(path);
      if (!spec) {
        spec = {
          ops: [resourceListOperation(def.group, def.version)],
          keepGVs: new Set(["v1", apiVersionOf(def)]),
          ensure: new Map(),
        };
        specs.set(path, spec);
      }
      spec.ops.push(...operationsFor(def));
      const add = (name: string, gvk: GVK) =>
        spec.ensure.set(name, [...(spec.ensure.get(name) ?? []), gvk]);
      add(def.schema, { group: def.group, kind: def.kind, version: def.version });
      add(listSchemaName(def.schema), {
        group: def.group,
        kind: listKindOf(def),
        version: def.version,
      });
      if (def.group) {
        const versions = groups.get(def.group) ?? new Set<string>();
        versions.add(def.version);
        groups.set(def.group, versions);
      }
    }
    const small = (op: Operation): DocSpec => ({
      ops: [op],
      keepGVs: new Set(["v1"]),
      ensure: new Map(),
    });
    specs.set(
      "api",
      small(
        discoveryOperation(
          "/api/",
          "getCoreAPIVersions",
          "core",
          API_VERSIONS,
          "get available API versions",
        ),
      ),
    );
    specs.set(
      "apis",
      small(
        discoveryOperation(
          "/apis/",
          "getAPIVersions",
          "apis",
          API_GROUP_LIST,
          "get available API versions",
        ),
      ),
    );
    for (const group of groups.keys()) {
      specs.set(
        `apis/${group}`,
        small(
          discoveryOperation(
            `/apis/${group}/`,
            `get${groupCamel(group)}APIGroup`,
            lowerFirst(groupCamel(group)),
            API_GROUP,
            "get information of a group",
          ),
        ),
      );
    }
    specs.set(
      "version",
      small(
        discoveryOperation(
          "/version/",
          "getCodeVersion",
          "version",
          VERSION_INFO,
          "get the version information for this server",
          ["application/json"],
        ),
      ),
    );
    this.#specs = specs;
    return specs;
  }
}

/**
 * The OpenAPI documents of a catalogue whose definitions change at runtime (custom
 * resources): a new {@link OpenAPIService} is built, lazily, on the first request after the
 * catalogue changed. `schemas` gives the schema set that covers the current definitions.
 */
export class CatalogueOpenAPI {
  readonly #catalogue: Pick<Catalogue, "revision" | "definitions">;
  readonly #schemas: () => SchemaSet;
  #service?: OpenAPIService;
  #revision = -1;

  constructor(catalogue: Pick<Catalogue, "revision" | "definitions">, schemas: () => SchemaSet) {
    this.#catalogue = catalogue;
    this.#schemas = schemas;
  }

  /** The service for the catalogue as it is now. */
  current(): OpenAPIService {
    if (!this.#service || this.#revision !== this.#catalogue.revision) {
      this.#revision = this.#catalogue.revision;
      this.#service = new OpenAPIService([...this.#catalogue.definitions], this.#schemas());
    }
    return this.#service;
  }

  index(): OpenAPIIndex {
    return this.current().index();
  }

  document(path: string): OpenAPIDocument | undefined {
    return this.current().document(path);
  }

  v2(): string {
    return this.current().v2();
  }
}

/** A list schema for a kind whose schema set has none (e.g. a custom resource). */
function syntheticList(def: ResourceDefinition): SchemaNode {
  return {
    description: `${def.kind}List is a list of ${def.kind}.`,
    type: "object",
    required: ["items"],
    properties: {
      ...TYPE_META,
      items: { description: `The ${def.kind} objects.`, type: "array", items: ref(def.schema) },
      metadata: { description: "List metadata.", allOf: [ref(`${META}ListMeta`)], default: {} },
    },
    [GVK_KEY]: [{ group: def.group, kind: listKindOf(def), version: def.version }],
  };
}
