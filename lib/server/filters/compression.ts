/**
 * Response compression (feature gate `APIResponseCompression`): gzip for get and list
 * responses, discovery and OpenAPI documents, when the client accepts gzip and the body is
 * worth it. Watch streams and errors are never compressed.
 */

import { constants, gzipSync } from "node:zlib";
import type { Filter, Handler, RequestContext } from "../context.ts";
import { bodySizeBound, isStreamed, responseBody } from "../respond.ts";

/**
 * Bodies up to this size go out as they are (the threshold kube-apiserver uses). gzip runs on
 * the one event loop, at about 3 µs per KB plus some 20 µs per call (level 1, measured): for
 * smaller bodies, a few TCP segments anyway, that costs more latency than the bytes it saves
 * win back on a fast link.
 */
export const GZIP_THRESHOLD_BYTES = 128 * 1024;

/** Non-resource documents worth compressing: discovery and OpenAPI. */
const DOCUMENT_PATH = /^\/(api|apis|openapi)(\/|$)/;

/** One `coding;q=…` element's weight, or NaN when its q is malformed. */
function weightOf(params: string[]): number {
  for (const p of params) {
    const [name, value = ""] = p.split("=").map((s) => s.trim());
    if (name.toLowerCase() !== "q") continue;
    return /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value) ? Number(value) : NaN;
  }
  return 1;
}

/**
 * Whether an `Accept-Encoding` value accepts gzip (RFC 9110 §12.5.3): an explicit `gzip` (or
 * its alias `x-gzip`) with a weight above 0, or else a `*` with a weight above 0. Absent or
 * empty means no: only clients that ask for gzip get it, as in kube.
 */
export function acceptsGzip(header: string | null): boolean {
  let gzip: number | undefined;
  let any: number | undefined;
  for (const element of (header ?? "").split(",")) {
    const [coding, ...params] = element.split(";");
    const name = coding.trim().toLowerCase();
    // A malformed weight counts as a refusal: an unreadable preference is no consent.
    const q = weightOf(params) || 0;
    if (name === "gzip" || name === "x-gzip") gzip = Math.max(gzip ?? 0, q);
    else if (name === "*") any = Math.max(any ?? 0, q);
  }
  return (gzip ?? any ?? 0) > 0;
}

/** Whether the request is one whose successful response may be compressed. */
export function isCompressibleRequest(ctx: RequestContext): boolean {
  // HEAD responses carry no body to shrink; watch (a stream) is a different verb.
  if (ctx.req.method !== "GET") return false;
  const { info } = ctx;
  const readable = info.isResourceRequest
    ? info.verb === "get" || info.verb === "list"
    : DOCUMENT_PATH.test(info.path);
  return readable && acceptsGzip(ctx.req.headers.get("Accept-Encoding"));
}

/** The headers of the gzipped form of a response. */
function gzipHeaders(original: Headers): Headers {
  const headers = new Headers(original);
  headers.set("Content-Encoding", "gzip");
  headers.append("Vary", "Accept-Encoding");
  headers.delete("Content-Length");
  // A strong validator names one exact byte sequence; the compressed one is another.
  const etag = headers.get("ETag");
  if (etag?.startsWith('"')) headers.set("ETag", `W/${etag}`);
  return headers;
}

/** A streamed body (a large list, made as it is read) is compressed as it goes, so it is
 * never whole in memory. */
function gzipStream(res: Response): Response {
  const body = res.body!.pipeThrough(new CompressionStream("gzip"));
  return new Response(body, { status: res.status, headers: gzipHeaders(res.headers) });
}

/** The compression filter; a pass-through when the gate is off. */
export function compressionFilter(enabled: boolean): Filter {
  if (!enabled) return (ctx, next) => next(ctx);
  const documents = new GzipCache();
  const compress = async (ctx: RequestContext, next: Handler) => {
    const res = await next(ctx);
    if (res.status !== 200 || res.body === null || res.headers.has("Content-Encoding")) return res;
    // Most bodies are known to be small without reading them (client-go asks for gzip always).
    const bound = bodySizeBound(res);
    if (bound !== undefined && bound <= GZIP_THRESHOLD_BYTES) return res;
    if (isStreamed(res)) return gzipStream(res);
    const body = await res.bytes();
    if (body.length <= GZIP_THRESHOLD_BYTES) {
      return new Response(responseBody(body, ctx.streamLargeBodies), {
        status: res.status,
        headers: res.headers,
      });
    }
    const gz = documents.gzip(res.headers, body);
    return new Response(responseBody(gz, ctx.streamLargeBodies), {
      status: res.status,
      headers: gzipHeaders(res.headers),
    });
  };
  return (ctx, next) => isCompressibleRequest(ctx) ? compress(ctx, next) : next(ctx);
}

/**
 * The gzipped forms of documents with a strong ETag (OpenAPI v2 and v3, 0.4–0.5 MB each, which
 * clients fetch again and again): an ETag names one exact body, so its gzip can be kept. The
 * key adds the Content-Type, since OpenAPI v2's JSON and protobuf forms share one ETag. A few
 * entries, the oldest dropped first.
 */
class GzipCache {
  readonly #entries = new Map<string, Uint8Array<ArrayBuffer>>();

  gzip(headers: Headers, body: Uint8Array): Uint8Array<ArrayBuffer> {
    const etag = headers.get("ETag");
    const key = etag?.startsWith('"') ? `${etag} ${headers.get("Content-Type")}` : undefined;
    const hit = key === undefined ? undefined : this.#entries.get(key);
    if (hit) return hit;
    // Level 1, as kube: a third of the default level's CPU for about 1.5x the bytes.
    const gz = new Uint8Array(gzipSync(body, { level: constants.Z_BEST_SPEED }));
    if (key !== undefined) {
      if (this.#entries.size >= GZIP_CACHE_ENTRIES) {
        this.#entries.delete(this.#entries.keys().next().value!);
      }
      this.#entries.set(key, gz);
    }
    return gz;
  }
}

/** Documents whose gzip is kept: every OpenAPI v3 group and v2, in each form, for a while. */
const GZIP_CACHE_ENTRIES = 32;
