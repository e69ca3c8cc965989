/**
 * From a CustomResourceDefinition to the {@link ResourceDefinition} the generic registry
 * serves: names from `status.acceptedNames` (what the naming check let through), scope,
 * the one served version, the status subresource, and the version's schema registered under
 * a schema name of its own in a {@link SchemaSet} that extends the built-in one.
 */

import { StatusError } from "../api/mod.ts";
import { ALL_VERBS, type KubeObject, type ResourceDefinition } from "../registry/mod.ts";
import type { SchemaNode, SchemaSet } from "../schema/mod.ts";
import { customResourceSchema, customResourceSchemaName, schemasWith } from "./schema.ts";
import { validateListsAndEmbedded } from "./lists.ts";
import { servedVersion } from "./validation.ts";
import { customResourceRules } from "./validation_rules.ts";

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
  // Compiled once per served schema (the CRD was refused if they did not compile).
  const rules = customResourceRules(version.schema?.openAPIV3Schema);
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
      validateCreate: (obj, ctx) => [
        ...validateListsAndEmbedded(obj, schema),
        ...rules?.(obj, undefined, ctx.warnings) ?? [],
      ],
      validateUpdate: (obj, old, ctx) => [
        ...validateListsAndEmbedded(obj, schema),
        ...rules?.(obj, old, ctx.warnings) ?? [],
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
    schema: version.schema?.openAPIV3Schema ?? null,
  });
  return { def, schemas: schemasWith({ [schemaName]: schema }), schema, fingerprint };
}
