/** The source of wall-clock time, a seam tests can fake: milliseconds since the epoch. */
export interface Clock {
  now(): number;
}

/** `Date.now()`. */
export const systemClock: Clock = { now: () => Date.now() };

/** RFC 3339 with second precision, as kube's metav1.Time: `2024-05-01T12:00:00Z`. A number is
 * milliseconds since the epoch (what a {@link Clock} tells). */
export function rfc3339(time: Date | number): string {
  // Every write stamps the time; within one second the text is the same.
  const second = Math.floor((typeof time === "number" ? time : time.getTime()) / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    const date = typeof time === "number" ? new Date(time) : time;
    lastText = date.toISOString().replace(/\.\d{3}Z$/, "Z");
  }
  return lastText;
}

let lastSecond = NaN;
let lastText = "";

/** RFC 3339 with microseconds, as kube's metav1.MicroTime: `2024-05-01T12:00:00.123456Z`. */
export function rfc3339Micro(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** kube's short human duration: `45s`, `3m12s`, `5h`, `12d`, `3y45d`. */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (d < 365 * 2) return `${d}d`;
  const y = Math.floor(d / 365);
  if (y < 8) return d % 365 === 0 ? `${y}y` : `${y}y${d % 365}d`;
  return `${y}y`;
}
