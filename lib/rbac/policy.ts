/**
 * The default RBAC policy: the ClusterRoles and ClusterRoleBindings kube-apiserver creates at
 * start (plugin/pkg/auth/authorizer/rbac/bootstrappolicy), with the rules that concern what
 * this server serves. Names, labels, annotations and groups are in the platform spelling
 * (`platform.io` where kube says `kubernetes.io` or `k8s.io`).
 *
 * - `cluster-admin`: everything; bound to the group `system:masters`.
 * - `admin`, `edit`, `view`: aggregated from the ClusterRoles labelled
 *   `rbac.authorization.platform.io/aggregate-to-admin|edit|view` (view aggregates into edit,
 *   edit into admin); `system:aggregate-to-*` hold kube's rules for the built-in resources.
 * - `system:basic-user`: the self reviews; `system:discovery`: discovery, version, health and
 *   OpenAPI paths; both bound to `system:authenticated`.
 * - `system:public-info-viewer`: version and health; bound to everyone, signed in or not.
 * - `system:monitoring`: metrics and health (kube's); bound to the group `system:monitoring`.
 * - `system:auth-delegator`, `system:node-bootstrapper` and the node client certificate roles
 *   of the CSR approver: shipped, bound by whoever needs them.
 */

import type { KubeObject } from "../registry/mod.ts";

export const BOOTSTRAPPING_LABEL = "platform.io/bootstrapping";
export const AUTOUPDATE_ANNOTATION = "rbac.authorization.platform.io/autoupdate";
/** The label that aggregates a ClusterRole into `admin`, `edit` or `view`. */
export function aggregateToLabel(role: "admin" | "edit" | "view"): string {
  return `rbac.authorization.platform.io/aggregate-to-${role}`;
}

const READ = ["get", "list", "watch"];
const WRITE = ["create", "update", "patch", "delete", "deletecollection"];
const READ_WRITE = [...READ, ...WRITE];

const CORE = "";
const AUTHENTICATION = "authentication.platform.io";
const AUTHORIZATION = "authorization.platform.io";
const CERTIFICATES = "certificates.platform.io";
const RBAC = "rbac.authorization.platform.io";

function rule(verbs: string[], group: string, resources: string[]): KubeObject {
  return { verbs, apiGroups: [group], resources };
}

function urls(verbs: string[], nonResourceURLs: string[]): KubeObject {
  return { verbs, nonResourceURLs };
}

function clusterRole(
  name: string,
  rules: KubeObject[],
  more: { aggregateFrom?: "admin" | "edit" | "view"; labels?: Record<string, string> } = {},
): KubeObject {
  const role: KubeObject = {
    metadata: {
      name,
      labels: { ...more.labels, [BOOTSTRAPPING_LABEL]: "rbac-defaults" },
      annotations: { [AUTOUPDATE_ANNOTATION]: "true" },
    },
  };
  if (more.aggregateFrom) {
    role.aggregationRule = {
      clusterRoleSelectors: [{ matchLabels: { [aggregateToLabel(more.aggregateFrom)]: "true" } }],
    };
  } else {
    role.rules = rules;
  }
  return role;
}

function clusterRoleBinding(role: string, groups: string[]): KubeObject {
  return {
    metadata: {
      name: role,
      labels: { [BOOTSTRAPPING_LABEL]: "rbac-defaults" },
      annotations: { [AUTOUPDATE_ANNOTATION]: "true" },
    },
    roleRef: { apiGroup: RBAC, kind: "ClusterRole", name: role },
    subjects: groups.map((name) => ({ kind: "Group", apiGroup: RBAC, name })),
  };
}

const HEALTH_AND_VERSION = ["/livez", "/readyz", "/healthz", "/version", "/version/"];

export const BOOTSTRAP_CLUSTER_ROLES: readonly KubeObject[] = [
  clusterRole("cluster-admin", [
    rule(["*"], "*", ["*"]),
    urls(["*"], ["*"]),
  ]),
  clusterRole("system:discovery", [
    urls(["get"], [
      ...HEALTH_AND_VERSION,
      "/openapi",
      "/openapi/*",
      "/api",
      "/api/*",
      "/apis",
      "/apis/*",
    ]),
  ]),
  clusterRole("system:basic-user", [
    rule(["create"], AUTHORIZATION, ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
    rule(["create"], AUTHENTICATION, ["selfsubjectreviews"]),
  ]),
  clusterRole("system:public-info-viewer", [urls(["get"], HEALTH_AND_VERSION)]),
  clusterRole("system:monitoring", [
    urls(["get"], [
      "/metrics",
      "/metrics/slis",
      "/livez",
      "/readyz",
      "/healthz",
      "/livez/*",
      "/readyz/*",
      "/healthz/*",
    ]),
  ]),
  clusterRole("admin", [], { aggregateFrom: "admin" }),
  clusterRole("edit", [], {
    aggregateFrom: "edit",
    labels: { [aggregateToLabel("admin")]: "true" },
  }),
  clusterRole("view", [], {
    aggregateFrom: "view",
    labels: { [aggregateToLabel("edit")]: "true" },
  }),
  clusterRole("system:aggregate-to-admin", [
    rule(["create"], AUTHORIZATION, ["localsubjectaccessreviews"]),
    rule(READ_WRITE, RBAC, ["roles", "rolebindings"]),
  ], { labels: { [aggregateToLabel("admin")]: "true" } }),
  clusterRole("system:aggregate-to-edit", [
    // Read on the resources that escalate (a secret may hold any credential).
    rule(READ, CORE, ["secrets"]),
    rule(["impersonate"], CORE, ["serviceaccounts"]),
    rule(WRITE, CORE, ["serviceaccounts", "configmaps", "secrets"]),
    rule(["create"], CORE, ["serviceaccounts/token"]),
  ], { labels: { [aggregateToLabel("edit")]: "true" } }),
  clusterRole("system:aggregate-to-view", [
    rule(READ, CORE, ["serviceaccounts", "configmaps"]),
    rule(READ, CORE, ["events"]),
    // Reading namespaces in a namespace means reading that namespace: a hint of where one
    // has access.
    rule(READ, CORE, ["namespaces"]),
  ], { labels: { [aggregateToLabel("view")]: "true" } }),
  clusterRole("system:auth-delegator", [
    rule(["create"], AUTHENTICATION, ["tokenreviews"]),
    rule(["create"], AUTHORIZATION, ["subjectaccessreviews"]),
  ]),
  clusterRole("system:node-bootstrapper", [
    rule(["create", "get", "list", "watch"], CERTIFICATES, ["certificatesigningrequests"]),
  ]),
  clusterRole("system:certificates.platform.io:certificatesigningrequests:nodeclient", [
    rule(["create"], CERTIFICATES, ["certificatesigningrequests/nodeclient"]),
  ]),
  clusterRole("system:certificates.platform.io:certificatesigningrequests:selfnodeclient", [
    rule(["create"], CERTIFICATES, ["certificatesigningrequests/selfnodeclient"]),
  ]),
];

export const BOOTSTRAP_CLUSTER_ROLE_BINDINGS: readonly KubeObject[] = [
  clusterRoleBinding("cluster-admin", ["system:masters"]),
  clusterRoleBinding("system:discovery", ["system:authenticated"]),
  clusterRoleBinding("system:basic-user", ["system:authenticated"]),
  clusterRoleBinding("system:monitoring", ["system:monitoring"]),
  clusterRoleBinding("system:public-info-viewer", [
    "system:authenticated",
    "system:unauthenticated",
  ]),
];
