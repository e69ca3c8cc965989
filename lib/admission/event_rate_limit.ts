/**
 * EventRateLimit (kube's plugin of that name, validating phase): creates and updates of core
 * v1 Events are counted against token buckets, one set of buckets per configured limit, and
 * refused with 429 TooManyRequests when a bucket is empty. As kube's:
 *
 * - only the core group's `Event` kind is limited (events.platform.io Events are not), and dry
 *   runs are not counted;
 * - every limit takes a token, even when another refuses; the refusal lists each limit that
 *   refused: `Too many requests: limit reached on type Namespace for key default`;
 * - a bucket holds `burst` tokens, starts full and refills at `qps` tokens a second;
 * - `Server` has one bucket; `Namespace`, `User` and `SourceAndObject` one per key, at most
 *   `cacheSize` of them, the least recently used dropped first (it starts full again when its
 *   key comes back);
 * - keys: the namespace; the user name; the event's `source.component`, `source.host` and
 *   `involvedObject` kind, namespace, name, uid and apiVersion run together.
 *
 * Time comes from a {@link Clock}, so that tests drive the refill. The buckets are an
 * {@link EventRateLimiter}; a `--workers` worker's plugin asks the main thread's instead.
 */

import { type Clock, type KubeObject, StatusError, systemClock } from "../api/mod.ts";
import type { AdmissionAttributes } from "./attributes.ts";
import type { AdmissionPlugin } from "./plugin.ts";

export const EVENT_RATE_LIMIT = "EventRateLimit";

export const LIMIT_TYPES = ["Server", "Namespace", "User", "SourceAndObject"] as const;
export type LimitType = typeof LIMIT_TYPES[number];

/** The default number of buckets kept per limit (kube's). */
export const DEFAULT_CACHE_SIZE = 4096;

/** One limit of a validated `eventratelimit.admission.platform.io/v1alpha1` Configuration. */
export interface EventRateLimit {
  type: LimitType;
  /** Tokens a second. */
  qps: number;
  /** Tokens a bucket holds. */
  burst: number;
  /** Buckets kept (ignored for Server). */
  cacheSize: number;
}

export interface EventRateLimitConfig {
  limits: EventRateLimit[];
}

/** A token bucket (kube's flowcontrol token bucket rate limiter): full at first. */
export class TokenBucket {
  #tokens: number;
  #last: number;

  constructor(readonly qps: number, readonly burst: number, readonly clock: Clock) {
    this.#tokens = burst;
    this.#last = clock.now();
  }

  /** Takes a token if there is one. */
  tryAccept(): boolean {
    const now = this.clock.now();
    if (now > this.#last) {
      this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#last) / 1000) * this.qps);
      this.#last = now;
    }
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/** At most `size` values by key; the least recently used goes first. */
export class LruCache<V> {
  readonly #items = new Map<string, V>();

  constructor(readonly size: number) {}

  /** The value of `key`, made by `make` when absent; either way now the most recent. */
  get(key: string, make: () => V): V {
    let value = this.#items.get(key);
    if (value !== undefined) {
      this.#items.delete(key);
    } else {
      value = make();
      if (this.#items.size >= this.size) {
        const oldest = this.#items.keys().next();
        if (!oldest.done) this.#items.delete(oldest.value);
      }
    }
    this.#items.set(key, value);
    return value;
  }

  has(key: string): boolean {
    return this.#items.has(key);
  }

  get length(): number {
    return this.#items.size;
  }
}

/** One limit: its buckets, one picked by the event's key. */
class Enforcer {
  readonly #bucket: (key: string) => TokenBucket;

  constructor(readonly limit: EventRateLimit, clock: Clock) {
    const make = () => new TokenBucket(limit.qps, limit.burst, clock);
    if (limit.type === "Server") {
      const single = make();
      this.#bucket = () => single;
    } else {
      const cache = new LruCache<TokenBucket>(limit.cacheSize || DEFAULT_CACHE_SIZE);
      this.#bucket = (key) => cache.get(key, make);
    }
  }

  /** Why the event of bucket `key` is refused, or undefined. */
  accept(key: string): string | undefined {
    if (this.#bucket(key).tryAccept()) return undefined;
    return `limit reached on type ${this.limit.type} for key ${key}`;
  }
}

/**
 * Takes a token from each limit's bucket for an event's keys (one per limit, in the
 * configuration's order): the refusal's reason, or undefined. The buckets may be another
 * thread's (`--workers` asks the main thread's), hence a promise.
 */
export type EventRateDecision = (
  keys: string[],
) => string | undefined | Promise<string | undefined>;

/** The buckets of every limit of `config`. */
export class EventRateLimiter {
  readonly #enforcers: Enforcer[];

  constructor(config: EventRateLimitConfig, clock: Clock = systemClock) {
    this.#enforcers = config.limits.map((l) => new Enforcer(l, clock));
  }

  /** An {@link EventRateDecision} over these buckets. */
  decide(keys: string[]): string | undefined {
    const refusals: string[] = [];
    this.#enforcers.forEach((e, i) => {
      const why = e.accept(keys[i] ?? "");
      if (why !== undefined) refusals.push(why);
    });
    if (refusals.length === 0) return undefined;
    return refusals.length === 1 ? refusals[0] : `[${refusals.join(", ")}]`;
  }
}

/** The bucket key of an event for a limit type (kube's key functions). */
export function limitKey(type: LimitType, a: AdmissionAttributes): string {
  switch (type) {
    case "Server":
      return "";
    case "Namespace":
      return a.namespace;
    case "User":
      return a.user?.username ?? "";
    case "SourceAndObject": {
      const event = a.object as KubeObject | undefined;
      if (!event) return "";
      const source = event.source ?? {};
      const involved = event.involvedObject ?? {};
      return [
        source.component,
        source.host,
        involved.kind,
        involved.namespace,
        involved.name,
        involved.uid,
        involved.apiVersion,
      ].map((s) => (typeof s === "string" ? s : "")).join("");
    }
  }
}

/**
 * The EventRateLimit plugin over `config`'s limits: its own buckets, or those `decide` keeps
 * (the main thread's, for a `--workers` worker).
 */
export function eventRateLimit(
  config: EventRateLimitConfig,
  clock: Clock = systemClock,
  decide?: EventRateDecision,
): AdmissionPlugin {
  if (!decide) {
    const limiter = new EventRateLimiter(config, clock);
    decide = (keys) => limiter.decide(keys);
  }
  const refuse = (why: string | undefined) => {
    if (why !== undefined) {
      throw new StatusError(429, "TooManyRequests", `Too many requests: ${why}`);
    }
  };
  return {
    name: EVENT_RATE_LIMIT,
    operations: ["CREATE", "UPDATE"],
    validate(a) {
      if (a.kind.group !== "" || a.kind.kind !== "Event") return;
      if (a.dryRun) return;
      const why = decide(config.limits.map((l) => limitKey(l.type, a)));
      return why instanceof Promise ? why.then(refuse) : refuse(why);
    },
  };
}
