/**
 * Strategic merge patch (SMP): `application/strategic-merge-patch+json`, as Kubernetes'
 * `strategicpatch` package applies it, driven by the schema's patch markers.
 *
 * The model. A patch is a JSON object laid over the stored object:
 *
 * - Maps (structs and string maps) merge key by key; scalars are replaced; `null` deletes a key.
 * - A list is replaced wholesale unless its field says `x-kubernetes-patch-strategy: merge`.
 *   A merge list of scalars is a set union; a merge list of maps matches items by
 *   `x-kubernetes-patch-merge-key` and merges matched items field by field. Only the patch
 *   markers count (`patchStrategy` / `patchMergeKey` of the {@link FieldType}); `listType`
 *   is server-side apply's business. Fields the schema does not know, and `untyped` nodes,
 *   behave like plain JSON: maps merge, lists are replaced.
 * - Directives ride along in the patch: `$patch: replace | delete` in a map, `{$patch: delete}`
 *   items and a `{$patch: replace}` marker item in a merge list, `$retainKeys: [...]` (keep only
 *   those keys of the map), `$setElementOrder/<list>: [...]` (final order of a sibling list) and
 *   `$deleteFromPrimitiveList/<list>: [...]` (remove values from a sibling list). `$patch: merge`
 *   is rejected exactly as Kubernetes rejects it.
 * - Order of a merged list: patch items keep the patch order (or the `$setElementOrder` order);
 *   live items the patch does not name are slotted in by their live position; an item that is
 *   not in the live list cannot be compared and goes before the live items still waiting.
 * - A patch value for a key the object lacks (or holds with another JSON type) is a patch of
 *   nothing: a map is merged into `{}`, so directives inside it take effect and are never stored
 *   and its nulls are dropped (current Kubernetes no longer stores such directives either). A new
 *   list keeps its items as given, as Kubernetes stores a new list: no merge-key check and no
 *   de-duplication, but merge-list directive items are honoured and map items are built the same
 *   way. Items of a list without merge strategy are data, not patches.
 *
 * The stored object is deep-copied first and the copy is changed in place; the patch is only
 * read, and what it contributes is copied. Errors are 4xx {@link StatusError}s carrying
 * Kubernetes' wording: 400 for malformed directives and for the failures Kubernetes answers
 * with a bare 500, 422 for a list of lists. Keys are read with `Object.hasOwn` and written with
 * a data-property define for `__proto__`, so no key reaches a prototype; patches nested deeper
 * than {@link MAX_PATCH_DEPTH} are refused before any recursion.
 *
 * The order of merged lists is in `strategic_order.ts`; the JSON value helpers and the errors
 * in Kubernetes' words are in `strategic_values.ts`.
 */

import { badRequest } from "../api/mod.ts";
import type { FieldType } from "../schema/mod.ts";
import { elementKind, normalizeOrder } from "./strategic_order.ts";
import {
  badArgType,
  badPatchType,
  goType,
  goValue,
  isObject,
  jsonKind,
  type JsonObject,
  mergeKeyOf,
  put,
  sameScalar,
  valueAt,
} from "./strategic_values.ts";

/** The deepest nesting of maps and lists a patch may have. */
export const MAX_PATCH_DEPTH = 512;

const PATCH = "$patch";
const RETAIN_KEYS = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER = "$setElementOrder";

/** Applies `patch` (the parsed request body) to `doc`; returns a new object. */
export function applyStrategicMergePatch(
  doc: Record<string, unknown>,
  patch: unknown,
  type: FieldType,
): Record<string, unknown> {
  if (patch === null) return structuredClone(doc); // Go decodes `null` into an empty patch.
  if (!isObject(patch)) {
    throw badRequest(
      `json: cannot unmarshal ${jsonKind(patch)} into Go value of type map[string]interface {}`,
    );
  }
  assertDepth(patch);
  return mergeMap(structuredClone(doc), patch, type);
}

// ---- maps ----

/**
 * Merges `patch` into `original` (owned, changed in place) and returns the result, which is a
 * different object when the patch replaces or deletes the whole map.
 */
