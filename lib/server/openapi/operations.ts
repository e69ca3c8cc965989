/**
 * The operations of one resource definition, in the shapes Kubernetes generates: list and
 * watch (namespaced and across namespaces), create, read, replace, patch, delete, delete a
 * collection, the deprecated watch paths, and the subresources (`status`, `finalize`, `token`,
 * …), with operation ids, tags, parameters, media types and GVK markers.
 */

import type { ResourceDefinition } from "../../registry/mod.ts";
import { SCALE_SCHEMA } from "./extra_schemas.ts";
import {
  article,
  DELETE_OPTIONS,
  GROUP_SUFFIX,
  groupCamel,
  type GVK,
  listSchemaName,
  PATCH,
  STATUS,
  tagOf,
  upperFirst,
  WATCH_EVENT,
} from "./names.ts";
import {
  DELETE_COLLECTION_PARAMS,
  DELETE_PARAMS,
  LIST_PARAMS,
  nameParam,
  NAMESPACE_PARAM,
  type Param,
  PATCH_PARAMS,
  Q,
  WRITE_PARAMS,
} from "./parameters.ts";
import {
  accepted,
  created,
  type Method,
  ok,
  type Operation,
  PATCH_MEDIA,
  PROTOBUF,
  type Response,
  STREAM_MEDIA,
  UNAUTHORIZED,
} from "./model.ts";

/** How a subresource is served when it is not the usual get/put/patch of the parent kind. */
interface SubresourceShape {
  methods: Method[];
  /** The kind of the request and response body, when not the parent's. */
  body?: { gvk: GVK; schema: string };
}

const SUBRESOURCES: Record<string, SubresourceShape> = {
  finalize: { methods: ["put"] },
  scale: {
    methods: ["get", "put", "patch"],
    body: { gvk: { group: "autoscaling", kind: "Scale", version: "v1" }, schema: SCALE_SCHEMA },
  },
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
