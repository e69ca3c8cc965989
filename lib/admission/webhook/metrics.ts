/**
 * A webhook call's metrics, as kube's admission metrics record them:
 * `apiserver_admission_webhook_admission_duration_seconds{name,type,operation,rejected}` for
 * every call, and `apiserver_admission_webhook_rejection_count` for each call that refused the
 * request (a denial: `no_error` with the webhook's code; a failed call under
 * `failurePolicy: Fail`: `calling_webhook_error`; anything else: `apiserver_internal_error`).
 */

import type { Counter, Histogram } from "../../metrics/mod.ts";
import type { AdmissionAttributes } from "../attributes.ts";
import type { Webhook } from "./webhook.ts";

/** The handles the dispatcher records into. */
export interface WebhookMetrics {
  duration: Histogram;
  rejections: Counter;
}

export type RejectionType = "no_error" | "calling_webhook_error" | "apiserver_internal_error";

export function observeWebhook(
  metrics: WebhookMetrics | undefined,
  webhook: Webhook,
  a: AdmissionAttributes,
  started: number,
  rejection?: { type: RejectionType; code: number },
): void {
  if (!metrics) return;
  // kube's step types: "admit" for mutating webhooks, "validate" for validating ones.
  const step = webhook.type === "mutating" ? "admit" : "validate";
  metrics.duration.child(webhook.name, step, a.operation, rejection ? "true" : "false")
    .observe((performance.now() - started) / 1000);
  if (rejection) {
    metrics.rejections.child(
      webhook.name,
      step,
      a.operation,
      rejection.type,
      String(Math.min(rejection.code, 600)),
    ).inc();
  }
}
