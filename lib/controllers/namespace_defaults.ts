/**
 * What every namespace gets, as kube-controller-manager gives it:
 *
 * - `serviceaccount`: a ServiceAccount `default`, created when a namespace appears and again
 *   when it is deleted (its content is the user's: never reset).
 * - `root-ca-cert-publisher`: a ConfigMap `kube-root-ca.crt` whose `ca.crt` is the CA bundle
 *   that verifies the API server's serving certificate, created when a namespace appears,
 *   recreated when deleted, its data put back when edited, and rewritten everywhere when the
 *   bundle changes (see {@link NamespaceDefaults.setCaBundle}).
 *
 * Each runs unless `--controllers` turns it off. Both share one namespace informer.
 */

import { jsonEqual, type Logger } from "../api/mod.ts";
import { isControllerEnabled } from "../config/mod.ts";
import {
  Informer,
  type KubeObject,
  type ResourceRegistry,
  type StrategyContext,
} from "../registry/mod.ts";
import { type KeptObject, NamespaceObjectKeeper } from "./per_namespace.ts";

/** The `--controllers` names, as kube's. */
export const SERVICE_ACCOUNT_CONTROLLER = "serviceaccount";
export const ROOT_CA_PUBLISHER = "root-ca-cert-publisher";

export const DEFAULT_SERVICE_ACCOUNT = "default";
export const ROOT_CA_CONFIGMAP = "kube-root-ca.crt";
export const ROOT_CA_KEY = "ca.crt";
/** The annotation kube puts on the ConfigMap (the text is ours). */
export const DESCRIPTION_ANNOTATION = "kubernetes.io/description";
const DESCRIPTION = "The CA bundle that verifies the API server's serving certificate, for " +
  "clients in this namespace. Kept by the root-ca-cert-publisher controller: edits are undone.";

const MANAGER = "platform-controller-manager";

/** A controller's service account identity, as kube's controllers have one each. */
function controllerContext(account: string): StrategyContext {
  return {
    user: {
      username: `system:serviceaccount:platform-system:${account}`,
      groups: ["system:serviceaccounts", "system:serviceaccounts:platform-system"],
    },
  };
}

export interface NamespaceDefaultsOptions {
  namespaces: ResourceRegistry;
  /** Absent when not served (`--runtime-config`): then no `default` service account. */
  serviceAccounts?: ResourceRegistry;
  /** Absent when not served: then no `kube-root-ca.crt`. */
  configMaps?: ResourceRegistry;
  /** The `--controllers` selection. */
  controllers: readonly string[];
  /** PEM: what clients trust to verify the serving certificate. */
  caBundle: string;
  logger: Logger;
}

/** The running per-namespace default controllers. */
export interface NamespaceDefaults {
  /** Publishes another CA bundle to every namespace (no-op when unchanged). */
  setCaBundle(pem: string): void;
  stop(): Promise<void>;
}

/**
 * Starts the enabled controllers; resolves once every existing namespace has been looked at
 * (so a server that has started already has its defaults).
 */
export async function startNamespaceDefaults(
  opts: NamespaceDefaultsOptions,
): Promise<NamespaceDefaults> {
  let caBundle = opts.caBundle;
  const kept: KeptObject[] = [];
  if (opts.serviceAccounts && isControllerEnabled(opts.controllers, SERVICE_ACCOUNT_CONTROLLER)) {
    kept.push({
      controller: SERVICE_ACCOUNT_CONTROLLER,
      objects: opts.serviceAccounts,
      name: DEFAULT_SERVICE_ACCOUNT,
      build: () => ({ apiVersion: "v1", kind: "ServiceAccount", metadata: {} }),
      context: controllerContext("service-account-controller"),
      manager: MANAGER,
    });
  }
  let publisher: NamespaceObjectKeeper | undefined;
  if (opts.configMaps && isControllerEnabled(opts.controllers, ROOT_CA_PUBLISHER)) {
    kept.push({
      controller: ROOT_CA_PUBLISHER,
      objects: opts.configMaps,
      name: ROOT_CA_CONFIGMAP,
      build: () => ({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { annotations: { [DESCRIPTION_ANNOTATION]: DESCRIPTION } },
        data: { [ROOT_CA_KEY]: caBundle },
      }),
      repair: (current) => repairRootCa(current, caBundle),
      context: controllerContext("root-ca-cert-publisher"),
      manager: MANAGER,
    });
  }
  if (!kept.length) return { setCaBundle() {}, stop: () => Promise.resolve() };

  const keepers: NamespaceObjectKeeper[] = [];
  const informer: Informer = new Informer(opts.namespaces, {
    logger: opts.logger,
    onEvent: (ev) => {
      for (const k of keepers) k.namespaceChanged(ev);
    },
  });
  const lookup = {
    get: (name: string) => informer.get(name),
    names: () => [...informer.objects()].map((ns) => ns.metadata.name as string),
  };
  for (const spec of kept) {
    const keeper = new NamespaceObjectKeeper(spec, lookup, opts.logger);
    if (spec.controller === ROOT_CA_PUBLISHER) publisher = keeper;
    keepers.push(keeper);
  }
  // The kept objects first: the namespaces' initial events then find them mirrored.
  await Promise.all(keepers.map((k) => k.start()));
  await informer.start();
  await Promise.all(keepers.map((k) => k.idle()));
  return {
    setCaBundle(pem: string) {
      if (pem === caBundle) return;
      caBundle = pem;
      publisher?.resyncAll();
    },
    async stop() {
      await informer.stop();
      await Promise.all(keepers.map((k) => k.stop()));
    },
  };
}

/** The ConfigMap with kube's data and description, when it has anything else. */
function repairRootCa(current: KubeObject, caBundle: string): KubeObject | undefined {
  const data = { [ROOT_CA_KEY]: caBundle };
  const described = Boolean(current.metadata.annotations?.[DESCRIPTION_ANNOTATION]);
  if (jsonEqual(current.data ?? {}, data) && described) return undefined;
  const next = structuredClone(current);
  next.data = data;
  next.metadata.annotations = {
    ...(next.metadata.annotations ?? {}),
    [DESCRIPTION_ANNOTATION]: DESCRIPTION,
  };
  return next;
}
