/** POST: create an object in a collection. */

import { negotiateOutput } from "../../codec/mod.ts";
import type { RequestContext } from "../context.ts";
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

export async function createHandler(ctx: RequestContext, scope: ResourceScope): Promise<Response> {
  const negotiated = negotiateOutput(ctx.req.headers.get("Accept"), { protobuf: scope.protobuf });
  const dryRun = dryRunOf(ctx, "CreateOptions");
  const fieldValidation = fieldValidationOf(ctx);
  const manager = fieldManagerOf(ctx, "CreateOptions");
  const { object: body, duplicateFields } = await readObject(ctx, scope);
  checkNamespace(body, ctx.info.namespace, scope.registry.def.namespaced);
  const res = await scope.registry.create(ctx.info.namespace, body, strategyContext(ctx), {
    dryRun,
    fieldValidation,
    duplicateFields,
    manager,
  });
  ctx.warnings.push(...res.warnings);
  return objectResponse(ctx, 201, res.object, negotiated);
}
