/**
 * GET of a collection: one namespace or all, with selectors and chunking, read at the
 * revision the list table of spec 01 gives for resourceVersion × resourceVersionMatch × paging:
 *
 *   no resourceVersion, or continue with none / `0`   Most Recent (or the token's snapshot)
 *   `0`                                                Any: the newest state
 *   N, no match, no limit / NotOlderThan               Not older than N: the newest state,
 *                                                      after waiting for N if it is ahead
 *   N with limit and no match / Exact                  Exact: the collection as of N (410 once
 *                                                      N left the history)
 */

import { parseIncludeObject, toTable } from "../../codec/table.ts";
import { toPartialList } from "../../codec/partial.ts";
import { negotiateOutput } from "../../codec/negotiate.ts";
import { parseFilter } from "../../registry/filter.ts";
import type { ListOptions } from "../../registry/generic.ts";
import type { RequestContext } from "../context.ts";
import { objectResponse } from "../respond.ts";
import { parseResourceVersion, readOptionsOf, waitForRevision } from "./read_options.ts";
import type { ResourceScope } from "./scope.ts";

export async function listHandler(ctx: RequestContext, scope: ResourceScope): Promise<Response> {
  const negotiated = negotiateOutput(ctx.req.headers.get("Accept"), {
    allowAs: ["Table", "PartialObjectMetadataList"],
    protobuf: scope.protobuf,
  });
  const q = ctx.url.searchParams;
  const registry = scope.registry;
  const def = registry.def;
  const o = readOptionsOf(q, { watch: false, watchList: scope.watchList });
  const filter = parseFilter(def, q.get("labelSelector"), q.get("fieldSelector"));
  const opts: ListOptions = { filter, limit: o.limit };
  if (o.continue) {
    opts.continue = o.continue;
  } else if (o.resourceVersion !== "" && o.resourceVersion !== "0") {
    const rv = parseResourceVersion(o.resourceVersion);
    await waitForRevision(() => registry.currentRevision(), rv, ctx.signal);
    const exact = o.match === "Exact" || (o.match === "" && o.limit !== undefined);
    if (exact) opts.revision = rv;
  }
  const result = await registry.list(ctx.info.namespace, opts);
  const listMeta: Record<string, unknown> = { resourceVersion: result.resourceVersion };
  if (result.continue) listMeta.continue = result.continue;
  if (result.remainingItemCount !== undefined) {
    listMeta.remainingItemCount = result.remainingItemCount;
  }
  if (negotiated.as?.kind === "PartialObjectMetadataList") {
    const { group, version } = negotiated.as;
    const partial = toPartialList(result.items, listMeta, `${group}/${version}`);
    return objectResponse(ctx, 200, partial, negotiated);
  }
  if (negotiated.as?.kind === "Table") {
    const table = toTable(def, result.items, {
      apiVersion: `${negotiated.as.group}/${negotiated.as.version}`,
      listMeta,
      include: parseIncludeObject(q.get("includeObject")),
    });
    return objectResponse(ctx, 200, table, negotiated);
  }
  const list = {
    kind: `${def.kind}List`,
    apiVersion: registry.apiVersion,
    metadata: listMeta,
    items: result.items,
  };
  return objectResponse(ctx, 200, list, negotiated);
}
