/**
 * Start-up step 5: the catalogue of served resources, a registry for each, and the system
 * namespaces they need.
 */

import { ADMIN_GROUP, ADMIN_USER, type Logger } from "../../api/mod.ts";
import { ServiceAllocator } from "../../resources/mod.ts";
import { Catalogue, type ResourceDefinition, ResourceRegistry } from "../../registry/mod.ts";
import { labelStoredNamespaces, SYSTEM_NAMESPACES } from "../../controllers/mod.ts";
import { buildAdmission } from "./admission.ts";
import { SchemaSet } from "../../schema/mod.ts";
import type { Store } from "../../storage/mod.ts";
import type { Configuration } from "./configuration.ts";
import type { Storage } from "./storage.ts";
import type { OpenResources } from "./open_resources.ts";
import type { Authorizer } from "../../auth/mod.ts";

/** The served resources and their registries. */
export interface ApiRegistries {
  store: Store;
  /** The built-in definitions served. */
  definitions: ResourceDefinition[];
  /** Service cluster IPs and node ports, kept as records in the store. */
  serviceAllocator: ServiceAllocator;
  /** What is served; the CRD controller adds and removes custom resources. */
  catalogue: Catalogue;
  /** The built-in schemas. */
  schemas: SchemaSet;
  /** A registry per served definition and per computed subresource. */
  registries: Map<ResourceDefinition, ResourceRegistry>;
  newRegistry(def: ResourceDefinition, schemas: SchemaSet): ResourceRegistry;
  namespaces: ResourceRegistry;
  /** The registry of a core v1 resource; undefined when it is not served. */
  core(plural: string): ResourceRegistry | undefined;
  /** Gives admission the authorizer (made after the registries, which RBAC reads). */
  bindAuthorizer(authorizer: Authorizer): void;
}

/** Builds the registries over `storage` and makes sure of the system namespaces. */
export async function buildRegistries(
  config: Configuration,
  storage: Storage,
  logger: Logger,
  resources: OpenResources,
): Promise<ApiRegistries> {
  const { store, continueKey } = storage;
  const serviceAllocator = new ServiceAllocator(store, config.network);
  const definitions = config.servedBuiltins(serviceAllocator);
  const catalogue = new Catalogue(definitions);
  const schemas = SchemaSet.builtin();
  let authorizer: Authorizer | undefined;
  const admission = buildAdmission({
    store,
    catalogue,
    logger,
    resources,
    authorizer: () => authorizer,
    clock: config.clock,
    eventRates: config.eventRates,
    config: config.admission.config,
    egress: config.egress,
    metrics: config.metrics,
  }, config.admission.enabled);
  const registries = new Map<ResourceDefinition, ResourceRegistry>();
  const newRegistry = (def: ResourceDefinition, schemas: SchemaSet) =>
    new ResourceRegistry(def, {
      store,
      schemas,
      admission,
      continueKey,
      corruptObjectErrors: config.featureGates.get("AllowUnsafeMalformedObjectDeletion") ?? false,
    });
  for (const def of catalogue.definitions) {
    registries.set(def, newRegistry(def, schemas));
    for (const sub of Object.values(def.computedSubresources ?? {})) {
      registries.set(sub, newRegistry(sub, schemas));
    }
  }
  const namespaces = registries.get(catalogue.lookup("", "v1", "namespaces")!)!;
  await ensureNamespaces(namespaces, logger);
  const core = (plural: string) => {
    const def = catalogue.lookup("", "v1", plural);
    return def && registries.get(def);
  };
  return {
    store,
    definitions,
    serviceAllocator,
    catalogue,
    schemas,
    registries,
    newRegistry,
    namespaces,
    core,
    bindAuthorizer: (a) => void (authorizer = a),
  };
}

/** Creates the system namespaces that are missing; labels stored ones with their names. */
async function ensureNamespaces(namespaces: ResourceRegistry, logger: Logger): Promise<void> {
  const ctx = { user: { username: ADMIN_USER, groups: [ADMIN_GROUP] } };
  for (const name of SYSTEM_NAMESPACES) {
    try {
      await namespaces.get("", name);
    } catch {
      await namespaces.create("", { metadata: { name } }, ctx).catch((err) => {
        if (err?.code !== 409) throw err;
      });
    }
  }
  const labelled = await labelStoredNamespaces(namespaces);
  if (labelled.length) {
    logger.info(`namespaces given the kubernetes.io/metadata.name label: ${labelled.join(", ")}`);
  }
}
