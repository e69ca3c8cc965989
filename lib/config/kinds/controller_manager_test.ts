import assert from "node:assert/strict";
import { checkKindDocument } from "./registry.ts";

const KCM = [
  "controllermanager.config.platform.io/v1alpha1",
  "kubecontrollermanager.config.k8s.io/v1alpha1",
];
const CCM = [
  "cloudcontrollermanager.config.platform.io/v1alpha1",
  "cloudcontrollermanager.config.k8s.io/v1alpha1",
];

const kcm = (apiVersion: string, fields: Record<string, unknown> = {}) => ({
  apiVersion,
  kind: "KubeControllerManagerConfiguration",
  ...fields,
});
const errorsOf = (doc: Record<string, unknown>) => checkKindDocument(doc).errors;

Deno.test("KubeControllerManagerConfiguration: kube's defaults under both apiVersions", () => {
  for (const v of KCM) {
    const { errors, defaulted } = checkKindDocument(kcm(v));
    assert.deepEqual(errors, []);
    const d = defaulted as Record<string, Record<string, unknown>>;
    assert.equal(d.apiVersion as unknown, v);
    assert.deepEqual(d.generic, {
      port: 0,
      address: "0.0.0.0",
      minResyncPeriod: "12h0m0s",
      clientConnection: {
        kubeconfig: "",
        acceptContentTypes: "",
        contentType: "application/vnd.kubernetes.protobuf",
        qps: 20,
        burst: 30,
      },
      controllerStartInterval: "0s",
      leaderElection: {
        leaderElect: true,
        leaseDuration: "15s",
        renewDeadline: "10s",
        retryPeriod: "2s",
        resourceLock: "leases",
        resourceName: "kube-controller-manager",
        resourceNamespace: "kube-system",
      },
      controllers: ["*"],
      debugging: { enableProfiling: true, enableContentionProfiling: false },
      leaderMigrationEnabled: false,
      leaderMigration: { leaderName: "", resourceLock: "leases", controllerLeaders: [] },
    });
    assert.equal(d.kubeCloudShared.clusterName, "kubernetes");
    assert.equal(d.kubeCloudShared.nodeMonitorPeriod, "5s");
    assert.equal(d.kubeCloudShared.routeReconciliationPeriod, "10s");
    assert.equal(d.kubeCloudShared.configureCloudRoutes, true);
    assert.equal(d.attachDetachController.reconcilerSyncLoopPeriod, "1m0s");
    assert.equal(d.csrSigningController.clusterSigningDuration, "8760h0m0s");
    assert.deepEqual(d.daemonSetController, { concurrentDaemonSetSyncs: 2 });
    assert.deepEqual(d.deploymentController, { concurrentDeploymentSyncs: 5 });
    assert.deepEqual(d.statefulSetController, { concurrentStatefulSetSyncs: 5 });
  }
  // What a file sets stays; durations are written as kube writes them.
  const set = checkKindDocument(kcm(KCM[1], {
    generic: { controllers: ["*", "-csrsigning"], leaderElection: { leaseDuration: "1m" } },
    csrSigningController: { clusterSigningDuration: "2h" },
    jobController: { concurrentJobSyncs: 3 },
  })).defaulted as Record<string, Record<string, Record<string, unknown>>>;
  assert.deepEqual(set.generic.controllers, ["*", "-csrsigning"]);
  assert.equal(set.generic.leaderElection.leaseDuration, "1m0s");
  assert.equal(set.csrSigningController.clusterSigningDuration, "2h0m0s");
  assert.deepEqual(set.jobController, { concurrentJobSyncs: 3 });
});

Deno.test("KubeControllerManagerConfiguration: shape errors name the field", () => {
  assert.deepEqual(errorsOf(kcm(KCM[0], { generic: { port: "x" } })), [
    'generic.port: Invalid value: "x": must be a number',
  ]);
  assert.deepEqual(errorsOf(kcm(KCM[0], { generic: { bogus: 1 } })), [
    "generic.bogus: unknown field",
  ]);
  assert.deepEqual(errorsOf(kcm(KCM[1], { generic: { minResyncPeriod: "soon" } })), [
    'generic.minResyncPeriod: Invalid value: "soon": time: invalid duration "soon"',
  ]);
});

