/**
 * From a CustomResourceDefinition to the {@link ResourceDefinition}s the generic registry
 * serves: one per served version, all sharing the store of the CRD's objects. Names come
 * from `status.acceptedNames` (what the naming check let through) and the scope from the
 * spec; each version brings its own schema (registered under a schema name of its own in a
 * {@link SchemaSet} that extends the built-in one), subresources and deprecation warning,
 * built by {@link versionResource}. With several versions, every definition converts what
 * it reads from its version's point of view (conversion.ts).
 * The version's defaults (defaults.ts), printer columns (printer_columns.ts) and scale
 * subresource (scale.ts) are hooked in by versionResource.
 */

import { StatusError } from "../api/mod.ts";
import { ALL_VERBS, type KubeObject, type ResourceDefinition } from "../registry/mod.ts";
import type { SchemaNode, SchemaSet } from "../schema/mod.ts";
import { customResourceSchema, customResourceSchemaName, schemasWith } from "./schema.ts";
import { validateListsAndEmbedded } from "./lists.ts";
import { conversionOf } from "./conversion.ts";
import type { ConversionWebhookOptions } from "./conversion_webhook.ts";
import { compareVersionPriority } from "./version_priority.ts";
import { defaulter } from "./defaults.ts";
import { scalePathsOf, validateScaleFields } from "./scale.ts";
import { printerColumns } from "./printer_columns.ts";
import { customResourceRules } from "./validation_rules.ts";

/** One served version of a CRD: its definition and schema. */
export interface CustomResourceVersion {
  def: ResourceDefinition;
  /** `def.schema`'s node (for the OpenAPI documents). */
  schema: SchemaNode;
}

/** What serving one CRD takes: a definition per served version and their schemas. */
export interface CustomResource {
  /** One per served version, in kube's version priority (the first is the preferred one). */
  versions: CustomResourceVersion[];
  /** The storage version's definition (also when it is not served): what its objects are
   * deleted through. */
  storage: ResourceDefinition;
  /** Built-in schemas plus the schema of every version. */
  schemas: SchemaSet;
  /** Compared to decide whether a changed CRD changes what is served. */
  fingerprint: string;
}

export interface CustomResourceOptions {
  /** True once the CRD is being deleted: creates are refused then. */
  terminating: () => boolean;
  /** How conversion webhooks are called. */
  conversion: ConversionWebhookOptions;
}

/** What all versions of a CRD share. */
interface Shared {
  group: string;
  kind: string;
  plural: string;
  names: KubeObject;
  namespaced: boolean;
  /** The names of the served versions. */
  served: Set<string>;
  opts: CustomResourceOptions;
}

/**
 * The resources `crd` defines, or undefined when it has nothing to serve (no accepted plural
 * or kind, no storage version, or no served version).
 */
export function customResource(
  crd: KubeObject,
  opts: CustomResourceOptions,
): CustomResource | undefined {
  const spec = crd.spec ?? {};
  const names = crd.status?.acceptedNames ?? {};
  const all: KubeObject[] = Array.isArray(spec.versions) ? spec.versions : [];
  const storageVersion = all.find((v) => v?.storage === true);
  const servedVersions = all.filter((v) => v?.served === true && typeof v?.name === "string");
  if (!storageVersion || !servedVersions.length) return undefined;
  if (!names.plural || !names.kind || !spec.group) return undefined;
  const shared: Shared = {
    group: spec.group,
    kind: names.kind,
    plural: names.plural,
    names,
    namespaced: spec.scope === "Namespaced",
    served: new Set(servedVersions.map((v) => v.name as string)),
    opts,
  };
  const versions = servedVersions.map((v) => versionResource(crd, v, shared))
    .sort((a, b) => compareVersionPriority(a.def.version, b.def.version));
  const storage = versions.find((v) => v.def.version === storageVersion.name)?.def ??
    versionResource(crd, storageVersion, shared).def;
  const extra: Record<string, SchemaNode> = {};
  for (const v of versions) extra[v.def.schema] = v.schema;
  extra[storage.schema] ??= customResourceSchema(
    storageVersion.schema?.openAPIV3Schema ?? { type: "object" },
  );
  const fingerprint = JSON.stringify({ names, spec });
  return { versions, storage, schemas: schemasWith(extra), fingerprint };
}

/** The definition of one version of `crd`: its schema, subresources and deprecation. */
function versionResource(
  crd: KubeObject,
  version: KubeObject,
  shared: Shared,
): CustomResourceVersion {
  const { group, kind, plural, names, opts } = shared;
  const schemaName = customResourceSchemaName(group, version.name, kind);
  const schema = customResourceSchema(version.schema?.openAPIV3Schema ?? { type: "object" });
  const hasStatus = version.subresources?.status !== undefined &&
    version.subresources?.status !== null;
  const qualified = `${plural}.${group}`;
  const defaults = defaulter(version.schema?.openAPIV3Schema);
  const scale = scalePathsOf(version);
  // Compiled once per served schema (the CRD was refused if they did not compile).
  const rules = customResourceRules(version.schema?.openAPIV3Schema);
  const def: ResourceDefinition = {
    group,
    version: version.name,
    kind,
    plural,
    singular: names.singular || kind.toLowerCase(),
    namespaced: shared.namespaced,
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
      validateCreate: (obj, ctx) => [
        ...validateListsAndEmbedded(obj, schema),
        ...validateScaleFields(obj, scale),
        ...rules?.(obj, undefined, ctx.warnings) ?? [],
      ],
      validateUpdate: (obj, old, ctx) => [
        ...validateListsAndEmbedded(obj, schema),
        ...validateScaleFields(obj, scale),
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
  if (scale) {
    def.subresources = [...def.subresources ?? [], "scale"];
    def.scale = scale;
  }
  if (version.deprecated === true) {
    def.deprecationWarning = typeof version.deprecationWarning === "string"
      ? version.deprecationWarning
      : `${group}/${version.name} ${kind} is deprecated`;
  }
  const conversion = conversionOf(crd, version.name, opts.conversion);
  if (conversion) def.storage = { group, resource: plural, conversion };
  // Managed fields recorded at a version no longer served go on the next write.
  def.obsoleteVersion = (apiVersion) => {
    const slash = apiVersion.lastIndexOf("/");
    return apiVersion.slice(0, slash) === group && !shared.served.has(apiVersion.slice(slash + 1));
  };
  return { def, schema };
}