function mergeMap(
  original: JsonObject,
  patch: JsonObject,
  type: FieldType | undefined,
): JsonObject {
  if (Object.hasOwn(patch, PATCH)) return mapDirective(patch, type);
  const handled = new Set<string>();
  applyRetainKeys(original, patch, handled);
  for (const key of Object.keys(patch)) {
    if (key.startsWith(SET_ELEMENT_ORDER)) {
      applySetElementOrder(original, patch, key, type, handled);
    }
  }
  const deletions: string[] = [];
  for (const key of Object.keys(patch)) {
    if (handled.has(key)) continue;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) deletions.push(key);
    else mergeField(original, key, patch[key], fieldOf(type, key));
  }
  // After the additions, so that a patch may add to and delete from one list.
  for (const key of deletions) deleteFromPrimitiveList(original, key, patch[key], type);
  return original;
}

/** `$patch` in a map: `replace` keeps only the patch's other keys, `delete` empties the map. */
function mapDirective(patch: JsonObject, type: FieldType | undefined): JsonObject {
  const directive = patch[PATCH];
  if (directive === "replace") {
    const { [PATCH]: _, ...rest } = patch;
    return mergeMap({}, rest, type);
  }
  if (directive === "delete") return {};
  throw badPatchType(directive, patch);
}

/** One key of a patch map merged into `original`. */
function mergeField(
  original: JsonObject,
  key: string,
  value: unknown,
  type: FieldType | undefined,
): void {
  if (value === null) {
    delete original[key];
    return;
  }
  const current = Object.hasOwn(original, key) ? original[key] : undefined;
  if (current === undefined || goType(current) !== goType(value)) {
    put(original, key, materialize(value, type));
  } else if (isObject(current)) {
    const merged = otherStrategy(type) === "replace"
      ? materialize(value, type)
      : mergeMap(current, value as JsonObject, type);
    put(original, key, merged);
  } else if (Array.isArray(current)) {
    put(original, key, mergeListField(current, value as unknown[], type, false));
  } else {
    put(original, key, value);
  }
}

/**
 * `$retainKeys: [names]`: drops every key of `original` that is not listed. Every non-null
 * key of the patch (directives aside) must be listed.
 */
function applyRetainKeys(original: JsonObject, patch: JsonObject, handled: Set<string>): void {
  if (!Object.hasOwn(patch, RETAIN_KEYS)) return;
  handled.add(RETAIN_KEYS);
  const retained = patch[RETAIN_KEYS];
  if (!Array.isArray(retained)) throw badRequest("invalid patch format of retainKeys");
  for (const [key, value] of Object.entries(patch)) {
    if (key === RETAIN_KEYS || value === null || isListDirective(key)) continue;
    if (!retained.includes(key)) throw badRequest("invalid patch format of retainKeys");
  }
  for (const key of Object.keys(original)) {
    if (!retained.includes(key)) delete original[key];
  }
}

function isListDirective(key: string): boolean {
  return key.startsWith(DELETE_FROM_PRIMITIVE_LIST) || key.startsWith(SET_ELEMENT_ORDER);
}

/**
 * `$setElementOrder/<list>`: merges the sibling list (if the patch has one) and puts the result
 * in the given order, live items not named by the order slotted in by their live position.
 */
function applySetElementOrder(
  original: JsonObject,
  patch: JsonObject,
  directiveKey: string,
  parentType: FieldType | undefined,
  handled: Set<string>,
): void {
  const order = patch[directiveKey];
  if (!Array.isArray(order)) throw badArgType("[]interface {}", order);
  handled.add(directiveKey);
  const key = listKeyOf(
    directiveKey,
    SET_ELEMENT_ORDER,
    "invalid patch format of setElementOrder list",
  );
  const live = listAt(original, key);
  const given = listAt(patch, key);
  const type = fieldOf(parentType, key);
  const mergeKey = type?.patchMergeKey;
  checkPatchFollowsOrder(given ?? [], order, mergeKey);
  let merged: unknown[];
  if (live && given) merged = mergeListField(live, given, type, false);
  else if (given) merged = materializeList(given, type);
  else if (live) merged = live;
  else return;
  handled.add(key);
  put(original, key, orderByDirective(merged, order, live ?? [], given ?? [], mergeKey));
}