Deno.test("KubeControllerManagerConfiguration: leader election, client connection and controllers as kube validates them", () => {
  const le = (leaderElection: Record<string, unknown>) =>
    errorsOf(kcm(KCM[1], { generic: { leaderElection } }));
  assert.deepEqual(le({ leaseDuration: "-1s" }), [
    'generic.leaderElection.leaseDuration: Invalid value: "-1s": must be greater than zero',
    'generic.leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`',
  ]);
  assert.deepEqual(le({ renewDeadline: "-2s", retryPeriod: "-1s" }), [
    'generic.leaderElection.renewDeadline: Invalid value: "-2s": must be greater than zero',
    'generic.leaderElection.retryPeriod: Invalid value: "-1s": must be greater than zero',
  ]);
  // Spec 03's limit: renewDeadline at most leaseDuration.
  assert.deepEqual(le({ leaseDuration: "10s", renewDeadline: "10s" }), [
    'generic.leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`',
  ]);
  assert.deepEqual(le({ resourceLock: "endpoints" }), [
    'generic.leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"',
  ]);
  // Not elected: nothing about the lease is checked.
  assert.deepEqual(le({ leaderElect: false, leaseDuration: "-1s" }), []);
  assert.deepEqual(errorsOf(kcm(KCM[0], { generic: { clientConnection: { burst: -1 } } })), [
    "generic.clientConnection.burst: Invalid value: -1: must be non-negative",
  ]);
  // kube's names, their aliases and the server's own are known.
  assert.deepEqual(
    errorsOf(kcm(KCM[0], {
      generic: { controllers: ["*", "-deployment-controller", "csrsigning", "-nope"] },
    })),
    ['generic.controllers[3]: Invalid value: "-nope": "nope" is not in the list of known controllers'],
  );
});

Deno.test("KubeControllerManagerConfiguration: leader migration is validated when enabled", () => {
  const generic = {
    leaderMigrationEnabled: true,
    leaderMigration: { resourceLock: "configmaps", controllerLeaders: [{ name: "route" }] },
  };
  assert.deepEqual(errorsOf(kcm(KCM[0], { generic })), [
    "generic.leaderMigration.leaderName: Required value: leaderName must be set for LeaderMigrationConfiguration",
    "generic.leaderMigration.resourceLock: Invalid value: \"configmaps\": resource Lock must be one of 'leases' or 'endpoints'",
    "generic.leaderMigration.controllerLeaders[0].component: Required value: component must be set",
  ]);
  assert.deepEqual(
    errorsOf(kcm(KCM[0], { generic: { ...generic, leaderMigrationEnabled: false } })),
    [],
  );
});

Deno.test("KubeControllerManagerConfiguration: CSR signing files in pairs, one CA or one per signer, a positive duration", () => {
  const csr = (csrSigningController: Record<string, unknown>) =>
    errorsOf(kcm(KCM[1], { csrSigningController }));
  assert.deepEqual(csr({ clusterSigningCertFile: "ca.crt" }), [
    "csrSigningController.clusterSigningKeyFile: Required value: cannot specify cert without key",
  ]);
  assert.deepEqual(csr({ kubeletClientSignerConfiguration: { keyFile: "k" } }), [
    "csrSigningController.kubeletClientSignerConfiguration.certFile: Required value: cannot specify key without cert",
  ]);
  assert.deepEqual(
    csr({
      clusterSigningCertFile: "ca.crt",
      clusterSigningKeyFile: "ca.key",
      kubeletServingSignerConfiguration: { certFile: "s.crt", keyFile: "s.key" },
    }),
    [
      "csrSigningController.kubeletServingSignerConfiguration: Forbidden: cannot be set together with clusterSigningCertFile and clusterSigningKeyFile",
    ],
  );
  assert.deepEqual(csr({ clusterSigningDuration: "-1h" }), [
    'csrSigningController.clusterSigningDuration: Invalid value: "-1h0m0s": must be greater than zero',
  ]);
});

Deno.test("CloudControllerManagerConfiguration: defaults and rules under both apiVersions", () => {
  for (const apiVersion of CCM) {
    const doc = { apiVersion, kind: "CloudControllerManagerConfiguration" };
    const { errors, defaulted } = checkKindDocument(doc);
    assert.deepEqual(errors, []);
    const d = defaulted as Record<string, Record<string, unknown>>;
    assert.deepEqual(d.nodeController, { concurrentNodeSyncs: 1 });
    assert.deepEqual(d.serviceController, { concurrentServiceSyncs: 1 });
    assert.equal(d.nodeStatusUpdateFrequency as unknown, "5m0s");
    assert.deepEqual(d.webhook, { webhooks: [] });
    assert.equal(
      (d.generic.leaderElection as Record<string, unknown>).resourceName,
      "cloud-controller-manager",
    );
    assert.deepEqual(
      errorsOf({
        ...doc,
        nodeController: { concurrentNodeSyncs: -1 },
        serviceController: { concurrentServiceSyncs: -2 },
        webhook: { webhooks: ["*", "-foo", "Bad Name"] },
        generic: { controllers: ["cloud-node", "-route", "deployment"] },
      }),
      [
        'generic.controllers[2]: Invalid value: "deployment": "deployment" is not in the list of known controllers',
        "nodeController.concurrentNodeSyncs: Invalid value: -1: must be a positive number",
        "serviceController.concurrentServiceSyncs: Invalid value: -2: must be a positive number",
        'webhook.webhooks[2]: Invalid value: "Bad Name": must be "*", a webhook name, or "-" followed by a webhook name',
      ],
    );
  }
});

Deno.test("KubeControllerManagerConfiguration: an apiVersion it is not read under", () => {
  assert.deepEqual(errorsOf({ ...kcm(KCM[0]), apiVersion: "v1" }), [
    'apiVersion: Unsupported value: "v1": supported values: "controllermanager.config.platform.io/v1alpha1", "kubecontrollermanager.config.k8s.io/v1alpha1"',
  ]);
});
