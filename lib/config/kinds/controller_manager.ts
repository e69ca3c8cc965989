/**
 * The controller manager configurations: KubeControllerManagerConfiguration
 * (`controllermanager.config.platform.io/v1alpha1`, kube's
 * `kubecontrollermanager.config.k8s.io/v1alpha1`) and CloudControllerManagerConfiguration
 * (`cloudcontrollermanager.config.platform.io/v1alpha1`, kube's
 * `cloudcontrollermanager.config.k8s.io/v1alpha1`), with the parts they share: the generic
 * configuration (`generic`) and the cloud settings (`kubeCloudShared`). Defaults are kube's
 * (kube-controller-manager's client rates of 20 qps and burst 30, its lock name); validation
 * is kube's options validation, with field paths.
 *
 * The sub-configurations of kube's controllers that spec 03 does not describe
 * (`garbageCollectorController`, `jobController`, …) are accepted as they are.
 *
 * @module
 */

import { z } from "zod";
import { CONTROLLERS } from "../controller_selection.ts";
import {
  child,
  clientConnectionSchema,
  type ConfigKind,
  debuggingSchema,
  defaultClientConnection,
  defaultDuration,
  defaultLeaderElection,
  duration,
  type FieldErrors,
  int32,
  kindCheck,
  leaderElectionSchema,
  ms,
  normalDuration,
  type Obj,
  validateClientConnection,
  validateLeaderElection,
  validateSelection,
} from "./common.ts";
import {
  defaultLeaderMigration,
  leaderMigrationSchema,
  validateLeaderMigration,
} from "./leader_migration.ts";

export const KUBE_CONTROLLER_MANAGER_KIND = "KubeControllerManagerConfiguration";
export const KUBE_CONTROLLER_MANAGER_API_VERSIONS = [
  "controllermanager.config.platform.io/v1alpha1",
  "kubecontrollermanager.config.k8s.io/v1alpha1",
] as const;
export const CLOUD_CONTROLLER_MANAGER_KIND = "CloudControllerManagerConfiguration";
export const CLOUD_CONTROLLER_MANAGER_API_VERSIONS = [
  "cloudcontrollermanager.config.platform.io/v1alpha1",
  "cloudcontrollermanager.config.k8s.io/v1alpha1",
] as const;

/**
 * kube-controller-manager's controllers: canonical name → the short alias it also answers
 * to (kube's `controller_names.go` and the descriptors' aliases).
 */
const KUBE_CONTROLLERS: Record<string, string | undefined> = {
  "serviceaccount-token-controller": "serviceaccount-token",
  "endpoints-controller": "endpoint",
  "endpointslice-controller": "endpointslice",
  "endpointslice-mirroring-controller": "endpointslicemirroring",
  "replicationcontroller-controller": "replicationcontroller",
  "pod-garbage-collector-controller": "podgc",
  "resourcequota-controller": "resourcequota",
  "namespace-controller": "namespace",
  "serviceaccount-controller": "serviceaccount",
  "garbage-collector-controller": "garbagecollector",
  "daemonset-controller": "daemonset",
  "job-controller": "job",
  "deployment-controller": "deployment",
  "replicaset-controller": "replicaset",
  "horizontal-pod-autoscaler-controller": "horizontalpodautoscaling",
  "disruption-controller": "disruption",
  "statefulset-controller": "statefulset",
  "cronjob-controller": "cronjob",
  "certificatesigningrequest-signing-controller": "csrsigning",
  "certificatesigningrequest-approving-controller": "csrapproving",
  "certificatesigningrequest-cleaner-controller": "csrcleaner",
  "ttl-controller": "ttl",
  "bootstrap-signer-controller": "bootstrapsigner",
  "token-cleaner-controller": "tokencleaner",
  "node-ipam-controller": "nodeipam",
  "node-lifecycle-controller": "nodelifecycle",
  "taint-eviction-controller": undefined,
  "persistentvolume-binder-controller": "persistentvolume-binder",
  "persistentvolume-attach-detach-controller": "attachdetach",
  "persistentvolume-expander-controller": "persistentvolume-expander",
  "clusterrole-aggregation-controller": "clusterrole-aggregation",
  "persistentvolumeclaim-protection-controller": "pvc-protection",
  "persistentvolume-protection-controller": "pv-protection",
  "ttl-after-finished-controller": "ttl-after-finished",
  "root-ca-certificate-publisher-controller": "root-ca-cert-publisher",
  "ephemeral-volume-controller": "ephemeral-volume",
  "storageversion-garbage-collector-controller": "storage-version-gc",
  "resourceclaim-controller": "resourceclaim",
  "legacy-serviceaccount-token-cleaner-controller": "legacy-service-account-token-cleaner",
  "validatingadmissionpolicy-status-controller": undefined,
  "service-cidr-controller": undefined,
  "storage-version-migrator-controller": undefined,
  "cloud-node-lifecycle-controller": "cloud-node-lifecycle",
  "service-lb-controller": "service",
  "node-route-controller": "route",
};

