/** Core group (`/api/v1`) resources: namespaces, configmaps, secrets, serviceaccounts, events. */

import type { FieldError } from "../api/mod.ts";
import { ALL_VERBS, type KubeObject, type ResourceDefinition } from "../registry/mod.ts";
import { AGE, keyCount } from "../codec/mod.ts";
import { namespaceStrategy } from "./namespace.ts";
import { coreEventFieldSelectors, eventColumns } from "./events.ts";
import { tokenRequests } from "./reviews.ts";

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MESSAGE =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const MAX_CONFIG_BYTES = 1024 * 1024;

/** Keys of ConfigMap/Secret `data` (and `binaryData`) must be config keys, unique across both. */
function validateDataKeys(obj: KubeObject, fields: string[]): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  let size = 0;
  for (const field of fields) {
    const map = obj[field];
    if (!map || typeof map !== "object") continue;
    for (const [key, value] of Object.entries(map)) {
      if (key.length > 253) {
        errors.push({
          type: "Invalid",
          field: `${field}[${key}]`,
          value: key,
          detail: "must be no more than 253 characters",
        });
      } else if (!CONFIG_KEY.test(key)) {
        errors.push({
          type: "Invalid",
          field: `${field}[${key}]`,
          value: key,
          detail: CONFIG_KEY_MESSAGE,
        });
      } else if (key === "." || key === "..") {
        errors.push({
          type: "Invalid",
          field: `${field}[${key}]`,
          value: key,
          detail: `must not be '${key}'`,
        });
      }
      if (seen.has(key)) {
        errors.push({
          type: "Invalid",
          field: `${field}[${key}]`,
          value: key,
          detail: "duplicate of key present in " + fields[0],
        });
      }
      seen.add(key);
      size += key.length + (typeof value === "string" ? value.length : 0);
    }
  }
  if (size > MAX_CONFIG_BYTES) {
    errors.push({
      type: "TooLong",
      field: "",
      detail: `may not be more than ${MAX_CONFIG_BYTES} bytes`,
    });
  }
  return errors;
}

/** `immutable: true` freezes data, and cannot be unset. */
function validateImmutable(obj: KubeObject, old: KubeObject, fields: string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errors: FieldError[] = [];
  if (obj.immutable !== true) {
    errors.push({
      type: "Forbidden",
      field: "immutable",
      detail: "field is immutable when `immutable` is set",
    });
  }
  for (const f of fields) {
    if (JSON.stringify(obj[f] ?? {}) !== JSON.stringify(old[f] ?? {})) {
      errors.push({
        type: "Forbidden",
        field: f,
        detail: "field is immutable when `immutable` is set",
      });
    }
  }
  return errors;
}

export const namespaces: ResourceDefinition = {
  group: "",
  version: "v1",
  kind: "Namespace",
  emptyObject: { spec: {}, status: {} },
  plural: "namespaces",
  singular: "namespace",
  namespaced: false,
  shortNames: ["ns"],
  verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
  subresources: ["status", "finalize"],
  schema: "io.k8s.api.core.v1.Namespace",
  nameValidation: "dns1123Label",
  fieldSelectors: { "status.phase": (o) => o.status?.phase },
  printerColumns: [
    {
      name: "Status",
      type: "string",
      description: "The status of the namespace",
      value: (o) => o.status?.phase,
    },
    AGE,
  ],
  strategy: namespaceStrategy,
};

export const configmaps: ResourceDefinition = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  singular: "configmap",
  namespaced: true,
  shortNames: ["cm"],
  verbs: ALL_VERBS,
  schema: "io.k8s.api.core.v1.ConfigMap",
  printerColumns: [
    { name: "Data", type: "integer", value: (o) => keyCount(o.data, o.binaryData) },
    AGE,
  ],
  strategy: {
    specFields: ["data", "binaryData", "immutable"],
    validateCreate: (o) => validateDataKeys(o, ["data", "binaryData"]),
    validateUpdate: (o, old) => [
      ...validateDataKeys(o, ["data", "binaryData"]),
      ...validateImmutable(o, old, ["data", "binaryData"]),
    ],
  },
};

export const secrets: ResourceDefinition = {
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  singular: "secret",
  namespaced: true,
  verbs: ALL_VERBS,
  schema: "io.k8s.api.core.v1.Secret",
  fieldSelectors: { type: (o) => o.type },
  printerColumns: [
    { name: "Type", type: "string", value: (o) => o.type },
    { name: "Data", type: "integer", value: (o) => keyCount(o.data) },
    AGE,
  ],
  strategy: {
    specFields: ["data", "stringData", "type", "immutable"],
    prepareForCreate(o) {
      o.type ??= "Opaque";
      mergeStringData(o);
    },
    prepareForUpdate(o, old) {
      o.type ??= old.type;
      mergeStringData(o);
    },
    validateCreate: (o) => validateDataKeys(o, ["data"]),
    validateUpdate: (o, old) => {
      const errors = [...validateDataKeys(o, ["data"]), ...validateImmutable(o, old, ["data"])];
      if (o.type !== old.type) {
        errors.push({
          type: "Invalid",
          field: "type",
          value: o.type,
          detail: "field is immutable",
        });
      }
      return errors;
    },
  },
};

/** `stringData` is write-only: merged into `data` (base64) and dropped, as kube does. */
function mergeStringData(o: KubeObject): void {
  if (!o.stringData || typeof o.stringData !== "object") return;
  o.data ??= {};
  for (const [k, v] of Object.entries(o.stringData)) {
    if (typeof v === "string") {
      o.data[k] = btoa(String.fromCharCode(...new TextEncoder().encode(v)));
    }
  }
  delete o.stringData;
}

export const serviceaccounts: ResourceDefinition = {
  group: "",
  version: "v1",
  kind: "ServiceAccount",
  plural: "serviceaccounts",
  singular: "serviceaccount",
  namespaced: true,
  shortNames: ["sa"],
  verbs: ALL_VERBS,
  schema: "io.k8s.api.core.v1.ServiceAccount",
  deleteReturnsObject: true,
  computedSubresources: { token: tokenRequests },
  printerColumns: [
    {
      name: "Secrets",
      type: "integer",
      value: (o) => (Array.isArray(o.secrets) ? o.secrets.length : 0),
    },
    AGE,
  ],
};

export const coreEvents: ResourceDefinition = {
  group: "",
  version: "v1",
  kind: "Event",
  plural: "events",
  singular: "event",
  namespaced: true,
  shortNames: ["ev"],
  verbs: ALL_VERBS,
  schema: "io.k8s.api.core.v1.Event",
  fieldSelectors: coreEventFieldSelectors,
  printerColumns: eventColumns((o) => o),
};
