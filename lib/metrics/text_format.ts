/**
 * Pieces of the Prometheus text exposition format 0.0.4: numbers as Go's client writes them,
 * escaped label values and help text.
 */

/** The Content-Type of the text format. */
export const TEXT_FORMAT_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * A number as Go's `strconv.FormatFloat(v, 'g', -1, 64)` writes it, which is how kube's
 * client writes values and `le` bounds: `0.005`, `100000`, `1e+06`, `+Inf`. Prometheus reads
 * any float, but a query on `le="1e+06"` has to match the text kube would have sent.
 */
export function formatValue(v: number): string {
  if (Number.isInteger(v) && Math.abs(v) < 1e6) return String(v);
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  if (Number.isNaN(v)) return "NaN";
  const [mantissa, exp] = v.toExponential().split("e");
  const e = Number(exp);
  // Go's shortest %g switches to the exponent form below 1e-4 and from 1e+06 on.
  if (e < -4 || e >= 6) {
    return `${mantissa}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }
  return String(v);
}

/** A label value inside double quotes: backslash, quote and newline escaped. */
export function escapeLabelValue(v: string): string {
  return /[\\"\n]/.test(v) ? v.replace(/[\\"\n]/g, (c) => c === "\n" ? "\\n" : `\\${c}`) : v;
}

/** Help text: backslash and newline escaped. */
export function escapeHelp(v: string): string {
  return v.replace(/[\\\n]/g, (c) => c === "\n" ? "\\n" : "\\\\");
}

/** `{a="x",b="y"}` for the given names and values ("" when there are none). */
export function labelSet(names: readonly string[], values: readonly string[]): string {
  if (names.length === 0) return "";
  let out = "{";
  for (let i = 0; i < names.length; i++) {
    if (i > 0) out += ",";
    out += `${names[i]}="${escapeLabelValue(values[i])}"`;
  }
  return out + "}";
}