/** Every name `generic.controllers` of a KubeControllerManagerConfiguration may use. */
const KNOWN_KUBE_CONTROLLERS: ReadonlySet<string> = new Set([
  ...Object.keys(KUBE_CONTROLLERS),
  ...Object.values(KUBE_CONTROLLERS).filter((a): a is string => a !== undefined),
  ...CONTROLLERS,
]);

/** The cloud controller manager's controllers, canonical names and aliases. */
const KNOWN_CLOUD_CONTROLLERS: ReadonlySet<string> = new Set([
  "cloud-node-controller",
  "cloud-node",
  "cloud-node-lifecycle-controller",
  "cloud-node-lifecycle",
  "service-lb-controller",
  "service",
  "node-route-controller",
  "route",
]);

/**
 * The server's own name for a controller named in kube's words (canonical or alias), or
 * `undefined` when the server has no such controller.
 */
export function serverControllerName(name: string): string | undefined {
  if ((CONTROLLERS as readonly string[]).includes(name)) return name;
  const alias = KUBE_CONTROLLERS[name];
  if (alias !== undefined && (CONTROLLERS as readonly string[]).includes(alias)) return alias;
  // validatingadmissionpolicy-status-controller has no alias: the canonical name is ours.
  return undefined;
}

// ---------------------------------------------------------------------------------------
// Shared parts

const genericSchema = z.strictObject({
  port: int32.optional(),
  address: z.string().optional(),
  minResyncPeriod: duration.optional(),
  clientConnection: clientConnectionSchema.optional(),
  controllerStartInterval: duration.optional(),
  leaderElection: leaderElectionSchema.optional(),
  controllers: z.array(z.string()).optional(),
  debugging: debuggingSchema.optional(),
  leaderMigrationEnabled: z.boolean().optional(),
  leaderMigration: leaderMigrationSchema.optional(),
});
export type GenericConfig = z.infer<typeof genericSchema>;

function defaultGeneric(g: GenericConfig | undefined, component: string): Obj {
  return {
    port: g?.port ?? 0,
    address: g?.address || "0.0.0.0",
    minResyncPeriod: defaultDuration(g?.minResyncPeriod, "12h"),
    clientConnection: defaultClientConnection(g?.clientConnection, { qps: 20, burst: 30 }),
    controllerStartInterval: normalDuration(g?.controllerStartInterval),
    leaderElection: defaultLeaderElection(g?.leaderElection, {
      resourceName: component,
      resourceNamespace: "kube-system",
    }),
    controllers: g?.controllers?.length ? g.controllers : ["*"],
    debugging: {
      enableProfiling: g?.debugging?.enableProfiling ?? true,
      enableContentionProfiling: g?.debugging?.enableContentionProfiling ?? false,
    },
    leaderMigrationEnabled: g?.leaderMigrationEnabled ?? false,
    leaderMigration: defaultLeaderMigration(g?.leaderMigration),
  };
}

