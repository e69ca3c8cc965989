/**
 * Writing responses. Every error leaves through {@link errorResponse}, which turns it into a
 * `Status` in the negotiated encoding.
 */

import { isJsonObject, kubeGroup, kubeSpelled, type Status, toStatusError } from "../api/mod.ts";
import { encodeBody, type Negotiated, negotiateOutput } from "../codec/mod.ts";
import type { RequestContext } from "./context.ts";
import { limitWarnings } from "./warnings.ts";
import { childSpan, type Span } from "../tracing/mod.ts";
import { queryParam } from "./request_info.ts";

/** Bodies up to this size go out as they are, in one TCP segment with the headers. */
const INLINE_BODY_BYTES = 256;
const encoder = new TextEncoder();

/** How one server sends response bodies; each server has its own (made by startServer). */
export interface BodyWriting {
  /**
   * Larger bodies go out as one-chunk streams: the fallback for when TCP_NODELAY cannot be set
   * on the server's listener (see nodelay.ts). A one-chunk stream goes out chunked, in the
   * same write as the headers, so Nagle's algorithm has nothing to hold back; it costs some
   * CPU per response (about 20 % of create throughput, measured). Requests read it as
   * `RequestContext.streamLargeBodies`.
   */
  streamLarge: boolean;
}

/** A response body; over a few hundred bytes a one-chunk stream when `streamLarge` (see
 * {@link BodyWriting}). */
