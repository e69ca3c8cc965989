/**
 * Trace and span ids (W3C: 16 and 8 bytes, not all zero) as 32-bit words, drawn from a pool of
 * random words refilled 4 KiB at a time (one `getRandomValues` per few hundred ids). Words,
 * not hex: the encoder writes them as bytes directly, and hex is made only for a
 * `traceparent` sent out or a sampler that reads it. As hex strings, ids cost a request
 * (five or more spans) about as much as encoding every other field of its spans: the string
 * built digit pair by digit pair, then read back a character at a time (measured, README).
 *
 * @module
 */

const POOL_WORDS = 1024;
const pool = new Uint32Array(POOL_WORDS);
let at = POOL_WORDS;

function word(): number {
  if (at === POOL_WORDS) {
    crypto.getRandomValues(pool);
    at = 0;
  }
  return pool[at++];
}

function hex8(w: number): string {
  return w.toString(16).padStart(8, "0");
}

/** Words from 8·n hex digits (the caller has checked them). */
function wordsOf(hex: string, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(parseInt(hex.slice(8 * i, 8 * i + 8), 16) >>> 0);
  return out;
}

/** A 16-byte trace id: four words, most significant first. */
export class TraceId {
  #hex: string | undefined;
  constructor(
    readonly w0: number,
    readonly w1: number,
    readonly w2: number,
    readonly w3: number,
    hex?: string,
  ) {
    this.#hex = hex;
  }

  /** A new random trace id. */
  static random(): TraceId {
    for (;;) {
      const a = word(), b = word(), c = word(), d = word();
      if (a | b | c | d) return new TraceId(a, b, c, d);
    }
  }

  /** From 32 hex digits (a parsed `traceparent`'s). */
  static fromHex(hex: string): TraceId {
    const [a, b, c, d] = wordsOf(hex, 4);
    return new TraceId(a, b, c, d, hex.toLowerCase());
  }

  /** 32 lower-case hex digits. */
  hex(): string {
    return this.#hex ??= hex8(this.w0) + hex8(this.w1) + hex8(this.w2) + hex8(this.w3);
  }
}

/** An 8-byte span id: two words, most significant first. */
export class SpanId {
  constructor(readonly hi: number, readonly lo: number) {}

  /** A new random span id. */
  static random(): SpanId {
    for (;;) {
      const hi = word(), lo = word();
      if (hi | lo) return new SpanId(hi, lo);
    }
  }

  /** From 16 hex digits (a parsed `traceparent`'s). */
  static fromHex(hex: string): SpanId {
    const [hi, lo] = wordsOf(hex, 2);
    return new SpanId(hi, lo);
  }

  /** 16 lower-case hex digits. */
  hex(): string {
    return hex8(this.hi) + hex8(this.lo);
  }
}
