/**
 * The nesting limit of request bodies. Decoded bodies are walked recursively further on
 * (validation, managed fields, patches, encoding), so a body nested deeper than the stack
 * allows must be refused while it is still text, before anything walks it.
 */

/**
 * The deepest nesting of objects and arrays (maps and sequences in YAML) a request body, or
 * the result of a patch, may have; the outermost object is level 1. Kube's JSON and YAML
 * decoders allow 10000, but here the recursive walks after decoding (and js-yaml's parser)
 * run out of stack between 2000 and 3000 levels (measured with a custom resource that keeps
 * unknown fields): 1000 leaves room, and no real object comes near it.
 */
export const MAX_NESTING_DEPTH = 1000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether a JSON text nests deeper than {@link MAX_NESTING_DEPTH}: one pass over the text,
 * strings skipped. The text need not be valid JSON (the parser judges that).
 *
 * @example
 * ```ts
 * jsonTooDeep("[".repeat(10001)); // true
 * ```
 */
export function jsonTooDeep(text: string, limit = MAX_NESTING_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) { // { [
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) { // } ]
      depth--;
    } else if (c === QUOTE) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    }
  }
  return false;
}

/** Whether a decoded value nests deeper than `limit`; without recursion. */
export function valueTooDeep(value: unknown, limit = MAX_NESTING_DEPTH): boolean {
  if (value === null || typeof value !== "object") return false;
  const stack: [object, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (depth > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return false;
}
