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
  type EventRateDecision,
  eventRateLimit,
  mutatingWebhooks,
  namespaceLifecycle,
  validatingAdmissionPolicy,
  validatingWebhooks,
} from "../../admission/mod.ts";
import type { Clock, Logger } from "../../api/mod.ts";
import type { Authorizer } from "../../auth/mod.ts";
import { certificateApproval, certificateSigning } from "../../certificates/mod.ts";
import { namespaceLookup } from "../../controllers/mod.ts";
import type { Catalogue } from "../../registry/mod.ts";
import type { Store } from "../../storage/mod.ts";
import { type AdmissionEnvironments, admissionEnvironments } from "./admission_sources.ts";
import type { OpenResources } from "./open_resources.ts";
import type { EgressDialer } from "../../egress/mod.ts";
import type { ServerMetrics } from "../../metrics/mod.ts";

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
  /** EventRateLimit's buckets when they are not the plugin's own (a `--workers` worker asks
   * the main thread's). */
  eventRates?: EventRateDecision;
  /** The plugins' configurations (`--admission-control-config-file`). */
  config: AdmissionConfig;
  /** Webhook calls dial through its `cluster` selection. @default direct */
  egress?: EgressDialer;
  /** Where webhook calls are timed and rejections counted. */
  metrics?: ServerMetrics;
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
    make: ({ config, clock, eventRates }) => {
      // loadAdmissionSettings refuses EventRateLimit enabled without a configuration.
      if (!config.eventRateLimit) throw new Error("EventRateLimit has no configuration");
      return eventRateLimit(config.eventRateLimit, clock, eventRates);
    },
  },
  { name: "CertificateApproval", make: () => certificateApproval },
  { name: "CertificateSigning", make: () => certificateSigning },
  { name: "MutatingAdmissionWebhook", make: (s) => mutatingWebhooks(environmentsOf(s).webhooks) },
  {
    name: "ValidatingAdmissionPolicy",
    make: (s) => validatingAdmissionPolicy(environmentsOf(s).policies),
  },
  {
    name: "ValidatingAdmissionWebhook",
    make: (s) => validatingWebhooks(environmentsOf(s).webhooks),
  },
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

/** One set of environments (one webhook client, its connections kept) per server. */
const environments = new WeakMap<AdmissionSources, AdmissionEnvironments>();

function environmentsOf(s: AdmissionSources): AdmissionEnvironments {
  let envs = environments.get(s);
  if (envs) return envs;
  const { mutating, validating } = s.config.webhookCredentials;
  envs = admissionEnvironments({
    store: s.store,
    catalogue: s.catalogue,
    logger: s.logger,
    authorizer: s.authorizer,
    webhookCredentials: (webhook) =>
      webhook.type === "mutating" ? mutating?.(webhook) : validating?.(webhook),
    createHttpClient: s.egress?.httpClientFactory("cluster"),
    webhookMetrics: s.metrics &&
      { duration: s.metrics.webhookDuration, rejections: s.metrics.webhookRejections },
  });
  s.resources.add("the admission webhook client", envs.close);
  environments.set(s, envs);
  return envs;
}
