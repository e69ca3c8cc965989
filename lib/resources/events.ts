/**
 * Events in two versions over one stored form. `events.platform.io/v1` objects are stored as
 * core v1 events (the storage form) and converted on the way in and out, so the same event is
 * readable through both APIs with each version's field names.
 */

import { type FieldError, humanDuration } from "../api/mod.ts";
import {
  ALL_VERBS,
  type KubeObject,
  type PrinterColumn,
  type ResourceDefinition,
} from "../registry/mod.ts";
import { NAME } from "../codec/mod.ts";

/** events.platform.io/v1 field -> core v1 field, for fields that were renamed. */
const RENAMED: [string, string][] = [
  ["regarding", "involvedObject"],
  ["note", "message"],
  ["deprecatedSource", "source"],
  ["deprecatedFirstTimestamp", "firstTimestamp"],
  ["deprecatedLastTimestamp", "lastTimestamp"],
  ["deprecatedCount", "count"],
  ["reportingController", "reportingComponent"],
];

function rename(obj: KubeObject, pairs: [string, string][], apiVersion: string): KubeObject {
  const out: KubeObject = { ...obj, apiVersion, kind: "Event" };
  for (const [from, to] of pairs) {
    delete out[from];
    if (obj[from] !== undefined) out[to] = obj[from];
  }
  return out;
}

export const eventsConversion = {
  toStorage: (obj: KubeObject) => rename(obj, RENAMED, "v1"),
  fromStorage: (obj: KubeObject) => {
    const out = rename(obj, RENAMED.map(([a, b]) => [b, a]), "events.platform.io/v1");
    // Core events default these to zero values that the v1 API does not show.
    if (out.deprecatedCount === 0) delete out.deprecatedCount;
    if (out.deprecatedSource && Object.keys(out.deprecatedSource).length === 0) {
      delete out.deprecatedSource;
    }
    return out;
  },
};

function ref(prefix: string, field: string) {
  return (o: KubeObject) => o[prefix]?.[field] as string | undefined;
}

/** Time since an RFC 3339 timestamp, as kube prints it; `<unknown>` when unset. */
function since(ts: unknown): string {
  const t = typeof ts === "string" ? Date.parse(ts) : NaN;
  return Number.isNaN(t) ? "<unknown>" : humanDuration(Date.now() - t);
}

/**
 * kube's event columns (Last Seen, Type, Reason, Object, Message; with `-o wide` also
 * Subobject, Source, First Seen, Count, Name), computed on the core form that `core` gives.
 */
export function eventColumns(core: (o: KubeObject) => KubeObject): PrinterColumn[] {
  const firstSeen = (e: KubeObject) =>
    e.firstTimestamp ? since(e.firstTimestamp) : since(e.eventTime);
  const column = (
    name: string,
    value: (e: KubeObject) => unknown,
    priority = 0,
    type: PrinterColumn["type"] = "string",
  ): PrinterColumn => ({ name, type, priority, value: (o) => value(core(o)) });
  return [
    column(
      "Last Seen",
      (e) =>
        e.series?.lastObservedTime
          ? since(e.series.lastObservedTime)
          : e.lastTimestamp
          ? since(e.lastTimestamp)
          : firstSeen(e),
    ),
    column("Type", (e) => e.type ?? ""),
    column("Reason", (e) => e.reason ?? ""),
    column("Object", (e) => {
      const kind = String(e.involvedObject?.kind ?? "").toLowerCase();
      return e.involvedObject?.name ? `${kind}/${e.involvedObject.name}` : kind;
    }),
    column("Subobject", (e) => e.involvedObject?.fieldPath ?? "", 1),
    column("Source", (e) => {
      const component = e.source?.component || e.reportingComponent || "";
      const instance = e.source?.host || e.reportingInstance || "";
      return instance ? `${component}, ${instance}` : component;
    }, 1),
    column("Message", (e) => String(e.message ?? "").trim()),
    column("First Seen", firstSeen, 1),
    column("Count", (e) => e.series?.count ?? (e.count || 1), 1, "integer"),
    { ...NAME, priority: 1 },
  ];
}

