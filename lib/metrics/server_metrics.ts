/**
 * Every metric the server declares, with kube's names, labels, help texts, stability levels
 * and buckets, made in one registry per server. The parts of the server that record them get
 * the handles they need (`metrics.watchEvents`, …) through their options.
 *
 * Storage durations use kube's `etcd_request_duration_seconds{operation,type}` (`type` being the
 * group-resource) whatever the backend: the requests a store sends to its backend (see
 * storage/instrumented.ts).
 */

import {
  AUTHENTICATION_DURATION_BUCKETS,
  REQUEST_DURATION_BUCKETS,
  WEBHOOK_DURATION_BUCKETS,
} from "./buckets.ts";
import type { FamilySamples } from "./merge.ts";
import type { Counter, Gauge, Histogram } from "./metric.ts";
import { registerProcessMetrics } from "./process.ts";
import { MetricsRegistry, type RegistryOptions } from "./registry.ts";
import { RequestMetrics } from "./request_metrics.ts";

/** What `/version` reports, for `kubernetes_build_info`. */
export interface BuildInfo {
  major: string;
  minor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

/** Values read at scrape time, supplied by the parts of the server that own them. */
export interface ScrapeSources {
  /** Seats in use of the read-only and mutating in-flight pools. */
  inflight?: () => { readOnly: number; mutating: number };
  /** Stored objects per group-resource (`configmaps`, `leases.coordination.platform.io`). */
  storageObjects?: () => Iterable<[resource: string, count: number]>;
  /** With `--workers`: the samples of every other thread, for a scrape that answers for all
   * (merge.ts). */
  peers?: () => Promise<FamilySamples[][]>;
}

export class ServerMetrics {
  readonly registry: MetricsRegistry;
  readonly requests: RequestMetrics;
  readonly longRunning: Gauge;
  readonly registeredWatchers: Gauge;
  readonly watchEvents: Counter;
  readonly storageDuration: Histogram;
  readonly webhookDuration: Histogram;
  readonly webhookRejections: Counter;
  readonly authorizationDecisions: Counter;
  readonly authenticationAttempts: Counter;
  readonly authenticationDuration: Histogram;
  readonly auditEvents: Counter;
  readonly auditErrors: Counter;
  readonly auditLevels: Counter;
  /** Filled in as the server starts (the in-flight pools, the store). */
  readonly sources: ScrapeSources = {};

  constructor(options: RegistryOptions & { build?: BuildInfo }) {
    const r = this.registry = new MetricsRegistry(options);
    this.requests = new RequestMetrics(r);
    const requestLabels = [
      "verb",
      "group",
      "version",
      "resource",
      "subresource",
      "scope",
      "component",
    ];
    this.longRunning = r.gauge({
      name: "apiserver_longrunning_requests",
      help: "Gauge of all active long-running apiserver requests broken out by verb, group, " +
        "version, resource, scope and component. Not all requests are tracked this way.",
      stability: "STABLE",
      labels: requestLabels,
    });
    r.collected("gauge", {
      name: "apiserver_current_inflight_requests",
      help: "Maximal number of currently used inflight request limit of this apiserver per " +
        "request kind in last second.",
      stability: "STABLE",
      labels: ["request_kind"],
    }, (emit) => {
      const seats = this.sources.inflight?.() ?? { readOnly: 0, mutating: 0 };
      emit(seats.mutating, "mutating");
      emit(seats.readOnly, "readOnly");
    });
    const gvk = ["group", "version", "kind"];
    this.registeredWatchers = r.gauge({
      name: "apiserver_registered_watchers",
      help: "Number of currently registered watchers for a given resources",
      labels: gvk,
    });
    this.watchEvents = r.counter({
      name: "apiserver_watch_events_total",
      help: "Number of events sent in watch clients",
      labels: gvk,
    });
    r.collected("gauge", {
      name: "apiserver_storage_objects",
      help: "Number of stored objects at the time of last check split by kind. In case of a " +
        "fetching error, the value will be -1.",
      stability: "STABLE",
      labels: ["resource"],
    }, (emit) => {
      for (const [resource, count] of this.sources.storageObjects?.() ?? []) emit(count, resource);
    });
    this.storageDuration = r.histogram({
      name: "etcd_request_duration_seconds",
      help: "Etcd request latency in seconds for each operation and object type.",
      labels: ["operation", "type"],
      buckets: REQUEST_DURATION_BUCKETS,
    });
    this.webhookDuration = r.histogram({
      name: "apiserver_admission_webhook_admission_duration_seconds",
      help: "Admission webhook latency histogram in seconds, identified by name and broken " +
        "out for each operation and API resource and type (validate or admit).",
      stability: "STABLE",
      labels: ["name", "type", "operation", "rejected"],
      buckets: WEBHOOK_DURATION_BUCKETS,
    });
    this.webhookRejections = r.counter({
      name: "apiserver_admission_webhook_rejection_count",
      help: "Admission webhook rejection count, identified by name and broken out for each " +
        "admission type (validating or admit) and operation. Additional labels specify an " +
        "error type (calling_webhook_error or apiserver_internal_error if an error occurred; " +
        "no_error otherwise) and optionally a non-zero rejection code if the webhook rejects " +
        "the request with an HTTP status code (honored by the apiserver when the code is " +
        "greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the " +
        "metrics cardinality bounded.",
      labels: ["name", "type", "operation", "error_type", "rejection_code"],
    });
    this.authorizationDecisions = r.counter({
      name: "apiserver_authorization_decisions_total",
      help: "Total number of terminal decisions made by an authorizer split by authorizer " +
        "type, name, and decision.",
      labels: ["type", "name", "decision"],
    });
    this.authenticationAttempts = r.counter({
      name: "authentication_attempts",
      help: "Counter of authenticated attempts.",
      labels: ["result"],
    });
    this.authenticationDuration = r.histogram({
      name: "authentication_duration_seconds",
      help: "Authentication duration in seconds broken out by result.",
      labels: ["result"],
      buckets: AUTHENTICATION_DURATION_BUCKETS,
    });
    this.auditEvents = r.counter({
      name: "apiserver_audit_event_total",
      help: "Counter of audit events generated and sent to the audit backend.",
    });
    this.auditErrors = r.counter({
      name: "apiserver_audit_error_total",
      help: "Counter of audit events that failed to be audited properly. Plugin identifies " +
        "the plugin affected by the error.",
      labels: ["plugin"],
    });
    this.auditLevels = r.counter({
      name: "apiserver_audit_level_total",
      help: "Counter of policy levels for audit events (1 per request).",
      labels: ["level"],
    });
    if (options.build) {
      const b = options.build;
      r.gauge({
        name: "kubernetes_build_info",
        help: "A metric with a constant '1' value labeled by major, minor, git version, git " +
          "commit, git tree state, build date, Go version, and compiler from which " +
          "Kubernetes was built, and platform on which it is running.",
        labels: [
          "major",
          "minor",
          "git_version",
          "git_commit",
          "git_tree_state",
          "build_date",
          "go_version",
          "compiler",
          "platform",
        ],
      }).child(
        b.major,
        b.minor,
        b.gitVersion,
        b.gitCommit,
        b.gitTreeState,
        b.buildDate,
        b.goVersion,
        b.compiler,
        b.platform,
      ).set(1);
    }
    registerProcessMetrics(r);
  }
}
