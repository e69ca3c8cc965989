import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { type FieldError, fieldErrorMessage, invalid } from "./errors.ts";
import {
  TOTAL_ANNOTATION_SIZE_LIMIT,
  validateObjectMeta,
  type ValidateObjectMetaOptions,
  validateObjectMetaUpdate,
} from "./meta_validation.ts";
import { nameIsDNSLabel, nameIsDNSSubdomain, nameIsPathSegment } from "./names.ts";

const NAMESPACED: ValidateObjectMetaOptions = { namespaced: true, nameFn: nameIsDNSSubdomain };
const CLUSTER: ValidateObjectMetaOptions = { namespaced: false, nameFn: nameIsDNSSubdomain };

const SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric " +
  "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. " +
  "'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters " +
  "or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or " +
  "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART_MSG = "name part must consist of alphanumeric characters, '-', '_' or '.', and " +
  "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or " +
  "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG = "a valid label must be an empty string or consist of alphanumeric " +
  "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. " +
  "'MyValue',  or 'my_value',  or '12345', regex used for validation is " +
  "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

function messages(errs: FieldError[]): string[] {
  return errs.map(fieldErrorMessage);
}

interface Case {
  name: string;
  meta: unknown;
  options?: ValidateObjectMetaOptions;
  want: string[];
}

