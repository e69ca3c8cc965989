/**
 * An audit event as JSON text, the same text `JSON.stringify` makes of it, made with less work:
 * every log line and webhook batch is made here, twice per audited request.
 *
 * - Fields are written in the event's order, the ones left undefined skipped (V8's generic
 *   serializer is several times slower on an event than on the same data without them).
 * - The user's JSON is kept per user object: authenticators hand out the same object for the
 *   same credentials, and user objects are never changed once made.
 * - A request or response body the server already holds as JSON text goes in as that text
 *   ({@link RawJson}), not parsed and written again.
 * - The fields that are the same at every stage of a request (its ID, URI, verb, user, source,
 *   arrival) are written once, at its first event, and reused at the next ({@link StableText}).
 *
 * @module
 */

import { ALL_VERBS, type UserInfo } from "../api/mod.ts";
import {
  AUDIT_EVENT_API_VERSION,
  type AuditEvent,
  type ObjectReference,
  type ResponseStatus,
  STABLE_TEXT,
} from "./event.ts";
import { LEVELS, type Stage } from "./policy.ts";

/**
 * A value that is already JSON text (one line: no raw newlines). `eventJson` copies the text;
 * `JSON.stringify` (through `toJSON`) and readers of the event see the parsed value.
 */
export class RawJson {
  #parsed: unknown;
  #isParsed = false;
  constructor(readonly text: string) {}

  /** The value the text stands for. */
  value(): unknown {
    if (!this.#isParsed) {
      this.#parsed = JSON.parse(this.text);
      this.#isParsed = true;
    }
    return this.#parsed;
  }

  toJSON(): unknown {
    return this.value();
  }
}

/** The value an event field holds, as seen by readers: a {@link RawJson}'s parsed value. */
export function plainValue(v: unknown): unknown {
  return v instanceof RawJson ? v.value() : v;
}

const userJsonCache = new WeakMap<UserInfo, string>();

function userJson(user: UserInfo): string {
  let s = userJsonCache.get(user);
  if (s === undefined) {
    s = JSON.stringify(user);
    userJsonCache.set(user, s);
  }
  return s;
}

/** Characters JSON.stringify writes escaped: quotes, backslashes, controls and surrogates
 * (a lone one is escaped; a string with a pair goes to JSON.stringify too, which keeps it). */
// deno-lint-ignore no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `JSON.stringify(s)` of a string: most strings of an event need no escape, and quoting them
 * directly costs a third of the call. */
