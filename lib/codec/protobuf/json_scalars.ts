/**
 * The JSON text of the protobuf values that JSON spells differently: RFC 3339 times (`Time`,
 * `MicroTime`: seconds and nanos on the wire) and base64 bytes. Both ways, with small caches
 * for times (a list's objects share few distinct timestamps).
 */

import { fail } from "./errors.ts";
import type { Reader } from "./wire.ts";

/** Parsed times by their text: a list's objects share few distinct timestamps. */
const timeCache = new Map<string, { seconds: number; nanos: number }>();

/** The seconds and nanos of an RFC 3339 time; throws an `EncodeFailure` when it is not one. */
export function parseTimeCached(s: string): { seconds: number; nanos: number } {
  let t = timeCache.get(s);
  if (t === undefined) {
    t = parseTime(s);
    if (timeCache.size >= 4096) timeCache.clear();
    timeCache.set(s, t);
  }
  return t;
}

const TIME_RE =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

function parseTime(s: string): { seconds: number; nanos: number } {
  const m = TIME_RE.exec(s);
  if (!m) fail("an RFC 3339 time", s);
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map(Number);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59) {
    fail("an RFC 3339 time", s);
  }
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, sec, 0);
  if (date.getUTCDate() !== d) fail("an RFC 3339 time", s);
  let seconds = date.getTime() / 1000;
  if (m[9]) seconds -= (m[9] === "+" ? 1 : -1) * (Number(m[10]) * 3600 + Number(m[11]) * 60);
  const nanos = m[7] ? Number(m[7].padEnd(9, "0")) : 0;
  return { seconds, nanos };
}

/** Formatted Times by their seconds: a list's objects share few distinct timestamps. */
const formattedTimes = new Map<number, string>();

/**
 * RFC 3339 in UTC: second precision for Time (`nanos` undefined), microseconds for MicroTime
 * (as kube's JSON). Fails on the reader when the time is out of range.
 */
export function formatTime(seconds: number, nanos: number | undefined, r: Reader): string {
  if (nanos === undefined) {
    let s = formattedTimes.get(seconds);
    if (s === undefined) {
      s = formatTimeUncached(seconds, undefined, r);
      if (formattedTimes.size >= 4096) formattedTimes.clear();
      formattedTimes.set(seconds, s);
    }
    return s;
  }
  return formatTimeUncached(seconds, nanos, r);
}

function formatTimeUncached(seconds: number, nanos: number | undefined, r: Reader): string {
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime()) || date.getUTCFullYear() > 9999 || date.getUTCFullYear() < 0) {
    r.fail(`time ${seconds} out of range`);
  }
  const base = date.toISOString().slice(0, 19);
  if (nanos === undefined) return `${base}Z`;
  return `${base}.${String(Math.floor(nanos / 1000)).padStart(6, "0")}Z`;
}

/** Bytes as base64 (`[]byte` in JSON). */
export function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

/** The bytes of a base64 string; throws an `EncodeFailure` when it is not one. */
export function fromBase64(s: string): Uint8Array {
  let bin: string;
  try {
    bin = atob(s);
  } catch {
    fail("a base64 string", s);
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
