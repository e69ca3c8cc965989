/**
 * Lists of a registry's objects, whole or in pages: every page of a chunked list reads at the
 * revision of the first, and a continue token (continue.ts) says where the next page starts.
 */

import { StatusError } from "../api/mod.ts";
import type { KeyValue } from "../storage/mod.ts";
import type { KubeObject } from "./definition.ts";
import { type ObjectFilter, selectsObject } from "./filter.ts";
import { decodeContinue, encodeContinue } from "./continue.ts";
import { throwIfCorruptItems } from "./unsafe_delete.ts";
import type { RegistryCore } from "./core.ts";

export interface ListOptions {
  filter?: ObjectFilter;
  /** Without a filter, leave `items` empty and return only `sources`: for callers that build
   * the body from per-object encodings cached by stored value (`ResourceRegistry.encoded`). */
  sourcesOnly?: boolean;
  limit?: number;
  continue?: string;
  /** Read at this exact revision (must be retained). */
  revision?: number;
  /** Without `revision` or `continue`: what the store holds here now, unconfirmed
   * (`resourceVersion=0`, NotOlderThan; see the store's `ReadOptions.cached`). */
  cached?: boolean;
}

export interface ListResult {
  items: KubeObject[];
  /** The stored values of the items, in order (all of them under `sourcesOnly`). */
  sources: KeyValue[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** kube's message for a continue token whose snapshot is gone. */
export const INCONSISTENT_CONTINUE =
  "The provided continue parameter is too old to display a consistent list result. You can " +
  "start a new list without the continue parameter, or use the continue token in this response " +
  "to retrieve the remainder of the results. Continuing with the provided token results in an " +
  "inconsistent list - objects that were created, modified, or deleted between the time the " +
  "first chunk was returned and now may show up in the list.";

function expiredContinue(token: string): StatusError {
  return new StatusError(410, "Expired", INCONSISTENT_CONTINUE, { listMeta: { continue: token } });
}

/**
 * A consistent list: every page of a chunked list reads at the revision of the first page.
 * `remainingItemCount` is given only without a filter. A continue token whose revision is no
 * longer retained is 410 Expired, with a token that continues at the newest revision.
 */
export async function listObjects(
  core: RegistryCore,
  namespace: string,
  opts: ListOptions,
): Promise<ListResult> {
  const prefix = core.listPrefix(namespace);
  let revision = opts.revision;
  let after: string | undefined;
  let returned = 0;
  let total: number | undefined;
  if (opts.continue) {
    const point = decodeContinue(core.continueKey, prefix, opts.continue);
    after = point.after;
    returned = point.returned;
    if (point.total >= 0) total = point.total;
    if (point.revision === -1) {
      revision = undefined;
      total = undefined;
    } else if (point.revision < core.store.oldestRevision()) {
      const again = { ...point, revision: -1, total: -1 };
      throw expiredContinue(encodeContinue(core.continueKey, prefix, again));
    } else {
      revision = point.revision;
    }
  }
  const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
  // Later pages know the total from the first: the store need not count what is left.
  const countRemaining = !opts.filter && total === undefined;
  const items: KubeObject[] = [];
  const sources: KeyValue[] = [];
  const lazy = opts.sourcesOnly === true && !opts.filter;
  const byKey = core.keyFilter(opts.filter);
  let listRevision = 0;
  let lastKey: string | undefined;
  let more = false;
  let remaining = 0;
  // With a filter a page may need several store reads to fill `limit` matching items.
  for (;;) {
    const batch = limit ? Math.max(limit - sources.length, opts.filter ? 256 : 0) : 0;
    const res = await core.read(() =>
      core.store.list(prefix, {
        revision,
        after,
        limit: batch || undefined,
        countRemaining,
        cached: opts.cached && revision === undefined,
      })
    );
    listRevision = res.revision;
    revision = res.revision;
    // Keys the filter's name or namespace rules out are passed over unread.
    const wanted = byKey ? res.items.filter((kv) => byKey(kv.key)) : res.items;
    // A conversion that calls out converts the whole store read in one call.
    throwIfCorruptItems(core, prefix, wanted);
    const loading = core.load(wanted);
    if (loading) await loading;
    for (let i = 0; i < res.items.length; i++) {
      const kv = res.items[i];
      lastKey = kv.key;
      if (byKey && !byKey(kv.key)) continue;
      if (!lazy) {
        const obj = core.decode(kv);
        if (opts.filter && !selectsObject(opts.filter, obj, core.def)) continue;
        items.push(obj);
      }
      sources.push(kv);
      if (limit && sources.length >= limit) {
        more = i < res.items.length - 1 || res.remaining > 0;
        remaining = res.remaining + (res.items.length - 1 - i);
        break;
      }
    }
    if ((limit && sources.length >= limit) || res.remaining === 0 || !res.items.length) break;
    after = lastKey;
  }
  const result: ListResult = { items, sources, resourceVersion: String(listRevision) };
  if (more && lastKey !== undefined) {
    if (!opts.filter) {
      total ??= returned + sources.length + remaining;
      result.remainingItemCount = total - returned - sources.length;
    }
    result.continue = encodeContinue(core.continueKey, prefix, {
      revision: listRevision,
      after: lastKey,
      returned: returned + sources.length,
      total: total ?? -1,
    });
  }
  return result;
}
