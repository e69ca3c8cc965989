/**
 * What the admission plugins read of the server, in one place: the stored webhook
 * configurations, policies and bindings, namespaces, parameter objects, and the resources
 * stored alike (equivalence). Made once per server; the webhook client's connections close
 * with it.
 */

import {
  type EquivalentResource,
  type PolicyEnvironment,
  StoredPolicies,
  StoredWebhooks,
  type Webhook,
  WebhookClient,
  type WebhookCredentials,
  type WebhookEnvironment,
} from "../../admission/mod.ts";
import { canonicalGroup, type KubeObject, type LabelSelector, type Logger } from "../../api/mod.ts";
import type { Authorizer } from "../../auth/mod.ts";
import { namespaceObjects } from "../../controllers/mod.ts";
import {
  type Catalogue,
  isBatchConversion,
  type ResourceDefinition,
  resourcePrefix,
  type StorageConversion,
} from "../../registry/mod.ts";
import type { Store } from "../../storage/mod.ts";
import type { HttpClientFactory } from "../../egress/mod.ts";

const GROUP = "admissionregistration.platform.io";

export interface AdmissionServerParts {
  store: Store;
  catalogue: Catalogue;
  logger: Logger;
  /** The authorizer comes later than the chain (RBAC reads the registries the chain is built
   * into): looked up when a plugin needs it. */
  authorizer: () => Authorizer | undefined;
  /** Credentials the server presents to a webhook (WebhookAdmission's kubeconfig). */
  webhookCredentials?: (webhook: Webhook) => WebhookCredentials | undefined;
  /** Makes the webhook client's HTTP clients (the `cluster` egress selection). */
  createHttpClient?: HttpClientFactory;
  /** Where webhook calls are timed and rejections counted. */
  webhookMetrics?: WebhookEnvironment["metrics"];
}

export interface AdmissionEnvironments {
  webhooks: WebhookEnvironment;
  policies: PolicyEnvironment;
  /** Closes the webhook client's connections. */
  close(): void;
}

/** The environments of the webhook and policy plugins, sharing lookups. */
export function admissionEnvironments(parts: AdmissionServerParts): AdmissionEnvironments {
  const { store, catalogue, logger } = parts;
  const unreadable = (key: string, err: unknown) =>
    logger.warn(`admission: cannot read ${key}: ${(err as Error).message}`);
  const namespace = namespaceObjects(store);
  const equivalents = cachedEquivalents(catalogue);
  const client = new WebhookClient({
    credentials: parts.webhookCredentials,
    createHttpClient: parts.createHttpClient,
  });
  const webhooks: WebhookEnvironment = {
    source: new StoredWebhooks(store, {
      mutating: resourcePrefix(GROUP, "mutatingwebhookconfigurations"),
      validating: resourcePrefix(GROUP, "validatingwebhookconfigurations"),
    }, unreadable),
    client,
    namespace,
    equivalents,
    get authorizer() {
      return parts.authorizer();
    },
    logger,
    metrics: parts.webhookMetrics,
  };
  const policies: PolicyEnvironment = {
    source: new StoredPolicies(store, {
      policies: resourcePrefix(GROUP, "validatingadmissionpolicies"),
      bindings: resourcePrefix(GROUP, "validatingadmissionpolicybindings"),
    }, unreadable),
    namespace,
    equivalents,
    params: (kind, query) => paramObjects(store, catalogue, kind, query),
    get authorizer() {
      return parts.authorizer();
    },
    logger,
  };
  return { webhooks, policies, close: () => client.close() };
}

/**
 * {@link equivalentResources}, found once per resource while the served definitions stay the
 * same: a rule that does not name a request's resource asks for them (matchPolicy Equivalent),
 * and finding them goes through every definition (5 µs a request and a binding).
 */
