/**
 * Duplicate keys in a JSON text. `JSON.parse` keeps the last of two equal keys silently; kube's
 * strict decoding reports them (`duplicate field "metadata.name"`), so field validation needs
 * them found in the text. The text must be valid JSON (it is parsed first).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

interface Frame {
  /** Keys seen in this object; undefined for an array. */
  keys?: Set<string>;
  /** The path of this container, e.g. `spec.containers[0]`. */
  path: string;
  /** For arrays: the index of the next element. */
  index: number;
  /** For objects: the key whose value comes next. */
  key: string;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/**
 * Paths of keys that occur twice in the same object of `text`, in document order. `parsed` is
 * `JSON.parse(text)`: when its keys add up to the colons outside strings there is nothing to
 * find, which is cheap to know (the full scan is not).
 */
export function duplicateFields(text: string, parsed: unknown): string[] {
  if (colonsOutsideStrings(text) === countKeys(parsed)) return [];
  return scan(text);
}

/** One `:` per key of every object. */
function colonsOutsideStrings(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x3a) n++;
    else if (c === QUOTE) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    }
  }
  return n;
}

function countKeys(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  let n = 0;
  if (Array.isArray(value)) {
    for (const v of value) n += countKeys(v);
    return n;
  }
  for (const k in value) n += 1 + countKeys((value as Record<string, unknown>)[k]);
  return n;
}

function scan(text: string): string[] {
  const found: string[] = [];
  const stack: Frame[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Read the string; only keys matter.
      let j = i + 1;
      let escaped = false;
      for (; j < text.length; j++) {
        const d = text.charCodeAt(j);
        if (d === BACKSLASH) {
          escaped = true;
          j++;
        } else if (d === QUOTE) break;
      }
      if (expectKey) {
        const raw = text.slice(i, j + 1);
        const key = escaped ? JSON.parse(raw) as string : raw.slice(1, -1);
        const top = stack[stack.length - 1];
        if (top.keys!.has(key)) found.push(join(top.path, key));
        else top.keys!.add(key);
        top.key = key;
        expectKey = false;
      }
      i = j;
      continue;
    }
    switch (c) {
      case 0x7b: { // {
        stack.push({ keys: new Set(), path: childPath(stack), index: 0, key: "" });
        expectKey = true;
        break;
      }
      case 0x5b: // [
        stack.push({ path: childPath(stack), index: 0, key: "" });
        break;
      case 0x7d: // }
      case 0x5d: // ]
        stack.pop();
        expectKey = false;
        break;
      case 0x2c: { // ,
        const top = stack[stack.length - 1];
        if (top.keys) expectKey = true;
        else top.index++;
        break;
      }
    }
  }
  return found;
}

/** The path of a container that starts now, inside the current top of the stack. */
function childPath(stack: Frame[]): string {
  const top = stack[stack.length - 1];
  if (!top) return "";
  return top.keys ? join(top.path, top.key) : `${top.path}[${top.index}]`;
}
