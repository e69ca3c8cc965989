/**
 * `admissionregistration.platform.io/v1`: MutatingWebhookConfiguration,
 * ValidatingWebhookConfiguration, ValidatingAdmissionPolicy (with `/status`) and
 * ValidatingAdmissionPolicyBinding, all cluster-scoped. Kube's v1 defaults are filled in on
 * every create and update; validation is kube's (webhook_configuration_validation.ts, admission_policy_validation.ts). Only
 * the objects are served here: calling the webhooks and evaluating the policies is admission's.
 */

import { KUBE_REVIEW_GROUP, REVIEW_GROUP_ANNOTATION } from "../admission/mod.ts";
import {
  ALL_VERBS,
  type KubeObject,
  type ResourceDefinition,
  type StrategyContext,
} from "../registry/mod.ts";
import { AGE } from "../codec/mod.ts";
import {
  validatePolicy,
  validatePolicyBinding,
  validatePolicyStatus,
} from "./admission_policy_validation.ts";
import { validateWebhookConfiguration } from "./webhook_configuration_validation.ts";

export const ADMISSIONREGISTRATION_GROUP = "admissionregistration.platform.io";

const isObj = (v: unknown): v is KubeObject =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const each = (list: unknown, fn: (item: KubeObject) => void) => {
  if (Array.isArray(list)) { for (const item of list) if (isObj(item)) fn(item); }
};

/** kube's SetDefaults_Rule: a rule matches both scopes unless it says otherwise. */
function defaultRule(rule: KubeObject): void {
  rule.scope ??= "*";
}

/** kube's SetDefaults_ValidatingWebhook and SetDefaults_MutatingWebhook (v1). */
function defaultWebhook(hook: KubeObject, mutating: boolean): void {
  hook.failurePolicy ??= "Fail";
  hook.matchPolicy ??= "Equivalent";
  hook.namespaceSelector ??= {};
  hook.objectSelector ??= {};
  hook.timeoutSeconds ??= 10;
  if (mutating) hook.reinvocationPolicy ??= "Never";
  each(hook.rules, defaultRule);
  const service = hook.clientConfig?.service;
  if (isObj(service)) service.port ??= 443;
}

/** kube's SetDefaults_MatchResources, with the rules' defaults. */
function defaultMatchResources(match: unknown): void {
  if (!isObj(match)) return;
  match.matchPolicy ??= "Equivalent";
  match.namespaceSelector ??= {};
  match.objectSelector ??= {};
  each(match.resourceRules, defaultRule);
  each(match.excludeResourceRules, defaultRule);
}

function defaultWebhookConfiguration(mutating: boolean) {
  return (o: KubeObject) => each(o.webhooks, (hook) => defaultWebhook(hook, mutating));
}

function defaultPolicy(o: KubeObject): void {
  if (!isObj(o.spec)) return;
  o.spec.failurePolicy ??= "Fail";
  defaultMatchResources(o.spec.matchConstraints);
}

function defaultBinding(o: KubeObject): void {
  if (!isObj(o.spec)) return;
  defaultMatchResources(o.spec.matchResources);
  if (isObj(o.spec.paramRef)) o.spec.paramRef.parameterNotFoundAction ??= "Deny";
}

/**
 * Webhooks built on Kubernetes' libraries decode `admission.k8s.io/v1` reviews only: a
 * configuration written under `admissionregistration.k8s.io` is marked so that its webhooks
 * are sent reviews in that spelling (lib/admission/webhook/review.ts). Each write decides
 * anew, by the group name it used.
 */
function recordReviewGroup(o: KubeObject, ctx: StrategyContext): void {
  const meta = o.metadata ??= {};
  if (ctx.kubeSpelling) {
    meta.annotations = { ...meta.annotations, [REVIEW_GROUP_ANNOTATION]: KUBE_REVIEW_GROUP };
  } else if (meta.annotations?.[REVIEW_GROUP_ANNOTATION] !== undefined) {
    delete meta.annotations[REVIEW_GROUP_ANNOTATION];
    if (!Object.keys(meta.annotations).length) delete meta.annotations;
  }
}

