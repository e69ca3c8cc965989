/**
 * The variables each use of CEL declares, with the types the checker holds expressions to.
 * Objects are declared with their v1 JSON field names (as Kubernetes exposes them).
 */

import { AUTHORIZER } from "./libraries/authz.ts";
import { DYN, listOf, mapOf, object, STRING, type Type } from "./types.ts";

export type CelEnvironmentName =
  | "claims"
  | "user"
  | "request"
  | "admission"
  | "admissionPolicy";

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

export const ENVIRONMENTS: Readonly<Record<CelEnvironmentName, Readonly<Record<string, Type>>>> = {
  claims: { claims: mapOf(STRING, DYN) },
  user: { user: USER_INFO },
  request: { request: SUBJECT_ACCESS_REVIEW_SPEC },
  // Admission webhooks' match conditions: the request's objects and attributes, typed dyn.
  admission: { object: DYN, oldObject: DYN, request: DYN, namespaceObject: DYN },
  // ValidatingAdmissionPolicy expressions: those, the binding's params and the policy's
  // variables (`variables.<name>`).
  admissionPolicy: {
    object: DYN,
    oldObject: DYN,
    request: DYN,
    namespaceObject: DYN,
    params: DYN,
    variables: mapOf(STRING, DYN),
  },
};

/** Declared in addition when the use offers authorization checks. */
export const AUTHORIZER_VARIABLE = "authorizer";
export const AUTHORIZER_TYPE = AUTHORIZER;
