/**
 * Start-up step 5a: the admission chain every write of every registry passes. The plugins are
 * listed once, in kube's order (its `AllOrderedPlugins`); the enabled ones
 * (`--enable-admission-plugins`, `--disable-admission-plugins`) are made, in that order, from
 * what the server has opened and their configurations (`--admission-control-config-file`).
 * `ADMISSION_PLUGIN_NAMES` of lib/config, which the flags are checked against, lists the same
 * names (admission_test.ts checks it).
 */

import {
  AdmissionChain,
  type AdmissionConfig,
  type AdmissionPlugin,
  type EquivalentResource,
  eventRateLimit,
  mutatingWebhooks,
  namespaceLifecycle,
  StoredWebhooks,
  validatingWebhooks,
  WebhookClient,
  type WebhookEnvironment,
} from "../../admission/mod.ts";
import type { Clock, KubeObject, Logger } from "../../api/mod.ts";
import type { Authorizer } from "../../auth/mod.ts";
import { certificateApproval, certificateSigning } from "../../certificates/mod.ts";
import { namespaceLookup, namespaceObjects } from "../../controllers/mod.ts";
import { type Catalogue, type ResourceDefinition, resourcePrefix } from "../../registry/mod.ts";
import type { Store } from "../../storage/mod.ts";
import type { OpenResources } from "./open_resources.ts";

const ADMISSION_GROUP = "admissionregistration.platform.io";

/** What plugins are made from. The authorizer comes later than the chain (RBAC reads the
 * registries the chain is built into): it is looked up when a plugin needs it. */
export interface AdmissionSources {
  store: Store;
  catalogue: Catalogue;
  logger: Logger;
  resources: OpenResources;
  authorizer: () => Authorizer | undefined;
  /** The time EventRateLimit's buckets refill by. */
  clock: Clock;
  /** The plugins' configurations (`--admission-control-config-file`). */
  config: AdmissionConfig;
}

/** An admission plugin the server has: kube's name, and how to make it. */
export interface AdmissionPluginEntry {
  name: string;
  make(sources: AdmissionSources): AdmissionPlugin;
}

/** Every admission plugin, in kube's order. */
export const ADMISSION_PLUGINS: readonly AdmissionPluginEntry[] = [
  { name: "NamespaceLifecycle", make: ({ store }) => namespaceLifecycle(namespaceLookup(store)) },
  {
    name: "EventRateLimit",
    make: ({ config, clock }) => {
      // loadAdmissionSettings refuses EventRateLimit enabled without a configuration.
      if (!config.eventRateLimit) throw new Error("EventRateLimit has no configuration");
      return eventRateLimit(config.eventRateLimit, clock);
    },
  },
  { name: "CertificateApproval", make: () => certificateApproval },
  { name: "CertificateSigning", make: () => certificateSigning },
  { name: "MutatingAdmissionWebhook", make: (s) => mutatingWebhooks(webhookEnvironment(s)) },
  { name: "ValidatingAdmissionWebhook", make: (s) => validatingWebhooks(webhookEnvironment(s)) },
];

/** The chain of the enabled plugins, in kube's order whatever the order of `enabled`. */
export function buildAdmission(
  sources: AdmissionSources,
  enabled: readonly string[],
): AdmissionChain {
  return new AdmissionChain(
    ADMISSION_PLUGINS.filter((p) => enabled.includes(p.name)).map((p) => p.make(sources)),
  );
}

/** One environment (one webhook client, its connections kept) for both webhook plugins. */
const environments = new WeakMap<AdmissionSources, WebhookEnvironment>();

function webhookEnvironment(s: AdmissionSources): WebhookEnvironment {
  let env = environments.get(s);
  if (env) return env;
  const { mutating, validating } = s.config.webhookCredentials;
  const client = new WebhookClient({
    credentials: (webhook) =>
      webhook.type === "mutating" ? mutating?.(webhook) : validating?.(webhook),
  });
  s.resources.add("the admission webhook client", () => client.close());
  const source = new StoredWebhooks(s.store, {
    mutating: resourcePrefix(ADMISSION_GROUP, "mutatingwebhookconfigurations"),
    validating: resourcePrefix(ADMISSION_GROUP, "validatingwebhookconfigurations"),
  }, (key, err) => s.logger.warn(`admission: cannot read ${key}: ${(err as Error).message}`));
  const namespace = namespaceObjects(s.store);
  env = {
    source,
    client,
    namespace,
    equivalents: (resource) => equivalentResources(s.catalogue, resource),
    get authorizer() {
      return s.authorizer();
    },
    logger: s.logger,
  };
  environments.set(s, env);
  return env;
}

/** The served resources stored where `resource` is, with conversions through the stored form
 * (core v1 events and events.platform.io/v1 events). */
function equivalentResources(
  catalogue: Catalogue,
  resource: { group: string; version: string; resource: string },
): EquivalentResource[] {
  const def = catalogue.lookup(resource.group, resource.version, resource.resource);
  if (!def) return [];
  const where = storedAt(def);
  const toStored = (d: ResourceDefinition, o: KubeObject) =>
    d.storage ? d.storage.conversion.toStorage(o) : o;
  const fromStored = (d: ResourceDefinition, o: KubeObject) =>
    d.storage ? d.storage.conversion.fromStorage(o) : o;
  return catalogue.definitions.filter((d) => d !== def && storedAt(d) === where).map((d) => ({
    resource: { group: d.group, version: d.version, resource: d.plural },
    kind: { group: d.group, version: d.version, kind: d.kind },
    toEquivalent: (o) => fromStored(d, toStored(def, structuredClone(o))),
    fromEquivalent: (o) => fromStored(def, toStored(d, structuredClone(o))),
  }));
}

function storedAt(d: ResourceDefinition): string {
  return d.storage ? `${d.storage.group}/${d.storage.resource}` : `${d.group}/${d.plural}`;
}
