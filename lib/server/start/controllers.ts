/**
 * Start-up step 6: the controllers and the authorizer. What every replica needs to serve runs
 * here on every replica: the CRD controller (custom resources served), RBAC (the bootstrap
 * policy and the authorizer). The cluster-wide controllers, which write objects any replica
 * would write the same (namespace finalization, policy status, ClusterRole aggregation, the
 * CSR approver and signer, the namespace defaults, and the `kubernetes` Service, which needs
 * the port and joins once the server listens: see {@link Controllers.startServiceController})
 * form one set, which runs on the leader of the replicas sharing a store (leader_election.ts),
 * or here unconditionally when the store is this process's own.
 */

import {
  buildAuthorizer,
  type ChainAuthorizer,
  instrumentedAuthorizer,
  privilegedGroupsAuthorizer,
  unionAuthorizer,
} from "../../auth/mod.ts";
import { ClusterRoleAggregator, RBAC_GROUP, startRbac } from "../../rbac/mod.ts";
import { CrdController } from "../../apiextensions/mod.ts";
import { CsrController, loadSignerConfig, type Pki } from "../../certificates/mod.ts";
import { ADMIN_GROUP, ADMIN_USER, type Logger } from "../../api/mod.ts";
import { isControllerEnabled } from "../../config/mod.ts";
import {
  ControllerSet,
  NamespaceController,
  type NamespaceDefaults,
  PolicyStatusController,
  ServiceController,
  startNamespaceDefaults,
} from "../../controllers/mod.ts";
import { certificateSigningRequests, customResourceDefinitions } from "../../resources/mod.ts";
import type { SchemaSet } from "../../schema/mod.ts";
import { rbacServed } from "../served_apis.ts";
import type { Configuration } from "./configuration.ts";
import { runClusterControllers } from "./leader_election.ts";
import type { OpenResources } from "./open_resources.ts";
import type { StartOptions } from "./options.ts";
import type { ApiRegistries } from "./registries.ts";

/** The running controllers, as later steps use them. */
export interface Controllers {
  authorizer: ChainAuthorizer;
  /** The schemas of everything served, custom resources included. */
  schemas(): SchemaSet;
  /** Publishes the CA bundle in every namespace (kube-root-ca.crt) while they run. */
  namespaceDefaults: NamespaceDefaults;
  /**
   * Adds the `kubernetes` Service controller (while Services are served) to the cluster-wide
   * set, pointing the Service at `port`; it runs while the set runs.
   */
  startServiceController(port: number): Promise<void>;
}

