/**
 * What the server checks in a CustomResourceDefinition beyond its OpenAPI schema, worded and
 * placed as Kubernetes does (`spec.names.plural`, `spec.versions[0].schema.openAPIV3Schema`),
 * and the defaults Kubernetes fills in before checking (`singular`, `listKind`,
 * `conversion`).
 *
 * Several versions are served, one of them the storage version; `spec.conversion` is
 * checked in conversion_validation.ts, defaults in defaults.ts, validation rules in
 * validation_rules.ts, the scale subresource in scale.ts and printer columns in
 * printer_columns.ts. Selectable fields are refused with a "not supported yet" message
 * rather than accepted and ignored.
 */

import { canonicalGroup, type FieldError, isBuiltinGroup, isDNS1123Subdomain } from "../api/mod.ts";
import type { KubeObject } from "../registry/mod.ts";
import { validateStructuralSchema } from "./structural.ts";
import { validateConversion } from "./conversion_validation.ts";
import { validateDefaults } from "./defaults.ts";
import { validateScaleSubresource } from "./scale.ts";
import { validatePrinterColumns } from "./printer_columns.ts";
import { compileRules } from "./validation_rules.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_RE = new RegExp(`^${DNS1035_FMT}$`);
const DNS1035_MSG = "a DNS-1035 label must consist of lower case alphanumeric characters or " +
  "'-', start with an alphabetic character, and end with an alphanumeric character (e.g. " +
  `'my-name',  or 'abc-123', regex used for validation is '${DNS1035_FMT}')`;

/** kube's `IsDNS1035Label`: the messages, empty when valid. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push("must be no more than 63 characters");
  if (!DNS1035_RE.test(value)) errs.push(DNS1035_MSG);
  return errs;
}

/** Fills in what Kubernetes defaults in a CRD spec. May mutate `crd`. */
export function defaultCustomResourceDefinition(crd: KubeObject): void {
  const spec = crd.spec;
  if (!spec || typeof spec !== "object") return;
  const names = spec.names;
  if (names && typeof names === "object") {
    if (!names.singular && typeof names.kind === "string") {
      names.singular = names.kind.toLowerCase();
    }
    if (!names.listKind && typeof names.kind === "string" && names.kind) {
      names.listKind = `${names.kind}List`;
    }
  }
  spec.conversion ??= { strategy: "None" };
  if (Array.isArray(spec.versions)) {
    for (const v of spec.versions) {
      if (!v || typeof v !== "object") continue;
      v.served ??= false;
      v.storage ??= false;
    }
  }
}

/** Checks a CRD on create (and as the base of every update). */
export function validateCustomResourceDefinition(crd: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Json = crd.spec ?? {};
  const names: Json = spec.names ?? {};
  const group: string = typeof spec.group === "string" ? spec.group : "";
  const plural: string = typeof names.plural === "string" ? names.plural : "";

  const name = crd.metadata?.name;
  if (typeof name === "string" && name && name !== `${plural}.${group}`) {
    errs.push({
      type: "Invalid",
      field: "metadata.name",
      value: name,
      detail: 'must be spec.names.plural+"."+spec.group',
    });
  }

  if (!group) {
    errs.push({ type: "Required", field: "spec.group" });
  } else if (isDNS1123Subdomain(group).length) {
    errs.push({
      type: "Invalid",
      field: "spec.group",
      value: group,
      detail: isDNS1123Subdomain(group).join(","),
    });
  } else if (!group.includes(".")) {
    errs.push({
      type: "Invalid",
      field: "spec.group",
      value: group,
      detail: "should be a domain with at least one dot",
    });
  } else if (isBuiltinGroup(group)) {
    // Either spelling names the built-in group: a CRD there would shadow or alias its
    // resources (`clusterrolebindings.rbac.authorization.k8s.io`).
    errs.push({
      type: "Invalid",
      field: "spec.group",
      value: group,
      detail: `must not be a built-in API group (${canonicalGroup(group)})`,
    });
  }

  if (!spec.scope) {
    errs.push({ type: "Required", field: "spec.scope" });
  } else if (spec.scope !== "Cluster" && spec.scope !== "Namespaced") {
    errs.push({
      type: "NotSupported",
      field: "spec.scope",
      value: spec.scope,
      detail: 'supported values: "Cluster", "Namespaced"',
    });
  }

  errs.push(...validateNames(names, "spec.names"));

  if (spec.preserveUnknownFields === true) {
    errs.push({
      type: "Invalid",
      field: "spec.preserveUnknownFields",
      value: true,
      detail:
        "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
    });
  }

  errs.push(...validateVersions(spec.versions));
  errs.push(...validateConversion(spec.conversion));
  return errs;
}

function validateNames(names: Json, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const label = (field: string, value: unknown, prefix = "") => {
    if (typeof value !== "string" || !value) return;
    const msgs = isDNS1035Label(prefix ? value.toLowerCase() : value);
    if (msgs.length) {
      errs.push({
        type: "Invalid",
        field: `${path}.${field}`,
        value,
        detail: prefix + msgs.join(","),
      });
    }
  };
  const mixedCase = "may have mixed case, but should otherwise match: ";
  if (!names.plural) errs.push({ type: "Required", field: `${path}.plural` });
  else label("plural", names.plural);
  if (!names.singular) errs.push({ type: "Required", field: `${path}.singular` });
  else label("singular", names.singular);
  if (!names.kind) errs.push({ type: "Required", field: `${path}.kind` });
  else label("kind", names.kind, mixedCase);
  if (!names.listKind) errs.push({ type: "Required", field: `${path}.listKind` });
  else label("listKind", names.listKind, mixedCase);
  if (names.kind && names.kind === names.listKind) {
    errs.push({
      type: "Invalid",
      field: `${path}.listKind`,
      value: names.listKind,
      detail: "kind and listKind may not be the same",
    });
  }
  (Array.isArray(names.shortNames) ? names.shortNames : []).forEach((s: unknown, i: number) =>
    label(`shortNames[${i}]`, s)
  );
  (Array.isArray(names.categories) ? names.categories : []).forEach((s: unknown, i: number) =>
    label(`categories[${i}]`, s)
  );
  return errs;
}

