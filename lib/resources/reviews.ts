/**
 * Computed resources of `authorization.platform.io/v1` and `authentication.platform.io/v1`:
 * access reviews, rules reviews, token reviews, self-subject reviews, and the token request
 * of `serviceaccounts/{name}/token`. Each is create-only, stores nothing and answers from the
 * authorizer, the authenticators or the service account token issuer (kube's typed clients
 * behind `kubectl auth can-i`, `kubectl auth whoami` and `kubectl create token` use them).
 */

import { badRequest, canonicalGroup, type FieldError, type UserInfo } from "../api/mod.ts";
import {
  type Attributes,
  DEFAULT_EXPIRATION_SECONDS,
  MIN_EXPIRATION_SECONDS,
} from "../auth/mod.ts";
import type { KubeObject, ResourceDefinition, ReviewContext } from "../registry/mod.ts";

const AUTHORIZATION = "authorization.platform.io";
const AUTHENTICATION = "authentication.platform.io";

function computed(
  group: string,
  kind: string,
  plural: string,
  def: Partial<ResourceDefinition> & Pick<ResourceDefinition, "review">,
): ResourceDefinition {
  return {
    group,
    version: "v1",
    kind,
    plural,
    singular: "",
    namespaced: false,
    verbs: ["create"],
    schema: `io.k8s.api.${group.split(".")[0]}.v1.${kind}`,
    ...def,
  };
}

// ---- validation shared by the access reviews (kube's words) ----

/** kube: review metadata must be empty (managed fields aside; `namespace` for local reviews). */
function emptyMetadata(obj: KubeObject, allowNamespace = false): FieldError[] {
  const meta = { ...obj.metadata };
  delete meta.managedFields;
  if (allowNamespace) delete meta.namespace;
  const set = Object.entries(meta).filter(([, v]) => v !== null && v !== undefined && v !== "");
  return set.length
    ? [{ type: "Invalid", field: "metadata", value: meta, detail: "must be empty" }]
    : [];
}

function exactlyOneAttributes(spec: KubeObject | undefined): FieldError[] {
  if (spec?.resourceAttributes && spec?.nonResourceAttributes) {
    return [{
      type: "Invalid",
      field: "spec.nonResourceAttributes",
      value: spec.nonResourceAttributes,
      detail: "cannot be specified in combination with resourceAttributes",
    }];
  }
  if (!spec?.resourceAttributes && !spec?.nonResourceAttributes) {
    return [{
      type: "Invalid",
      field: "spec.resourceAttributes",
      value: null,
      detail: "exactly one of nonResourceAttributes or resourceAttributes must be specified",
    }];
  }
  return [];
}

function userOrGroup(spec: KubeObject | undefined): FieldError[] {
  if (spec?.user || spec?.groups?.length) return [];
  return [{
    type: "Invalid",
    field: "spec.user",
    value: spec?.user ?? "",
    detail: "at least one of user or group must be specified",
  }];
}

// ---- answering ----

/** The authorizer's attributes for a review's spec, on behalf of `user`. */
function attributesOf(spec: KubeObject, user: UserInfo): Attributes {
  const r = spec.resourceAttributes;
  if (r) {
    return {
      user,
      verb: r.verb ?? "",
      resourceRequest: true,
      namespace: r.namespace ?? "",
      // Authorizers see one spelling of a built-in group, as for requests.
      apiGroup: canonicalGroup(r.group ?? ""),
      apiVersion: r.version ?? "",
      resource: r.resource ?? "",
      subresource: r.subresource ?? "",
      name: r.name ?? "",
    };
  }
  const n = spec.nonResourceAttributes ?? {};
  return { user, verb: n.verb ?? "", resourceRequest: false, path: n.path ?? "" };
}

async function accessReviewStatus(spec: KubeObject, user: UserInfo, ctx: ReviewContext) {
  const res = await ctx.services.authorizer.authorize(attributesOf(spec, user));
  const status: KubeObject = { allowed: res.decision === "Allow" };
  if (res.decision === "Deny") status.denied = true;
  if (res.reason) status.reason = res.reason;
  if (res.evaluationError) status.evaluationError = res.evaluationError;
  return status;
}

