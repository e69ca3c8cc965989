/**
 * YAML request bodies, decoded in time linear in their size. js-yaml's parser turns the text
 * into a flat list of events; one walk over them finds repeated keys (for field validation,
 * as `json_duplicates.ts` does for JSON) and counts what aliases expand to; then the value is
 * built from the same events, the last of repeated keys winning as in `JSON.parse`.
 *
 * The `yaml` package this replaces checked each key against every earlier key of its mapping
 * (quadratic: a 3 MiB body of many keys took over ten minutes).
 */

import {
  constructFromEvents,
  CORE_SCHEMA,
  type Event,
  EVENT_ID,
  getScalarValue,
  parseEvents,
  type ScalarEvent,
} from "js-yaml";
import { badRequest, MAX_NESTING_DEPTH, StatusError } from "../api/mod.ts";

/** A decoded YAML document and the keys its mappings repeat. */
export interface DecodedYaml {
  /** The document's value; `null` for a text with no document (only comments). */
  value: unknown;
  /** Paths of keys that occur twice in one mapping, in document order (`spec.ports[0].name`). */
  duplicateFields: string[];
}

/**
 * Decodes one YAML document (YAML 1.2, core schema). Malformed YAML, more than one document,
 * nesting deeper than {@link MAX_NESTING_DEPTH} and aliases that expand past the body's own
 * size are 400.
 *
 * @example
 * ```ts
 * decodeYaml("a: 1\na: 2\n"); // { value: { a: 2 }, duplicateFields: ["a"] }
 * ```
 */
export function decodeYaml(text: string): DecodedYaml {
  try {
    const events = parseEvents(text, { maxDepth: MAX_NESTING_DEPTH });
    const duplicateFields = walk(text, events);
    const docs = constructFromEvents(events, { source: text, json: true, schema: CORE_SCHEMA });
    if (docs.length > 1) throw yamlError("the body holds more than one YAML document");
    return { value: docs.length ? docs[0] : null, duplicateFields };
  } catch (err) {
    if (err instanceof StatusError) throw err;
    const message = (err as Error).message.split("\n")[0];
    // js-yaml's limit, and its own stack should a document nest past it another way.
    if (err instanceof RangeError || /exceeded maxDepth/.test(message)) {
      throw yamlError(`exceeded max depth of ${MAX_NESTING_DEPTH}`);
    }
    throw yamlError(message);
  }
}

function yamlError(why: string): StatusError {
  return badRequest(`error converting YAML to JSON: yaml: ${why}`);
}

interface Frame {
  /** Keys seen in this mapping; undefined for a sequence or document. */
  keys?: Set<string>;
  /** The path of this collection, e.g. `spec.containers[0]`. */
  path: string;
  /** For mappings: the next scalar is a key. */
  expectKey: boolean;
  /** For mappings: the key whose value comes next. */
  key: string;
  /** For sequences: the index of the next item. */
  index: number;
  /** Nodes in this collection so far, aliases counted as what they expand to. */
  size: number;
  anchor?: string;
  /** A collection used as a mapping key: its contents are no field. */
  isKey: boolean;
  /** The document around the top node (whose path is empty). */
  document?: boolean;
}

/**
 * The paths of repeated keys, in document order. Also refuses aliases that expand to more
 * nodes than the text holds events (or 10,000, the larger): nested aliases grow exponentially
 * ("billion laughs"), and everything after decoding would walk the expansion.
 */
function walk(text: string, events: Event[]): string[] {
  const found: string[] = [];
  const anchors = new Map<string, number>();
  const budget = Math.max(events.length, 10_000);
  let expanded = 0;
  const stack: Frame[] = [];
  const top = () => stack[stack.length - 1];
  /** A node of `size` nodes ends in the current collection: the next key, or the next item. */
  const completed = (size: number) => {
    const t = top();
    if (!t) return;
    t.size += size;
    if (t.keys) t.expectKey = !t.expectKey;
    else t.index++;
  };
  const open = (anchor: string | undefined, isMap: boolean) => {
    const t = top();
    const isKey = t.isKey || (t.keys !== undefined && t.expectKey);
    const path = t.document || isKey ? "" : t.keys ? join(t.path, t.key) : `${t.path}[${t.index}]`;
    stack.push({
      keys: isMap ? new Set() : undefined,
      path,
      expectKey: true,
      key: "",
      index: 0,
      size: 1,
      anchor,
      isKey,
    });
  };
  for (const ev of events) {
    switch (ev.type) {
      case EVENT_ID.DOCUMENT:
        stack.push({
          path: "",
          expectKey: false,
          key: "",
          index: 0,
          size: 0,
          isKey: false,
          document: true,
        });
        break;
      case EVENT_ID.MAPPING:
      case EVENT_ID.SEQUENCE:
        open(anchorOf(text, ev), ev.type === EVENT_ID.MAPPING);
        break;
      case EVENT_ID.SCALAR: {
        const t = top();
        if (t?.keys && t.expectKey && !t.isKey) {
          const key = getScalarValue(text, ev as ScalarEvent);
          if (t.keys.has(key)) found.push(join(t.path, key));
          else t.keys.add(key);
          t.key = key;
        }
        const anchor = anchorOf(text, ev);
        if (anchor !== undefined) anchors.set(anchor, 1);
        completed(1);
        break;
      }
      case EVENT_ID.ALIAS: {
        const size = anchors.get(text.slice(ev.anchorStart, ev.anchorEnd)) ?? 1;
        expanded += size;
        if (expanded > budget) {
          throw yamlError(`aliases expand to more than ${budget} nodes`);
        }
        const t = top();
        if (t?.keys && t.expectKey) t.key = "";
        completed(size);
        break;
      }
      case EVENT_ID.POP: {
        const done = stack.pop()!;
        if (done.anchor !== undefined) anchors.set(done.anchor, done.size);
        completed(done.size);
        break;
      }
    }
  }
  return found;
}

function anchorOf(text: string, ev: { anchorStart: number; anchorEnd: number }) {
  return ev.anchorStart < 0 ? undefined : text.slice(ev.anchorStart, ev.anchorEnd);
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}
