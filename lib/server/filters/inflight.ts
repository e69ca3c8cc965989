/**
 * In-flight limits (`--max-requests-inflight`, `--max-mutating-requests-inflight`, kube's 400
 * and 200): a request that finds its pool full gets 429 with `Retry-After: 1`, as kube's
 * max-in-flight filter answers. Watches hold no seat (they are long-running), and members of
 * `system:masters` are never limited (as in kube).
 *
 * Fairness, in place of kube's priority and fairness queues: while n users hold seats of a
 * pool, each may hold at most limit / (n + 1) of them. So seats are always left for a user
 * who holds none, however many requests others send, and a user alone may use half a pool.
 *
 * With `--workers`, every thread's pools count in the same {@link SharedSeats} (shared memory),
 * so a limit holds for the process, as kube's does; the share of each user is judged per thread.
 */

import { tooManyRequests } from "../../api/mod.ts";
import type { Filter, RequestContext } from "../context.ts";
import { isLongRunning } from "./timeout.ts";

const MUTATING_VERBS = new Set(["create", "update", "patch", "delete", "deletecollection"]);
const MUTATING_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** The seats in use of both pools, in shared memory: one for every thread of a process. */
export class SharedSeats {
  /** [read-only, mutating]: seats taken by every thread. */
  readonly cells: Int32Array<SharedArrayBuffer>;

  constructor(cells = new Int32Array(new SharedArrayBuffer(8))) {
    this.cells = cells;
  }
}

const READ_ONLY = 0;
const MUTATING = 1;

/** One pool of seats, shared fairly among users. */
export class SeatPool {
  readonly limit: number;
  /** This thread's seats in use. */
  #inUse = 0;
  readonly #byUser = new Map<string, number>();
  /** The process's seats in use, when the pool is shared with other threads. */
  readonly #shared?: { cells: Int32Array; index: number };

  constructor(limit: number, shared?: { cells: Int32Array; index: number }) {
    this.limit = limit;
    this.#shared = shared;
  }

  /** This thread's seats in use (threads' metrics are summed when scraped). */
  get inUse(): number {
    return this.#inUse;
  }

  /** Takes a seat for `user`, or says no. */
  tryTake(user: string): boolean {
    const held = this.#byUser.get(user) ?? 0;
    const holders = this.#byUser.size + (held === 0 ? 1 : 0);
    if (held >= Math.max(1, Math.floor(this.limit / (holders + 1)))) return false;
    const shared = this.#shared;
    if (shared) {
      if (Atomics.add(shared.cells, shared.index, 1) >= this.limit) {
        Atomics.sub(shared.cells, shared.index, 1);
        return false;
      }
    } else if (this.#inUse >= this.limit) {
      return false;
    }
    this.#byUser.set(user, held + 1);
    this.#inUse++;
    return true;
  }

  release(user: string): void {
    const held = this.#byUser.get(user) ?? 0;
    if (held <= 1) this.#byUser.delete(user);
    else this.#byUser.set(user, held - 1);
    this.#inUse--;
    if (this.#shared) Atomics.sub(this.#shared.cells, this.#shared.index, 1);
  }
}

function isMutating(ctx: RequestContext): boolean {
  return ctx.info.isResourceRequest
    ? MUTATING_VERBS.has(ctx.info.verb)
    : MUTATING_METHODS.has(ctx.req.method);
}

/** Seats in use per pool, for `apiserver_current_inflight_requests`. */
export type SeatsInUse = () => { readOnly: number; mutating: number };

/**
 * Limits of 0 turn a pool off. `seats` is given the pools' use, read when scraped. `shared`:
 * the seats every thread of the process counts in (`--workers`).
 */
export function inFlightFilter(
  opts: { readOnly: number; mutating: number; shared?: SharedSeats },
  seats?: (inUse: SeatsInUse) => void,
): Filter {
  const cells = opts.shared?.cells;
  const readOnly = opts.readOnly > 0
    ? new SeatPool(opts.readOnly, cells && { cells, index: READ_ONLY })
    : undefined;
  const mutating = opts.mutating > 0
    ? new SeatPool(opts.mutating, cells && { cells, index: MUTATING })
    : undefined;
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
