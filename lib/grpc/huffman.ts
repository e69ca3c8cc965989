/**
 * HPACK's static Huffman code (RFC 7541, Appendix B), decoding only: this client sends its
 * header strings plain, and reads whatever the server chose.
 *
 * The code is canonical (codes of one length are consecutive, in symbol order, and shorter
 * codes come first), so the code lengths of the 257 symbols (256 octets and EOS) define it.
 * @module
 */

/** Code length in bits of each symbol 0–256, run-length packed as [length, count] pairs. */
// deno-fmt-ignore
const LENGTH_RUNS: number[] = [
  // 0–31: control characters
  13, 1, 23, 1, 28, 7, 24, 1, 30, 1, 28, 2, 30, 1, 28, 8, 30, 1, 28, 9,
  // 32–63: ' ' … '?'
  6, 1, 10, 2, 12, 1, 13, 1, 6, 1, 8, 1, 11, 1, 10, 2, 8, 1, 11, 1, 8, 1, 6, 3, 5, 3, 6, 7,
  7, 1, 8, 1, 15, 1, 6, 1, 12, 1, 10, 1,
  // 64–95: '@' … '_'
  13, 1, 6, 1, 7, 22, 8, 1, 7, 1, 8, 1, 13, 1, 19, 1, 13, 1, 14, 1, 6, 1,
  // 96–127: '`' … DEL
  15, 1, 5, 1, 6, 1, 5, 1, 6, 1, 5, 1, 6, 3, 5, 1, 7, 2, 6, 3, 5, 1, 6, 1, 7, 1, 6, 1, 5, 2,
  6, 1, 7, 5, 15, 1, 11, 1, 14, 1, 13, 1, 28, 1,
  // 128–255
  20, 1, 22, 1, 20, 2, 22, 3, 23, 1, 22, 1, 23, 5, 24, 1, 23, 1, 24, 2, 22, 1, 23, 1, 24, 1,
  23, 4, 21, 1, 22, 1, 23, 1, 22, 1, 23, 2, 24, 1, 22, 1, 21, 1, 20, 1, 22, 2, 23, 2, 21, 1,
  23, 1, 22, 2, 24, 1, 21, 1, 22, 1, 23, 2, 21, 2, 22, 1, 21, 1, 23, 1, 22, 1, 23, 2, 20, 1,
  22, 3, 23, 1, 22, 2, 23, 1, 26, 2, 20, 1, 19, 1, 22, 1, 23, 1, 22, 1, 25, 1, 26, 3, 27, 2,
  26, 1, 24, 1, 25, 1, 19, 1, 21, 1, 26, 1, 27, 2, 26, 1, 27, 1, 24, 1, 21, 2, 26, 2, 28, 1,
  27, 3, 20, 1, 24, 1, 20, 1, 21, 1, 22, 1, 21, 2, 23, 1, 22, 2, 25, 2, 24, 2, 26, 1, 23, 1,
  26, 1, 27, 1, 26, 2, 27, 5, 28, 1, 27, 5, 26, 1,
  // 256: EOS
  30, 1,
];

/** The code length of each symbol. */
export const CODE_LENGTHS: Uint8Array = (() => {
  const lengths: number[] = [];
  for (let i = 0; i < LENGTH_RUNS.length; i += 2) {
    for (let n = 0; n < LENGTH_RUNS[i + 1]; n++) lengths.push(LENGTH_RUNS[i]);
  }
  if (lengths.length !== 257) throw new Error(`huffman: ${lengths.length} code lengths`);
  return Uint8Array.from(lengths);
})();

/** The code of each symbol, right-aligned (assigned canonically from the lengths). */
export const CODES: Uint32Array = (() => {
  const order = Array.from(CODE_LENGTHS.keys()).sort((a, b) =>
    CODE_LENGTHS[a] - CODE_LENGTHS[b] || a - b
  );
  const codes = new Uint32Array(257);
  let code = 0;
  let len = CODE_LENGTHS[order[0]];
  for (const sym of order) {
    code *= 2 ** (CODE_LENGTHS[sym] - len);
    len = CODE_LENGTHS[sym];
    codes[sym] = code;
    code++;
  }
  return codes;
})();

/**
 * The decoding tree as flat arrays: node `n`'s child for bit `b` is `TREE[2n + b]`; a value at
 * or above {@link LEAF} is the leaf of symbol `value - LEAF`.
 */
const LEAF = 1 << 16;
const TREE: Int32Array = (() => {
  const tree = new Int32Array(2 * 512).fill(-1);
  let nodes = 1;
  for (let sym = 0; sym < 257; sym++) {
    const len = CODE_LENGTHS[sym];
    let node = 0;
    for (let i = len - 1; i >= 0; i--) {
      const bit = Math.floor(CODES[sym] / 2 ** i) & 1;
      const slot = 2 * node + bit;
      if (i === 0) tree[slot] = LEAF + sym;
      else {
        if (tree[slot] < 0) tree[slot] = nodes++;
        node = tree[slot];
      }
    }
  }
  return tree;
})();

/** A Huffman-coded string was malformed (RFC 7541 §5.2: a decoding error). */
export class HuffmanError extends Error {
  override name = "HuffmanError";
}

/** Decodes `bytes[start, end)`; padding must be at most 7 bits of EOS's prefix (all ones). */
export function huffmanDecode(bytes: Uint8Array, start: number, end: number): string {
  let out = "";
  let node = 0;
  let depth = 0; // bits read since the last symbol
  let ones = true; // whether those bits were all ones
  for (let i = start; i < end; i++) {
    const byte = bytes[i];
    for (let b = 7; b >= 0; b--) {
      const bit = (byte >> b) & 1;
      const next = TREE[2 * node + bit];
      depth++;
      ones &&= bit === 1;
      if (next >= LEAF) {
        const sym = next - LEAF;
        if (sym === 256) throw new HuffmanError("EOS in a Huffman-coded string");
        out += String.fromCharCode(sym);
        node = 0;
        depth = 0;
        ones = true;
      } else if (next < 0) {
        throw new HuffmanError("invalid Huffman code");
      } else node = next;
    }
  }
  if (depth > 7 || !ones) throw new HuffmanError("invalid Huffman padding");
  return out;
}
