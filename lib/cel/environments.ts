/**
 * The variables each use of CEL declares, with the types the checker holds expressions to.
 * Objects are declared with their v1 JSON field names (as Kubernetes exposes them).
 */

import { AUTHORIZER } from "./libraries/authz.ts";
import { BOOL, DYN, listOf, mapOf, object, STRING, type Type } from "./types.ts";

export type CelEnvironmentName =
  | "claims"
  | "user"
  | "request"
  | "admission"
  | "admissionPolicy"
  | "crdRule";

const STRINGS = listOf(STRING);
const EXTRA = mapOf(STRING, STRINGS);

const USER_INFO = object("kubernetes.UserInfo", {
  username: STRING,
  uid: STRING,
  groups: STRINGS,
  extra: EXTRA,
});

const SELECTOR_REQUIREMENT = object("kubernetes.SelectorRequirement", {
  key: STRING,
  operator: STRING,
  values: STRINGS,
});
const selector = (name: string) =>
  object(name, { rawSelector: STRING, requirements: listOf(SELECTOR_REQUIREMENT) });

const SUBJECT_ACCESS_REVIEW_SPEC = object("kubernetes.SubjectAccessReviewSpec", {
  user: STRING,
  groups: STRINGS,
  uid: STRING,
  extra: EXTRA,
  resourceAttributes: object("kubernetes.ResourceAttributes", {
    namespace: STRING,
    verb: STRING,
    group: STRING,
    version: STRING,
    resource: STRING,
    subresource: STRING,
    name: STRING,
    fieldSelector: selector("kubernetes.FieldSelectorAttributes"),
    labelSelector: selector("kubernetes.LabelSelectorAttributes"),
  }),
  nonResourceAttributes: object("kubernetes.NonResourceAttributes", { path: STRING, verb: STRING }),
});

const GROUP_VERSION_KIND = object("kubernetes.GroupVersionKind", {
  group: STRING,
  version: STRING,
  kind: STRING,
});
const GROUP_VERSION_RESOURCE = object("kubernetes.GroupVersionResource", {
  group: STRING,
  version: STRING,
  resource: STRING,
});

/** The AdmissionRequest of an admission review, as match conditions and policies see it. */
const ADMISSION_REQUEST = object("kubernetes.AdmissionRequest", {
  kind: GROUP_VERSION_KIND,
  resource: GROUP_VERSION_RESOURCE,
  subResource: STRING,
  requestKind: GROUP_VERSION_KIND,
  requestResource: GROUP_VERSION_RESOURCE,
  requestSubResource: STRING,
  name: STRING,
  namespace: STRING,
  operation: STRING,
  userInfo: USER_INFO,
  dryRun: BOOL,
  options: DYN,
});

/** What admission expressions see: the objects are dynamic (any resource). */
const ADMISSION = {
  object: DYN,
  oldObject: DYN,
  request: ADMISSION_REQUEST,
  namespaceObject: DYN,
};

export const ENVIRONMENTS: Readonly<Record<CelEnvironmentName, Readonly<Record<string, Type>>>> = {
  claims: { claims: mapOf(STRING, DYN) },
  user: { user: USER_INFO },
  request: { request: SUBJECT_ACCESS_REVIEW_SPEC },
  // Webhook match conditions.
  admission: ADMISSION,
  // ValidatingAdmissionPolicy expressions: also the binding's params and the policy's
  // variables (`variables.<name>`).
  admissionPolicy: { ...ADMISSION, params: DYN, variables: mapOf(STRING, DYN) },
  // A CustomResourceDefinition's validation rules: the value at the rule's place and its old
  // value, both typed from the schema by the caller (`CompileOptions.types`).
  crdRule: { self: DYN, oldSelf: DYN },
};

/** Declared in addition when the use offers authorization checks. */
export const AUTHORIZER_VARIABLE = "authorizer";
export const AUTHORIZER_TYPE = AUTHORIZER;
