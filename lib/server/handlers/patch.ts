/**
 * PATCH: JSON Patch, JSON merge patch, strategic merge patch and server-side apply, picked by
 * the Content-Type. The handler reads the body and the PatchOptions (fieldManager, force,
 * dryRun, fieldValidation); the registry applies the patch to the stored object and writes
 * it like an update (apply creates a missing object).
 */

import {
  badRequest,
  type FieldError,
  invalid,
  isJsonObject,
  unsupportedMediaType,
} from "../../api/mod.ts";
import { decodeBody, negotiateOutput } from "../../codec/mod.ts";
import type { PatchType } from "../../registry/mod.ts";
import { managerFromUserAgent, validateFieldManager } from "../../apply/mod.ts";
import type { RequestContext } from "../context.ts";
import { authorizeVerb } from "../filters/authorization.ts";
import { objectResponse } from "../respond.ts";
import { queryBool } from "../request_info.ts";
import {
  dryRunOf,
  fieldValidationOf,
  readBody,
  type ResourceScope,
  strategyContext,
  toCanonicalApiVersion,
} from "./scope.ts";

const PATCH_TYPES: Record<string, PatchType> = {
  "application/json-patch+json": "json",
  "application/merge-patch+json": "merge",
  "application/strategic-merge-patch+json": "strategic",
  "application/apply-patch+yaml": "apply",
};

/** The patch types a resource accepts, in kube's order (no strategic merge patch for custom
 * resources). */
export function patchMediaTypes(strategic: boolean): string[] {
  return Object.keys(PATCH_TYPES).filter((t) => strategic || PATCH_TYPES[t] !== "strategic");
}

function patchTypeOf(contentType: string | null, strategic: boolean): PatchType {
  const base = (contentType ?? "").split(";")[0].trim().toLowerCase();
  const type = PATCH_TYPES[base];
  if (!type || (type === "strategic" && !strategic)) {
    throw unsupportedMediaType(contentType ?? "", patchMediaTypes(strategic));
  }
  return type;
}

function optionsInvalid(errors: FieldError[]): never {
  throw invalid("PatchOptions", "meta.platform.io", "", errors);
}

/** fieldManager and force, checked as kube checks PatchOptions (also for `/scale`). */
export function patchOptionsOf(
  ctx: RequestContext,
  type: PatchType,
): { manager: string; force: boolean } {
  const q = ctx.url.searchParams;
  const given = q.get("fieldManager");
  const forceParam = queryBool(ctx.url, "force");
  const force = forceParam ?? false;
  const errors: FieldError[] = [];
  if (type === "apply" && !given) {
    errors.push({ type: "Required", field: "fieldManager", detail: "is required for apply patch" });
  }
  // As kube: PatchOptions.Force is set whenever the parameter is present, even as false.
  if (type !== "apply" && forceParam !== undefined) {
    errors.push({
      type: "Forbidden",
      field: "force",
      detail: "may not be specified for non-apply patch",
    });
  }
  if (given) errors.push(...validateFieldManager(given));
  if (errors.length) optionsInvalid(errors);
  return { manager: given || managerFromUserAgent(ctx.req.headers.get("User-Agent")), force };
}

export async function patchHandler(ctx: RequestContext, scope: ResourceScope): Promise<Response> {
  const negotiated = negotiateOutput(ctx.req.headers.get("Accept"), { protobuf: scope.protobuf });
  const def = scope.registry.def;
  const type = patchTypeOf(ctx.req.headers.get("Content-Type"), !def.customResource);
  const dryRun = dryRunOf(ctx, "PatchOptions");
  const fieldValidation = fieldValidationOf(ctx);
  const { manager, force } = patchOptionsOf(ctx, type);
  const text = await readBody(ctx, scope.maxBodyBytes);
  if (!text.trim()) throw badRequest("the body of the request is empty: a patch is required");
  // An apply configuration is YAML (JSON is YAML); the other patch types are JSON.
  const decoded = decodeBody(text, type === "apply" ? "yaml" : "json");
  const body = decoded.value;
  if (type === "apply" && isJsonObject(body)) toCanonicalApiVersion(ctx, scope, body);
  // A JSON patch's operations are no object fields.
  const duplicates = type !== "json" && fieldValidation !== "Ignore"
    ? decoded.duplicateFields()
    : [];
  const { namespace, name, subresource } = ctx.info;
  const res = await scope.registry.patch(
    namespace,
    name,
    { type, body },
    strategyContext(ctx, subresource),
    {
      dryRun,
      fieldValidation,
      duplicateFields: duplicates,
      subresource,
      manager,
      force,
      // Apply is `patch` on an existing object and `create` on a missing one.
      beforeCreate: () => authorizeVerb(ctx, "create"),
    },
  );
  ctx.warnings.push(...res.warnings);
  return objectResponse(ctx, res.created ? 201 : 200, res.object, negotiated);
}
