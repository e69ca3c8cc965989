/** GET of a collection: one namespace or all, with selectors and chunking. */

import { badRequest } from "../../api/errors.ts";
import { negotiateOutput } from "../../codec/negotiate.ts";
import { parseIncludeObject, toTable } from "../../codec/table.ts";
import { parseFilter } from "../../registry/filter.ts";
import type { RequestContext } from "../context.ts";
import { objectResponse } from "../respond.ts";
import type { ResourceScope } from "./scope.ts";

export function parseLimit(v: string | null): number | undefined {
  if (v === null || v === "") return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw badRequest(`invalid limit: "${v}"`);
  return n || undefined;
}

export async function listHandler(ctx: RequestContext, scope: ResourceScope): Promise<Response> {
  const negotiated = negotiateOutput(ctx.req.headers.get("Accept"), { allowAs: ["Table"] });
  const q = ctx.url.searchParams;
  const def = scope.registry.def;
  const filter = parseFilter(def, q.get("labelSelector"), q.get("fieldSelector"));
  const result = await scope.registry.list(ctx.info.namespace, {
    filter,
    limit: parseLimit(q.get("limit")),
    continue: q.get("continue") || undefined,
  });
  const listMeta: Record<string, unknown> = { resourceVersion: result.resourceVersion };
  if (result.continue) listMeta.continue = result.continue;
  if (result.remainingItemCount !== undefined) {
    listMeta.remainingItemCount = result.remainingItemCount;
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
    apiVersion: scope.registry.apiVersion,
    metadata: listMeta,
    items: result.items,
  };
  return objectResponse(ctx, 200, list, negotiated);
}
