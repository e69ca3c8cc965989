/**
 * The `scale` subresource of a resource that has one (`def.scale`): GET, PUT and PATCH (JSON
 * Patch, merge patch, server-side apply; strategic merge patch is refused as kube refuses it
 * for custom resources) of an autoscaling/v1 Scale, in JSON, YAML or protobuf. The registry
 * maps the Scale onto the object (lib/registry/scale.ts).
 */

import { badRequest, unsupportedMediaType } from "../../api/mod.ts";
import { decodeBody, negotiateOutput } from "../../codec/mod.ts";
import { SCALE_PATCH_TYPES, type ScaleChange } from "../../registry/mod.ts";
import type { RequestContext } from "../context.ts";
import { objectResponse } from "../respond.ts";
import { patchOptionsOf } from "./patch.ts";
import {
  dryRunOf,
  fieldManagerOf,
  fieldValidationOf,
  readBody,
  readObject,
  type ResourceScope,
  strategyContext,
} from "./scope.ts";

export async function scaleHandler(ctx: RequestContext, scope: ResourceScope): Promise<Response> {
  // A Scale has a protobuf encoding, whatever the resource it scales.
  const scaleScope = { ...scope, protobuf: true };
  const negotiated = negotiateOutput(ctx.req.headers.get("Accept"), { protobuf: true });
  const { namespace, name, verb } = ctx.info;
  const registry = scope.registry;
  if (verb === "get") {
    return objectResponse(ctx, 200, await registry.getScale(namespace, name), negotiated);
  }
  const optionsKind = verb === "update" ? "UpdateOptions" : "PatchOptions";
  let manager: string | undefined;
  let change: ScaleChange;
  if (verb === "update" && !ctx.req.headers.get("Content-Type")) {
    // kubectl's scale client PUTs its Scale without a Content-Type; kube reads that as JSON.
    const text = await readBody(ctx, scope.maxBodyBytes);
    if (!text.trim()) throw badRequest("the request body is empty: an object is required");
    change = { type: "put", body: decodeBody(text, "json").value };
  } else if (verb === "update") {
    change = { type: "put", body: (await readObject(ctx, scaleScope)).object };
  } else {
    const contentType = ctx.req.headers.get("Content-Type") ?? "";
    const base = contentType.split(";")[0].trim().toLowerCase();
    if (!SCALE_PATCH_TYPES.includes(base)) {
      throw unsupportedMediaType(contentType, SCALE_PATCH_TYPES);
    }
    const type = base === "application/json-patch+json"
      ? "json"
      : base === "application/merge-patch+json"
      ? "merge"
      : "apply";
    const options = patchOptionsOf(ctx, type);
    manager = options.manager;
    const text = await readBody(ctx, scope.maxBodyBytes);
    if (!text.trim()) throw badRequest("the body of the request is empty: a patch is required");
    // An apply configuration is YAML (JSON is YAML); the other patch types are JSON.
    const body = decodeBody(text, type === "apply" ? "yaml" : "json").value;
    change = type === "apply" ? { type, body, force: options.force } : { type, body };
  }
  const res = await registry.updateScale(namespace, name, change, strategyContext(ctx, "scale"), {
    dryRun: dryRunOf(ctx, optionsKind),
    fieldValidation: fieldValidationOf(ctx),
    manager: manager ?? fieldManagerOf(ctx, optionsKind),
    subresource: "scale",
  });
  ctx.warnings.push(...res.warnings);
  return objectResponse(ctx, 200, res.object, negotiated);
}
