/**
 * The schema-aware walks server-side apply makes over JSON values, following the merge rules
 * of the schema markers (see {@link FieldType}):
 *
 * - {@link fieldsOf}: the paths a value sets, as an applier owns them.
 * - {@link compare}: the paths added, modified and removed between two values, as an updater
 *   takes ownership of them.
 * - {@link mergeValues}: an apply configuration laid over the live object.
 * - {@link removePaths}: a value without the members of a set (whole subtrees).
 *
 * Granular structs and maps are walked key by key (`f:`), sets member by member (`v:`),
 * list-maps item by item (`k:`, keyed by `listMapKeys`, an omitted key field taking its schema
 * default). Scalars and atomic lists and maps are leaves. Values the schema does not describe
 * are `untyped`: maps granular, lists atomic.
 */

import { isJsonObject as isObject, jsonEqual as deepEqual } from "../api/mod.ts";
import { type FieldType, UNTYPED } from "../schema/mod.ts";
import { FieldSet, indexElement, keyElement, valueElement } from "./fieldset.ts";

type Json = unknown;
type JsonObject = Record<string, unknown>;

/** How a value is walked under its type. */
type Walk = "leaf" | "map" | "set" | "listmap";

function walkOf(t: FieldType, v: Json): Walk {
  if (isObject(v)) {
    if (t.shape === "untyped") return "map";
    if ((t.shape === "struct" || t.shape === "map") && t.mapType !== "atomic") return "map";
    return "leaf";
  }
  if (Array.isArray(v) && t.shape === "list") {
    if (t.listType === "set") return "set";
    if (t.listType === "map") return "listmap";
  }
  return "leaf";
}

/** The walk for a node where either side may be missing (`undefined`) or `null`. */
function walkOfPair(t: FieldType, l: Json, r: Json): Walk {
  const wl = l === undefined || l === null ? undefined : walkOf(t, l);
  const wr = r === undefined || r === null ? undefined : walkOf(t, r);
  if (wl && wr) return wl === wr ? wl : "leaf";
  return wl ?? wr ?? "leaf";
}

/** The type of field `key` of a map or struct; an undeclared field is untyped. */
export function fieldType(t: FieldType, key: string): FieldType {
  return t.field(key) ?? UNTYPED;
}

/** `key` is a field the struct's schema declares (not a map key or an unknown field). */
function declared(t: FieldType, key: string): boolean {
  return t.shape === "struct" && !!t.node?.properties && Object.hasOwn(t.node.properties, key);
}

/** The path element of a list item: its key fields (list-map) or its value (set). */
export function itemElement(t: FieldType, item: Json, index: number): string {
  if (t.listType === "set") return valueElement(item);
  if (!isObject(item)) return indexElement(index);
  const fields: JsonObject = {};
  const itemType = t.items ?? UNTYPED;
  for (const k of t.listMapKeys ?? []) {
    let v = item[k];
    if (v === undefined || v === null) v = itemType.field(k)?.defaultValue;
    if (v !== undefined && v !== null) fields[k] = v;
  }
  return keyElement(fields);
}

/** The items of a list by element, each with every position it holds (duplicates). */
function itemsByElement(t: FieldType, list: Json): Map<string, Json[]> {
  const out = new Map<string, Json[]>();
  if (!Array.isArray(list)) return out;
  list.forEach((item, i) => {
    const el = itemElement(t, item, i);
    const seen = out.get(el);
    if (seen) seen.push(item);
    else out.set(el, [item]);
  });
  return out;
}

/** The first element that appears twice in `list`, if any. */
export function duplicateElement(t: FieldType, list: Json[]): string | undefined {
  const seen = new Set<string>();
  for (let i = 0; i < list.length; i++) {
    const el = itemElement(t, list[i], i);
    if (seen.has(el)) return el;
    seen.add(el);
  }
  return undefined;
}

// ---- fieldsOf ----

/** The set an applier owns by applying `value`: its leaves, list items, map keys, and
 * struct fields set to `{}` or `null`; a struct with children is not itself owned. */
export function fieldsOf(value: Json, t: FieldType): FieldSet {
  const out = new FieldSet();
  collect(value, t, out);
  return out;
}

function collect(v: Json, t: FieldType, node: FieldSet): void {
  switch (walkOf(t, v)) {
    case "map": {
      const obj = v as JsonObject;
      for (const key of Object.keys(obj)) {
        const cv = obj[key];
        if (cv === undefined) continue;
        const ct = fieldType(t, key);
        const child = node.child(`f:${key}`);
        if (walkOf(ct, cv) === "leaf" || (isObject(cv) && !Object.keys(cv).length)) {
          child.member = true;
        } else {
          collect(cv, ct, child);
          if (!declared(t, key)) child.member = true;
        }
      }
      return;
    }
    case "set":
    case "listmap": {
      const items = t.items ?? UNTYPED;
      (v as Json[]).forEach((item, i) => {
        const child = node.child(itemElement(t, item, i));
        if (walkOf(items, item) !== "leaf") collect(item, items, child);
        child.member = true;
      });
      return;
    }
    case "leaf":
      node.member = true;
  }
}