function cachedEquivalents(
  catalogue: Catalogue,
): (resource: { group: string; version: string; resource: string }) => EquivalentResource[] {
  let servedWith: readonly ResourceDefinition[] | undefined;
  let found = new Map<ResourceDefinition, EquivalentResource[]>();
  return (resource) => {
    const def = catalogue.lookup(resource.group, resource.version, resource.resource);
    if (!def) return [];
    // The catalogue replaces its list of definitions whenever one is added, changed or removed
    // (a CRD's change replaces its versions' definitions): start again, keeping none of the old.
    if (catalogue.definitions !== servedWith) {
      servedWith = catalogue.definitions;
      found = new Map();
    }
    let equivalents = found.get(def);
    if (!equivalents) found.set(def, equivalents = equivalentResources(catalogue, def));
    return equivalents;
  };
}

/** The served resources stored where `def`'s are, with conversions through the stored form
 * (core v1 events and events.platform.io/v1 events). */
function equivalentResources(catalogue: Catalogue, def: ResourceDefinition): EquivalentResource[] {
  const where = storedAt(def);
  const toStored = (d: ResourceDefinition, o: KubeObject) =>
    d.storage ? syncConversion(d)!.toStorage(o) : o;
  const fromStored = (d: ResourceDefinition, o: KubeObject) =>
    d.storage ? syncConversion(d)!.fromStorage(o) : o;
  // A conversion that calls out (a CRD's conversion webhook) cannot run here: such versions
  // are not matched as equivalent.
  if (def.storage && !syncConversion(def)) return [];
  return catalogue.definitions.filter((d) =>
    d !== def && storedAt(d) === where && (!d.storage || syncConversion(d))
  ).map((d) => ({
    resource: { group: d.group, version: d.version, resource: d.plural },
    kind: { group: d.group, version: d.version, kind: d.kind },
    toEquivalent: (o) => fromStored(d, toStored(def, structuredClone(o))),
    fromEquivalent: (o) => fromStored(def, toStored(d, structuredClone(o))),
  }));
}

/** The definition's storage conversion when it is synchronous. */
function syncConversion(d: ResourceDefinition): StorageConversion | undefined {
  const c = d.storage?.conversion;
  return c && !isBatchConversion(c) ? c : undefined;
}

function storedAt(d: ResourceDefinition): string {
  return d.storage ? `${d.storage.group}/${d.storage.resource}` : `${d.group}/${d.plural}`;
}

/** A policy's parameter objects, read from the store in the stored form of their kind. */
async function paramObjects(
  store: Store,
  catalogue: Catalogue,
  kind: { apiVersion: string; kind: string },
  query: { namespace: string; name?: string; selector?: LabelSelector },
): Promise<KubeObject[] | undefined> {
  const slash = kind.apiVersion.lastIndexOf("/");
  const group = slash < 0 ? "" : canonicalGroup(kind.apiVersion.slice(0, slash));
  const version = kind.apiVersion.slice(slash + 1);
  const def = catalogue.definitions.find((d) =>
    d.group === group && d.version === version && d.kind === kind.kind
  );
  if (!def) return undefined;
  const prefix = def.storage
    ? resourcePrefix(def.storage.group, def.storage.resource)
    : resourcePrefix(def.group, def.plural);
  const decode = (value: string) => {
    const obj = JSON.parse(value) as KubeObject;
    // Parameters of a kind converted by a webhook are taken as stored.
    const conversion = syncConversion(def);
    return conversion ? conversion.fromStorage(obj) : obj;
  };
  const scope = def.namespaced && query.namespace ? `${prefix}${query.namespace}/` : prefix;
  if (query.name !== undefined) {
    const kv = await store.get(def.namespaced ? `${scope}${query.name}` : `${prefix}${query.name}`);
    return kv ? [decode(kv.value)] : [];
  }
  const { items } = await store.list(def.namespaced ? scope : prefix);
  return items.map((kv) => decode(kv.value)).filter((o) =>
    !query.selector || query.selector.matches(o.metadata?.labels)
  );
}
