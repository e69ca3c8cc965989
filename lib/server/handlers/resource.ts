/**
 * Resource requests: find the definition the path addresses, check that the verb and path
 * shape fit it, and hand over to the verb's handler. Routes come from the definitions.
 */

import { methodNotAllowed, notFound, StatusError } from "../../api/errors.ts";
import type { Catalogue } from "../../registry/catalogue.ts";
import type { ResourceRegistry } from "../../registry/generic.ts";
import type { ResourceDefinition, Verb } from "../../registry/definition.ts";
import type { RequestContext } from "../context.ts";
import { hasProtobuf } from "../../codec/protobuf/mod.ts";
import { createHandler } from "./create.ts";
import { deleteCollectionHandler, deleteHandler } from "./delete.ts";
import { getHandler } from "./get.ts";
import { listHandler } from "./list.ts";
import { patchHandler } from "./patch.ts";
import { updateHandler } from "./update.ts";
import { watchHandler } from "./watch.ts";
import type { ResourceScope } from "./scope.ts";

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
}

export function resourceHandler(deps: ResourceRouterDeps) {
  return (ctx: RequestContext): Promise<Response> => {
    const info = ctx.info;
    const def = deps.catalogue.lookup(info.group, info.version, info.resource);
    if (!def) throw pathNotFound();
    const verb = info.verb as Verb;
    const isNamespaceObject = def.plural === "namespaces" && !def.group;
    const hasNamespace = info.namespace !== "" && !isNamespaceObject;
    if (!def.namespaced && hasNamespace) throw pathNotFound();
    if (def.namespaced && !hasNamespace) {
      // Across all namespaces only list and watch exist.
      if (info.name) throw pathNotFound();
      if (verb !== "list" && verb !== "watch") throw methodNotAllowed();
    }
    if (info.subresource) {
      if (!def.subresources?.includes(info.subresource)) throw pathNotFound();
      if (!SUBRESOURCE_VERBS.includes(verb)) throw methodNotAllowed();
    } else if (!def.verbs.includes(verb)) {
      throw methodNotAllowed();
    }
    if (info.legacyWatch && verb !== "watch") throw methodNotAllowed();
    const handler = HANDLERS[verb];
    if (!handler) throw methodNotAllowed();
    const registry = deps.registries.get(def)!;
    if (
      info.name === "" &&
      (verb === "get" || verb === "update" || verb === "patch" || verb === "delete")
    ) {
      throw notFound(registry.gr, "");
    }
    return handler(ctx, {
      registry,
      maxBodyBytes: deps.maxBodyBytes,
      watchList: deps.watchList ?? false,
      protobuf: hasProtobuf(registry.apiVersion, def.kind),
    });
  };
}
