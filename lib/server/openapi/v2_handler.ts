/**
 * `GET /openapi/v2`: the Swagger 2.0 document in JSON or, for kubectl up to 1.28, as gnostic's
 * protobuf message, with the caching headers kube-openapi's handler sends:
 * - the first Accept range (best first) that names JSON or either spelling of the protobuf
 *   media type wins; `*` ranges and no Accept mean JSON; nothing matching is 406;
 * - the answer carries `Vary: Accept`, and an `ETag` that is the quoted upper-case hex SHA-512
 *   of the JSON text — the same for both forms, as in kube, since `Vary` tells caches apart —
 *   and `Last-Modified`, when the document was built;
 * - `If-None-Match` naming that tag (weak comparison, or `*`) answers 304 Not Modified; without
 *   it, `If-Modified-Since` no earlier than `Last-Modified` does (Go's `http.ServeContent`
 *   rules).
 * Both forms are made once per document (the JSON string changes when the catalogue does).
 */

import { createHash } from "node:crypto";
import { notAcceptable } from "../../api/mod.ts";
import { parseAccept } from "../../codec/mod.ts";
import type { RequestContext } from "../context.ts";
import { responseBody } from "../respond.ts";
import { encodeOpenAPIv2, OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_AT } from "./v2_proto.ts";

const JSON_TYPE = "application/json";

/** Media types served, by the `type/subtype` a client names. */
const FORMS: Record<string, "json" | "protobuf"> = {
  [JSON_TYPE]: "json",
  [OPENAPI_V2_PROTOBUF]: "protobuf",
  [OPENAPI_V2_PROTOBUF_AT]: "protobuf",
};

/** The served forms of one JSON document. */
class V2Forms {
  readonly json: string;
  readonly etag: string;
  /** HTTP dates have whole seconds; so does this. */
  readonly lastModified = new Date(Math.floor(Date.now() / 1000) * 1000);
  #proto?: Uint8Array<ArrayBuffer>;

  constructor(json: string) {
    this.json = json;
    this.etag = `"${createHash("sha512").update(json).digest("hex").toUpperCase()}"`;
  }

  protobuf(): Uint8Array<ArrayBuffer> {
    this.#proto ??= encodeOpenAPIv2(this.json) as Uint8Array<ArrayBuffer>;
    return this.#proto;
  }
}

/** The form a client's Accept asks for; 406 when it accepts neither. */
export function v2Form(accept: string | null): "json" | "protobuf" {
  for (const r of parseAccept(accept)) {
    if (r.type === "*" || (r.type === "application" && r.subtype === "*")) return "json";
    const form = FORMS[`${r.type}/${r.subtype}`];
    if (form) return form;
  }
  throw notAcceptable([JSON_TYPE, OPENAPI_V2_PROTOBUF]);
}

/** Whether an `If-None-Match` value names `etag` (weak comparison: `W/` is ignored). */
export function noneMatchHits(header: string, etag: string): boolean {
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
  const want = opaque(etag);
  return header.split(",").some((t) => t.trim() === "*" || opaque(t) === want);
}

function notModified(ctx: RequestContext, forms: V2Forms): boolean {
  const inm = ctx.req.headers.get("If-None-Match");
  if (inm !== null) return noneMatchHits(inm, forms.etag);
  const ims = ctx.req.headers.get("If-Modified-Since");
  if (ims === null) return false;
  const since = Date.parse(ims);
  return !Number.isNaN(since) && forms.lastModified.getTime() <= since;
}

/** Serves `/openapi/v2` from the provider's JSON text. */
export function openAPIv2Handler(v2: () => string): (ctx: RequestContext) => Response {
  let forms: V2Forms | undefined;
  return (ctx) => {
    const json = v2();
    if (forms?.json !== json) forms = new V2Forms(json);
    const form = v2Form(ctx.req.headers.get("Accept"));
    const headers = new Headers({ "Vary": "Accept", "ETag": forms.etag });
    if (notModified(ctx, forms)) return new Response(null, { status: 304, headers });
    headers.set("Content-Type", form === "json" ? JSON_TYPE : OPENAPI_V2_PROTOBUF);
    headers.set("Last-Modified", forms.lastModified.toUTCString());
    const body = form === "json" ? forms.json : forms.protobuf();
    return new Response(responseBody(body, ctx.streamLargeBodies), { headers });
  };
}
