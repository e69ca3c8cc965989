/**
 * The order of a merged list in a strategic merge patch, by Kubernetes' rule: items the patch
 * (or its `$setElementOrder` directive) names keep that order, live items it does not name are
 * slotted in by their live position. Also the element type check that refuses lists of lists
 * and mixed element types before a list is merged.
 *
 * @module
 */

import { badRequest } from "../api/mod.ts";
import { goType, goValue, isObject, listsOfLists, mergeKeyOf } from "./strategic_values.ts";

/**
 * Kubernetes' ordering rule. `merged` splits into items named by `order` (sorted by it) and
 * server-only items (sorted by their `live` position). The two runs are then interleaved:
 * a server-only item goes first only when both it and the next ordered item are in the live
 * list and it comes earlier there; an ordered item that is not live always goes first.
 * Items are compared by merge key (maps) or by value (scalars); duplicates sort as their
 * first occurrence, which groups them.
 */
export function normalizeOrder(
  merged: unknown[],
  order: unknown[],
  live: unknown[],
  mergeKey: string | undefined,
): unknown[] {
  const keyOf = mergeKey ? (item: unknown) => mergeKeyOf(item, mergeKey) : (item: unknown) => item;
  if (mergeKey) order.forEach((item, i) => orderEntryKey(item, i, mergeKey));
  const inOrder = firstPositions(order, keyOf);
  const inLive = firstPositions(live, keyOf);
  const ordered: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const item of merged) (inOrder.has(keyOf(item)) ? ordered : serverOnly).push(item);
  const rank = (positions: Map<unknown, number>) => (item: unknown) =>
    positions.get(keyOf(item)) ?? Infinity;
  stableSortBy(ordered, rank(inOrder));
  stableSortBy(serverOnly, rank(inLive));
  return interleave(serverOnly, ordered, (item) => inLive.get(keyOf(item)));
}

/** Merges two sorted runs, taking from `left` only when both heads have live positions and
 * the left one is earlier. */
function interleave(
  left: unknown[],
  right: unknown[],
  livePosition: (item: unknown) => number | undefined,
): unknown[] {
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length && j < right.length) {
    const l = livePosition(left[i]);
    const r = livePosition(right[j]);
    if (l !== undefined && r !== undefined && l < r) out.push(left[i++]);
    else out.push(right[j++]);
  }
  return out.concat(left.slice(i), right.slice(j));
}

function firstPositions(list: unknown[], keyOf: (item: unknown) => unknown): Map<unknown, number> {
  const positions = new Map<unknown, number>();
  list.forEach((item, i) => {
    const key = keyOf(item);
    if (!positions.has(key)) positions.set(key, i);
  });
  return positions;
}

function stableSortBy(list: unknown[], rank: (item: unknown) => number): void {
  const ranked = list.map((item, i) => ({ item, i, r: rank(item) }));
  ranked.sort((a, b) => a.r - b.r || a.i - b.i);
  ranked.forEach((x, i) => list[i] = x.item);
}

/** An order list entry of a merge list of maps must be a map carrying the merge key. */
function orderEntryKey(item: unknown, index: number, mergeKey: string): unknown {
  if (!isObject(item)) throw badRequest(`value for key ${index} is not a map.`);
  return mergeKeyOf(item, mergeKey);
}

/**
 * The common element type of the lists (`map`, `string`, `int64`, …), undefined when all are
 * empty. Lists of lists and mixed element types are refused.
 */
export function elementKind(...lists: unknown[][]): string | undefined {
  let kind: string | undefined;
  for (const list of lists) {
    for (const item of list) {
      const t = goType(item);
      if (kind === undefined) {
        if (t === "slice") throw listsOfLists();
        kind = t;
      } else if (t !== kind) {
        throw badRequest(`list element types are not identical: ${goValue(lists)}`);
      }
    }
  }
  return kind;
}
