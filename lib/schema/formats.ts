/**
 * Formats and string measures that validation checks, in Kubernetes' terms: standard padded
 * base64 (`format: byte`), RFC 3339 `date-time` as `metav1.Time` parses it, code-point length
 * (Go's rune count, for `maxLength` and `minLength`) and `pattern` compiled as JavaScript can.
 *
 * @module
 */

const B64 = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") {
  B64[c.charCodeAt(0)] = 1;
}

/**
 * Checks standard, padded base64 (what Go's JSON decoder expects for `[]byte`; CR and LF are
 * ignored). Returns -1 when valid, else the offset of the first offending byte.
 */
export function base64ErrorOffset(s: string): number {
  let n = 0; // data characters seen
  let i = 0;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 10 || c === 13) continue;
    if (c < 128 && B64[c]) {
      n++;
      continue;
    }
    if (c !== 61 /* = */) return i;
    // Padding: only after 2 or 3 data characters of a quantum, and it must complete it.
    const rem = n % 4;
    if (rem < 2) return i;
    let pads = 1;
    for (i++; i < s.length; i++) {
      const d = s.charCodeAt(i);
      if (d === 10 || d === 13) continue;
      if (d === 61 && rem + pads < 4) {
        pads++;
        continue;
      }
      return i;
    }
    return rem + pads === 4 ? -1 : s.length;
  }
  return n % 4 === 0 ? -1 : s.length;
}

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** RFC 3339 `date-time` as Kubernetes parses `metav1.Time` (upper-case `T` and `Z`). */
export function isDateTime(s: string): boolean {
  const m = DATE_TIME.exec(s);
  if (!m) return false;
  const year = +m[1], month = +m[2], day = +m[3];
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  if (day > days) return false;
  if (+m[4] > 23 || +m[5] > 59 || +m[6] > 59) return false;
  if (m[7] && (+m[8] > 23 || +m[9] > 59)) return false;
  return true;
}

/** Counts code points, as Go's `utf8.RuneCountInString` does. */
export function runeCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Compiles a `pattern` as a Unicode regular expression; undefined when JavaScript cannot. */
export function compilePattern(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, "u");
  } catch {
    try {
      return new RegExp(pattern);
    } catch {
      return undefined;
    }
  }
}