function validateGeneric(g: Obj, known: ReadonlySet<string>, errs: FieldErrors): void {
  validateClientConnection(g.clientConnection as Obj, "generic.clientConnection", errs);
  validateLeaderElection(g.leaderElection as Obj, "generic.leaderElection", errs);
  validateSelection(g.controllers as string[], "generic.controllers", known, errs, "controllers");
  if (g.leaderMigrationEnabled) {
    validateLeaderMigration(g.leaderMigration as Obj, "generic.leaderMigration", errs);
  }
}

const kubeCloudSharedSchema = z.strictObject({
  cloudProvider: z.strictObject({
    name: z.string().optional(),
    cloudConfigFile: z.string().optional(),
  }).optional(),
  externalCloudVolumePlugin: z.string().optional(),
  useServiceAccountCredentials: z.boolean().optional(),
  allowUntaggedCloud: z.boolean().optional(),
  routeReconciliationPeriod: duration.optional(),
  nodeMonitorPeriod: duration.optional(),
  clusterName: z.string().optional(),
  clusterCIDR: z.string().optional(),
  allocateNodeCIDRs: z.boolean().optional(),
  cidrAllocatorType: z.string().optional(),
  configureCloudRoutes: z.boolean().optional(),
  nodeSyncPeriod: duration.optional(),
});

function defaultKubeCloudShared(c: z.infer<typeof kubeCloudSharedSchema> | undefined): Obj {
  return {
    cloudProvider: {
      name: c?.cloudProvider?.name ?? "",
      cloudConfigFile: c?.cloudProvider?.cloudConfigFile ?? "",
    },
    externalCloudVolumePlugin: c?.externalCloudVolumePlugin ?? "",
    useServiceAccountCredentials: c?.useServiceAccountCredentials ?? false,
    allowUntaggedCloud: c?.allowUntaggedCloud ?? false,
    routeReconciliationPeriod: defaultDuration(c?.routeReconciliationPeriod, "10s"),
    nodeMonitorPeriod: defaultDuration(c?.nodeMonitorPeriod, "5s"),
    clusterName: c?.clusterName || "kubernetes",
    clusterCIDR: c?.clusterCIDR ?? "",
    allocateNodeCIDRs: c?.allocateNodeCIDRs ?? false,
    cidrAllocatorType: c?.cidrAllocatorType ?? "",
    configureCloudRoutes: c?.configureCloudRoutes ?? true,
    nodeSyncPeriod: normalDuration(c?.nodeSyncPeriod),
  };
}

// ---------------------------------------------------------------------------------------
// KubeControllerManagerConfiguration

const signerFiles = z.strictObject({
  certFile: z.string().optional(),
  keyFile: z.string().optional(),
});
const SIGNERS = [
  "kubeletServingSignerConfiguration",
  "kubeletClientSignerConfiguration",
  "kubeAPIServerClientSignerConfiguration",
  "legacyUnknownSignerConfiguration",
] as const;

const csrSigningSchema = z.strictObject({
  clusterSigningCertFile: z.string().optional(),
  clusterSigningKeyFile: z.string().optional(),
  ...Object.fromEntries(SIGNERS.map((s) => [s, signerFiles.optional()])) as Record<
    typeof SIGNERS[number],
    z.ZodOptional<typeof signerFiles>
  >,
  clusterSigningDuration: duration.optional(),
});

/** The sub-configurations of kube's other controllers, accepted without checks. */
const OTHER_CONTROLLER_CONFIGS = [
  "cronJobController",
  "legacySATokenCleaner",
  "endpointController",
  "endpointSliceController",
  "endpointSliceMirroringController",
  "ephemeralVolumeController",
  "garbageCollectorController",
  "hpaController",
  "jobController",
  "namespaceController",
  "nodeIPAMController",
  "nodeLifecycleController",
  "persistentVolumeBinderController",
  "podGCController",
  "replicaSetController",
  "replicationController",
  "resourceQuotaController",
  "saController",
  "serviceController",
  "ttlAfterFinishedController",
  "validatingAdmissionPolicyStatusController",
  "deviceTaintEvictionController",
] as const;

const kubeControllerManagerSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  generic: genericSchema.optional(),
  kubeCloudShared: kubeCloudSharedSchema.optional(),
  attachDetachController: z.strictObject({
    disableAttachDetachReconcilerSync: z.boolean().optional(),
    reconcilerSyncLoopPeriod: duration.optional(),
    disableForceDetachOnTimeout: z.boolean().optional(),
  }).optional(),
  csrSigningController: csrSigningSchema.optional(),
  daemonSetController: z.strictObject({ concurrentDaemonSetSyncs: int32.optional() }).optional(),
  deploymentController: z.strictObject({ concurrentDeploymentSyncs: int32.optional() })
    .optional(),
  statefulSetController: z.strictObject({ concurrentStatefulSetSyncs: int32.optional() })
    .optional(),
  deprecatedController: z.strictObject({}).optional(),
  ...Object.fromEntries(
    OTHER_CONTROLLER_CONFIGS.map((k) => [k, z.record(z.string(), z.unknown()).optional()]),
  ),
});
export type KubeControllerManagerConfig = z.infer<typeof kubeControllerManagerSchema>;

function defaultKubeControllerManager(c: KubeControllerManagerConfig): Obj {
  const csr = c.csrSigningController;
  const raw = c as Obj;
  const others = Object.fromEntries(
    OTHER_CONTROLLER_CONFIGS.filter((k) => raw[k] !== undefined).map((k) => [k, raw[k]]),
  );
  return {
    apiVersion: c.apiVersion,
    kind: c.kind,
    generic: defaultGeneric(c.generic, "kube-controller-manager"),
    kubeCloudShared: defaultKubeCloudShared(c.kubeCloudShared),
    attachDetachController: {
      disableAttachDetachReconcilerSync: c.attachDetachController
        ?.disableAttachDetachReconcilerSync ?? false,
      reconcilerSyncLoopPeriod: defaultDuration(
        c.attachDetachController?.reconcilerSyncLoopPeriod,
        "60s",
      ),
      disableForceDetachOnTimeout: c.attachDetachController?.disableForceDetachOnTimeout ?? false,
    },
    csrSigningController: {
      clusterSigningCertFile: csr?.clusterSigningCertFile ?? "",
      clusterSigningKeyFile: csr?.clusterSigningKeyFile ?? "",
      ...Object.fromEntries(SIGNERS.map((s) => [s, {
        certFile: csr?.[s]?.certFile ?? "",
        keyFile: csr?.[s]?.keyFile ?? "",
      }])),
      clusterSigningDuration: defaultDuration(csr?.clusterSigningDuration, "8760h"),
    },
    daemonSetController: {
      concurrentDaemonSetSyncs: c.daemonSetController?.concurrentDaemonSetSyncs || 2,
    },
    deploymentController: {
      concurrentDeploymentSyncs: c.deploymentController?.concurrentDeploymentSyncs || 5,
    },
    statefulSetController: {
      concurrentStatefulSetSyncs: c.statefulSetController?.concurrentStatefulSetSyncs || 5,
    },
    deprecatedController: {},
    ...others,
  };
}

