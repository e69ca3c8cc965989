/**
 * GET of one object (or one object's subresource). `resourceVersion`: unset is Most Recent,
 * `0` is Any, anything else is Not older than (the newest state, once the store has reached
 * it; 504 "Too large resource version" after a few seconds otherwise).
 */

import {
  encodeEnvelope,
  negotiateOutput,
  parseIncludeObject,
  toPartial,
  toTable,
} from "../../codec/mod.ts";
import { cachedMessage } from "./list.ts";
import type { RequestContext } from "../context.ts";
import { encodedResponse, isPretty, objectResponse } from "../respond.ts";
import type { ResourceScope } from "./scope.ts";
import { queryParam } from "../request_info.ts";
import { parseResourceVersion, waitForRevision } from "./read_options.ts";

export async function getHandler(ctx: RequestContext, scope: ResourceScope): Promise<Response> {
  const negotiated = negotiateOutput(ctx.req.headers.get("Accept"), {
    allowAs: ["Table", "PartialObjectMetadata"],
    protobuf: scope.protobuf,
  });
  const { namespace, name } = ctx.info;
  const rv = queryParam(ctx.url, "resourceVersion") ?? "";
  if (rv !== "" && rv !== "0") {
    const registry = scope.registry;
    await waitForRevision(() => registry.currentRevision(), parseResourceVersion(rv), ctx.signal);
  }
  // Any resourceVersion (kube: "0", or one the server has reached): what this server holds,
  // without confirming it is the newest (one etcd round trip saved on etcd).
  const read = { cached: rv !== "" };
  if (negotiated.encoding === "json" && !negotiated.as && !isPretty(ctx) && !ctx.kubeSpelling) {
    const text = await scope.registry.getJson(namespace, name, read);
    return encodedResponse(ctx, 200, text, negotiated);
  }
  if (negotiated.encoding === "protobuf" && !negotiated.as && !ctx.kubeSpelling) {
    // From the message bytes cached per stored value, which lists share.
    const registry = scope.registry;
    const kv = await registry.getStored(namespace, name, read);
    const type = { apiVersion: registry.apiVersion, kind: registry.def.kind };
    const body = encodeEnvelope(type, cachedMessage(registry, kv));
    return encodedResponse(ctx, 200, body as Uint8Array<ArrayBuffer>, negotiated);
  }
  const obj = await scope.registry.get(namespace, name, read);
  if (negotiated.as?.kind === "PartialObjectMetadata") {
    const { group, version } = negotiated.as;
    return objectResponse(ctx, 200, toPartial(obj, `${group}/${version}`), negotiated);
  }
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
