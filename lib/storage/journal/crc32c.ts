/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every journal
 * record. Table-driven, eight bytes per step ("slicing-by-8").
 *
 * @example
 * ```ts
 * crc32c(new TextEncoder().encode("123456789")); // 0xE3069283
 * ```
 * @module
 */

const POLY = 0x82f63b78;

/** TABLES[k][b]: the CRC contribution of byte `b` followed by `k` zero bytes. */
const TABLES: Uint32Array[] = (() => {
  const t0 = new Uint32Array(256);
  for (let b = 0; b < 256; b++) {
    let c = b;
    for (let i = 0; i < 8; i++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t0[b] = c >>> 0;
  }
  const tables = [t0];
  for (let k = 1; k < 8; k++) {
    const prev = tables[k - 1];
    const next = new Uint32Array(256);
    for (let b = 0; b < 256; b++) next[b] = (prev[b] >>> 8) ^ t0[prev[b] & 0xff];
    tables.push(next);
  }
  return tables;
})();

/**
 * Extends a running CRC-32C with `bytes`. Start with `crc = 0`; feeding data in pieces gives
 * the same result as one call over the concatenation.
 */
export function crc32c(bytes: Uint8Array, crc = 0): number {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = TABLES;
  let c = ~crc >>> 0;
  let i = 0;
  const n = bytes.length;
  const end8 = n - (n % 8);
  for (; i < end8; i += 8) {
    const lo = c ^ (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24));
    c = t7[lo & 0xff] ^ t6[(lo >>> 8) & 0xff] ^ t5[(lo >>> 16) & 0xff] ^ t4[lo >>> 24] ^
      t3[bytes[i + 4]] ^ t2[bytes[i + 5]] ^ t1[bytes[i + 6]] ^ t0[bytes[i + 7]];
  }
  for (; i < n; i++) c = t0[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}