/** kube's CSRSigningControllerOptions.Validate, as field errors. */
function validateCsrSigning(c: Obj, errs: FieldErrors): void {
  const path = "csrSigningController";
  const pair = (at: string, cert: unknown, key: unknown) => {
    if (cert !== "" && key === "") {
      errs.required(
        child(at, at === path ? "clusterSigningKeyFile" : "keyFile"),
        "cannot specify cert without key",
      );
    }
    if (cert === "" && key !== "") {
      errs.required(
        child(at, at === path ? "clusterSigningCertFile" : "certFile"),
        "cannot specify key without cert",
      );
    }
  };
  pair(path, c.clusterSigningCertFile, c.clusterSigningKeyFile);
  const generic = c.clusterSigningCertFile !== "" || c.clusterSigningKeyFile !== "";
  for (const s of SIGNERS) {
    const files = c[s] as Obj;
    pair(child(path, s), files.certFile, files.keyFile);
    if (generic && (files.certFile !== "" || files.keyFile !== "")) {
      errs.forbidden(
        child(path, s),
        "cannot be set together with clusterSigningCertFile and clusterSigningKeyFile",
      );
    }
  }
  if (ms(c.clusterSigningDuration) < 0) {
    errs.invalid(
      child(path, "clusterSigningDuration"),
      c.clusterSigningDuration,
      "must be greater than zero",
    );
  }
}

export const kubeControllerManagerKind: ConfigKind = {
  kind: KUBE_CONTROLLER_MANAGER_KIND,
  apiVersions: KUBE_CONTROLLER_MANAGER_API_VERSIONS,
  check: kindCheck(kubeControllerManagerSchema, defaultKubeControllerManager, (c, errs) => {
    validateGeneric(c.generic as Obj, KNOWN_KUBE_CONTROLLERS, errs);
    validateCsrSigning(c.csrSigningController as Obj, errs);
  }),
};

// ---------------------------------------------------------------------------------------
// CloudControllerManagerConfiguration

const cloudControllerManagerSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  generic: genericSchema.optional(),
  kubeCloudShared: kubeCloudSharedSchema.optional(),
  nodeController: z.strictObject({ concurrentNodeSyncs: int32.optional() }).optional(),
  serviceController: z.strictObject({ concurrentServiceSyncs: int32.optional() }).optional(),
  nodeStatusUpdateFrequency: duration.optional(),
  webhook: z.strictObject({ webhooks: z.array(z.string()).optional() }).optional(),
});

export const cloudControllerManagerKind: ConfigKind = {
  kind: CLOUD_CONTROLLER_MANAGER_KIND,
  apiVersions: CLOUD_CONTROLLER_MANAGER_API_VERSIONS,
  check: kindCheck(
    cloudControllerManagerSchema,
    (c) => ({
      apiVersion: c.apiVersion,
      kind: c.kind,
      generic: defaultGeneric(c.generic, "cloud-controller-manager"),
      kubeCloudShared: defaultKubeCloudShared(c.kubeCloudShared),
      nodeController: { concurrentNodeSyncs: c.nodeController?.concurrentNodeSyncs ?? 1 },
      serviceController: {
        concurrentServiceSyncs: c.serviceController?.concurrentServiceSyncs ?? 1,
      },
      nodeStatusUpdateFrequency: defaultDuration(c.nodeStatusUpdateFrequency, "5m"),
      webhook: { webhooks: c.webhook?.webhooks ?? [] },
    }),
    (c, errs) => {
      validateGeneric(c.generic as Obj, KNOWN_CLOUD_CONTROLLERS, errs);
      const node = (c.nodeController as Obj).concurrentNodeSyncs as number;
      if (node <= 0) {
        errs.invalid("nodeController.concurrentNodeSyncs", node, "must be a positive number");
      }
      const service = (c.serviceController as Obj).concurrentServiceSyncs as number;
      if (service <= 0) {
        errs.invalid(
          "serviceController.concurrentServiceSyncs",
          service,
          "must be a positive number",
        );
      }
      ((c.webhook as Obj).webhooks as string[]).forEach((w, i) => {
        if (w !== "*" && !/^-?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(w)) {
          errs.invalid(
            `webhook.webhooks[${i}]`,
            w,
            'must be "*", a webhook name, or "-" followed by a webhook name',
          );
        }
      });
    },
  ),
};