const cases: Case[] = [
  // names
  { name: "valid namespaced", meta: { name: "a", namespace: "default" }, want: [] },
  { name: "valid cluster-scoped", meta: { name: "a.b-c" }, options: CLUSTER, want: [] },
  {
    name: "name and generateName missing",
    meta: { namespace: "ns" },
    want: ["metadata.name: Required value: name or generateName is required"],
  },
  {
    name: "empty name",
    meta: { name: "", namespace: "ns" },
    want: ["metadata.name: Required value: name or generateName is required"],
  },
  {
    name: "null metadata",
    meta: null,
    want: [
      "metadata.name: Required value: name or generateName is required",
      "metadata.namespace: Required value",
    ],
  },
  {
    name: "generateName alone on create",
    meta: { generateName: "web-", namespace: "ns" },
    options: { ...NAMESPACED, isCreate: true },
    want: [],
  },
  {
    name: "generateName alone once names are generated",
    meta: { generateName: "web-", namespace: "ns" },
    want: ["metadata.name: Required value: name or generateName is required"],
  },
  {
    name: "name and generateName",
    meta: { name: "web-abcde", generateName: "web-", namespace: "ns" },
    want: [],
  },
  {
    name: "bad name",
    meta: { name: "Bad_Name", namespace: "ns" },
    want: [`metadata.name: Invalid value: "Bad_Name": ${SUBDOMAIN_MSG}`],
  },
  {
    name: "name too long",
    meta: { name: "a".repeat(254), namespace: "ns" },
    want: [
      `metadata.name: Invalid value: "${"a".repeat(254)}": must be no more than 253 characters`,
    ],
  },
  {
    name: "bad generateName",
    meta: { generateName: "Web-", namespace: "ns" },
    options: { ...NAMESPACED, isCreate: true },
    want: [`metadata.generateName: Invalid value: "Web-": ${SUBDOMAIN_MSG}`],
  },
  {
    name: "label-named kind",
    meta: { name: "a.b" },
    options: { namespaced: false, nameFn: nameIsDNSLabel },
    want: ['metadata.name: Invalid value: "a.b": must not contain dots'],
  },
  {
    name: "rule given by name",
    meta: { name: "a.b" },
    options: { namespaced: false, nameFn: "dns1123Label" },
    want: ['metadata.name: Invalid value: "a.b": must not contain dots'],
  },
  {
    name: "path-segment-named kind",
    meta: { name: "system:a/b" },
    options: { namespaced: false, nameFn: nameIsPathSegment },
    want: [`metadata.name: Invalid value: "system:a/b": may not contain '/'`],
  },
  {
    name: "name of wrong type",
    meta: { name: 5, namespace: "ns" },
    want: ["metadata.name: Invalid value: 5: must be of type string"],
  },
  {
    name: "metadata of wrong type",
    meta: "x",
    want: ['metadata: Invalid value: "x": must be of type object'],
  },
  // namespace
  {
    name: "namespace required",
    meta: { name: "a" },
    want: ["metadata.namespace: Required value"],
  },
  {
    name: "bad namespace",
    meta: { name: "a", namespace: "Bad" },
    want: [`metadata.namespace: Invalid value: "Bad": ${LABEL_MSG}`],
  },
  {
    name: "namespace with dots",
    meta: { name: "a", namespace: "a.b" },
    want: ['metadata.namespace: Invalid value: "a.b": must not contain dots'],
  },
  {
    name: "namespace forbidden on cluster-scoped",
    meta: { name: "a", namespace: "ns" },
    options: CLUSTER,
    want: ["metadata.namespace: Forbidden: not allowed on this type"],
  },
  {
    name: "empty namespace fine on cluster-scoped",
    meta: { name: "a", namespace: "" },
    options: CLUSTER,
    want: [],
  },
  {
    name: "namespace of wrong type",
    meta: { name: "a", namespace: ["x"] },
    options: CLUSTER,
    want: ['metadata.namespace: Invalid value: ["x"]: must be of type string'],
  },
  // generation
  {
    name: "negative generation",
    meta: { name: "a", generation: -1 },
    options: CLUSTER,
    want: ["metadata.generation: Invalid value: -1: must be greater than or equal to 0"],
  },
  // labels
  {
    name: "good labels",
    meta: { name: "a", labels: { "app.kubernetes.io/name": "web", tier: "", "x_y": "A.b-c" } },
    options: CLUSTER,
    want: [],
  },
  {
    name: "bad label key",
    meta: { name: "a", labels: { "bad key": "v" } },
    options: CLUSTER,
    want: [`metadata.labels: Invalid value: "bad key": ${NAME_PART_MSG}`],
  },
  {
    name: "bad label value",
    meta: { name: "a", labels: { k: "-v" } },
    options: CLUSTER,
    want: [`metadata.labels: Invalid value: "-v": ${LABEL_VALUE_MSG}`],
  },
  {
    name: "label value too long",
    meta: { name: "a", labels: { k: "v".repeat(64) } },
    options: CLUSTER,
    want: [
      `metadata.labels: Invalid value: "${"v".repeat(64)}": must be no more than 63 characters`,
    ],
  },
  {
    name: "label value not a string",
    meta: { name: "a", labels: { k: 1, "bad key": true } },
    options: CLUSTER,
    want: [
      "metadata.labels[k]: Invalid value: 1: must be of type string",
      `metadata.labels: Invalid value: "bad key": ${NAME_PART_MSG}`,
      "metadata.labels[bad key]: Invalid value: true: must be of type string",
    ],
  },
  {
    name: "labels not a map",
    meta: { name: "a", labels: ["a"] },
    options: CLUSTER,
    want: ['metadata.labels: Invalid value: ["a"]: must be of type object'],
  },
  { name: "null labels", meta: { name: "a", labels: null }, options: CLUSTER, want: [] },
  // annotations
  {
    name: "good annotations",
    meta: {
      name: "a",
      annotations: { "Example.COM/Any": "any value at all, even: / spaces", "Key": "" },
    },
    options: CLUSTER,
    want: [],
  },
  {
    name: "bad annotation key",
    meta: { name: "a", annotations: { "a/b/c": "v", "-x": "v" } },
    options: CLUSTER,
    want: [
      `metadata.annotations: Invalid value: "a/b/c": a qualified name must consist of ` +
      "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric " +
      "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and " +
      "'/' (e.g. 'example.com/MyName')",
      `metadata.annotations: Invalid value: "-x": ${NAME_PART_MSG}`,
    ],
  },
  {
    name: "annotations at the size limit",
    meta: { name: "a", annotations: { k: "v".repeat(TOTAL_ANNOTATION_SIZE_LIMIT - 1) } },
    options: CLUSTER,
    want: [],
  },
  {
    name: "annotations over the size limit",
    meta: { name: "a", annotations: { k: "v".repeat(TOTAL_ANNOTATION_SIZE_LIMIT) } },
    options: CLUSTER,
    want: ["metadata.annotations: Too long: may not be more than 262144 bytes"],
  },
  {
    name: "annotation size counts UTF-8 bytes",
    meta: { name: "a", annotations: { k: "é".repeat(TOTAL_ANNOTATION_SIZE_LIMIT / 2) } },
    options: CLUSTER,
    want: ["metadata.annotations: Too long: may not be more than 262144 bytes"],
  },
  {
    name: "annotation value not a string",
    meta: { name: "a", annotations: { k: { nested: 1 } } },
    options: CLUSTER,
    want: ['metadata.annotations[k]: Invalid value: {"nested":1}: must be of type string'],
  },
  // finalizers
  {
    name: "good finalizers",
    meta: { name: "a", finalizers: ["kubernetes", "example.com/cleanup", "orphan"] },
    options: CLUSTER,
    want: [],
  },
  {
    name: "bad finalizer",
    meta: { name: "a", finalizers: ["ok", "bad name"] },
    options: CLUSTER,
    want: [`metadata.finalizers: Invalid value: "bad name": ${NAME_PART_MSG}`],
  },
  {
    name: "orphan and foregroundDeletion",
    meta: { name: "a", finalizers: ["orphan", "foregroundDeletion"] },
    options: CLUSTER,
    want: [
      'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan ' +
      "and foregroundDeletion cannot be both set",
    ],
  },
  {
    name: "finalizers of wrong type",
    meta: { name: "a", finalizers: "x" },
    options: CLUSTER,
    want: ['metadata.finalizers: Invalid value: "x": must be of type array'],
  },
  {
    name: "finalizer of wrong type",
    meta: { name: "a", finalizers: ["a", 2] },
    options: CLUSTER,
    want: ["metadata.finalizers[1]: Invalid value: 2: must be of type string"],
  },
  // ownerReferences
  {
    name: "good owner references",
    meta: {
      name: "a",
      ownerReferences: [
        { apiVersion: "v1", kind: "ConfigMap", name: "c", uid: "u1", controller: true },
        { apiVersion: "apps/v1", kind: "Deployment", name: "d", uid: "u2", controller: false },
      ],
    },
    options: CLUSTER,
    want: [],
  },
  {
    name: "empty owner reference",
    meta: { name: "a", ownerReferences: [{}] },
    options: CLUSTER,
    want: [
      'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
      'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
      'metadata.ownerReferences.name: Invalid value: "": must not be empty',
      'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
    ],
  },
  {
    name: "owner reference without version",
    meta: {
      name: "a",
      ownerReferences: [{ apiVersion: "apps/", kind: "K", name: "n", uid: "u" }],
    },
    options: CLUSTER,
    want: [
      'metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty',
    ],
  },
  {
    name: "event as owner",
    meta: {
      name: "a",
      ownerReferences: [{ apiVersion: "v1", kind: "Event", name: "e", uid: "u" }],
    },
    options: CLUSTER,
    want: [
      'metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e",' +
      '"uid":"u"}: /v1, Kind=Event is disallowed from being an owner',
    ],
  },
  {
    name: "two controllers",
    meta: {
      name: "a",
      ownerReferences: [
        { apiVersion: "v1", kind: "A", name: "a", uid: "1", controller: true },
        { apiVersion: "v1", kind: "B", name: "b", uid: "2", controller: true },
      ],
    },
    options: CLUSTER,
    want: [
      'metadata.ownerReferences: Invalid value: [{"apiVersion":"v1","kind":"A","name":"a",' +
      '"uid":"1","controller":true},{"apiVersion":"v1","kind":"B","name":"b","uid":"2",' +
      '"controller":true}]: Only one reference can have Controller set to true. Found "true" in ' +
      "references for A/a and B/b",
    ],
  },
  {
    name: "owner references of wrong type",
    meta: { name: "a", ownerReferences: [1, { apiVersion: 1, kind: "K", name: "n", uid: "u" }] },
    options: CLUSTER,
    want: [
      "metadata.ownerReferences[0]: Invalid value: 1: must be of type object",
      "metadata.ownerReferences[1].apiVersion: Invalid value: 1: must be of type string",
    ],
  },
  // several at once, in kube's order
  {
    name: "errors come in kube's order",
    meta: {
      name: "B",
      generateName: "Gx-",
      labels: { "-": "x" },
      annotations: { "-": "x" },
      finalizers: ["-"],
      ownerReferences: [{ apiVersion: "v1", kind: "K", name: "n" }],
    },
    want: [
      `metadata.generateName: Invalid value: "Gx-": ${SUBDOMAIN_MSG}`,
      `metadata.name: Invalid value: "B": ${SUBDOMAIN_MSG}`,
      "metadata.namespace: Required value",
      `metadata.labels: Invalid value: "-": ${NAME_PART_MSG}`,
      `metadata.annotations: Invalid value: "-": ${NAME_PART_MSG}`,
      'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
      `metadata.finalizers: Invalid value: "-": ${NAME_PART_MSG}`,
    ],
  },
];