// ---- compare ----

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** What changes from `lhs` to `rhs`: leaves added, modified and removed; a map or list that
 * did not exist before (or no longer exists) counts as added (removed) itself too. */
export function compare(lhs: Json, rhs: Json, t: FieldType): Comparison {
  const out: Comparison = {
    added: new FieldSet(),
    modified: new FieldSet(),
    removed: new FieldSet(),
  };
  compareAt(lhs, rhs, t, [], out);
  return out;
}

/** Compares at `path`, a stack the walk pushes to and pops from (copied only on insert). */
function compareAt(l: Json, r: Json, t: FieldType, path: string[], out: Comparison): void {
  if (l === undefined && r === undefined) return;
  // Only one side: the whole subtree is added (removed), walked without comparing.
  if (l === undefined) return onlyIn(r, t, out.added.node(path));
  if (r === undefined) return onlyIn(l, t, out.removed.node(path));
  const walk = walkOfPair(t, l, r);
  if (walk === "leaf" || (isEmptyContainer(l) && isEmptyContainer(r))) {
    if (!deepEqual(l, r)) out.modified.insert(path);
    return;
  }
  if (walk === "map") {
    const lo = isObject(l) ? l : {};
    const ro = isObject(r) ? r : {};
    for (const key of Object.keys(lo)) {
      path.push(`f:${key}`);
      compareAt(
        lo[key],
        Object.hasOwn(ro, key) ? ro[key] : undefined,
        fieldType(t, key),
        path,
        out,
      );
      path.pop();
    }
    for (const key of Object.keys(ro)) {
      if (Object.hasOwn(lo, key)) continue;
      path.push(`f:${key}`);
      compareAt(undefined, ro[key], fieldType(t, key), path, out);
      path.pop();
    }
    return;
  }
  const items = t.items ?? UNTYPED;
  const ls = itemsByElement(t, l);
  const rs = itemsByElement(t, r);
  const elements = new Set([...ls.keys(), ...rs.keys()]);
  for (const el of elements) {
    const li = ls.get(el) ?? [];
    const ri = rs.get(el) ?? [];
    path.push(el);
    if (li.length <= 1 && ri.length <= 1) {
      compareAt(li[0], ri[0], items, path, out);
    } else if (!deepEqual(li, ri)) {
      // Duplicated items are tracked only as a whole.
      if (!li.length) out.added.insert(path);
      else if (!ri.length) out.removed.insert(path);
      else out.modified.insert(path);
    }
    path.pop();
  }
}

/** What {@link compareAt} records for a value `v` present on one side only, into `node` (the
 * set's node at its path): the path itself and, through maps and lists, everything below. */
function onlyIn(v: Json, t: FieldType, node: FieldSet): void {
  node.member = true;
  const walk = v === null ? "leaf" : walkOf(t, v);
  if (walk === "leaf" || isEmptyContainer(v)) return;
  if (walk === "map") {
    const obj = v as JsonObject;
    for (const key of Object.keys(obj)) {
      const cv = obj[key];
      if (cv !== undefined) onlyIn(cv, fieldType(t, key), node.child(`f:${key}`));
    }
    return;
  }
  const items = t.items ?? UNTYPED;
  for (const [el, all] of itemsByElement(t, v)) {
    if (all.length === 1) onlyIn(all[0], items, node.child(el));
    else node.child(el).member = true; // duplicated items: only as a whole
  }
}

function isEmptyContainer(v: Json): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isObject(v) && Object.keys(v).length === 0;
}

// ---- merge ----

/**
 * `config` laid over `live`: granular maps merge key by key, sets and list-maps item by item
 * (the configuration's order wins; live items it does not name keep their place relative to
 * their neighbours), everything else is replaced. A `null` in the configuration removes the
 * field. Returns a new value; neither input is changed.
 */
export function mergeValues(live: Json, config: Json, t: FieldType): Json {
  if (config === undefined) return live;
  const walk = walkOf(t, config);
  if (walk === "leaf") return copy(config);
  if (walk === "map") {
    const out: JsonObject = isObject(live) && walkOf(t, live) === "map" ? { ...live } : {};
    for (const key of Object.keys(config as JsonObject)) {
      const cv = (config as JsonObject)[key];
      if (cv === null) {
        delete out[key];
        continue;
      }
      setKey(
        out,
        key,
        mergeValues(Object.hasOwn(out, key) ? out[key] : undefined, cv, fieldType(t, key)),
      );
    }
    return out;
  }
  if (!Array.isArray(live) || walkOf(t, live) !== walk) return copy(config);
  return mergeLists(live, config as Json[], t);
}