function str(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/** The quoted text of the words most events carry: looked up, not checked for escapes. */
const QUOTED_WORDS = new Map<string, string>(
  [AUDIT_EVENT_API_VERSION, ...LEVELS, ...ALL_VERBS].map((w) => [w, `"${w}"`]),
);

/** `JSON.stringify(w)` of a word that is usually one of a few. */
function word(w: string): string {
  return QUOTED_WORDS.get(w) ?? str(w);
}

function value(v: unknown): string {
  return v instanceof RawJson ? v.text : JSON.stringify(v);
}

/**
 * `s` as one piece of text. V8 keeps a string made with `+` as a tree of its parts, and every
 * copy of it (into each of the request's lines, then into the batch) walks the tree again:
 * several times the cost of copying flat text. `trim` flattens it, and changes nothing else in
 * JSON text, which neither starts nor ends with white space.
 */
function flat(s: string): string {
  return s.trim();
}

/**
 * The text of the fields an event's stages share, with the values it was made of: it is used
 * again only while every one of them is still the event's (a copy may have been changed).
 * The user and the source addresses are compared as objects: the filter makes them once per
 * request and never changes them.
 */
class StableText {
  readonly apiVersion: string;
  readonly level: string;
  readonly auditID: string;
  readonly requestURI: string;
  readonly verb: string;
  readonly user: UserInfo;
  readonly sourceIPs: string[];
  readonly userAgent: string | undefined;
  readonly received: string;
  /** `{"kind":…,"apiVersion":…,"level":…,"auditID":…,"stage":`, then the stage. */
  readonly head: string;
  /** `,"requestURI":…,"verb":…,"user":…`, then the impersonated user, if any. */
  readonly identity: string;
  /** `,"sourceIPs":…` and the user agent's field. */
  readonly origin: string;
  /** {@link identity} and {@link origin}, for an event without an impersonated user. */
  readonly identityAndOrigin: string;
  /** `,"requestReceivedTimestamp":…,"stageTimestamp":`, then the stage's time. */
  readonly timestamps: string;
  /** The time of arrival, quoted: the stage's time too at RequestReceived. */
  readonly receivedText: string;
  /** The last object reference written, a copy of its fields, and its field's text. */
  #ref: ObjectReference | undefined;
  #refFields: ObjectReference | undefined;
  #refText = "";

  constructor(ev: AuditEvent) {
    this.apiVersion = ev.apiVersion;
    this.level = ev.level;
    this.auditID = ev.auditID;
    this.requestURI = ev.requestURI;
    this.verb = ev.verb;
    this.user = ev.user;
    this.sourceIPs = ev.sourceIPs;
    this.userAgent = ev.userAgent;
    this.received = ev.requestReceivedTimestamp;
    this.head = flat(
      `{"kind":"Event","apiVersion":${word(ev.apiVersion)},"level":${word(ev.level)}` +
        `,"auditID":${str(ev.auditID)},"stage":`,
    );
    this.identity = `,"requestURI":${str(ev.requestURI)},"verb":${word(ev.verb)}` +
      `,"user":${userJson(ev.user)}`;
    this.origin = `,"sourceIPs":${JSON.stringify(ev.sourceIPs)}` +
      (ev.userAgent !== undefined ? `,"userAgent":${str(ev.userAgent)}` : "");
    this.identityAndOrigin = flat(this.identity + this.origin);
    this.receivedText = str(ev.requestReceivedTimestamp);
    this.timestamps = flat(`,"requestReceivedTimestamp":${this.receivedText},"stageTimestamp":`);
  }

  /** Whether the text is still that of `ev`'s fields. */
  fits(ev: AuditEvent): boolean {
    return ev.auditID === this.auditID && ev.requestURI === this.requestURI &&
      ev.user === this.user && ev.sourceIPs === this.sourceIPs &&
      ev.userAgent === this.userAgent && ev.verb === this.verb && ev.level === this.level &&
      ev.requestReceivedTimestamp === this.received && ev.apiVersion === this.apiVersion;
  }

  /** `,"objectRef":…`: the text made for the previous stage while the reference is the same
   * object with the same fields (a create's gets its name between stages). */
  objectRefField(ref: ObjectReference): string {
    const was = this.#refFields;
    if (ref !== this.#ref || was === undefined || !sameFields(ref, was)) {
      this.#ref = ref;
      this.#refFields = { ...ref };
      this.#refText = flat(`,"objectRef":${JSON.stringify(ref)}`);
    }
    return this.#refText;
  }
}

function sameFields(a: ObjectReference, b: ObjectReference): boolean {
  return a.name === b.name && a.namespace === b.namespace && a.resource === b.resource &&
    a.apiGroup === b.apiGroup && a.apiVersion === b.apiVersion &&
    a.subresource === b.subresource && a.uid === b.uid && a.resourceVersion === b.resourceVersion;
}

/** The shared fields' text for `ev`: its request's, when made already and still true. */
function stableText(ev: AuditEvent): StableText {
  const holder = ev[STABLE_TEXT];
  const kept = holder?.text as StableText | undefined;
  if (kept !== undefined && kept.fits(ev)) return kept;
  const made = new StableText(ev);
  if (holder !== undefined && kept === undefined) holder.text = made;
  return made;
}

/** The text of response statuses that cannot change (frozen, as a success's are). */
const frozenStatusText = new WeakMap<ResponseStatus, string>();

function statusField(status: ResponseStatus): string {
  let text = frozenStatusText.get(status);
  if (text === undefined) {
    text = `,"responseStatus":${JSON.stringify(status)}`;
    if (Object.isFrozen(status) && Object.isFrozen(status.metadata)) {
      frozenStatusText.set(status, text);
    }
  }
  return text;
}

const STAGE_TEXT: Record<Stage, string> = {
  RequestReceived: '"RequestReceived"',
  ResponseStarted: '"ResponseStarted"',
  ResponseComplete: '"ResponseComplete"',
  Panic: '"Panic"',
};

/** `JSON.stringify(ev)`. */
export function eventJson(ev: AuditEvent): string {
  const t = stableText(ev);
  let s = t.head + (STAGE_TEXT[ev.stage] ?? str(ev.stage));
  s += ev.impersonatedUser === undefined
    ? t.identityAndOrigin
    : t.identity + `,"impersonatedUser":${userJson(ev.impersonatedUser)}` + t.origin;
  if (ev.objectRef !== undefined) s += t.objectRefField(ev.objectRef);
  if (ev.responseStatus !== undefined) s += statusField(ev.responseStatus);
  if (ev.requestObject !== undefined) s += `,"requestObject":${value(ev.requestObject)}`;
  if (ev.responseObject !== undefined) s += `,"responseObject":${value(ev.responseObject)}`;
  s += t.timestamps +
    (ev.stageTimestamp === t.received ? t.receivedText : str(ev.stageTimestamp));
  if (ev.annotations !== undefined) s += `,"annotations":${JSON.stringify(ev.annotations)}`;
  return s + "}";
}