/** kube's rules: only on deprecated versions, at most 256 characters, printable. */
function validateDeprecationWarning(v: Json, at: string): FieldError[] {
  const warning = v.deprecationWarning;
  if (warning === undefined || warning === null) return [];
  const field = `${at}.deprecationWarning`;
  if (v.deprecated !== true) {
    return [{
      type: "Invalid",
      field,
      value: warning,
      detail: "can only be set for deprecated versions",
    }];
  }
  if (typeof warning !== "string") return [];
  if (warning.length > 256) {
    return [{ type: "TooLong", field, value: warning, detail: "may not be longer than 256" }];
  }
  // deno-lint-ignore no-control-regex
  const bad = warning.search(/[\u0000-\u001f\u007f]/);
  if (bad >= 0) {
    return [{
      type: "Invalid",
      field,
      value: warning,
      detail:
        `must only contain printable UTF-8 characters; non-printable character found at index ${bad}`,
    }];
  }
  return [];
}

function validateVersions(versions: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const path = "spec.versions";
  if (!Array.isArray(versions) || versions.length === 0) {
    errs.push({
      type: "Invalid",
      field: path,
      value: versions ?? [],
      detail: "must have exactly one version marked as storage version",
    });
    return errs;
  }
  const seen = new Set<string>();
  let storage = 0;
  let served = 0;
  versions.forEach((v: Json, i: number) => {
    const at = `${path}[${i}]`;
    if (!v || typeof v !== "object") return;
    if (v.storage === true) storage++;
    if (v.served === true) served++;
    if (!v.name) {
      errs.push({ type: "Required", field: `${at}.name` });
    } else {
      const msgs = isDNS1035Label(v.name);
      if (msgs.length) {
        errs.push({ type: "Invalid", field: `${at}.name`, value: v.name, detail: msgs.join(",") });
      }
      if (seen.has(v.name)) {
        errs.push({
          type: "Invalid",
          field: path,
          value: versions,
          detail: "must contain unique version names",
        });
      }
      seen.add(v.name);
    }
    const schemaAt = `${at}.schema.openAPIV3Schema`;
    const structural = validateStructuralSchema(v.schema?.openAPIV3Schema, schemaAt);
    errs.push(...structural);
    // Defaults are checked, and validation rules typed, against a structural schema only.
    if (!structural.length) {
      errs.push(...validateDefaults(v.schema?.openAPIV3Schema, schemaAt));
      errs.push(...compileRules(v.schema.openAPIV3Schema, schemaAt).errors);
    }
    errs.push(...validateDeprecationWarning(v, at));
    errs.push(...validateScaleSubresource(v.subresources?.scale, `${at}.subresources`));
    errs.push(
      ...validatePrinterColumns(v.additionalPrinterColumns, `${at}.additionalPrinterColumns`),
    );
    if (Array.isArray(v.selectableFields) && v.selectableFields.length) {
      errs.push({
        type: "Forbidden",
        field: `${at}.selectableFields`,
        detail: "selectable fields are not supported yet",
      });
    }
  });
  if (storage !== 1) {
    errs.push({
      type: "Invalid",
      field: path,
      value: versions,
      detail: "must have exactly one version marked as storage version",
    });
  }
  if (served === 0) {
    errs.push({
      type: "Invalid",
      field: path,
      value: versions,
      detail: "must have at least one served version",
    });
  }
  return errs;
}

/** True when the CRD's `Established` condition is True. */
export function isEstablished(crd: KubeObject): boolean {
  const conditions = crd.status?.conditions;
  return Array.isArray(conditions) &&
    conditions.some((c: KubeObject) => c?.type === "Established" && c?.status === "True");
}

/** Checks an update of a CRD against the stored one (besides {@link
 * validateCustomResourceDefinition} of the new object). */
export function validateCustomResourceDefinitionUpdate(
  crd: KubeObject,
  old: KubeObject,
): FieldError[] {
  const errs: FieldError[] = [];
  const immutable = (field: string, now: unknown, before: unknown) => {
    if (JSON.stringify(now) !== JSON.stringify(before)) {
      errs.push({ type: "Invalid", field, value: now, detail: "field is immutable" });
    }
  };
  // These name the stored objects' keys: they can never change.
  immutable("spec.group", crd.spec?.group, old.spec?.group);
  immutable("spec.names.plural", crd.spec?.names?.plural, old.spec?.names?.plural);
  if (isEstablished(old)) {
    // Stored objects carry their scope and kind.
    immutable("spec.scope", crd.spec?.scope, old.spec?.scope);
    immutable("spec.names.kind", crd.spec?.names?.kind, old.spec?.names?.kind);
  }
  const names = new Set(
    (Array.isArray(crd.spec?.versions) ? crd.spec.versions : []).map((v: KubeObject) => v?.name),
  );
  const stored = crd.status?.storedVersions;
  if (Array.isArray(stored)) {
    stored.forEach((v: unknown, i: number) => {
      if (!names.has(v)) {
        errs.push({
          type: "Invalid",
          field: `status.storedVersions[${i}]`,
          value: v,
          detail: "must appear in spec.versions",
        });
      }
    });
  }
  return errs;
}
