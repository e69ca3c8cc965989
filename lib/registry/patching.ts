/**
 * The non-apply patch types as one function: the object a JSON Patch, a JSON merge patch or a
 * strategic merge patch makes of the stored object. The result is a new object that shares
 * nothing with the stored one (which is never mutated); the registry then writes it like an
 * update.
 */

import { badRequest, MAX_NESTING_DEPTH, valueTooDeep } from "../api/mod.ts";
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from "../patch/mod.ts";
import type { KubeObject } from "./definition.ts";
import type { FieldType } from "../schema/mod.ts";

export type PatchType = "json" | "merge" | "strategic" | "apply";

export function patchedObject(
  type: Exclude<PatchType, "apply">,
  old: KubeObject,
  patch: unknown,
  fieldType: FieldType,
): KubeObject {
  let out: unknown;
  if (type === "json") {
    out = applyJsonPatch(old, patch);
  } else {
    if (!patch || typeof patch !== "object" || Array.isArray(patch)) {
      throw badRequest(`the patch must be a JSON object, not ${kindOfJson(patch)}`);
    }
    // JSON Patch and strategic merge patch work on a deep copy of `old`; a merge patch
    // shares unchanged subtrees with it, so copy that one.
    out = type === "merge"
      ? structuredClone(applyMergePatch(old, patch))
      : applyStrategicMergePatch(old, patch, fieldType);
  }
  if (!out || typeof out !== "object" || Array.isArray(out)) {
    throw badRequest(`the patched object must be a JSON object, not ${kindOfJson(out)}`);
  }
  // A patch may add a deep value deep inside the object: the result must fit the limit that
  // decoding a body of it would.
  if (valueTooDeep(out)) {
    throw badRequest(`the patched object exceeded max depth of ${MAX_NESTING_DEPTH}`);
  }
  return out as KubeObject;
}

function kindOfJson(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return `a ${typeof v}`;
}
