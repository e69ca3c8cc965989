/**
 * Sets of field paths, as server-side apply tracks ownership, and their wire form `FieldsV1`.
 *
 * A path is a list of path elements, each written as Kubernetes writes them in FieldsV1:
 * `f:<field>` (a struct field or map key), `k:<JSON of the key fields>` (an item of a
 * list-map), `v:<JSON value>` (a member of a set), `i:<index>` (a list position). A set is a
 * tree: each node says whether the path ending there is itself a member (`"."` on the wire
 * when the node also has children) and holds its children by element.
 */

export class FieldSet {
  /** The path ending at this node is a member of the set. */
  member = false;
  readonly children = new Map<string, FieldSet>();

  /** The child for `element`, created when missing. */
  child(element: string): FieldSet {
    let c = this.children.get(element);
    if (!c) this.children.set(element, c = new FieldSet());
    return c;
  }

  /** Inserts `path` (relative to this node) as a member. */
  insert(path: readonly string[]): void {
    this.node(path).member = true;
  }

  /** The node at `path` (relative to this one), created when missing. */
  node(path: readonly string[]): FieldSet {
    return path.reduce((node: FieldSet, el) => node.child(el), this);
  }

  has(path: readonly string[]): boolean {
    const node = path.reduce(
      (node: FieldSet | undefined, el) => node?.children.get(el),
      this,
    );
    return node?.member ?? false;
  }

  isEmpty(): boolean {
    if (this.member) return false;
    for (const c of this.children.values()) if (!c.isEmpty()) return false;
    return true;
  }

  clone(): FieldSet {
    const out = new FieldSet();
    out.member = this.member;
    for (const [k, c] of this.children) out.children.set(k, c.clone());
    return out;
  }

  union(other: FieldSet): FieldSet {
    const out = this.clone();
    out.#addAll(other);
    return out;
  }

  /** Adds every member of `other` to this set, in place (for sets nothing else holds). */
  merge(other: FieldSet): this {
    this.#addAll(other);
    return this;
  }

  #addAll(other: FieldSet): void {
    if (other.member) this.member = true;
    for (const [k, c] of other.children) this.child(k).#addAll(c);
  }

  /** The members of this set that are not members of `other`. */
  difference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    out.member = this.member && !other.member;
    for (const [k, c] of this.children) {
      const o = other.children.get(k);
      const d = o ? c.difference(o) : c.clone();
      if (!d.isEmpty()) out.children.set(k, d);
    }
    return out;
  }

  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    out.member = this.member && other.member;
    for (const [k, c] of this.children) {
      const o = other.children.get(k);
      if (!o) continue;
      const i = c.intersection(o);
      if (!i.isEmpty()) out.children.set(k, i);
    }
    return out;
  }

  /** Every member path, depth first. */
  *paths(prefix: string[] = []): Generator<string[]> {
    if (this.member) yield prefix;
    for (const [k, c] of this.children) yield* c.paths([...prefix, k]);
  }

  equals(other: FieldSet): boolean {
    if (this.member !== other.member) return false;
    const mine = [...this.children].filter(([, c]) => !c.isEmpty());
    const theirs = [...other.children].filter(([, c]) => !c.isEmpty());
    if (mine.length !== theirs.length) return false;
    for (const [k, c] of mine) {
      const o = other.children.get(k);
      if (!o || !c.equals(o)) return false;
    }
    return true;
  }

  /** The FieldsV1 object: `"."` first, then elements by kind (f, k, v, i), each sorted. */
  toFieldsV1(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (this.member && hasChildMembers(this)) out["."] = {};
    const keys = [...this.children.keys()].filter((k) => !this.children.get(k)!.isEmpty());
    keys.sort(compareElements);
    for (const k of keys) {
      const c = this.children.get(k)!;
      out[k] = hasChildMembers(c) ? c.toFieldsV1() : {};
    }
    return out;
  }

  /** Reads a FieldsV1 object; throws an Error naming the first malformed key. */
  static fromFieldsV1(v: unknown): FieldSet {
    const out = new FieldSet();
    readInto(out, v, "");
    return out;
  }
}

function hasChildMembers(s: FieldSet): boolean {
  for (const c of s.children.values()) if (!c.isEmpty()) return true;
  return false;
}

const KIND_ORDER: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

function compareElements(a: string, b: string): number {
  const ka = KIND_ORDER[a[0]] ?? 4;
  const kb = KIND_ORDER[b[0]] ?? 4;
  if (ka !== kb) return ka - kb;
  return a < b ? -1 : a > b ? 1 : 0;
}

function readInto(node: FieldSet, v: unknown, where: string): void {
  if (!v || typeof v !== "object" || Array.isArray(v)) {
    throw new Error(`${where || "fieldsV1"}: expected an object`);
  }
  const entries = Object.entries(v as Record<string, unknown>);
  if (!entries.length) {
    node.member = true;
    return;
  }
  for (const [key, child] of entries) {
    if (key === ".") {
      node.member = true;
      continue;
    }
    const el = canonicalElement(key);
    readInto(node.child(el), child, `${where}${key}`);
  }
}

/** The element in canonical form (JSON re-encoded with sorted keys); throws when malformed. */
function canonicalElement(key: string): string {
  const kind = key.slice(0, 2);
  const rest = key.slice(2);
  switch (kind) {
    case "f:":
      return key;
    case "i:":
      if (!/^(0|[1-9][0-9]*)$/.test(rest)) throw new Error(`invalid index in ${key}`);
      return key;
    case "k:": {
      const parsed = parseJson(rest, key);
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
        throw new Error(`invalid key in ${key}`);
      }
      return keyElement(parsed as Record<string, unknown>);
    }
    case "v:":
      return valueElement(parseJson(rest, key));
    default:
      throw new Error(`unknown path element ${JSON.stringify(key)}`);
  }
}

function parseJson(text: string, key: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`invalid JSON in ${key}`);
  }
}

/** JSON with object keys sorted, as the key and value elements are written. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
}

export function fieldElement(name: string): string {
  return `f:${name}`;
}

export function keyElement(fields: Record<string, unknown>): string {
  return `k:${canonicalJson(fields)}`;
}

export function valueElement(value: unknown): string {
  return `v:${canonicalJson(value)}`;
}

export function indexElement(i: number): string {
  return `i:${i}`;
}

/**
 * A path as Kubernetes prints it in conflicts: `.spec.list[name="a"].value`,
 * `.spec.set[="a"]`, `.spec.ports[port=80,protocol="TCP"]`, `.items[3]`.
 */
export function pathString(path: readonly string[]): string {
  let out = "";
  for (const el of path) {
    const rest = el.slice(2);
    switch (el[0]) {
      case "f":
        out += `.${rest}`;
        break;
      case "k": {
        const fields = JSON.parse(rest) as Record<string, unknown>;
        const parts = Object.keys(fields).sort().map((k) => `${k}=${canonicalJson(fields[k])}`);
        out += `[${parts.join(",")}]`;
        break;
      }
      case "v":
        out += `[=${rest}]`;
        break;
      default:
        out += `[${rest}]`;
    }
  }
  return out;
}
