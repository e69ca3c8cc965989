/**
 * Where the storage layer reports repairs and trouble: a logger seam, so that the server can
 * pass its own and tests can keep quiet.
 * @module
 */

/** Where the storage layer reports repairs and trouble. The server's Logger fits. */
export interface StoreLogger {
  warn(msg: string, ...extra: unknown[]): void;
}

/** Writes warnings with `console.warn`. */
export const consoleLogger: StoreLogger = {
  warn: (msg, ...extra) => console.warn(msg, ...extra),
};