const common = {
  group: ADMISSIONREGISTRATION_GROUP,
  version: "v1",
  namespaced: false,
  verbs: ALL_VERBS,
  categories: ["api-extensions"],
};

const count = (list: unknown) => Array.isArray(list) ? list.length : 0;

function webhookConfiguration(mutating: boolean): ResourceDefinition {
  const kind = mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration";
  const prepare = defaultWebhookConfiguration(mutating);
  return {
    ...common,
    kind,
    plural: `${kind.toLowerCase()}s`,
    singular: kind.toLowerCase(),
    schema: `io.k8s.api.admissionregistration.v1.${kind}`,
    printerColumns: [
      { name: "Webhooks", type: "integer", value: (o) => count(o.webhooks) },
      AGE,
    ],
    strategy: {
      prepareForCreate: (o, ctx) => {
        prepare(o);
        recordReviewGroup(o, ctx);
      },
      prepareForUpdate: (o, _old, ctx) => {
        prepare(o);
        recordReviewGroup(o, ctx);
      },
      validateCreate: (o) => validateWebhookConfiguration(o, mutating),
      validateUpdate: (o) => validateWebhookConfiguration(o, mutating),
    },
  };
}

export const mutatingWebhookConfigurations = webhookConfiguration(true);
export const validatingWebhookConfigurations = webhookConfiguration(false);

export const validatingAdmissionPolicies: ResourceDefinition = {
  ...common,
  kind: "ValidatingAdmissionPolicy",
  plural: "validatingadmissionpolicies",
  singular: "validatingadmissionpolicy",
  subresources: ["status"],
  schema: "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy",
  emptyObject: { spec: {}, status: {} },
  printerColumns: [
    { name: "Validations", type: "integer", value: (o) => count(o.spec?.validations) },
    {
      name: "ParamKind",
      type: "string",
      value: (o) => {
        const kind = o.spec?.paramKind;
        return isObj(kind) ? `${kind.apiVersion ?? ""}/${kind.kind ?? ""}` : "<unset>";
      },
    },
    AGE,
  ],
  strategy: {
    specFields: ["spec"],
    prepareForCreate(o) {
      // Status is written through /status; it starts empty, as in kube.
      o.status = {};
      defaultPolicy(o);
    },
    prepareForUpdate(o, _old, ctx) {
      // /status keeps the stored spec (the registry's doing); only the main resource defaults.
      if (!ctx.subresource) defaultPolicy(o);
    },
    validateCreate: (o) => validatePolicy(o),
    validateUpdate: (o, _old, ctx) =>
      ctx.subresource === "status" ? validatePolicyStatus(o) : validatePolicy(o),
  },
};

export const validatingAdmissionPolicyBindings: ResourceDefinition = {
  ...common,
  kind: "ValidatingAdmissionPolicyBinding",
  plural: "validatingadmissionpolicybindings",
  singular: "validatingadmissionpolicybinding",
  schema: "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding",
  emptyObject: { spec: {} },
  printerColumns: [
    { name: "PolicyName", type: "string", value: (o) => o.spec?.policyName ?? "" },
    {
      name: "ParamRef",
      type: "string",
      value: (o) => {
        const ref = o.spec?.paramRef;
        if (!isObj(ref)) return "<unset>";
        const name = ref.name ? ref.name : "*";
        return ref.namespace ? `${ref.namespace}/${name}` : name;
      },
    },
    AGE,
  ],
  strategy: {
    prepareForCreate: defaultBinding,
    prepareForUpdate: defaultBinding,
    validateCreate: (o) => validatePolicyBinding(o),
    validateUpdate: (o) => validatePolicyBinding(o),
  },
};

/** The four definitions, in kube's discovery order. */
export const admissionRegistrationDefinitions: ResourceDefinition[] = [
  mutatingWebhookConfigurations,
  validatingAdmissionPolicies,
  validatingAdmissionPolicyBindings,
  validatingWebhookConfigurations,
];