Deno.test("validateObjectMeta", async (t) => {
  for (const c of cases) {
    await t.step(c.name, () => {
      deepStrictEqual(messages(validateObjectMeta(c.meta, c.options ?? NAMESPACED)), c.want);
    });
  }
});

Deno.test("validateObjectMeta errors make kube's Invalid status", () => {
  const errs = validateObjectMeta({ namespace: "ns" }, NAMESPACED);
  const err = invalid("ConfigMap", "", "", errs);
  strictEqual(
    err.message,
    'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
  );
  deepStrictEqual(err.details?.causes, [{
    reason: "FieldValueRequired",
    message: "Required value: name or generateName is required",
    field: "metadata.name",
  }]);
  const typed = validateObjectMeta({ name: "a", labels: { k: 1 } }, CLUSTER);
  deepStrictEqual(typed, [{
    type: "TypeInvalid",
    field: "metadata.labels[k]",
    value: 1,
    detail: "must be of type string",
  }]);
});

Deno.test("validateObjectMeta does not mutate its input", () => {
  const meta = { name: "a", namespace: "ns", labels: { a: "b" }, finalizers: ["x"] };
  const copy = structuredClone(meta);
  validateObjectMeta(meta, NAMESPACED);
  deepStrictEqual(meta, copy);
});