/** The list under `key` when there is one; a non-list there is an argument type error. */
function listAt(map: JsonObject, key: string): unknown[] | undefined {
  if (!Object.hasOwn(map, key)) return undefined;
  const value = map[key];
  if (!Array.isArray(value)) throw badArgType("[]interface {}", value);
  return value;
}

function orderByDirective(
  merged: unknown[],
  order: unknown[],
  live: unknown[],
  given: unknown[],
  mergeKey: string | undefined,
): unknown[] {
  const kind = elementKind(live, given);
  if (kind === undefined) return merged;
  if (!mergeKey && kind === "map") {
    throw badRequest("list items without a merge key cannot be ordered by $setElementOrder");
  }
  return normalizeOrder(merged, order, live, mergeKey);
}

/**
 * The patch list must name its items in the relative order of `$setElementOrder` (delete and
 * other directive items aside), else the patch is refused.
 */
function checkPatchFollowsOrder(
  list: unknown[],
  order: unknown[],
  mergeKey: string | undefined,
): void {
  if (order.length === 0 || list.length === 0) return;
  const items = mergeKey ? list.filter((item) => !isDeleteItem(item)) : list;
  let i = 0;
  let j = 0;
  while (i < items.length && j < order.length) {
    if (isObject(items[i]) && Object.hasOwn(items[i] as JsonObject, PATCH)) {
      i++;
      continue;
    }
    if (sameOrderEntry(items[i], order[j], mergeKey)) i++;
    j++;
  }
  if (i < items.length) {
    throw badRequest(
      `The order in patch list:\n${goValue(list)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${
        goValue(order)
      }\n`,
    );
  }
}

function isDeleteItem(item: unknown): boolean {
  if (!isObject(item)) throw badArgType("map[string]interface {}", item);
  return Object.hasOwn(item, PATCH) && item[PATCH] === "delete";
}

function sameOrderEntry(a: unknown, b: unknown, mergeKey: string | undefined): boolean {
  if (!mergeKey) return sameScalar(a, b);
  return sameScalar(mergeKeyOf(a, mergeKey), mergeKeyOf(b, mergeKey));
}

/** `$deleteFromPrimitiveList/<list>: [values]`: removes every copy of each value. */
function deleteFromPrimitiveList(
  original: JsonObject,
  directiveKey: string,
  values: unknown,
  parentType: FieldType | undefined,
): void {
  const key = listKeyOf(
    directiveKey,
    DELETE_FROM_PRIMITIVE_LIST,
    "invalid patch format of primitive list",
  );
  if (values === null) {
    delete original[key]; // as Kubernetes: a null directive deletes the list itself
    return;
  }
  if (!Array.isArray(values)) throw badRequest("invalid patch format of primitive list");
  const current = Object.hasOwn(original, key) ? original[key] : undefined;
  if (!Array.isArray(current)) return; // nothing to delete from; the list is not created
  put(original, key, mergeListField(current, values, fieldOf(parentType, key), true));
}

/** `$setElementOrder/containers` → `containers`. */
function listKeyOf(directiveKey: string, prefix: string, malformed: string): string {
  const slash = directiveKey.indexOf("/");
  if (slash < 0 || directiveKey.slice(0, slash) !== prefix) throw badRequest(malformed);
  return directiveKey.slice(slash + 1);
}

// ---- lists ----

/** A list field whose live and patch values are both lists (`deleting`: the values of a
 * `$deleteFromPrimitiveList` directive, which apply whatever the field's strategy). */
function mergeListField(
  original: unknown[],
  patch: unknown[],
  type: FieldType | undefined,
  deleting: boolean,
): unknown[] {
  if (otherStrategy(type) !== "merge" && !deleting) return structuredClone(patch);
  if (original.length === 0 && patch.length === 0) return original;
  const kind = elementKind(original, patch);
  if (kind !== "map") {
    return deleting ? deleteValues(original, patch) : mergeScalars(original, patch);
  }
  const mergeKey = type?.patchMergeKey;
  if (!mergeKey) throw badRequest("cannot merge lists without merge key for type map");
  return mergeMapList(original, patch, mergeKey, type?.items);
}

/** Set union of a merge list of scalars, ordered by the patch and the live list. */
function mergeScalars(original: unknown[], patch: unknown[]): unknown[] {
  const merged = [...new Set([...original, ...patch])];
  return normalizeOrder(merged, patch, original, undefined);
}