export function responseBody(
  data: string | Uint8Array<ArrayBuffer>,
  streamLarge: boolean | undefined,
): BodyInit {
  if (!streamLarge || data.length <= INLINE_BODY_BYTES) return data;
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  return new ReadableStream<Uint8Array<ArrayBuffer>>({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

/** Warning header values: `299 - "text"`, as kube sends them (and limits them). */
function warningHeaders(headers: Headers, warnings: string[]): void {
  for (const text of limitWarnings(warnings)) {
    headers.append("Warning", `299 - ${JSON.stringify(text)}`);
  }
}

/**
 * `pretty`, which kube reads apart from the metav1 options: Go's `strconv.ParseBool` on a
 * non-empty value, an unparsable one being false (`1`, `t`, `T`, `true`, `TRUE`, `True` are
 * true). kube also defaults it from the User-Agent (curl, Wget, browsers); this server does not.
 */
export function isPretty(ctx: RequestContext): boolean {
  const p = queryParam(ctx.url, "pretty");
  return p !== null && GO_TRUE.has(p);
}

const GO_TRUE = new Set(["1", "t", "T", "true", "TRUE", "True"]);

/** An object response in the negotiated encoding. */
export function objectResponse(
  ctx: RequestContext,
  code: number,
  body: unknown,
  negotiated: Negotiated,
): Response {
  const span = serializeSpan(negotiated);
  try {
    if (ctx.kubeSpelling && isJsonObject(body)) body = kubeSpelled(body);
    const text = encodeBody(body, negotiated.encoding, isPretty(ctx));
    return buildResponse(ctx, code, text, negotiated);
  } finally {
    span.end();
  }
}

/** kube's `SerializeObject` span of a response (the no-op span when not traced). */
function serializeSpan(negotiated: Negotiated): Span {
  const span = childSpan("SerializeObject");
  if (span.recording) span.setAttribute("mediaType", negotiated.contentType);
  return span;
}

/**
 * What this module knows of a response it made, kept on the response under symbols of its own:
 * as WeakMap or WeakSet entries (one or two per request), they cost every young-generation
 * collection until a full one clears them (lib/tracing/scope_context.ts has the figures).
 * Every response made here gets both, in the same order, so that they share one shape.
 */
const BODY_LENGTH = Symbol("body length");
const MADE_HERE = Symbol("made here");
/** Bits of {@link MADE_HERE}. */
const STREAMED = 1;
const KUBE_HEADERS = 2;

interface MadeHere {
  /** Bytes, or for a string its UTF-16 units as a negative number (see {@link bodySizeBound}
   * and {@link bodySize}); undefined for a stream. */
  [BODY_LENGTH]?: number;
  [MADE_HERE]?: number;
}

function bodyLength(res: Response): number | undefined {
  return (res as MadeHere)[BODY_LENGTH];
}

/**
 * An upper bound of the body's size in bytes for responses made by {@link encodedResponse},
 * known without reading the body (a string of n UTF-16 units is at most 3n UTF-8 bytes);
 * undefined for others.
 */
export function bodySizeBound(res: Response): number | undefined {
  const n = bodyLength(res);
  return n === undefined ? undefined : n < 0 ? -n * 3 : n;
}

/** The body's size in bytes for responses made by {@link encodedResponse}, a string's
 * counted in UTF-16 units (its bytes when ASCII, as JSON mostly is); undefined for others. */
export function bodySize(res: Response): number | undefined {
  const n = bodyLength(res);
  return n === undefined ? undefined : Math.abs(n);
}

/** kube's `Cache-Control` of API answers (its WithCacheControl filter). */
export const NO_CACHE = "no-cache, private";

/** Whether a response made here already carries kube's headers of every answer: the request's
 * `Audit-ID` and `Cache-Control`. */
export function hasKubeHeaders(res: Response): boolean {
  return (((res as MadeHere)[MADE_HERE] ?? 0) & KUBE_HEADERS) !== 0;
}

/** Whether the body of a response made here is made as it is read (a large list). */
export function isStreamed(res: Response): boolean {
  return (((res as MadeHere)[MADE_HERE] ?? 0) & STREAMED) !== 0;
}

/** A response whose body is already encoded in the negotiated encoding. */
export function encodedResponse(
  ctx: RequestContext,
  code: number,
  body: string | Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>,
  negotiated: Negotiated,
): Response {
  const span = serializeSpan(negotiated);
  try {
    return buildResponse(ctx, code, body, negotiated);
  } finally {
    span.end();
  }
}

function buildResponse(
  ctx: RequestContext,
  code: number,
  body: string | Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>,
  negotiated: Negotiated,
): Response {
  const streamed = body instanceof ReadableStream;
  const init = streamed ? body : responseBody(body, ctx.streamLargeBodies);
  let res: Response;
  const auditID = ctx.auditID;
  if (!ctx.warnings.length) {
    // Made with its content type alone, then the rest set: a record of three headers costs
    // Deno's Response 3.7 µs, this 0.8 (measured, Deno 2.9.6).
    res = new Response(init, { status: code, headers: { "Content-Type": negotiated.contentType } });
    const headers = res.headers;
    if (auditID !== undefined) headers.set("Audit-ID", auditID);
    headers.set("Cache-Control", NO_CACHE);
  } else {
    const headers = new Headers({
      "Content-Type": negotiated.contentType,
      "Cache-Control": NO_CACHE,
    });
    if (auditID !== undefined) headers.set("Audit-ID", auditID);
    warningHeaders(headers, ctx.warnings);
    res = new Response(init, { status: code, headers });
  }
  const made = res as MadeHere;
  made[BODY_LENGTH] = streamed ? undefined : typeof body === "string" ? -body.length : body.length;
  made[MADE_HERE] = (streamed ? STREAMED : 0) | (auditID !== undefined ? KUBE_HEADERS : 0);
  if (!streamed && ctx.audit?.keepResponse) {
    ctx.audit.response = { body, contentType: negotiated.contentType };
  }
  return res;
}

/** Any error -> Status response. Internal errors are logged by the caller's chain.
 * `streamLarge`: the server's {@link BodyWriting}, for errors before there is a context. */
export function errorResponse(
  ctx: RequestContext | undefined,
  err: unknown,
  streamLarge: boolean,
): Response {
  const se = toStatusError(err);
  let negotiated: Negotiated = { encoding: "json", contentType: "application/json" };
  if (ctx) {
    try {
      // A Status has a protobuf form, so protobuf clients get errors they can decode.
      negotiated = negotiateOutput(ctx.req.headers.get("Accept"), { protobuf: true });
    } catch {
      // The client accepts nothing we have: it still gets JSON for the error.
    }
  }
  let body: string | Uint8Array<ArrayBuffer>;
  const status = ctx?.kubeSpelling ? inKubeSpelling(se.toStatus(), ctx.info.group) : se.toStatus();
  try {
    body = encodeBody(status, negotiated.encoding, ctx ? isPretty(ctx) : false);
  } catch {
    // Whatever the client asked for, an error it can read.
    negotiated = { encoding: "json", contentType: "application/json" };
    body = encodeBody(status, "json");
  }
  const headers = new Headers({ "Content-Type": negotiated.contentType, ...se.headers });
  if (ctx) warningHeaders(headers, ctx.warnings);
  return new Response(responseBody(body, streamLarge), { status: se.code, headers });
}

/** A Status about `group` as a client that used Kubernetes' name of it reads it:
 * `roles.rbac.authorization.k8s.io "x" not found`, as kube says. */
function inKubeSpelling(status: Status, group: string): Status {
  const kube = kubeGroup(group);
  if (kube === group) return status;
  const respell = (text: string) => text.split(group).join(kube);
  const out: Status = { ...status };
  if (status.message !== undefined) out.message = respell(status.message);
  if (status.details) {
    out.details = { ...status.details };
    if (out.details.group === group) out.details.group = kube;
    if (out.details.causes) {
      out.details.causes = out.details.causes.map((c) =>
        c.message === undefined ? c : { ...c, message: respell(c.message) }
      );
    }
  }
  return out;
}
