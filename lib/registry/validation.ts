/**
 * The checks every written body passes: the kind and version it names, its types (before any
 * strategy hook sees it), then schema, metadata and strategy validation with unknown and
 * duplicate fields handled as `fieldValidation` says.
 */

import { badRequest, type FieldError, invalid, validateObjectMeta } from "../api/mod.ts";
import type { KubeObject } from "./definition.ts";
import type { ValidationResult } from "../schema/mod.ts";
import type { RegistryCore } from "./core.ts";
import type { DecodingOptions } from "./write_options.ts";

/** A body must be an object of this kind; apiVersion/kind are defaulted when absent. */
export function checkBody(core: RegistryCore, body: unknown): KubeObject {
  const { def, apiVersion } = core;
  if (!body || typeof body !== "object" || Array.isArray(body)) {
    throw badRequest(`the body of the request must be a ${def.kind} object`);
  }
  // The caller hands the body over (it is freshly decoded): no copy.
  const obj = body as KubeObject;
  if (obj.kind !== undefined && obj.kind !== "" && obj.kind !== def.kind) {
    throw badRequest(
      `the kind in the body (${obj.kind}) does not match the kind of the resource (${def.kind})`,
    );
  }
  if (obj.apiVersion !== undefined && obj.apiVersion !== "" && obj.apiVersion !== apiVersion) {
    throw badRequest(
      `the API version in the data (${obj.apiVersion}) does not match the expected API version (${apiVersion})`,
    );
  }
  obj.apiVersion = apiVersion;
  obj.kind = def.kind;
  if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
  if (typeof obj.metadata !== "object" || Array.isArray(obj.metadata)) {
    throw invalid(def.kind, def.group, "", [{
      type: "TypeInvalid",
      field: "metadata",
      value: obj.metadata,
      detail: "must be of type object",
    }]);
  }
  return obj;
}

/** The object's name is the one on the URL (400 when it names another); sets it if absent. */
export function checkName(obj: KubeObject, name: string): void {
  if (obj.metadata.name && obj.metadata.name !== name) {
    throw badRequest(
      `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`,
    );
  }
  obj.metadata.name = name;
}

/** Wrong types are refused before any strategy hook sees the object (kube fails them at
 * decoding), so hooks can rely on the schema's types. */
export function checkTypes(core: RegistryCore, obj: KubeObject): ValidationResult {
  const { def } = core;
  const res = core.schemas.validate(obj, def.schema);
  const wrong = res.errors.filter((e) => e.type === "TypeInvalid");
  if (wrong.length) throw invalid(def.kind, def.group, obj.metadata?.name ?? "", wrong);
  return res;
}

/**
 * Schema, metadata and strategy validation (`extra`). Unknown and duplicate fields fail under
 * Strict (400), become warnings under Warn (the default) and are dropped silently under
 * Ignore. Returns the warnings.
 */
export async function validateObject(
  core: RegistryCore,
  obj: KubeObject,
  opts: DecodingOptions,
  extra: () => Promise<FieldError[]>,
  how: { checkMeta?: boolean; typeCheck?: ValidationResult } = {},
): Promise<string[]> {
  const { def, schemas } = core;
  const mode = opts.fieldValidation ?? "Warn";
  // Between a create's type check and here only server-set fields change (the strategy's
  // preparation, managed fields): a clean pass then stands, and its unknown fields are
  // those the client sent, as kube's decoder reports them. Errors are looked for again.
  const res = how.typeCheck && how.typeCheck.errors.length === 0
    ? how.typeCheck
    : schemas.validate(obj, def.schema);
  const problems = [
    ...(opts.duplicateFields ?? []).map((f) => `duplicate field "${f}"`),
    ...res.unknownFields.map((f) => `unknown field "${f}"`),
  ];
  if (problems.length && mode === "Strict") {
    throw badRequest(
      `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: strict decoding error: ${
        problems.join(", ")
      }`,
    );
  }
  const warnings = mode === "Warn" ? problems : [];
  if (res.unknownFields.length) schemas.prune(obj, def.schema);
  const errors: FieldError[] = [...res.errors];
  if (how.checkMeta ?? true) {
    errors.push(
      ...validateObjectMeta(obj.metadata, {
        namespaced: def.namespaced,
        nameFn: def.nameValidation ?? "dns1123Subdomain",
      }),
    );
  }
  errors.push(...await extra());
  if (errors.length) {
    throw invalid(def.kind, def.group, obj.metadata?.name ?? "", dedupe(errors));
  }
  return warnings;
}

function dedupe(errors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const k = `${e.type}|${e.field}|${e.detail}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
