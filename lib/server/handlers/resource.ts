/**
 * Resource requests: find the definition the path addresses, check that the verb and path
 * shape fit it, and hand over to the verb's handler. Routes come from the definitions.
 */

import { kubeGroup, methodNotAllowed, notFound, StatusError } from "../../api/mod.ts";
import type {
  Catalogue,
  ResourceDefinition,
  ResourceRegistry,
  ReviewServices,
  Verb,
} from "../../registry/mod.ts";
import { alwaysAllow } from "../../auth/mod.ts";
import { reviewHandler } from "./review.ts";
import type { RequestContext } from "../context.ts";
import { hasProtobuf } from "../../codec/mod.ts";
import { createHandler } from "./create.ts";
import { deleteCollectionHandler, deleteHandler } from "./delete.ts";
import { getHandler } from "./get.ts";
import { listHandler } from "./list.ts";
import { patchHandler } from "./patch.ts";
import { updateHandler } from "./update.ts";
import { scaleHandler } from "./scale.ts";
import { watchHandler } from "./watch.ts";
import type { ResourceScope } from "./scope.ts";
import type { WatchPacer } from "./watch_pacing.ts";
import type { ServerMetrics } from "../../metrics/mod.ts";

type VerbHandler = (ctx: RequestContext, scope: ResourceScope) => Promise<Response>;

const HANDLERS: Partial<Record<Verb, VerbHandler>> = {
  get: getHandler,
  list: listHandler,
  watch: watchHandler,
  create: createHandler,
  update: updateHandler,
  patch: patchHandler,
  delete: deleteHandler,
  deletecollection: deleteCollectionHandler,
};

/** Verbs a subresource serves. */
const SUBRESOURCE_VERBS: Verb[] = ["get", "update", "patch"];

/** 404 for a path that addresses nothing, in kube's words. */
export function pathNotFound(): StatusError {
  return new StatusError(404, "NotFound", "the server could not find the requested resource", {
    details: {},
  });
}

export interface ResourceRouterDeps {
  catalogue: Catalogue;
  registries: Map<ResourceDefinition, ResourceRegistry>;
  maxBodyBytes: number;
  /** The WatchList feature gate (streaming lists). */
  watchList?: boolean;
  /** The AllowUnsafeMalformedObjectDeletion feature gate. @default false */
  unsafeDelete?: boolean;
  /** `--min-request-timeout`, seconds. @default 1800 */
  minRequestTimeoutS?: number;
  /** What computed resources (access and token reviews, token requests) answer from. */
  reviews?: ReviewServices;
  /** The server's watch streams, counted to pace their writes. */
  watchPacer: WatchPacer;
  /** Where watches are counted (`apiserver_registered_watchers`, …). */
  metrics?: ServerMetrics;
}

const NO_REVIEW_SERVICES: ReviewServices = {
  authorizer: alwaysAllow,
  authenticator: { authenticate: () => undefined },
  reviewToken: () => Promise.resolve({ audiences: [], error: "invalid bearer token" }),
};

export function resourceHandler(deps: ResourceRouterDeps) {
  const services = deps.reviews ?? NO_REVIEW_SERVICES;
  // One scope per registry, made on first use: requests share it.
  const scopes = new Map<ResourceRegistry, ResourceScope>();
  const scopeOf = (registry: ResourceRegistry): ResourceScope => {
    let scope = scopes.get(registry);
    if (!scope) {
      scope = {
        registry,
        maxBodyBytes: deps.maxBodyBytes,
        watchList: deps.watchList ?? false,
        unsafeDelete: deps.unsafeDelete ?? false,
        minRequestTimeoutS: deps.minRequestTimeoutS ?? 1800,
        protobuf: hasProtobuf(registry.apiVersion, registry.def.kind),
        watchPacer: deps.watchPacer,
        metrics: deps.metrics,
      };
      scopes.set(registry, scope);
    }
    return scope;
  };
  return async (ctx: RequestContext): Promise<Response> => {
    const info = ctx.info;
    // The group is canonical (request_info.ts): a built-in group's Kubernetes spelling finds
    // the same definition, answered in that spelling; a custom resource has one spelling.
    const def = deps.catalogue.lookup(info.group, info.version, info.resource);
    if (!def || (def.customResource && info.kubeSpelling)) throw pathNotFound();
    if (def.deprecationWarning) {
      // A built-in version's warning names its group as the request spelled it.
      const own = `${def.group}/`;
      const warning = def.deprecationWarning;
      ctx.warnings.push(
        info.kubeSpelling && warning.startsWith(own)
          ? `${kubeGroup(def.group)}/${warning.slice(own.length)}`
          : warning,
      );
    }
    const verb = info.verb as Verb;
    // A cluster-scoped resource does not exist under a namespace (kube: 404), whatever a
    // Role in that namespace grants on it.
    if (!def.namespaced && info.namespaced) throw pathNotFound();
    if (def.namespaced && !info.namespaced) {
      // Across all namespaces only list and watch exist.
      if (info.name) throw pathNotFound();
      if (verb !== "list" && verb !== "watch") throw methodNotAllowed();
    }
    // The /watch/ prefix is watch whatever the method; only GET serves it.
    if (info.legacyWatch && ctx.req.method !== "GET" && ctx.req.method !== "HEAD") {
      throw methodNotAllowed();
    }
    const computed = info.subresource ? def.computedSubresources?.[info.subresource] : undefined;
    if (computed) {
      if (verb !== "create") throw methodNotAllowed();
      const parent = await deps.registries.get(def)!.get(info.namespace, info.name);
      const scope = scopeOf(deps.registries.get(computed)!);
      return await reviewHandler(ctx, scope, { services, parent });
    }
    if (info.subresource) {
      if (!def.subresources?.includes(info.subresource)) throw pathNotFound();
      if (!SUBRESOURCE_VERBS.includes(verb)) throw methodNotAllowed();
    } else if (!def.verbs.includes(verb)) {
      throw methodNotAllowed();
    }
    // Objects are created by POST to their collection; a named path has no POST (kube: 405),
    // so a create authorized on one name never makes an object of another.
    if (verb === "create" && info.name && !info.subresource) throw methodNotAllowed();
    if (def.review) {
      return await reviewHandler(ctx, scopeOf(deps.registries.get(def)!), { services });
    }
    if (info.subresource === "scale" && def.scale) {
      return await scaleHandler(ctx, scopeOf(deps.registries.get(def)!));
    }
    const handler = HANDLERS[verb];
    if (!handler) throw methodNotAllowed();
    const registry = deps.registries.get(def)!;
    if (
      info.name === "" &&
      (verb === "get" || verb === "update" || verb === "patch" || verb === "delete")
    ) {
      throw notFound(registry.gr, "");
    }
    return await handler(ctx, scopeOf(registry));
  };
}