/** Starts the controllers over `api`. */
export async function startControllers(
  opts: StartOptions,
  config: Configuration,
  api: ApiRegistries,
  pki: Pki,
  logger: Logger,
  resources: OpenResources,
): Promise<Controllers> {
  const { catalogue, registries, namespaces } = api;
  const cluster = new ControllerSet(logger);
  cluster.add({
    name: "the namespace controller",
    async start() {
      const nsController = new NamespaceController({
        store: api.store,
        namespaces,
        contents: () => catalogue.namespacedStorage().map((d) => registries.get(d)!),
        logger,
      });
      await nsController.start();
      return nsController;
    },
  });
  // Custom resources are served (and their CRDs' stored state loaded) before the first
  // request; the controller keeps the catalogue and the registries map in step with CRDs.
  const crds = registries.get(customResourceDefinitions);
  const crdController = crds &&
    new CrdController({
      crds,
      catalogue,
      registries,
      newRegistry: api.newRegistry,
      logger,
      // Conversion webhooks are called as admission webhooks are: through the egress dialer.
      createHttpClient: config.egress.httpClientFactory("cluster"),
    });
  await crdController?.start();
  if (crdController) resources.add("the CRD controller", () => crdController.stop());
  const controllers = opts.controllers ?? ["*"];
  // A policy's status says how its expressions type-check against the kinds it names.
  const policies = registries.get(
    catalogue.lookup("admissionregistration.platform.io", "v1", "validatingadmissionpolicies")!,
  );
  if (policies && isControllerEnabled(controllers, "validatingadmissionpolicy-status-controller")) {
    cluster.add({
      name: "the policy status controller",
      async start() {
        const policyStatus = new PolicyStatusController({
          policies,
          catalogue,
          schemas: () => crdController?.schemas() ?? api.schemas,
          logger,
        });
        await policyStatus.start();
        return policyStatus;
      },
    });
  }
  const rbacRegistry = (plural: string) =>
    registries.get(catalogue.lookup(RBAC_GROUP, "v1", plural)!)!;
  // RBAC runs when its resources are served; when they are not, servedDefinitions made sure
  // that no authorizer needs it.
  const rbac = rbacServed(api.definitions)
    ? await startRbac({
      sources: {
        roles: rbacRegistry("roles"),
        roleBindings: rbacRegistry("rolebindings"),
        clusterRoles: rbacRegistry("clusterroles"),
        clusterRoleBindings: rbacRegistry("clusterrolebindings"),
      },
      index: config.rbacPolicy,
      aggregation: false, // one of the cluster-wide controllers, below
      logger,
    })
    : undefined;
  if (rbac) resources.add("RBAC", () => rbac.stop());
  if (rbac && isControllerEnabled(controllers, "clusterrole-aggregation")) {
    cluster.add({
      name: "the clusterrole-aggregation controller",
      async start() {
        const aggregator = new ClusterRoleAggregator({
          clusterRoles: rbacRegistry("clusterroles"),
          logger,
        });
        await aggregator.start();
        return aggregator;
      },
    });
  }
  // Without an authorization configuration: system:masters may do anything, then RBAC decides.
  const authorizer: ChainAuthorizer = config.authorization
    ? buildAuthorizer(config.authorization, {
      rbac: () => rbac!.authorizer,
      logger,
      createHttpClient: config.egress.httpClientFactory("cluster"),
      decisions: config.metrics?.authorizationDecisions,
    })
    : {
      // kube's name of the RBAC authorizer when no configuration names it.
      ...unionAuthorizer([
        privilegedGroupsAuthorizer([ADMIN_GROUP]),
        config.metrics
          ? instrumentedAuthorizer(
            "RBAC",
            "rbac",
            rbac!.authorizer,
            config.metrics.authorizationDecisions,
          )
          : rbac!.authorizer,
      ]),
      close() {},
    };
  resources.add("the authorizer", () => authorizer.close());
  const signing = isControllerEnabled(controllers, "csrsigning");
  const csrs = registries.get(certificateSigningRequests);
  // The signing CAs are read once, at start: a file that is wrong fails the start.
  const signer = csrs && signing
    ? await loadSignerConfig({
      clusterCA: { certPem: pki.caCertPem, keyPem: pki.caKeyPem },
      all: opts.clusterSigning,
      perSigner: opts.clusterSigningPerSigner,
      durationMs: opts.clusterSigningDurationMs,
    })
    : undefined;
  if (csrs) {
    cluster.add({
      name: "the CSR controller",
      async start() {
        const csrController = new CsrController({
          csrs,
          signer,
          approver: isControllerEnabled(controllers, "csrapproving") ? { authorizer } : undefined,
          logger,
        });
        await csrController.start();
        return csrController;
      },
    });
  }
  // The default ServiceAccount and the kube-root-ca.crt ConfigMap in every namespace, each
  // while its resource is served. The CA bundle may change while they do not run: each start
  // publishes the latest.
  let caBundle = pki.servingCaPem ?? pki.caCertPem;
  let runningDefaults: NamespaceDefaults | undefined;
  cluster.add({
    name: "the namespace defaults",
    async start() {
      const defaults = await startNamespaceDefaults({
        namespaces,
        serviceAccounts: api.core("serviceaccounts"),
        configMaps: api.core("configmaps"),
        controllers,
        caBundle,
        logger,
      });
      runningDefaults = defaults;
      return {
        stop: async () => {
          runningDefaults = undefined;
          await defaults.stop();
        },
      };
    },
  });
  const namespaceDefaults: NamespaceDefaults = {
    setCaBundle(pem) {
      caBundle = pem;
      runningDefaults?.setCaBundle(pem);
    },
    stop: () => Promise.resolve(), // with the cluster-wide set
  };
  await runClusterControllers(opts, api, cluster, logger, resources);
  return {
    authorizer,
    schemas: () => crdController?.schemas() ?? api.schemas,
    namespaceDefaults,
    async startServiceController(port) {
      const services = api.core("services");
      if (!services) return;
      await cluster.add({
        name: "the kubernetes Service controller",
        async start() {
          const controller = new ServiceController({
            services,
            allocator: api.serviceAllocator,
            securePort: port,
            ctx: { user: { username: ADMIN_USER, groups: [ADMIN_GROUP] } },
            logger,
          });
          await controller.start();
          return controller;
        },
      });
    },
  };
}
