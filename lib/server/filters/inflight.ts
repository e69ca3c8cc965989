/**
 * In-flight limits (`--max-requests-inflight`, `--max-mutating-requests-inflight`, kube's 400
 * and 200): a request that finds its pool full gets 429 with `Retry-After: 1`, as kube's
 * max-in-flight filter answers. Watches hold no seat (they are long-running), and members of
 * `system:masters` are never limited (as in kube).
 *
 * Fairness, in place of kube's priority and fairness queues: while n users hold seats of a
 * pool, each may hold at most limit / (n + 1) of them. So seats are always left for a user
 * who holds none, however many requests others send, and a user alone may use half a pool.
 */

import { tooManyRequests } from "../../api/mod.ts";
import type { Filter, RequestContext } from "../context.ts";
import { isLongRunning } from "./timeout.ts";

const MUTATING_VERBS = new Set(["create", "update", "patch", "delete", "deletecollection"]);
const MUTATING_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** One pool of seats, shared fairly among users. */
export class SeatPool {
  readonly limit: number;
  #inUse = 0;
  readonly #byUser = new Map<string, number>();

  constructor(limit: number) {
    this.limit = limit;
  }

  get inUse(): number {
    return this.#inUse;
  }

  /** Takes a seat for `user`, or says no. */
  tryTake(user: string): boolean {
    if (this.#inUse >= this.limit) return false;
    const held = this.#byUser.get(user) ?? 0;
    const holders = this.#byUser.size + (held === 0 ? 1 : 0);
    if (held >= Math.max(1, Math.floor(this.limit / (holders + 1)))) return false;
    this.#byUser.set(user, held + 1);
    this.#inUse++;
    return true;
  }

  release(user: string): void {
    const held = this.#byUser.get(user) ?? 0;
    if (held <= 1) this.#byUser.delete(user);
    else this.#byUser.set(user, held - 1);
    this.#inUse--;
  }
}

function isMutating(ctx: RequestContext): boolean {
  return ctx.info.isResourceRequest
    ? MUTATING_VERBS.has(ctx.info.verb)
    : MUTATING_METHODS.has(ctx.req.method);
}

/** Seats in use per pool, for `apiserver_current_inflight_requests`. */
export type SeatsInUse = () => { readOnly: number; mutating: number };

/** Limits of 0 turn a pool off. `seats` is given the pools' use, read when scraped. */
export function inFlightFilter(
  opts: { readOnly: number; mutating: number },
  seats?: (inUse: SeatsInUse) => void,
): Filter {
  const readOnly = opts.readOnly > 0 ? new SeatPool(opts.readOnly) : undefined;
  const mutating = opts.mutating > 0 ? new SeatPool(opts.mutating) : undefined;
  seats?.(() => ({ readOnly: readOnly?.inUse ?? 0, mutating: mutating?.inUse ?? 0 }));
  return (ctx, next) => {
    const pool = isMutating(ctx) ? mutating : isLongRunning(ctx) ? undefined : readOnly;
    const user = ctx.user;
    if (!pool || user?.groups.includes("system:masters")) return next(ctx);
    const name = user?.username ?? "system:anonymous";
    if (!pool.tryTake(name)) {
      throw tooManyRequests("Too many requests, please try again later.", 1);
    }
    const work = next(ctx);
    work.then(() => pool.release(name), () => pool.release(name));
    return work;
  };
}
