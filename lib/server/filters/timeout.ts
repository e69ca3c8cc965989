/**
 * The deadline of non-long-running requests (`--request-timeout`, kube's 60 s default): a
 * request that has not been answered by then gets 504 Timeout, as kube answers it. The work
 * itself is not interrupted (a write may still land, as in kube); a client may ask for less
 * with `?timeout=` (a Go duration), never for more. Watches are bounded by their own
 * `timeoutSeconds` and `--min-request-timeout` instead.
 */

import { badRequest, timeout } from "../../api/errors.ts";
import { parseDuration } from "../../config/flags.ts";
import type { Filter, RequestContext } from "../context.ts";
import { queryParam } from "../request_info.ts";

/** The 504 of a request past its deadline, in kube's words. */
export function requestTimedOut() {
  return timeout(
    "Timeout: request did not complete within requested timeout - " +
      "context deadline exceeded",
    0,
  );
}

/** Whether a request may outlive the request timeout (kube: watch, and proxy/exec kinds). */
export function isLongRunning(ctx: RequestContext): boolean {
  return ctx.info.verb === "watch";
}

export function requestTimeoutFilter(maxMs: number): Filter {
  return (ctx, next) => {
    if (isLongRunning(ctx)) return next(ctx);
    let ms = maxMs;
    const asked = queryParam(ctx.url, "timeout");
    if (asked !== null && asked !== "") {
      let v: number;
      try {
        v = parseDuration(asked);
      } catch {
        throw badRequest(`invalid timeout specified in the request URL: "${asked}"`);
      }
      if (v > 0) ms = Math.min(ms, v);
    }
    const { promise, reject } = Promise.withResolvers<Response>();
    const timer = setTimeout(() => reject(requestTimedOut()), ms);
    const work = next(ctx);
    work.then(() => clearTimeout(timer), () => clearTimeout(timer));
    return Promise.race([work, promise]);
  };
}