interface UpdateCase {
  name: string;
  next: Record<string, unknown>;
  prev: Record<string, unknown>;
  want: string[];
}

const base = {
  name: "a",
  namespace: "ns",
  uid: "u-1",
  creationTimestamp: "2024-01-01T00:00:00Z",
  resourceVersion: "5",
};

const updateCases: UpdateCase[] = [
  { name: "unchanged", next: base, prev: base, want: [] },
  {
    name: "labels, annotations, finalizers and resourceVersion may change",
    next: { ...base, labels: { a: "b" }, annotations: { c: "d" }, finalizers: ["f"] },
    prev: { ...base, resourceVersion: "4" },
    want: [],
  },
  {
    name: "name",
    next: { ...base, name: "b" },
    prev: base,
    want: ['metadata.name: Invalid value: "b": field is immutable'],
  },
  {
    name: "namespace",
    next: { ...base, namespace: "other" },
    prev: base,
    want: ['metadata.namespace: Invalid value: "other": field is immutable'],
  },
  {
    name: "uid",
    next: { ...base, uid: "u-2" },
    prev: base,
    want: ['metadata.uid: Invalid value: "u-2": field is immutable'],
  },
  {
    name: "uid removed",
    next: { ...base, uid: undefined },
    prev: base,
    want: ['metadata.uid: Invalid value: "": field is immutable'],
  },
  {
    name: "creationTimestamp",
    next: { ...base, creationTimestamp: "2025-01-01T00:00:00Z" },
    prev: base,
    want: ['metadata.creationTimestamp: Invalid value: "2025-01-01T00:00:00Z": field is immutable'],
  },
  {
    name: "deletionTimestamp set by a user",
    next: { ...base, deletionTimestamp: "2025-01-01T00:00:00Z" },
    prev: base,
    want: ['metadata.deletionTimestamp: Invalid value: "2025-01-01T00:00:00Z": field is immutable'],
  },
  {
    name: "deletionGracePeriodSeconds",
    next: { ...base, deletionGracePeriodSeconds: 0 },
    prev: { ...base, deletionGracePeriodSeconds: 30 },
    want: ["metadata.deletionGracePeriodSeconds: Invalid value: 0: field is immutable"],
  },
  {
    name: "absent and empty namespace are the same",
    next: { ...base, namespace: "" },
    prev: { ...base, namespace: undefined },
    want: [],
  },
  {
    name: "finalizers may be removed while deleting",
    next: { ...base, deletionTimestamp: "t", finalizers: [] },
    prev: { ...base, deletionTimestamp: "t", finalizers: ["a", "b"] },
    want: [],
  },
  {
    name: "no new finalizers while deleting",
    next: { ...base, deletionTimestamp: "t", finalizers: ["c", "a", "b"] },
    prev: { ...base, deletionTimestamp: "t", finalizers: ["a"] },
    want: [
      "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being " +
      'deleted, found new finalizers []string{"b", "c"}',
    ],
  },
  {
    name: "several at once",
    next: { ...base, name: "b", namespace: "c", uid: "d" },
    prev: base,
    want: [
      'metadata.name: Invalid value: "b": field is immutable',
      'metadata.namespace: Invalid value: "c": field is immutable',
      'metadata.uid: Invalid value: "d": field is immutable',
    ],
  },
];

Deno.test("validateObjectMetaUpdate", async (t) => {
  for (const c of updateCases) {
    await t.step(c.name, () => {
      deepStrictEqual(messages(validateObjectMetaUpdate(c.next, c.prev)), c.want);
    });
  }
});
