/**
 * POST to a computed resource (an access review, a token review) or a computed subresource
 * (`serviceaccounts/{name}/token`): decode, validate, answer; nothing is stored. kube answers
 * these with 201 Created.
 */

import { KUBE_PROTOBUF, negotiateOutput } from "../../codec/mod.ts";
import type { KubeObject, ReviewServices } from "../../registry/mod.ts";
import type { RequestContext } from "../context.ts";
import { objectResponse } from "../respond.ts";
import { toKubeApiVersion } from "../../api/mod.ts";
import {
  checkNamespace,
  dryRunOf,
  fieldValidationOf,
  readObject,
  type ResourceScope,
  strategyContext,
} from "./scope.ts";

export interface ReviewRequest {
  services: ReviewServices;
  /** For a computed subresource: the object it hangs off. */
  parent?: KubeObject;
}

export async function reviewHandler(
  ctx: RequestContext,
  scope: ResourceScope,
  request: ReviewRequest,
): Promise<Response> {
  const negotiated = negotiateOutput(ctx.req.headers.get("Accept"), { protobuf: scope.protobuf });
  dryRunOf(ctx, "CreateOptions"); // validated; a review writes nothing either way
  const fieldValidation = fieldValidationOf(ctx);
  const { object: body, duplicateFields } = await readObject(ctx, scope);
  checkNamespace(body, ctx.info.namespace, scope.registry.def.namespaced);
  // Kubernetes' typed clients send and expect Kubernetes' group names: a body in that
  // spelling, or kube's protobuf media type, is answered in it (objectResponse respells).
  const kubeApiVersion = toKubeApiVersion(scope.registry.apiVersion);
  if (body.apiVersion === kubeApiVersion && kubeApiVersion !== scope.registry.apiVersion) {
    body.apiVersion = scope.registry.apiVersion;
    ctx.kubeSpelling = true;
  }
  if ((ctx.req.headers.get("Content-Type") ?? "").startsWith(KUBE_PROTOBUF)) {
    ctx.kubeSpelling = true;
  }
  const res = await scope.registry.review(body, {
    ...strategyContext(ctx),
    namespace: ctx.info.namespace,
    services: request.services,
    parent: request.parent,
  }, { fieldValidation, duplicateFields });
  ctx.warnings.push(...res.warnings);
  return objectResponse(ctx, 201, res.object, negotiated);
}
