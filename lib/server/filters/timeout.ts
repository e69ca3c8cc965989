/**
 * The deadline of non-long-running requests (`--request-timeout`, kube's 60 s default): a
 * request that has not been answered by then gets 504 Timeout, as kube answers it. The work
 * itself is not interrupted (a write may still land, as in kube); a client may ask for less
 * with `?timeout=` (a Go duration), never for more. Watches are bounded by their own
 * `timeoutSeconds` and `--min-request-timeout` instead.
 */

import { badRequest, timeout } from "../../api/mod.ts";
import { parseDuration } from "../../config/mod.ts";
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

/** A request waiting for its answer, and how to give it the 504. */
interface Pending {
  /** Date.now() milliseconds. */
  deadline: number;
  expire: (err: unknown) => void;
}

/** How often deadlines are checked: a request gets its 504 up to this much late. */
const TICK_MS = 100;

/**
 * The deadlines of the requests in flight, checked by one timer for the server's lifetime
 * ({@link stop} ends it): a timer per request, or one started and stopped as the set empties
 * and fills, cost a GET about a fifth of its time.
 */
export class RequestDeadlines {
  readonly #pending = new Set<Pending>();
  #timer: ReturnType<typeof setInterval> | undefined = setInterval(() => this.#expire(), TICK_MS);

  add(p: Pending): void {
    this.#pending.add(p);
  }

  delete(p: Pending): void {
    this.#pending.delete(p);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #expire(): void {
    if (this.#pending.size === 0) return;
    const now = Date.now();
    for (const p of this.#pending) {
      if (p.deadline > now) continue;
      this.#pending.delete(p);
      p.expire(requestTimedOut());
    }
  }
}

export function requestTimeoutFilter(maxMs: number, deadlines: RequestDeadlines): Filter {
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
    const { promise, resolve, reject } = Promise.withResolvers<Response>();
    const pending: Pending = { deadline: Date.now() + ms, expire: reject };
    deadlines.add(pending);
    next(ctx).then((res) => {
      deadlines.delete(pending);
      resolve(res);
    }, (err) => {
      deadlines.delete(pending);
      reject(err);
    });
    return promise;
  };
}
