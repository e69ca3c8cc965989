/**
 * The key and value rules every backend applies before a write (as the embedded engine does):
 * keys of 1 to {@link MAX_KEY_LENGTH} characters without NUL or lone surrogates, values that are
 * well-formed strings. Breaking one is `StoreError` `Invalid`.
 * @module
 */

import { MAX_KEY_LENGTH } from "../engine.ts";
import { StoreError } from "../store.ts";

/** Throws `Invalid` for a key the store does not accept. */
export function checkKey(key: string): void {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new StoreError("Invalid", String(key), `Key must be 1 to ${MAX_KEY_LENGTH} characters`);
  }
  if (key.includes("\0") || !key.isWellFormed()) {
    throw new StoreError("Invalid", key, `Key "${key}" contains NUL or a lone surrogate`);
  }
}

/** Throws `Invalid` for a value that is not a well-formed string. */
export function checkValue(key: string, value: string): void {
  if (typeof value !== "string" || !value.isWellFormed()) {
    throw new StoreError("Invalid", key, `Value of "${key}" must be a well-formed string`);
  }
}
