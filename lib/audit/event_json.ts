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
 *
 * @module
 */

import type { UserInfo } from "../api/mod.ts";
import type { AuditEvent } from "./event.ts";

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

function value(v: unknown): string {
  return v instanceof RawJson ? v.text : JSON.stringify(v);
}

/** `JSON.stringify(ev)`. */
export function eventJson(ev: AuditEvent): string {
  let s = `{"kind":"Event","apiVersion":${str(ev.apiVersion)},"level":${str(ev.level)}` +
    `,"auditID":${str(ev.auditID)},"stage":${str(ev.stage)}` +
    `,"requestURI":${str(ev.requestURI)},"verb":${str(ev.verb)}` +
    `,"user":${userJson(ev.user)}`;
  if (ev.impersonatedUser !== undefined) {
    s += `,"impersonatedUser":${userJson(ev.impersonatedUser)}`;
  }
  s += `,"sourceIPs":${JSON.stringify(ev.sourceIPs)}`;
  if (ev.userAgent !== undefined) s += `,"userAgent":${str(ev.userAgent)}`;
  if (ev.objectRef !== undefined) s += `,"objectRef":${JSON.stringify(ev.objectRef)}`;
  if (ev.responseStatus !== undefined) {
    s += `,"responseStatus":${JSON.stringify(ev.responseStatus)}`;
  }
  if (ev.requestObject !== undefined) s += `,"requestObject":${value(ev.requestObject)}`;
  if (ev.responseObject !== undefined) s += `,"responseObject":${value(ev.responseObject)}`;
  s += `,"requestReceivedTimestamp":${str(ev.requestReceivedTimestamp)}` +
    `,"stageTimestamp":${str(ev.stageTimestamp)}`;
  if (ev.annotations !== undefined) s += `,"annotations":${JSON.stringify(ev.annotations)}`;
  return s + "}";
}
