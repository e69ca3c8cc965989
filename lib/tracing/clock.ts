/** Span times: milliseconds since the epoch with sub-millisecond precision (OTel's input). */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}
