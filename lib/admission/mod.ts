/**
 * The admission stage (lib/README.md, "Adding an admission plugin" in the README): the
 * attributes a plugin sees, the plugin interface, the ordered chain the registry runs on
 * every write, and the plugins that need nothing above this layer.
 */

export type { AdmissionAttributes, Operation } from "./attributes.ts";
export type { AdmissionPlugin } from "./plugin.ts";
export { AdmissionChain, NO_ADMISSION } from "./chain.ts";
export {
  NAMESPACE_LIFECYCLE,
  namespaceLifecycle,
  type NamespaceLookup,
  type NamespacePhase,
  namespaceTerminating,
} from "./namespace_lifecycle.ts";
export {
  DEFAULT_CACHE_SIZE,
  EVENT_RATE_LIMIT,
  type EventRateDecision,
  type EventRateLimit,
  eventRateLimit,
  type EventRateLimitConfig,
  EventRateLimiter,
  LIMIT_TYPES,
  type LimitType,
} from "./event_rate_limit.ts";
export {
  ADMISSION_CONFIG_API_VERSIONS,
  ADMISSION_CONFIG_KIND,
  type AdmissionConfig,
  type AdmissionOptions,
  type AdmissionSettings,
  loadAdmissionConfig,
  loadAdmissionSettings,
  NO_ADMISSION_CONFIG,
  type WebhookCredentialsResolver,
} from "./admission_config.ts";
export {
  credentialsFor,
  readWebhookKubeconfig,
  webhookHostPort,
  type WebhookKubeconfig,
} from "./webhook_credentials.ts";
export {
  MUTATING_ADMISSION_WEBHOOK,
  mutatingWebhooks,
  VALIDATING_ADMISSION_WEBHOOK,
  validatingWebhooks,
  type WebhookEnvironment,
  type WebhookSource,
} from "./webhook/dispatcher.ts";
export { type EquivalentResource } from "./webhook/matching.ts";
export { CallError, WebhookClient, type WebhookCredentials } from "./webhook/client.ts";
export { StoredWebhooks } from "./webhook/source.ts";
export {
  KUBE_REVIEW_GROUP,
  PLATFORM_REVIEW_GROUP,
  REVIEW_GROUP_ANNOTATION,
  type Webhook,
  webhooksOf,
  type WebhookType,
} from "./webhook/webhook.ts";
export {
  type PolicyEnvironment,
  type PolicySource,
  VALIDATING_ADMISSION_POLICY,
  validatingAdmissionPolicy,
  VALIDATION_FAILURE_ANNOTATION,
} from "./policy/validating_policy.ts";
export { StoredPolicies } from "./policy/source.ts";
export { type Binding, bindingOf, type Policy, policyOf } from "./policy/policy.ts";
export {
  type CheckedKind,
  type ExpressionWarning,
  type KindResolver,
  schemaType,
  typeCheckPolicy,
} from "./policy/type_check.ts";
