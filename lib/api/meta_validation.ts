/**
 * Validation of `metadata` (ObjectMeta) on create and update, as kube's apimachinery does it:
 * same checks, same field paths, same messages. The input is untrusted JSON, so types are
 * checked too: a field of the wrong type is a TypeInvalid error and its rules are skipped.
 *
 * Neither function mutates its input. Both return every error found; an empty list means valid.
 *
 * @module
 */

import type { FieldError } from "./errors.ts";
import {
  byteLength,
  isDNS1123Label,
  isQualifiedName,
  isValidLabelValue,
  type NameValidation,
  nameValidationFunc,
  type ValidateNameFunc,
} from "./names.ts";

/** Most bytes that all annotation keys and values of one object may hold together (256 KiB). */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** The finalizer that orphans dependents; may not be combined with foreground deletion. */
export const FINALIZER_ORPHAN_DEPENDENTS = "orphan";
/** The finalizer of foreground deletion. */
export const FINALIZER_DELETE_DEPENDENTS = "foregroundDeletion";

/** Kinds that may not own other objects (`group/version, Kind=kind`). */
const BANNED_OWNERS = new Set(["/v1, Kind=Event"]);

export interface ValidateObjectMetaOptions {
  /** Whether the kind lives in namespaces: namespace required, else forbidden. */
  namespaced: boolean;
  /**
   * How the kind's names are checked: a function such as `nameIsDNSSubdomain`, or the name of
   * a rule (`"dns1123Subdomain"`, `"dns1123Label"`, `"pathSegment"`).
   */
  nameFn: ValidateNameFunc | NameValidation;
  /**
   * Set when validating a create whose name may still be generated from `generateName`: an
   * empty name is then accepted when generateName is set. Kube generates the name before
   * validation, so leave this unset once the name has been generated.
   * @default false
   */
  isCreate?: boolean;
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function typeInvalid(field: string, value: unknown, type: string): FieldError {
  return { type: "TypeInvalid", field, value, detail: `must be of type ${type}` };
}

/**
 * Reads an optional string field: `undefined` and `null` read as `""` (as Go decodes them);
 * anything else that is not a string records a TypeInvalid error and reads as `undefined`.
 */
function optionalString(
  meta: Json,
  key: string,
  path: string,
  errs: FieldError[],
): string | undefined {
  const v = meta[key];
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  errs.push(typeInvalid(path, v, "string"));
  return undefined;
}

/**
 * Validates the metadata of an object being created or updated (with
 * {@link validateObjectMetaUpdate} for the latter). Checks, in kube's order: generateName and
 * name against `nameFn`, namespace (a DNS label when namespaced, forbidden otherwise),
 * generation, labels, annotations (keys and total size), ownerReferences and finalizers.
 *
 * @example
 * ```ts
 * import { nameIsDNSSubdomain } from "./names.ts";
 * validateObjectMeta({ name: "Bad" }, { namespaced: false, nameFn: nameIsDNSSubdomain });
 * // [{ type: "Invalid", field: "metadata.name", value: "Bad", detail: "a lowercase RFC …" }]
 * ```
 */
export function validateObjectMeta(
  meta: unknown,
  options: ValidateObjectMetaOptions,
): FieldError[] {
  const errs: FieldError[] = [];
  const nameFn = nameValidationFunc(options.nameFn);
  if (meta === undefined || meta === null) meta = {};
  if (!isObject(meta)) return [typeInvalid("metadata", meta, "object")];

  const generateName = optionalString(meta, "generateName", "metadata.generateName", errs);
  if (generateName) {
    for (const msg of nameFn(generateName, { prefix: true })) {
      errs.push({
        type: "Invalid",
        field: "metadata.generateName",
        value: generateName,
        detail: msg,
      });
    }
  }

  const name = optionalString(meta, "name", "metadata.name", errs);
  if (name === "") {
    if (!(options.isCreate && generateName)) {
      errs.push({
        type: "Required",
        field: "metadata.name",
        detail: "name or generateName is required",
      });
    }
  } else if (name !== undefined) {
    for (const msg of nameFn(name)) {
      errs.push({ type: "Invalid", field: "metadata.name", value: name, detail: msg });
    }
  }

  const namespace = optionalString(meta, "namespace", "metadata.namespace", errs);
  if (options.namespaced) {
    if (namespace === "") {
      errs.push({ type: "Required", field: "metadata.namespace" });
    } else if (namespace !== undefined) {
      for (const msg of isDNS1123Label(namespace)) {
        errs.push({ type: "Invalid", field: "metadata.namespace", value: namespace, detail: msg });
      }
    }
  } else if (namespace) {
    errs.push({
      type: "Forbidden",
      field: "metadata.namespace",
      detail: "not allowed on this type",
    });
  }

  const generation = meta.generation;
  if (generation !== undefined && generation !== null) {
    if (typeof generation !== "number" || !Number.isInteger(generation)) {
      errs.push(typeInvalid("metadata.generation", generation, "integer"));
    } else if (generation < 0) {
      errs.push({
        type: "Invalid",
        field: "metadata.generation",
        value: generation,
        detail: "must be greater than or equal to 0",
      });
    }
  }

  errs.push(...validateLabels(meta.labels, "metadata.labels"));
  errs.push(...validateAnnotations(meta.annotations, "metadata.annotations"));
  errs.push(...validateOwnerReferences(meta.ownerReferences, "metadata.ownerReferences"));
  errs.push(...validateFinalizers(meta.finalizers, "metadata.finalizers"));
  return errs;
}

/**
 * Calls `check` for each entry of a string→string map. A map that is not an object, or a value
 * that is not a string (reported at `path[key]`), is a TypeInvalid error; for such a value
 * `check` gets `undefined` so that the key is still checked.
 */
function eachStringEntry(
  map: unknown,
  path: string,
  errs: FieldError[],
  check: (key: string, value: string | undefined) => void,
): void {
  if (map === undefined || map === null) return;
  if (!isObject(map)) {
    errs.push(typeInvalid(path, map, "object"));
    return;
  }
  for (const [key, value] of Object.entries(map)) {
    if (typeof value === "string") {
      check(key, value);
    } else {
      check(key, undefined);
      errs.push(typeInvalid(`${path}[${key}]`, value, "string"));
    }
  }
}

/** Label keys are qualified names, values label values; errors sit at the map's path. */
export function validateLabels(labels: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  eachStringEntry(labels, path, errs, (key, value) => {
    for (const msg of isQualifiedName(key)) {
      errs.push({ type: "Invalid", field: path, value: key, detail: msg });
    }
    if (value === undefined) return;
    for (const msg of isValidLabelValue(value)) {
      errs.push({ type: "Invalid", field: path, value, detail: msg });
    }
  });
  return errs;
}

/**
 * Annotation keys are qualified names in any case; keys and values together may hold at most
 * {@link TOTAL_ANNOTATION_SIZE_LIMIT} bytes.
 */
export function validateAnnotations(annotations: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  eachStringEntry(annotations, path, errs, (key, value) => {
    for (const msg of isQualifiedName(key.toLowerCase())) {
      errs.push({ type: "Invalid", field: path, value: key, detail: msg });
    }
    total += byteLength(key) + byteLength(value ?? "");
  });
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) {
    errs.push({
      type: "TooLong",
      field: path,
      detail: `may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes`,
    });
  }
  return errs;
}

