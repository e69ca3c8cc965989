/** PUT: replace an object (or a subresource's part of it); creates a missing object. */

import { negotiateOutput } from "../../codec/mod.ts";
import type { RequestContext } from "../context.ts";
import { authorizeVerb } from "../filters/authorization.ts";
import { objectResponse } from "../respond.ts";
import {
  checkNamespace,
  dryRunOf,
  fieldManagerOf,
  fieldValidationOf,
  readObject,
  type ResourceScope,
  strategyContext,
} from "./scope.ts";

export async function updateHandler(ctx: RequestContext, scope: ResourceScope): Promise<Response> {
  const negotiated = negotiateOutput(ctx.req.headers.get("Accept"), { protobuf: scope.protobuf });
  const dryRun = dryRunOf(ctx, "UpdateOptions");
  const fieldValidation = fieldValidationOf(ctx);
  const manager = fieldManagerOf(ctx, "UpdateOptions");
  const { object: body, duplicateFields } = await readObject(ctx, scope);
  const { namespace, name, subresource } = ctx.info;
  checkNamespace(body, namespace, scope.registry.def.namespaced);
  const res = await scope.registry.update(
    namespace,
    name,
    body,
    strategyContext(ctx, subresource),
    {
      dryRun,
      fieldValidation,
      duplicateFields,
      manager,
      subresource,
      // A PUT that creates needs `create` besides `update`, as in kube.
      beforeCreate: () => authorizeVerb(ctx, "create"),
    },
  );
  ctx.warnings.push(...res.warnings);
  return objectResponse(ctx, res.created ? 201 : 200, res.object, negotiated);
}
