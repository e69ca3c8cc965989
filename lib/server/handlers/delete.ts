/** DELETE of one object, and of a collection (deletecollection). */

import { badRequest, invalid } from "../../api/mod.ts";
import { negotiateOutput } from "../../codec/mod.ts";
import { type DeleteOptions, type KubeObject, parseFilter } from "../../registry/mod.ts";
import type { RequestContext } from "../context.ts";
import { objectResponse } from "../respond.ts";
import { dryRunOf, readDecoded, type ResourceScope, strategyContext } from "./scope.ts";
import {
  authorizeUnsafeDelete,
  unsafeDeleteCollectionError,
  unsafeDeleteRequested,
} from "./unsafe_delete.ts";

const POLICIES = ["Foreground", "Background", "Orphan"];

/** DeleteOptions from the body (optional) and the query; query values win for scalars.
 * `unsafe`: ignoreStoreReadErrorWithClusterBreakingPotential, when its gate is on. */
async function deleteOptionsOf(
  ctx: RequestContext,
  scope: ResourceScope,
): Promise<DeleteOptions & { unsafe: boolean }> {
  let body: KubeObject = {};
  const read = await readDecoded(ctx, scope);
  if (read) {
    const decoded = read.value;
    if (!decoded || typeof decoded !== "object" || Array.isArray(decoded)) {
      throw badRequest("the request body must be a DeleteOptions object");
    }
    body = decoded as KubeObject;
    if (body.kind !== undefined && body.kind !== "DeleteOptions") {
      throw badRequest(`the body of a delete must be DeleteOptions, not ${body.kind}`);
    }
  }
  const q = ctx.url.searchParams;
  const policy = q.get("propagationPolicy") ?? body.propagationPolicy;
  if (policy !== undefined && policy !== null && !POLICIES.includes(policy)) {
    throw invalid("DeleteOptions", "meta.platform.io", "", [{
      type: "NotSupported",
      field: "propagationPolicy",
      value: policy,
      detail: 'supported values: "Foreground", "Background", "Orphan"',
    }]);
  }
  const grace = q.get("gracePeriodSeconds") ?? body.gracePeriodSeconds;
  if (grace !== undefined && grace !== null && !Number.isInteger(Number(grace))) {
    throw badRequest(`invalid gracePeriodSeconds: "${grace}"`);
  }
  if (body.dryRun !== undefined && !q.has("dryRun")) {
    for (const v of [body.dryRun].flat()) ctx.url.searchParams.append("dryRun", String(v));
  }
  const pre = body.preconditions;
  return {
    unsafe: unsafeDeleteRequested(ctx, body, scope.unsafeDelete),
    dryRun: dryRunOf(ctx, "DeleteOptions"),
    preconditions: pre && typeof pre === "object"
      ? { uid: pre.uid ?? undefined, resourceVersion: pre.resourceVersion ?? undefined }
      : undefined,
  };
}

export async function deleteHandler(ctx: RequestContext, scope: ResourceScope): Promise<Response> {
  const negotiated = negotiateOutput(ctx.req.headers.get("Accept"), { protobuf: scope.protobuf });
  const { unsafe, ...opts } = await deleteOptionsOf(ctx, scope);
  const { namespace, name } = ctx.info;
  if (unsafe) {
    await authorizeUnsafeDelete(ctx);
    await scope.registry.deleteCorrupt(namespace, name, opts.dryRun);
    // No object to return (it cannot be read): kube's handler answers its own Status.
    const status = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Success",
      code: 200,
      details: { name, kind: scope.registry.def.kind },
    };
    return objectResponse(ctx, 200, status, negotiated);
  }
  const res = await scope.registry.delete(namespace, name, {
    ...opts,
    context: strategyContext(ctx),
  });
  const { def } = scope.registry;
  if (!res.deleted || def.deleteReturnsObject) {
    return objectResponse(ctx, 200, res.object, negotiated);
  }
  const details: Record<string, unknown> = { name, kind: def.plural, uid: res.object.metadata.uid };
  if (def.group) details.group = def.group;
  const status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details };
  return objectResponse(ctx, 200, status, negotiated);
}

export async function deleteCollectionHandler(
  ctx: RequestContext,
  scope: ResourceScope,
): Promise<Response> {
  const negotiated = negotiateOutput(ctx.req.headers.get("Accept"), { protobuf: scope.protobuf });
  const opts = await deleteOptionsOf(ctx, scope);
  if (opts.unsafe) throw unsafeDeleteCollectionError();
  const q = ctx.url.searchParams;
  const def = scope.registry.def;
  const filter = parseFilter(def, q.get("labelSelector"), q.get("fieldSelector"));
  const res = await scope.registry.deleteCollection(ctx.info.namespace, {
    filter,
    dryRun: opts.dryRun,
    context: strategyContext(ctx),
  });
  const list = {
    kind: `${def.kind}List`,
    apiVersion: scope.registry.apiVersion,
    metadata: { resourceVersion: res.resourceVersion },
    items: res.items,
  };
  return objectResponse(ctx, 200, list, negotiated);
}