/** The user a SubjectAccessReview names. */
function subjectOf(spec: KubeObject): UserInfo {
  const user: UserInfo = { username: spec.user ?? "", groups: spec.groups ?? [] };
  if (spec.uid) user.uid = spec.uid;
  if (spec.extra) user.extra = spec.extra;
  return user;
}

/** The user as kube's UserInfo type spells it (`status.userInfo`, `status.user`). */
function userInfoObject(user: UserInfo): KubeObject {
  const out: KubeObject = { username: user.username };
  if (user.uid) out.uid = user.uid;
  if (user.groups.length) out.groups = user.groups;
  if (user.extra && Object.keys(user.extra).length) out.extra = user.extra;
  return out;
}

function answer(obj: KubeObject, status: KubeObject): KubeObject {
  return { metadata: obj.metadata ?? {}, spec: obj.spec ?? {}, status };
}

// ---- authorization.platform.io/v1 ----

export const selfSubjectAccessReviews = computed(
  AUTHORIZATION,
  "SelfSubjectAccessReview",
  "selfsubjectaccessreviews",
  {
    strategy: {
      validateCreate: (o) => [...exactlyOneAttributes(o.spec), ...emptyMetadata(o)],
    },
    review: async (o, ctx) => answer(o, await accessReviewStatus(o.spec, ctx.user, ctx)),
  },
);

export const subjectAccessReviews = computed(
  AUTHORIZATION,
  "SubjectAccessReview",
  "subjectaccessreviews",
  {
    strategy: {
      validateCreate: (o) => [
        ...exactlyOneAttributes(o.spec),
        ...userOrGroup(o.spec),
        ...emptyMetadata(o),
      ],
    },
    review: async (o, ctx) => answer(o, await accessReviewStatus(o.spec, subjectOf(o.spec), ctx)),
  },
);

export const localSubjectAccessReviews = computed(
  AUTHORIZATION,
  "LocalSubjectAccessReview",
  "localsubjectaccessreviews",
  {
    namespaced: true,
    strategy: {
      validateCreate(o) {
        const errors = [...userOrGroup(o.spec), ...emptyMetadata(o, true)];
        if (o.spec?.nonResourceAttributes) {
          errors.push({
            type: "Invalid",
            field: "spec.nonResourceAttributes",
            value: o.spec.nonResourceAttributes,
            detail: "disallowed on this kind of request",
          });
        }
        const ns = o.spec?.resourceAttributes?.namespace;
        if (o.spec?.resourceAttributes && ns !== o.metadata?.namespace) {
          errors.push({
            type: "Invalid",
            field: "spec.resourceAttributes.namespace",
            value: ns ?? "",
            detail: "must match metadata.namespace",
          });
        }
        if (!o.spec?.resourceAttributes && !o.spec?.nonResourceAttributes) {
          errors.push(...exactlyOneAttributes(o.spec));
        }
        return errors;
      },
    },
    review: async (o, ctx) => answer(o, await accessReviewStatus(o.spec, subjectOf(o.spec), ctx)),
  },
);

export const selfSubjectRulesReviews = computed(
  AUTHORIZATION,
  "SelfSubjectRulesReview",
  "selfsubjectrulesreviews",
  {
    strategy: { validateCreate: (o) => emptyMetadata(o) },
    async review(o, ctx) {
      const namespace = o.spec?.namespace;
      if (!namespace) throw badRequest("no namespace on request");
      const rules = await ctx.services.authorizer.rulesFor(ctx.user, namespace);
      const status: KubeObject = {
        resourceRules: rules.resourceRules,
        nonResourceRules: rules.nonResourceRules,
        incomplete: rules.incomplete,
      };
      if (rules.evaluationError) status.evaluationError = rules.evaluationError;
      return answer(o, status);
    },
  },
);

// ---- authentication.platform.io/v1 ----