function mergeLists(live: Json[], config: Json[], t: FieldType): Json[] {
  const items = t.items ?? UNTYPED;
  const lEl = live.map((item, i) => itemElement(t, item, i));
  const rEl = config.map((item, i) => itemElement(t, item, i));
  const inConfig = new Map<string, Json>();
  config.forEach((item, i) => inConfig.set(rEl[i], item));
  const inLive = new Map<string, Json>();
  live.forEach((item, i) => {
    if (!inLive.has(lEl[i])) inLive.set(lEl[i], item);
  });
  const out: Json[] = [];
  const emitted = new Set<string>();
  const emitConfig = (j: number) => {
    const el = rEl[j];
    if (emitted.has(el)) return;
    emitted.add(el);
    out.push(mergeValues(inLive.get(el), config[j], items));
  };
  let i = 0;
  let j = 0;
  while (i < live.length || j < config.length) {
    if (i < live.length && j < config.length) {
      if (emitted.has(lEl[i])) {
        i++;
      } else if (lEl[i] === rEl[j]) {
        emitConfig(j);
        i++;
        j++;
      } else if (!inConfig.has(lEl[i])) {
        out.push(live[i]);
        i++;
      } else {
        emitConfig(j);
        j++;
      }
    } else if (i < live.length) {
      if (!inConfig.has(lEl[i])) out.push(live[i]);
      i++;
    } else {
      emitConfig(j);
      j++;
    }
  }
  return out;
}

// ---- remove ----

/** `value` without the members of `set` (each removed with everything beneath it). */
export function removePaths(value: Json, set: FieldSet, t: FieldType): Json {
  if (set.children.size === 0) return value;
  const walk = walkOf(t, value);
  if (walk === "map") {
    const obj = value as JsonObject;
    const out: JsonObject = {};
    for (const key of Object.keys(obj)) {
      const sub = set.children.get(`f:${key}`);
      if (sub?.member) continue;
      setKey(out, key, sub ? removePaths(obj[key], sub, fieldType(t, key)) : obj[key]);
    }
    return out;
  }
  if (walk === "set" || walk === "listmap") {
    const items = t.items ?? UNTYPED;
    const out: Json[] = [];
    (value as Json[]).forEach((item, i) => {
      const sub = set.children.get(itemElement(t, item, i));
      if (sub?.member) return;
      out.push(sub ? removePaths(item, sub, items) : item);
    });
    return out;
  }
  return value;
}

// ---- set helpers that need the schema ----

/** `set` where every struct field that has members beneath it is a member too, so removing
 * the set's members drops such fields whole (Kubernetes' EnsureNamedFieldsAreMembers). */
export function withNamedFieldsAsMembers(set: FieldSet, t: FieldType): FieldSet {
  const out = new FieldSet();
  out.member = set.member;
  for (const [el, child] of set.children) {
    let ct: FieldType;
    let named = false;
    if (el.startsWith("f:")) {
      const key = el.slice(2);
      ct = fieldType(t, key);
      named = declared(t, key);
    } else {
      ct = t.items ?? UNTYPED;
    }
    const c = withNamedFieldsAsMembers(child, ct);
    if (named && !c.isEmpty()) c.member = true;
    out.children.set(el, c);
  }
  return out;
}

/**
 * `set` read against the current schema: a member beneath a node that is now atomic makes
 * the atomic node itself the member (the schema changed from granular to atomic).
 */
export function reconcileWithSchema(set: FieldSet, t: FieldType): FieldSet {
  const out = new FieldSet();
  out.member = set.member;
  const atomic = t.shape === "scalar" ||
    (t.shape === "list" && t.listType === "atomic") ||
    ((t.shape === "struct" || t.shape === "map") && t.mapType === "atomic");
  if (atomic && set.children.size) {
    if (!set.isEmpty()) out.member = true;
    return out;
  }
  for (const [el, child] of set.children) {
    const ct = el.startsWith("f:") ? fieldType(t, el.slice(2)) : t.items ?? UNTYPED;
    out.children.set(el, reconcileWithSchema(child, ct));
  }
  return out;
}

// ---- values ----

/** Sets `obj[key]` as a data property, so that `__proto__` is a key like any other. */
function setKey(obj: JsonObject, key: string, value: Json): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function copy(v: Json): Json {
  return v !== null && typeof v === "object" ? structuredClone(v) : v;
}