function deleteValues(original: unknown[], values: unknown[]): unknown[] {
  const doomed = new Set(values);
  return original.filter((v) => !doomed.has(v));
}

/** A merge list of maps: directive items first, then each item merged into its match. */
function mergeMapList(
  original: unknown[],
  patch: unknown[],
  mergeKey: string,
  itemType: FieldType | undefined,
): unknown[] {
  let live = original;
  const items: JsonObject[] = [];
  let replace = false;
  for (const item of patch as JsonObject[]) {
    if (!Object.hasOwn(item, PATCH)) {
      items.push(item);
      continue;
    }
    const directive = item[PATCH];
    if (directive === "delete") {
      const key = mergeKeyOf(item, mergeKey);
      live = live.filter((x) => !sameScalar(valueAt(x, mergeKey), key));
    } else if (directive === "replace") {
      // Any item carrying `$patch: replace` is the marker and is not itself kept (as kube).
      replace = true;
    } else if (directive === "merge") {
      throw badRequest("merging lists cannot yet be specified in the patch");
    } else {
      throw badPatchType(directive, item);
    }
  }
  if (replace) {
    const kept = items.map((item) => mergeMap({}, item, itemType));
    return normalizeOrder(kept, [], kept, mergeKey);
  }
  const merged = [...live];
  for (const item of items) {
    const key = mergeKeyOf(item, mergeKey);
    const at = merged.findIndex((x) => sameScalar(valueAt(x, mergeKey), key));
    if (at >= 0) merged[at] = mergeMap(merged[at] as JsonObject, item, itemType);
    else merged.push(mergeMap({}, item, itemType));
  }
  return normalizeOrder(merged, items, live, mergeKey);
}

// ---- values the patch creates ----

/**
 * The value a patch creates where the object has nothing (or a value of another type): maps
 * are merged into `{}` (directives apply, nulls are dropped), lists are built by
 * {@link materializeList}.
 */
function materialize(value: unknown, type: FieldType | undefined): unknown {
  if (isObject(value)) return mergeMap({}, value, type);
  if (Array.isArray(value)) return materializeList(value, type);
  return value;
}

/**
 * A list the object does not have yet. Merge-list directive items are honoured; the other
 * items are kept as given (no merge key required, no de-duplication, as Kubernetes keeps a new
 * list), except that null map members are dropped.
 */
function materializeList(list: unknown[], type: FieldType | undefined): unknown[] {
  if (otherStrategy(type) !== "merge") return list.map(withoutNulls);
  const out: unknown[] = [];
  for (const item of list) {
    if (!isObject(item)) {
      out.push(withoutNulls(item));
    } else if (!Object.hasOwn(item, PATCH)) {
      out.push(mergeMap({}, item, type?.items));
    } else if (item[PATCH] === "merge") {
      throw badRequest("merging lists cannot yet be specified in the patch");
    } else if (item[PATCH] !== "delete" && item[PATCH] !== "replace") {
      throw badPatchType(item[PATCH], item);
    }
  }
  return out;
}

/** A copy with null map members removed at any depth (nulls in lists stay). */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, v] of Object.entries(value)) {
    if (v !== null) put(out, key, withoutNulls(v));
  }
  return out;
}

// ---- schema ----

function fieldOf(type: FieldType | undefined, key: string): FieldType | undefined {
  return type?.field(key);
}

/** The patch strategy other than `retainKeys` (`merge`, `replace` or ""). `retainKeys` itself
 * needs no schema support: a `$retainKeys` directive is honoured wherever it appears. */
function otherStrategy(type: FieldType | undefined): string {
  return type?.patchStrategy.find((s) => s !== "retainKeys") ?? "";
}

/** Refuses patches nested deeper than {@link MAX_PATCH_DEPTH}, without recursion. */
function assertDepth(patch: unknown): void {
  const stack: [unknown, number][] = [[patch, 1]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (depth > MAX_PATCH_DEPTH) {
      throw badRequest(`the patch is nested too deeply: the limit is ${MAX_PATCH_DEPTH} levels`);
    }
    const children = Array.isArray(value) ? value : isObject(value) ? Object.values(value) : [];
    for (const child of children) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
}
