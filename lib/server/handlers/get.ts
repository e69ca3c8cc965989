/** GET of one object (or one object's subresource). */

import { negotiateOutput } from "../../codec/negotiate.ts";
import { parseIncludeObject, toTable } from "../../codec/table.ts";
import type { RequestContext } from "../context.ts";
import { encodedResponse, isPretty, objectResponse } from "../respond.ts";
import type { ResourceScope } from "./scope.ts";

export async function getHandler(ctx: RequestContext, scope: ResourceScope): Promise<Response> {
  const negotiated = negotiateOutput(ctx.req.headers.get("Accept"), { allowAs: ["Table"] });
  const { namespace, name } = ctx.info;
  if (negotiated.encoding === "json" && !negotiated.as && !isPretty(ctx)) {
    const text = await scope.registry.getJson(namespace, name);
    return encodedResponse(ctx, 200, text, negotiated);
  }
  const obj = await scope.registry.get(namespace, name);
  if (negotiated.as?.kind === "Table") {
    const table = toTable(scope.registry.def, [obj], {
      apiVersion: `${negotiated.as.group}/${negotiated.as.version}`,
      listMeta: { resourceVersion: obj.metadata.resourceVersion },
      include: parseIncludeObject(ctx.url.searchParams.get("includeObject")),
    });
    return objectResponse(ctx, 200, table, negotiated);
  }
  return objectResponse(ctx, 200, obj, negotiated);
}
