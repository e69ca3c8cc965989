/**
 * Time and logging seams of the storage layer, so tests can fake them.
 * @module
 */

/** The source of wall-clock time (ms since the epoch). */
export interface Clock {
  now(): number;
}

/** `Date.now()`. */
export const systemClock: Clock = { now: () => Date.now() };

/** Where the storage layer reports repairs and trouble. The server's Logger fits. */
export interface StoreLogger {
  warn(msg: string, ...extra: unknown[]): void;
}

/** Writes warnings with `console.warn`. */
export const consoleLogger: StoreLogger = {
  warn: (msg, ...extra) => console.warn(msg, ...extra),
};
