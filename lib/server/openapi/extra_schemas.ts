/**
 * Schemas the OpenAPI documents need that a schema set may lack: those of the discovery
 * documents (`APIVersions`, `APIGroupList`, `APIGroup`, version `Info`, …), which the
 * Kubernetes group documents do not carry, a list schema for each kind without one (e.g. a
 * custom resource), and autoscaling/v1 Scale for resources with a scale subresource.
 */

import { listKindOf, type ResourceDefinition } from "../../registry/mod.ts";
import type { SchemaNode, SchemaSet } from "../../schema/mod.ts";
import {
  API_GROUP,
  API_GROUP_LIST,
  API_VERSIONS,
  GVK_KEY,
  listSchemaName,
  META,
  ref,
  VERSION_INFO,
} from "./names.ts";

const str = (description: string): SchemaNode => ({ type: "string", description, default: "" });
const TYPE_META: Record<string, SchemaNode> = {
  apiVersion: { type: "string", description: "The versioned schema of this object." },
  kind: { type: "string", description: "The kind of this object." },
};

/** Schemas of the discovery documents that the Kubernetes group documents do not carry. */
export const DISCOVERY_SCHEMAS: Record<string, SchemaNode> = {
  [API_VERSIONS]: {
    description: "The API versions of the core group (GET /api).",
    type: "object",
    required: ["versions", "serverAddressByClientCIDRs"],
    properties: {
      ...TYPE_META,
      serverAddressByClientCIDRs: {
        description: "Addresses clients may use to reach the server, by client network.",
        type: "array",
        items: ref(`${META}ServerAddressByClientCIDR`),
        "x-kubernetes-list-type": "atomic",
      },
      versions: {
        description: "The versions of the core group, e.g. v1.",
        type: "array",
        items: { type: "string", default: "" },
        "x-kubernetes-list-type": "atomic",
      },
    },
    [GVK_KEY]: [{ group: "", kind: "APIVersions", version: "v1" }],
  },
  [API_GROUP_LIST]: {
    description: "Every API group the server serves (GET /apis).",
    type: "object",
    required: ["groups"],
    properties: {
      ...TYPE_META,
      groups: {
        description: "The groups.",
        type: "array",
        items: ref(API_GROUP),
        "x-kubernetes-list-type": "atomic",
      },
    },
    [GVK_KEY]: [{ group: "", kind: "APIGroupList", version: "v1" }],
  },
  [API_GROUP]: {
    description: "One API group and its versions (GET /apis/<group>).",
    type: "object",
    required: ["name", "versions"],
    properties: {
      ...TYPE_META,
      name: str("The name of the group."),
      preferredVersion: {
        description: "The version clients should use when they have no preference.",
        allOf: [ref(`${META}GroupVersionForDiscovery`)],
        default: {},
      },
      serverAddressByClientCIDRs: {
        description: "Addresses clients may use to reach the server, by client network.",
        type: "array",
        items: ref(`${META}ServerAddressByClientCIDR`),
        "x-kubernetes-list-type": "atomic",
      },
      versions: {
        description: "The versions of the group the server serves.",
        type: "array",
        items: ref(`${META}GroupVersionForDiscovery`),
        "x-kubernetes-list-type": "atomic",
      },
    },
    [GVK_KEY]: [{ group: "", kind: "APIGroup", version: "v1" }],
  },
  [`${META}GroupVersionForDiscovery`]: {
    description: "One version of an API group.",
    type: "object",
    required: ["groupVersion", "version"],
    properties: {
      groupVersion: str("group/version, e.g. certificates.platform.io/v1."),
      version: str("The version alone, e.g. v1."),
    },
  },
  [`${META}ServerAddressByClientCIDR`]: {
    description: "The server address clients from one network should use.",
    type: "object",
    required: ["clientCIDR", "serverAddress"],
    properties: {
      clientCIDR: str("The client network, in CIDR notation."),
      serverAddress: str("host:port, or an IP address, of the server for those clients."),
    },
  },
  [VERSION_INFO]: {
    description: "The version of the server (GET /version).",
    type: "object",
    required: [
      "major",
      "minor",
      "gitVersion",
      "gitCommit",
      "gitTreeState",
      "buildDate",
      "goVersion",
      "compiler",
      "platform",
    ],
    properties: {
      buildDate: str("When the binary was built."),
      compiler: str("The compiler or runtime that built the binary."),
      gitCommit: str("The source commit."),
      gitTreeState: str("Whether the source tree was clean or dirty."),
      gitVersion: str("The full version, e.g. v0.1.0."),
      goVersion: str("The language runtime version."),
      major: str("The major version."),
      minor: str("The minor version."),
      platform: str("os/arch of the binary."),
    },
  },
};

/** autoscaling/v1 Scale, what the `scale` subresource of custom resources reads and writes. */
export const SCALE_SCHEMA = "io.k8s.api.autoscaling.v1.Scale";
const SCALE_SCHEMAS: Record<string, SchemaNode> = {
  [SCALE_SCHEMA]: {
    description: "The scale of a resource: how many replicas it wants and has.",
    type: "object",
    properties: {
      ...TYPE_META,
      metadata: { description: "The object's metadata.", allOf: [ref(`${META}ObjectMeta`)] },
      spec: {
        description: "The wanted scale.",
        allOf: [ref("io.k8s.api.autoscaling.v1.ScaleSpec")],
        default: {},
      },
      status: {
        description: "The observed scale (read-only).",
        allOf: [ref("io.k8s.api.autoscaling.v1.ScaleStatus")],
        default: {},
      },
    },
    [GVK_KEY]: [{ group: "autoscaling", kind: "Scale", version: "v1" }],
  },
  "io.k8s.api.autoscaling.v1.ScaleSpec": {
    description: "The wanted scale.",
    type: "object",
    properties: {
      replicas: { description: "How many replicas are wanted.", type: "integer", format: "int32" },
    },
  },
  "io.k8s.api.autoscaling.v1.ScaleStatus": {
    description: "The observed scale.",
    type: "object",
    required: ["replicas"],
    properties: {
      replicas: { description: "How many replicas there are.", type: "integer", format: "int32" },
      selector: {
        description: "The label selector of the replicas, in its string form (`app=a`).",
        type: "string",
      },
    },
  },
};

/** A list schema for a kind whose schema set has none (e.g. a custom resource). */
function syntheticList(def: ResourceDefinition): SchemaNode {
  return {
    description: `${def.kind}List is a list of ${def.kind}.`,
    type: "object",
    required: ["items"],
    properties: {
      ...TYPE_META,
      items: { description: `The ${def.kind} objects.`, type: "array", items: ref(def.schema) },
      metadata: { description: "List metadata.", allOf: [ref(`${META}ListMeta`)], default: {} },
    },
    [GVK_KEY]: [{ group: def.group, kind: listKindOf(def), version: def.version }],
  };
}

/** `schemas` with the discovery schemas and the list schemas of `defs` it lacks added. */
export function withDocumentSchemas(defs: ResourceDefinition[], schemas: SchemaSet): SchemaSet {
  const extra: Record<string, SchemaNode> = {};
  for (const [name, node] of Object.entries(DISCOVERY_SCHEMAS)) {
    if (!schemas.has(name)) extra[name] = node;
  }
  for (const def of defs) {
    const list = listSchemaName(def.schema);
    if (!schemas.has(list) && !extra[list]) extra[list] = syntheticList(def);
    if (def.scale && !schemas.has(SCALE_SCHEMA)) Object.assign(extra, SCALE_SCHEMAS);
  }
  return Object.keys(extra).length ? schemas.extend(extra) : schemas;
}
