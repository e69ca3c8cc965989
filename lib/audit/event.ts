/**
 * The audit `Event` (`audit.platform.io/v1`, spec 03) and its building: one event per request,
 * re-stamped at each stage it is emitted at. Fields are in kube's order, and only what the
 * level allows is set: `annotations` from Metadata, `requestObject` from Request,
 * `responseObject` at RequestResponse (neither for non-resource requests).
 *
 * @module
 */

import type { UserInfo } from "../api/mod.ts";
import type { Level, Stage } from "./policy.ts";

export const AUDIT_EVENT_API_VERSION = "audit.platform.io/v1";

/** kube's audit ObjectReference, with only the fields that are known. */
export interface ObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** The metav1.Status fields an event's `responseStatus` carries. */
export interface ResponseStatus {
  metadata: Record<string, never>;
  status?: "Failure";
  message?: string;
  reason?: string;
  code: number;
}

/**
 * The key of an event's {@link StableTextHolder}: a symbol, so that `JSON.stringify` and the
 * webhook's readers never see it, and copies of the event (`atStage`, a spread) share it.
 */
export const STABLE_TEXT: unique symbol = Symbol("audit event stable text");

/**
 * Where `eventJson` keeps the text of the fields that are the same at every stage of one
 * request (its ID, URI, user, source), made at the first stage and used again at the next.
 */
export interface StableTextHolder {
  text: unknown;
}

export interface AuditEvent {
  kind: "Event";
  apiVersion: typeof AUDIT_EVENT_API_VERSION;
  level: Level;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  user: UserInfo;
  impersonatedUser?: UserInfo;
  sourceIPs: string[];
  userAgent?: string;
  objectRef?: ObjectReference;
  responseStatus?: ResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
  [STABLE_TEXT]?: StableTextHolder;
}

/** What the event of one request is made of, as the audit filter knows it when it comes. */
export interface EventStart {
  level: Level;
  auditID: string;
  requestURI: string;
  verb: string;
  user: UserInfo;
  sourceIPs: string[];
  userAgent?: string | null;
  objectRef?: ObjectReference;
  /** The annotations record the event keeps (authorization and admission write into it). */
  annotations: Record<string, string>;
  /** When the request came, in ms since the epoch (fractional), as kube stamps it before
   * authentication. @default now */
  receivedAt?: number;
}

/** The event of a request as it comes (stage RequestReceived). */
export function newEvent(s: EventStart): AuditEvent {
  const now = s.receivedAt === undefined ? microTime() : formatMicro(s.receivedAt);
  const ev: AuditEvent = {
    kind: "Event",
    apiVersion: AUDIT_EVENT_API_VERSION,
    level: s.level,
    auditID: s.auditID,
    stage: "RequestReceived",
    requestURI: s.requestURI,
    verb: s.verb,
    user: s.user,
    impersonatedUser: undefined,
    sourceIPs: s.sourceIPs,
    userAgent: s.userAgent ?? undefined,
    objectRef: s.objectRef,
    responseStatus: undefined,
    requestObject: undefined,
    responseObject: undefined,
    requestReceivedTimestamp: now,
    stageTimestamp: now,
    annotations: s.annotations,
    [STABLE_TEXT]: { text: undefined },
  };
  return ev;
}

/** The event at `stage`, stamped now: a copy, so that a backend that keeps it (batch mode)
 * sees it as it was. Empty annotations are left out. */
export function atStage(ev: AuditEvent, stage: Stage): AuditEvent {
  // A literal of the event's fields rather than a spread: V8 makes it with the event's own
  // shape, where a spread of this many fields is a generic (and slower) copy.
  return {
    kind: ev.kind,
    apiVersion: ev.apiVersion,
    level: ev.level,
    auditID: ev.auditID,
    stage,
    requestURI: ev.requestURI,
    verb: ev.verb,
    user: ev.user,
    impersonatedUser: ev.impersonatedUser,
    sourceIPs: ev.sourceIPs,
    userAgent: ev.userAgent,
    objectRef: ev.objectRef,
    responseStatus: ev.responseStatus,
    requestObject: ev.requestObject,
    responseObject: ev.responseObject,
    requestReceivedTimestamp: ev.requestReceivedTimestamp,
    // The filter emits RequestReceived as the event is made: its time is the arrival's.
    stageTimestamp: stage === "RequestReceived" && ev.stage === "RequestReceived"
      ? ev.stageTimestamp
      : microTime(),
    annotations: ev.annotations && copyOrNone(ev.annotations),
    [STABLE_TEXT]: ev[STABLE_TEXT],
  };
}

