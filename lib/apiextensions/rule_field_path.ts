/**
 * A validation rule's `fieldPath`: a relative JSON path from the rule's schema node to one of
 * its fields (`.spec.replicas`, `.labels['app.kubernetes.io/name']`), without list indexes.
 * It must name fields the schema declares (or keys of a map); the error of a failed rule is
 * then reported at that field, normalized as field paths print (`spec.labels[app]`).
 */

// deno-lint-ignore no-explicit-any
type Json = any;

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The tokens of a path: `.`, `[`, `]`, single-quoted strings and names. */
function tokens(path: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < path.length) {
    const c = path[i];
    if (c === "." || c === "[" || c === "]") {
      out.push(c);
      i++;
    } else if (c === "'") {
      let j = i + 1;
      while (j < path.length && !(path[j] === "'" && path[j - 1] !== "\\")) j++;
      out.push(path.slice(i, j + 1));
      i = j + 1;
    } else {
      let j = i;
      while (j < path.length && !".[]".includes(path[j])) j++;
      out.push(path.slice(i, j));
      i = j;
    }
  }
  return out;
}

const ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "'": "'",
  "\\": "\\",
};

function unquote(s: string): string {
  return s.replace(/\\(.)/g, (_, c: string) => {
    const out = ESCAPES[c];
    if (out === undefined) throw new Error(`invalid string literal: invalid escape char \\${c}`);
    return out;
  });
}

/**
 * The field path `jsonPath` names under `schema`, as field paths print; throws an Error
 * saying why it does not name a field.
 */
export function ruleFieldPath(jsonPath: string, schema: unknown): string {
  let node: Json = schema;
  let out = "";
  const step = (name: string) => {
    if (isObject(node?.properties)) {
      if (!Object.hasOwn(node.properties, name)) throw new Error("does not refer to a valid field");
      out += out ? `.${name}` : name;
      node = node.properties[name];
    } else if (isObject(node?.additionalProperties)) {
      out += `[${name}]`;
      node = node.additionalProperties;
    } else {
      throw new Error("does not refer to a valid field");
    }
  };
  const toks = tokens(jsonPath);
  for (let i = 0; i < toks.length; i++) {
    const tok = toks[i];
    if (tok === ".") {
      const name = toks[++i];
      if (name === undefined) throw new Error("unexpected end of JSON path");
      step(name);
    } else if (tok === "[") {
      const quoted = toks[++i];
      if (quoted === undefined) throw new Error("unexpected end of JSON path");
      if (quoted.length < 2 || !quoted.startsWith("'") || !quoted.endsWith("'")) {
        throw new Error(`expected single quoted string but got ${quoted}`);
      }
      step(unquote(quoted.slice(1, -1)));
      const close = toks[++i];
      if (close === undefined) throw new Error("unexpected end of JSON path");
      if (close !== "]") throw new Error(`expected ] but got ${close}`);
    } else {
      throw new Error(`expected [ or . but got: ${tok}`);
    }
  }
  return out;
}

/** `child` under `parent` as field paths print (`spec` + `x` = `spec.x`; `[k]` attaches). */
export function childPath(parent: string, child: string): string {
  if (!parent) return child;
  if (!child) return parent;
  return child.startsWith("[") ? `${parent}${child}` : `${parent}.${child}`;
}
