/**
 * Start-up step 6: the controllers and the authorizer. Namespaces, custom resources, RBAC
 * (which the authorizer needs), certificate signing requests and the namespace defaults start
 * here, in that order; the `kubernetes` Service controller needs the port, and starts once the
 * server listens (see {@link Controllers.startServiceController}).
 */

import {
  buildAuthorizer,
  type ChainAuthorizer,
  instrumentedAuthorizer,
  privilegedGroupsAuthorizer,
  unionAuthorizer,
} from "../../auth/mod.ts";
import { RBAC_GROUP, startRbac } from "../../rbac/mod.ts";
import { CrdController } from "../../apiextensions/mod.ts";
import { CsrController, loadSignerConfig, type Pki } from "../../certificates/mod.ts";
import { ADMIN_GROUP, ADMIN_USER, type Logger } from "../../api/mod.ts";
import { isControllerEnabled } from "../../config/mod.ts";
import {
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
import type { OpenResources } from "./open_resources.ts";
import type { StartOptions } from "./options.ts";
import type { ApiRegistries } from "./registries.ts";

/** The running controllers, as later steps use them. */
export interface Controllers {
  authorizer: ChainAuthorizer;
  /** The schemas of everything served, custom resources included. */
  schemas(): SchemaSet;
  /** Publishes the CA bundle in every namespace (kube-root-ca.crt). */
  namespaceDefaults: NamespaceDefaults;
  /**
   * Starts the `kubernetes` Service controller (while Services are served), pointing the
   * Service at `port`. It is stopped with the other controllers, after the connections close.
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
  const nsController = new NamespaceController({
    store: api.store,
    namespaces,
    contents: () => catalogue.namespacedStorage().map((d) => registries.get(d)!),
    logger,
  });
  await nsController.start();
  resources.add("the namespace controller", () => nsController.stop());
  // Custom resources are served (and their CRDs' stored state loaded) before the first
  // request; the controller keeps the catalogue and the registries map in step with CRDs.
  const crds = registries.get(customResourceDefinitions);
  const crdController = crds &&
    new CrdController({ crds, catalogue, registries, newRegistry: api.newRegistry, logger });
  await crdController?.start();
  if (crdController) resources.add("the CRD controller", () => crdController.stop());
  const controllers = opts.controllers ?? ["*"];
  // A policy's status says how its expressions type-check against the kinds it names.
  const policies = registries.get(
    catalogue.lookup("admissionregistration.platform.io", "v1", "validatingadmissionpolicies")!,
  );
  if (policies && isControllerEnabled(controllers, "validatingadmissionpolicy-status-controller")) {
    const policyStatus = new PolicyStatusController({
      policies,
      catalogue,
      schemas: () => crdController?.schemas() ?? api.schemas,
      logger,
    });
    await policyStatus.start();
    resources.add("the policy status controller", () => policyStatus.stop());
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
      aggregation: isControllerEnabled(controllers, "clusterrole-aggregation"),
      logger,
    })
    : undefined;
  if (rbac) resources.add("RBAC", () => rbac.stop());
  // Without an authorization configuration: system:masters may do anything, then RBAC decides.
  const authorizer: ChainAuthorizer = config.authorization
    ? buildAuthorizer(config.authorization, {
      rbac: () => rbac!.authorizer,
      logger,
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
  const csrController = csrs && new CsrController({
    csrs,
    signer: signing
      ? await loadSignerConfig({
        clusterCA: { certPem: pki.caCertPem, keyPem: pki.caKeyPem },
        all: opts.clusterSigning,
        perSigner: opts.clusterSigningPerSigner,
        durationMs: opts.clusterSigningDurationMs,
      })
      : undefined,
    approver: isControllerEnabled(controllers, "csrapproving") ? { authorizer } : undefined,
    logger,
  });
  await csrController?.start();
  if (csrController) resources.add("the CSR controller", () => csrController.stop());
  // The default ServiceAccount and the kube-root-ca.crt ConfigMap in every namespace, each
  // while its resource is served.
  const namespaceDefaults = await startNamespaceDefaults({
    namespaces,
    serviceAccounts: api.core("serviceaccounts"),
    configMaps: api.core("configmaps"),
    controllers,
    caBundle: pki.servingCaPem ?? pki.caCertPem,
    logger,
  });
  resources.add("the namespace defaults", () => namespaceDefaults.stop());
  // Registered now, started later: stopped before the other controllers, and after the
  // connections close (which are registered when the server listens).
  let serviceController: ServiceController | undefined;
  resources.add("the kubernetes Service controller", () => serviceController?.stop());
  return {
    authorizer,
    schemas: () => crdController?.schemas() ?? api.schemas,
    namespaceDefaults,
    async startServiceController(port) {
      const services = api.core("services");
      if (!services) return;
      const controller = new ServiceController({
        services,
        allocator: api.serviceAllocator,
        securePort: port,
        ctx: { user: { username: ADMIN_USER, groups: [ADMIN_GROUP] } },
        logger,
      });
      await controller.start();
      serviceController = controller;
    },
  };
}
