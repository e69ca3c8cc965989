/**
 * Auditing: the policy (`--audit-policy-file`), the `Event`, the log backend
 * (`--audit-log-path`) and the webhook backend (`--audit-webhook-config-file`). The server's
 * audit filter (lib/server/filters/audit.ts) asks the policy about each request and hands the
 * events it builds to the backends.
 *
 * @module
 */

export {
  AUDIT_POLICY_API_VERSIONS,
  AUDIT_POLICY_KIND,
  type AuditAttributes,
  type AuditDecision,
  type AuditPolicy,
  type Level,
  LEVELS,
  loadAuditPolicy,
  parseAuditPolicy,
  PolicyEvaluator,
  type PolicyRule,
  ruleMatches,
  type Stage,
  STAGES,
} from "./policy.ts";
export {
  atLastStage,
  atStage,
  AUDIT_EVENT_API_VERSION,
  type AuditEvent,
  type EventStart,
  formatMicro,
  microTime,
  newEvent,
  type ObjectReference,
  type ResponseStatus,
  responseStatusOf,
  sourceIPsOf,
  withoutManagedFields,
} from "./event.ts";
export { eventJson, plainValue, RawJson } from "./event_json.ts";
export {
  type AuditBackend,
  type AuditErrorCounter,
  LOG_MODES,
  type LogBackendOptions,
  type LogMode,
  openLogBackend,
  unionBackend,
} from "./log_backend.ts";
export { backupName } from "./rotating_file.ts";
export {
  AuditLogWriter,
  type DeliverLines,
  type ForwardingLogOptions,
  openForwardingLogBackend,
} from "./shared_log.ts";
export {
  eventList,
  httpPost,
  MAX_BATCH_BYTES,
  openWebhookBackend,
  RETRIES,
  type WebhookBackendOptions,
  type WebhookPost,
} from "./webhook_backend.ts";
