/**
 * Writing responses. Every error leaves through {@link errorResponse}, which turns it into a
 * `Status` in the negotiated encoding.
 */

import { toStatusError } from "../api/errors.ts";
import { encodeBody } from "../codec/encode.ts";
import { type Negotiated, negotiateOutput } from "../codec/negotiate.ts";
import type { RequestContext } from "./context.ts";

/** Warning header values: `299 - "text"`, as kube sends them. */
function warningHeaders(headers: Headers, warnings: string[]): void {
  for (const w of warnings.slice(0, 64)) {
    const text = w.length > 256 ? w.slice(0, 253) + "..." : w;
    headers.append("Warning", `299 - ${JSON.stringify(text)}`);
  }
}

export function isPretty(ctx: RequestContext): boolean {
  const p = ctx.url.searchParams.get("pretty");
  return p === "true" || p === "1";
}

/** An object response in the negotiated encoding. */
export function objectResponse(
  ctx: RequestContext,
  code: number,
  body: unknown,
  negotiated: Negotiated,
): Response {
  const headers = new Headers({ "Content-Type": negotiated.contentType });
  warningHeaders(headers, ctx.warnings);
  return new Response(encodeBody(body, negotiated.encoding, isPretty(ctx)), {
    status: code,
    headers,
  });
}

/** Any error -> Status response. Internal errors are logged by the caller's chain. */
export function errorResponse(ctx: RequestContext | undefined, err: unknown): Response {
  const se = toStatusError(err);
  let negotiated: Negotiated = { encoding: "json", contentType: "application/json" };
  if (ctx) {
    try {
      negotiated = negotiateOutput(ctx.req.headers.get("Accept"));
    } catch {
      // The client accepts nothing we have: it still gets JSON for the error.
    }
  }
  const headers = new Headers({ "Content-Type": negotiated.contentType, ...se.headers });
  if (ctx) warningHeaders(headers, ctx.warnings);
  const body = encodeBody(se.toStatus(), negotiated.encoding, ctx ? isPretty(ctx) : false);
  return new Response(body, { status: se.code, headers });
}