/** Go's `%#v` of a `[]string`, which kube puts in some messages. */
function goStringSlice(values: string[]): string {
  return `[]string{${values.map((v) => JSON.stringify(v)).join(", ")}}`;
}

/**
 * Finalizers are qualified names (errors at the list's path, as kube reports them); `orphan`
 * and `foregroundDeletion` exclude each other.
 */
export function validateFinalizers(finalizers: unknown, path: string): FieldError[] {
  if (finalizers === undefined || finalizers === null) return [];
  if (!Array.isArray(finalizers)) return [typeInvalid(path, finalizers, "array")];
  const errs: FieldError[] = [];
  for (const [i, f] of finalizers.entries()) {
    if (typeof f !== "string") {
      errs.push(typeInvalid(`${path}[${i}]`, f, "string"));
      continue;
    }
    for (const msg of isQualifiedName(f)) {
      errs.push({ type: "Invalid", field: path, value: f, detail: msg });
    }
  }
  if (
    finalizers.includes(FINALIZER_ORPHAN_DEPENDENTS) &&
    finalizers.includes(FINALIZER_DELETE_DEPENDENTS)
  ) {
    errs.push({
      type: "Invalid",
      field: path,
      value: finalizers,
      detail:
        `finalizer ${FINALIZER_ORPHAN_DEPENDENTS} and ${FINALIZER_DELETE_DEPENDENTS} cannot be both set`,
    });
  }
  return errs;
}

/** Splits an apiVersion as kube does; a malformed one (two slashes) has no version. */
function parseGroupVersion(apiVersion: string): { group: string; version: string } {
  if (apiVersion === "" || apiVersion === "/") return { group: "", version: "" };
  const parts = apiVersion.split("/");
  if (parts.length === 1) return { group: "", version: apiVersion };
  if (parts.length === 2) return { group: parts[0], version: parts[1] };
  return { group: "", version: "" };
}

