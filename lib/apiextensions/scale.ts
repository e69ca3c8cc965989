/**
 * The `scale` subresource of a CRD version (`subresources.scale`): the checks of its paths when
 * a CRD is written, the paths the registry serves the Scale with, and the checks every object
 * of the version passes while it has a scale subresource (replicas are non-negative int32s,
 * the selector a string), worded as Kubernetes words them
 * (`.spec.replicas: Invalid value: -1: should be a non-negative integer`).
 */

import type { FieldError } from "../api/mod.ts";
import type { KubeObject, ScalePaths } from "../registry/mod.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const INT32_MAX = 2147483647;

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** kube's `validateSimpleJSONPath`: `.a.b` form (scale paths and printer columns). */
export function simplePathErrors(s: string, field: string): FieldError[] {
  if (s.length === 0) return [{ type: "Invalid", field, value: s, detail: "must not be empty" }];
  if (s[0] !== ".") {
    return [{
      type: "Invalid",
      field,
      value: s,
      detail: "must be a simple json path starting with .",
    }];
  }
  return [];
}

/** Errors of a version's `subresources.scale` (`subresources` is its path). */
export function validateScaleSubresource(scale: unknown, subresources: string): FieldError[] {
  if (scale === undefined || scale === null) return [];
  const errs: FieldError[] = [];
  const s: Json = isObject(scale) ? scale : {};
  const path = (under: string[], name: string, what: string) => {
    const field = `${subresources}.scale.${name}`;
    const value = s[name];
    if (typeof value !== "string" || value === "") {
      if (name !== "labelSelectorPath") errs.push({ type: "Required", field });
      return;
    }
    const bad = simplePathErrors(value, field);
    if (bad.length) errs.push(...bad);
    else if (!under.some((u) => value.startsWith(`${u}.`))) {
      errs.push({ type: "Invalid", field, value, detail: `should be a json path under ${what}` });
    }
  };
  path([".spec"], "specReplicasPath", ".spec");
  path([".status"], "statusReplicasPath", ".status");
  path([".spec", ".status"], "labelSelectorPath", "either .spec or .status");
  return errs;
}

/** The registry's paths for a version's scale subresource, if it has one. */
export function scalePathsOf(version: KubeObject): ScalePaths | undefined {
  const scale = version?.subresources?.scale;
  if (!isObject(scale)) return undefined;
  const paths: ScalePaths = {
    specReplicasPath: scale.specReplicasPath,
    statusReplicasPath: scale.statusReplicasPath,
  };
  if (typeof scale.labelSelectorPath === "string" && scale.labelSelectorPath) {
    paths.labelSelectorPath = scale.labelSelectorPath;
  }
  return paths;
}

function typeName(v: unknown): string {
  if (Array.isArray(v)) return "[]interface {}";
  if (isObject(v)) return "map[string]interface {}";
  if (typeof v === "number") return Number.isInteger(v) ? "int64" : "float64";
  if (typeof v === "boolean") return "bool";
  return typeof v;
}

/** What is at a simple path: the value, or the accessor error kube reports. */
function lookup(obj: unknown, path: string): { value?: unknown; error?: string } {
  let v: unknown = obj;
  for (const part of path.replace(/^\./, "").split(".")) {
    if (v === undefined || v === null) return {};
    if (!isObject(v)) {
      return {
        error: `${path} accessor error: ${JSON.stringify(v)} is of the type ${
          typeName(v)
        }, expected map[string]interface{}`,
      };
    }
    v = v[part];
  }
  return { value: v ?? undefined };
}

function replicasErrors(obj: unknown, path: string): FieldError[] {
  const { value, error } = lookup(obj, path);
  if (error) return [{ type: "Invalid", field: path, value: 0, detail: error }];
  if (value === undefined) return [];
  if (typeof value !== "number" || !Number.isInteger(value)) {
    return [{
      type: "Invalid",
      field: path,
      value: 0,
      detail: `${path} accessor error: ${JSON.stringify(value)} is of the type ${
        typeName(value)
      }, expected int64`,
    }];
  }
  if (value < 0) {
    return [{ type: "Invalid", field: path, value, detail: "should be a non-negative integer" }];
  }
  if (value > INT32_MAX) {
    return [{
      type: "Invalid",
      field: path,
      value,
      detail: `should be less than or equal to ${INT32_MAX}`,
    }];
  }
  return [];
}

/** The checks an object passes while its version has a scale subresource. */
export function validateScaleFields(obj: unknown, paths: ScalePaths | undefined): FieldError[] {
  if (!paths) return [];
  const errs = [
    ...replicasErrors(obj, paths.specReplicasPath),
    ...replicasErrors(obj, paths.statusReplicasPath),
  ];
  if (paths.labelSelectorPath) {
    const { value, error } = lookup(obj, paths.labelSelectorPath);
    const detail = error ??
      (value !== undefined && typeof value !== "string"
        ? `${paths.labelSelectorPath} accessor error: ${JSON.stringify(value)} is of the type ${
          typeName(value)
        }, expected string`
        : undefined);
    if (detail) {
      errs.push({ type: "Invalid", field: paths.labelSelectorPath, value: "", detail });
    }
  }
  return errs;
}