export const selfSubjectReviews = computed(
  AUTHENTICATION,
  "SelfSubjectReview",
  "selfsubjectreviews",
  {
    review: (o, ctx) =>
      Promise.resolve({
        metadata: o.metadata ?? {},
        status: { userInfo: userInfoObject(ctx.user) },
      }),
  },
);

/**
 * `authentication.platform.io/v1beta1` SelfSubjectReview, which kubectl 1.27's `auth whoami`
 * asks for (then v1alpha1; 1.28 and later ask for v1 first). The v1beta1 type has exactly v1's
 * fields (metadata, status.userInfo), so it shares v1's schema and answer. As in kube 1.32 it
 * is off by default (a beta introduced after 1.22: `--runtime-config` turns it on) and
 * deprecated: introduced in 1.27, deprecated three releases later, gone three after that.
 */
export const selfSubjectReviewsV1beta1: ResourceDefinition = {
  ...selfSubjectReviews,
  version: "v1beta1",
  deprecationWarning:
    `${AUTHENTICATION}/v1beta1 SelfSubjectReview is deprecated in v1.30+, unavailable in v1.33+`,
};

export const tokenReviews = computed(AUTHENTICATION, "TokenReview", "tokenreviews", {
  async review(o, ctx) {
    const token = o.spec?.token;
    if (!token) throw badRequest("token is required for TokenReview in authentication");
    const audiences = o.spec?.audiences;
    if (audiences !== undefined && !isStringList(audiences)) {
      throw badRequest("spec.audiences must be a list of strings");
    }
    const res = await ctx.services.reviewToken(token, audiences);
    const status: KubeObject = res.user
      ? { authenticated: true, user: userInfoObject(res.user), audiences: res.audiences }
      : { authenticated: false, user: {}, error: res.error };
    return { metadata: o.metadata ?? {}, spec: o.spec, status };
  },
});

/** `serviceaccounts/{name}/token`: a bound service account token (`kubectl create token`). */
export const tokenRequests = computed(AUTHENTICATION, "TokenRequest", "serviceaccounts/token", {
  namespaced: true,
  strategy: {
    validateCreate(o) {
      const errors: FieldError[] = [];
      const seconds = o.spec?.expirationSeconds;
      if (typeof seconds === "number" && seconds < MIN_EXPIRATION_SECONDS) {
        errors.push({
          type: "Invalid",
          field: "spec.expirationSeconds",
          value: seconds,
          detail: "may not specify a duration less than 10 minutes",
        });
      }
      if (typeof seconds === "number" && seconds > 2 ** 32) {
        errors.push({
          type: "Invalid",
          field: "spec.expirationSeconds",
          value: seconds,
          detail: "may not specify a duration larger than 2^32 seconds",
        });
      }
      if (o.spec?.boundObjectRef) {
        errors.push({
          type: "Invalid",
          field: "spec.boundObjectRef",
          value: o.spec.boundObjectRef,
          detail: "binding a token to an object is not supported by this server",
        });
      }
      return errors;
    },
  },
  async review(o, ctx) {
    const tokens = ctx.services.serviceAccountTokens;
    const sa = ctx.parent!;
    if (!tokens) throw badRequest("this server issues no service account tokens");
    const spec = { ...o.spec };
    spec.expirationSeconds ??= DEFAULT_EXPIRATION_SECONDS;
    if (!spec.audiences?.length) spec.audiences = tokens.defaultAudiences;
    const issued = await tokens.issue(
      { namespace: ctx.namespace, name: sa.metadata.name, uid: sa.metadata.uid },
      { audiences: spec.audiences, expirationSeconds: spec.expirationSeconds },
    );
    return {
      metadata: { name: sa.metadata.name, namespace: ctx.namespace },
      spec,
      status: issued,
    };
  },
});

/** The computed resources served as resources (the token request is a subresource). */
export const reviewDefinitions = [
  selfSubjectAccessReviews,
  subjectAccessReviews,
  localSubjectAccessReviews,
  selfSubjectRulesReviews,
  selfSubjectReviews,
  tokenReviews,
  selfSubjectReviewsV1beta1,
];

function isStringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((a) => typeof a === "string");
}