/**
 * The event at its last stage (ResponseComplete or Panic), stamped now: the event itself, which
 * nothing changes after its last stage, so no copy is made. Empty annotations are left out.
 */
export function atLastStage(ev: AuditEvent, stage: Stage): AuditEvent {
  ev.stage = stage;
  ev.stageTimestamp = microTime();
  if (ev.annotations && isEmpty(ev.annotations)) ev.annotations = undefined;
  return ev;
}

function isEmpty(record: Record<string, string>): boolean {
  for (const _ in record) return false;
  return true;
}

/** A copy of the annotations; undefined when there are none. */
function copyOrNone(annotations: Record<string, string>): Record<string, string> | undefined {
  return isEmpty(annotations) ? undefined : { ...annotations };
}

/** A successful answer's status, or a failure's in kube's metav1.Status words. */
export function responseStatusOf(
  code: number,
  failure?: { message: string; reason: string },
): ResponseStatus {
  if (!failure || code < 400) return successStatus(code);
  return {
    metadata: {},
    status: "Failure",
    message: failure.message,
    reason: failure.reason,
    code,
  };
}

/** A success's status, one frozen object per code: its text is made once (event_json.ts). */
const successStatuses = new Map<number, ResponseStatus>();

function successStatus(code: number): ResponseStatus {
  let status = successStatuses.get(code);
  if (status === undefined) {
    if (!Number.isInteger(code) || code < 100 || code > 599) return { metadata: {}, code };
    status = Object.freeze({ metadata: Object.freeze({}), code });
    successStatuses.set(code, status);
  }
  return status;
}

/** The client and the proxies it came through: `X-Forwarded-For`'s entries, then the
 * connection's address (when not already last), as kube's SourceIPs. */
export function sourceIPsOf(forwardedFor: string | null, remote: string | undefined): string[] {
  // The common case, a client without proxies: one literal, not a grown array.
  if (!forwardedFor) return remote ? [remote] : [];
  const ips: string[] = [];
  for (const part of forwardedFor.split(",")) {
    const ip = part.trim();
    if (ip !== "") ips.push(ip);
  }
  if (remote && ips[ips.length - 1] !== remote) ips.push(remote);
  return ips;
}

/** An object without `metadata.managedFields` (and a list's items without theirs); the input
 * is not changed. */
export function withoutManagedFields(obj: unknown): unknown {
  if (!obj || typeof obj !== "object" || Array.isArray(obj)) return obj;
  const o = obj as Record<string, unknown>;
  let out = o;
  const meta = o.metadata as Record<string, unknown> | undefined;
  if (meta && typeof meta === "object" && "managedFields" in meta) {
    const { managedFields: _, ...rest } = meta;
    out = { ...o, metadata: rest };
  }
  if (Array.isArray(o.items)) {
    out = { ...out, items: o.items.map(withoutManagedFields) };
  }
  return out;
}

/** "000" to "999". */
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, "0"));
/** The second `secondPrefix` is of (ms since the epoch ÷ 1000), and its RFC 3339 text up to
 * the fraction: `2026-11-27T10:00:00.`. */
let lastSecond = NaN;
let secondPrefix = "";

/** Now, as kube's metav1.MicroTime: `2026-11-27T10:00:00.123456Z`. */
export function microTime(): string {
  const t = performance.timeOrigin + performance.now();
  return formatMicro(t);
}

/** A time in milliseconds (with a fraction) as RFC 3339 with six fraction digits. */
export function formatMicro(t: number): string {
  const ms = Math.floor(t);
  const micro = Math.min(999, Math.floor((t - ms) * 1000));
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    // Once a second, not once a millisecond: at thousands of events a second that was a
    // Date and its text for nearly every timestamp.
    lastSecond = second;
    secondPrefix = new Date(second * 1000).toISOString().slice(0, 20);
  }
  return `${secondPrefix}${THREE_DIGITS[ms - second * 1000]}${THREE_DIGITS[micro]}Z`;
}
