/**
 * The W3C `traceparent` header (Trace Context, level 1): `00-<trace id>-<parent id>-<flags>`,
 * lower-case hex. Parsed as the recommendation says: a version other than `00` is read by
 * its first four fields (a later version only appends), `ff` is invalid, and all-zero ids
 * are invalid. An invalid header is as if there were none.
 *
 * @module
 */

/** The fields of a valid `traceparent`. */
export interface TraceParent {
  /** 32 lower-case hex digits, not all zero. */
  traceId: string;
  /** 16 lower-case hex digits, not all zero. */
  spanId: string;
  /** Whether the caller sampled the trace (flag bit 0). */
  sampled: boolean;
}

const HEADER = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/** The parsed header, or undefined when it is absent or invalid. */
export function parseTraceParent(header: string | null | undefined): TraceParent | undefined {
  if (!header) return undefined;
  const m = HEADER.exec(header.trim());
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m;
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

/** The header for a span. */
export function formatTraceParent(p: TraceParent): string {
  return `00-${p.traceId}-${p.spanId}-${p.sampled ? "01" : "00"}`;
}
