/**
 * A patch applied on the client (`--local`, `--dry-run=client`) with the server's own patch
 * code (lib/patch): JSON patch, merge patch, and strategic merge patch driven by the built-in
 * schema of the object's kind. Strategic merge patch needs that schema, so custom resources
 * are refused, as kube refuses them.
 *
 * @module
 */

import { canonicalGroup, isBuiltinGroup, StatusError } from "../api/mod.ts";
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from "../patch/mod.ts";
import { type FieldType, SchemaSet, typeOf, UNTYPED } from "../schema/mod.ts";
import { CommandError } from "./errors.ts";

/** The patch kinds of `--type`. */
export type PatchType = "json" | "merge" | "strategic";

/** The media type a patch kind is sent as. */
export const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  json: "application/json-patch+json",
  merge: "application/merge-patch+json",
  strategic: "application/strategic-merge-patch+json",
};

/** Whether objects of `group` are custom resources (no built-in schema, no strategic patch). */
export function isCustomGroup(group: string): boolean {
  return group !== "" && !isBuiltinGroup(group);
}

/** The refusal of a strategic merge patch for a custom resource. */
export function strategicRefused(what: string): CommandError {
  return new CommandError(
    `strategic merge patch is not supported for custom resources (${what}); ` +
      "use --type merge or --type json",
  );
}

/**
 * `obj` with `patch` applied.
 *
 * @throws {CommandError} for a patch that does not apply, or a strategic patch of a custom
 * resource.
 */
export function patchLocally(
  obj: Record<string, unknown>,
  patch: unknown,
  type: PatchType,
): Record<string, unknown> {
  const apiVersion = String(obj.apiVersion ?? "");
  const slash = apiVersion.indexOf("/");
  const group = slash < 0 ? "" : apiVersion.slice(0, slash);
  try {
    let out: unknown;
    if (type === "json") {
      out = applyJsonPatch(obj, patch);
    } else if (type === "merge") {
      out = applyMergePatch(structuredClone(obj), patch);
    } else {
      if (isCustomGroup(group)) throw strategicRefused(`${obj.kind}.${group}`);
      if (!patch || typeof patch !== "object" || Array.isArray(patch)) {
        throw new CommandError("a strategic merge patch must be a JSON object");
      }
      out = applyStrategicMergePatch(obj, patch, fieldTypeOf(group, apiVersion, obj.kind));
    }
    if (!out || typeof out !== "object" || Array.isArray(out)) {
      throw new CommandError("the patched object is not a JSON object");
    }
    return out as Record<string, unknown>;
  } catch (err) {
    if (err instanceof StatusError) throw new CommandError(err.message);
    throw err;
  }
}

/** The schema type of a built-in kind, untyped when there is none. */
function fieldTypeOf(group: string, apiVersion: string, kind: unknown): FieldType {
  const schemas = SchemaSet.builtin();
  const version = apiVersion.slice(apiVersion.indexOf("/") + 1);
  for (const name of schemas.names()) {
    const gvks = schemas.get(name)?.["x-kubernetes-group-version-kind"] as
      | { group: string; version: string; kind: string }[]
      | undefined;
    if (
      gvks?.some((g) =>
        canonicalGroup(g.group) === canonicalGroup(group) && g.version === version &&
        g.kind === kind
      )
    ) {
      return typeOf(schemas, name);
    }
  }
  return UNTYPED;
}