export const coreEventFieldSelectors = {
  "involvedObject.kind": ref("involvedObject", "kind"),
  "involvedObject.namespace": ref("involvedObject", "namespace"),
  "involvedObject.name": ref("involvedObject", "name"),
  "involvedObject.uid": ref("involvedObject", "uid"),
  "involvedObject.apiVersion": ref("involvedObject", "apiVersion"),
  "involvedObject.resourceVersion": ref("involvedObject", "resourceVersion"),
  "involvedObject.fieldPath": ref("involvedObject", "fieldPath"),
  reason: (o: KubeObject) => o.reason,
  reportingComponent: (o: KubeObject) => o.reportingComponent,
  source: (o: KubeObject) => o.source?.component,
  type: (o: KubeObject) => o.type,
};

const REQUIRED_ON_CREATE = [
  "eventTime",
  "action",
  "reason",
  "reportingController",
  "reportingInstance",
];
const DEPRECATED = [
  "deprecatedSource",
  "deprecatedFirstTimestamp",
  "deprecatedLastTimestamp",
  "deprecatedCount",
];

function validateV1Event(obj: KubeObject, create: boolean): FieldError[] {
  const errors: FieldError[] = [];
  if (obj.type !== "Normal" && obj.type !== "Warning") {
    errors.push(
      obj.type === undefined || obj.type === "" ? { type: "Required", field: "type" } : {
        type: "NotSupported",
        field: "type",
        value: obj.type,
        detail: 'supported values: "Normal", "Warning"',
      },
    );
  }
  if (!create) return errors;
  for (const f of REQUIRED_ON_CREATE) {
    if (obj[f] === undefined || obj[f] === "") errors.push({ type: "Required", field: f });
  }
  for (const f of DEPRECATED) {
    // Empty values are unset: protobuf clients always send the (empty) deprecatedSource struct,
    // and kube checks the fields' contents, not their presence.
    if (!isEmptyValue(obj[f])) {
      errors.push({ type: "Forbidden", field: f, detail: "deprecated field must not be set" });
    }
  }
  if (obj.reportingController !== undefined && String(obj.reportingController).length > 128) {
    errors.push({
      type: "TooLong",
      field: "reportingController",
      detail: "may not be more than 128 bytes",
    });
  }
  if (obj.reportingInstance !== undefined && String(obj.reportingInstance).length > 128) {
    errors.push({
      type: "TooLong",
      field: "reportingInstance",
      detail: "may not be more than 128 bytes",
    });
  }
  if (obj.action !== undefined && String(obj.action).length > 128) {
    errors.push({ type: "TooLong", field: "action", detail: "may not be more than 128 bytes" });
  }
  if (obj.reason !== undefined && String(obj.reason).length > 128) {
    errors.push({ type: "TooLong", field: "reason", detail: "may not be more than 128 bytes" });
  }
  return errors;
}

export const eventsV1: ResourceDefinition = {
  group: "events.platform.io",
  version: "v1",
  kind: "Event",
  plural: "events",
  singular: "event",
  namespaced: true,
  shortNames: ["ev"],
  verbs: ALL_VERBS,
  schema: "io.k8s.api.events.v1.Event",
  fieldSelectors: {
    "regarding.kind": ref("regarding", "kind"),
    "regarding.namespace": ref("regarding", "namespace"),
    "regarding.name": ref("regarding", "name"),
    "regarding.uid": ref("regarding", "uid"),
    "regarding.apiVersion": ref("regarding", "apiVersion"),
    "regarding.resourceVersion": ref("regarding", "resourceVersion"),
    "regarding.fieldPath": ref("regarding", "fieldPath"),
    reason: (o) => o.reason,
    reportingController: (o) => o.reportingController,
    type: (o) => o.type,
  },
  // kube prints both versions with the core event's columns.
  printerColumns: eventColumns((o) => eventsConversion.toStorage(o)),
  strategy: {
    validateCreate: (o) => validateV1Event(o, true),
    validateUpdate: (o) => validateV1Event(o, false),
  },
  storage: { group: "", resource: "events", conversion: eventsConversion },
};

/** Absent, null, zero, "" or an object of empty values: what Go's zero value looks like. */
function isEmptyValue(v: unknown): boolean {
  if (v === undefined || v === null || v === "" || v === 0) return true;
  if (typeof v === "object" && !Array.isArray(v)) return Object.values(v).every(isEmptyValue);
  return false;
}
