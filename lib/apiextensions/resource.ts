/**
 * From a CustomResourceDefinition to the {@link ResourceDefinition} the generic registry
 * serves: names from `status.acceptedNames` (what the naming check let through), scope,
 * the one served version, the status subresource, and the version's schema registered under
 * a schema name of its own in a {@link SchemaSet} that extends the built-in one. The version's
 * defaults (defaults.ts), printer columns (printer_columns.ts) and scale subresource
 * (scale.ts) are hooked in here.
 */

import { StatusError } from "../api/mod.ts";
import { ALL_VERBS, type KubeObject, type ResourceDefinition } from "../registry/mod.ts";
import type { SchemaNode, SchemaSet } from "../schema/mod.ts";
import { customResourceSchema, customResourceSchemaName, schemasWith } from "./schema.ts";
import { validateListsAndEmbedded } from "./lists.ts";
import { defaulter } from "./defaults.ts";
import { scalePathsOf, validateScaleFields } from "./scale.ts";
import { printerColumns } from "./printer_columns.ts";
import { servedVersion } from "./validation.ts";

/** What serving one CRD takes: the definition and the schemas its registry validates with. */
export interface CustomResource {
  def: ResourceDefinition;
  /** Built-in schemas plus `def.schema`. */
  schemas: SchemaSet;
  /** `def.schema`'s node (for the OpenAPI documents). */
  schema: SchemaNode;
  /** Compared to decide whether a changed CRD changes what is served. */
  fingerprint: string;
}

export interface CustomResourceOptions {
  /** True once the CRD is being deleted: creates are refused then. */
  terminating: () => boolean;
}

/**
 * The resource `crd` defines, or undefined when it has nothing to serve (no accepted plural
 * or kind, or no version both served and stored).
 */
export function customResource(
  crd: KubeObject,
  opts: CustomResourceOptions,
): CustomResource | undefined {
  const spec = crd.spec ?? {};
  const names = crd.status?.acceptedNames ?? {};
  const version = servedVersion(crd);
  if (!version || !names.plural || !names.kind || !spec.group) return undefined;
  const group: string = spec.group;
  const kind: string = names.kind;
  const plural: string = names.plural;
  const schemaName = customResourceSchemaName(group, version.name, kind);
  const schema = customResourceSchema(version.schema?.openAPIV3Schema ?? { type: "object" });
  const hasStatus = version.subresources?.status !== undefined &&
    version.subresources?.status !== null;
  const qualified = `${plural}.${group}`;
  const defaults = defaulter(version.schema?.openAPIV3Schema);
  const scale = scalePathsOf(version);
  const def: ResourceDefinition = {
    group,
    version: version.name,
    kind,
    plural,
    singular: names.singular || kind.toLowerCase(),
    namespaced: spec.scope === "Namespaced",
    verbs: ALL_VERBS,
    schema: schemaName,
    customResource: true,
    printerColumns: printerColumns(version.additionalPrinterColumns),
    strategy: {
      prepareForCreate(obj) {
        if (opts.terminating()) {
          throw new StatusError(
            405,
            "MethodNotAllowed",
            `create is not supported on resources of kind ${JSON.stringify(qualified)}`,
            { details: { group, kind: plural } },
          );
        }
        // With a status subresource, status is written only through /status.
        if (hasStatus) delete obj.status;
      },
      applyDefaults: defaults,
      validateCreate: (obj) => [
        ...validateListsAndEmbedded(obj, schema),
        ...validateScaleFields(obj, scale),
      ],
      validateUpdate: (obj) => [
        ...validateListsAndEmbedded(obj, schema),
        ...validateScaleFields(obj, scale),
      ],
    },
  };
  if (names.listKind && names.listKind !== `${kind}List`) def.listKind = names.listKind;
  if (!hasStatus) {
    // Without a status subresource every change but metadata counts for generation.
    def.strategy!.specFields = Object.keys(schema.properties ?? {}).filter((f) =>
      f !== "apiVersion" && f !== "kind" && f !== "metadata"
    );
  }
  if (Array.isArray(names.shortNames) && names.shortNames.length) {
    def.shortNames = [...names.shortNames];
  }
  if (Array.isArray(names.categories) && names.categories.length) {
    def.categories = [...names.categories];
  }
  if (hasStatus) def.subresources = ["status"];
  if (scale) {
    def.subresources = [...def.subresources ?? [], "scale"];
    def.scale = scale;
  }
  if (version.deprecated === true) {
    def.deprecationWarning = typeof version.deprecationWarning === "string"
      ? version.deprecationWarning
      : `${group}/${version.name} ${kind} is deprecated`;
  }
  const fingerprint = JSON.stringify({
    deprecationWarning: def.deprecationWarning,
    group,
    version: version.name,
    names,
    scope: spec.scope,
    hasStatus,
    scale,
    columns: version.additionalPrinterColumns ?? null,
    schema: version.schema?.openAPIV3Schema ?? null,
  });
  return { def, schemas: schemasWith({ [schemaName]: schema }), schema, fingerprint };
}
