/**
 * Random trace and span ids (W3C: 16 and 8 bytes, lower-case hex, not all zero), hexed from a
 * pool of random bytes refilled 4 KiB at a time: one `getRandomValues` per few hundred ids.
 */

const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let at = POOL_BYTES;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

function hex(bytes: number): string {
  if (at + bytes > POOL_BYTES) {
    crypto.getRandomValues(pool);
    at = 0;
  }
  let out = "";
  let zero = true;
  for (let i = 0; i < bytes; i++) {
    const b = pool[at++];
    if (b !== 0) zero = false;
    out += HEX[b];
  }
  return zero ? hex(bytes) : out;
}

/** A new 32-hex-digit trace id. */
export function traceId(): string {
  return hex(16);
}

/** A new 16-hex-digit span id. */
export function spanId(): string {
  return hex(8);
}