/**
 * Each owner reference needs apiVersion (with a version), kind, name and uid; events may not
 * own objects; at most one reference may be the controller. Errors sit at
 * `<path>.<field>` without an index, as kube reports them.
 */
export function validateOwnerReferences(refs: unknown, path: string): FieldError[] {
  if (refs === undefined || refs === null) return [];
  if (!Array.isArray(refs)) return [typeInvalid(path, refs, "array")];
  const errs: FieldError[] = [];
  let firstController = "";
  for (const [i, ref] of refs.entries()) {
    if (!isObject(ref)) {
      errs.push(typeInvalid(`${path}[${i}]`, ref, "object"));
      continue;
    }
    const fields: Record<string, string> = {};
    let typesOk = true;
    for (const key of ["apiVersion", "kind", "name", "uid"]) {
      const v = optionalString(ref, key, `${path}[${i}].${key}`, errs);
      if (v === undefined) typesOk = false;
      fields[key] = v ?? "";
    }
    const controller = ref.controller;
    if (controller !== undefined && controller !== null && typeof controller !== "boolean") {
      errs.push(typeInvalid(`${path}[${i}].controller`, controller, "boolean"));
      typesOk = false;
    }
    if (!typesOk) continue;

    const gv = parseGroupVersion(fields.apiVersion);
    if (gv.version === "") {
      errs.push({
        type: "Invalid",
        field: `${path}.apiVersion`,
        value: fields.apiVersion,
        detail: "version must not be empty",
      });
    }
    for (const key of ["kind", "name", "uid"]) {
      if (fields[key] === "") {
        errs.push({
          type: "Invalid",
          field: `${path}.${key}`,
          value: "",
          detail: "must not be empty",
        });
      }
    }
    const gvk = `${gv.group}/${gv.version}, Kind=${fields.kind}`;
    if (gv.version !== "" && BANNED_OWNERS.has(gvk)) {
      errs.push({
        type: "Invalid",
        field: path,
        value: ref,
        detail: `${gvk} is disallowed from being an owner`,
      });
    }
    if (controller === true) {
      const current = `${fields.kind}/${fields.name}`;
      if (firstController) {
        errs.push({
          type: "Invalid",
          field: path,
          value: refs,
          detail: `Only one reference can have Controller set to true. Found "true" in ` +
            `references for ${firstController} and ${current}`,
        });
      } else {
        firstController = current;
      }
    }
  }
  return errs;
}

/** Fields an update may not change, and how an absent value reads. */
const IMMUTABLE_FIELDS: [key: string, absent: unknown][] = [
  ["name", ""],
  ["namespace", ""],
  ["uid", ""],
  ["creationTimestamp", null],
  ["deletionTimestamp", null],
  ["deletionGracePeriodSeconds", null],
];

function normalize(v: unknown, absent: unknown): unknown {
  return v === undefined || v === null || v === "" ? absent : v;
}

/**
 * Validates what an update may not do to metadata: change name, namespace, uid,
 * creationTimestamp, deletionTimestamp or deletionGracePeriodSeconds (`field is immutable`),
 * or add finalizers to an object being deleted. Run it after the registry has carried the
 * server-set fields (uid, creationTimestamp) over from the old object, and together with
 * {@link validateObjectMeta} on the new metadata. Deletion marking by the registry itself
 * does not go through here.
 */
export function validateObjectMetaUpdate(newMeta: unknown, oldMeta: unknown): FieldError[] {
  const next = isObject(newMeta) ? newMeta : {};
  const prev = isObject(oldMeta) ? oldMeta : {};
  const errs: FieldError[] = [];

  if (normalize(prev.deletionTimestamp, null) !== null) {
    const old = new Set(Array.isArray(prev.finalizers) ? prev.finalizers : []);
    const added = Array.isArray(next.finalizers)
      ? [...new Set(next.finalizers.filter((f): f is string => typeof f === "string"))]
        .filter((f) => !old.has(f))
        .sort()
      : [];
    if (added.length > 0) {
      errs.push({
        type: "Forbidden",
        field: "metadata.finalizers",
        detail: "no new finalizers can be added if the object is being deleted, found new " +
          `finalizers ${goStringSlice(added)}`,
      });
    }
  }

  for (const [key, absent] of IMMUTABLE_FIELDS) {
    const a = normalize(next[key], absent);
    const b = normalize(prev[key], absent);
    if (!sameJson(a, b)) {
      errs.push({
        type: "Invalid",
        field: `metadata.${key}`,
        value: a,
        detail: "field is immutable",
      });
    }
  }
  return errs;
}

function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
