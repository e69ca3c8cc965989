/**
 * The `Warning` headers of an answer, limited as kube limits them: duplicates go; all of them
 * are kept whole while their total stays within 4,096 characters; past that, each is cut to 256
 * characters, and those that would still pass the total are dropped.
 */

const TOTAL_RUNES = 4 * 1024;
const ITEM_RUNES = 256;

export function limitWarnings(warnings: readonly string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  let total = 0;
  let truncating = false;
  for (const raw of warnings) {
    const w = raw.trim();
    if (!w || seen.has(w)) continue;
    seen.add(w);
    let text = [...w];
    if (!truncating && total + text.length > TOTAL_RUNES) {
      truncating = true;
      total = 0;
      for (let i = 0; i < out.length; i++) {
        out[i] = [...out[i]].slice(0, ITEM_RUNES).join("");
        total += [...out[i]].length;
      }
    }
    if (truncating) text = text.slice(0, ITEM_RUNES);
    if (total + text.length > TOTAL_RUNES) continue;
    out.push(text.join(""));
    total += text.length;
  }
  return out;
}
