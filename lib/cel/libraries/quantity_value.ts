/**
 * Kubernetes resource quantities ("1Gi", "500m", "1e3") as exact decimals, parsed and rounded
 * the way resource.ParseQuantity does: non-zero values round up (away from zero) to nano
 * precision, and binary-suffixed values are capped at 2^63-1 in magnitude.
 */

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);
const NANO_SCALE = 9;
/** Beyond this an exponent only costs memory; Kubernetes has no use for it either. */
const MAX_EXPONENT = 10_000;

const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = {
  "": 0,
  n: -9,
  u: -6,
  m: -3,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SUFFIXES: Readonly<Record<string, bigint>> = {
  Ki: 10n,
  Mi: 20n,
  Gi: 30n,
  Ti: 40n,
  Pi: 50n,
  Ei: 60n,
};

const FORMAT = /^([+-]?)(\d*)(?:\.(\d*))?([eEinumkKMGTP]*[+-]?\d*)$/;

const pow10 = (n: number) => 10n ** BigInt(n);

/** The value `unscaled × 10^-scale`. */
export class Quantity {
  constructor(readonly unscaled: bigint, readonly scale: number) {}

  static fromInt(n: bigint): Quantity {
    return new Quantity(n, 0);
  }

  /** Both values over a common scale. */
  #aligned(other: Quantity): [bigint, bigint, number] {
    const scale = Math.max(this.scale, other.scale);
    return [
      this.unscaled * pow10(scale - this.scale),
      other.unscaled * pow10(scale - other.scale),
      scale,
    ];
  }

  compare(other: Quantity): -1 | 0 | 1 {
    const [a, b] = this.#aligned(other);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  add(other: Quantity): Quantity {
    const [a, b, scale] = this.#aligned(other);
    return new Quantity(a + b, scale);
  }

  sub(other: Quantity): Quantity {
    const [a, b, scale] = this.#aligned(other);
    return new Quantity(a - b, scale);
  }

  sign(): -1 | 0 | 1 {
    return this.unscaled < 0n ? -1 : this.unscaled > 0n ? 1 : 0;
  }

  /** The value as an int64, or undefined when it has a fraction or does not fit. */
  asInt64(): bigint | undefined {
    let v: bigint;
    if (this.scale <= 0) {
      v = this.unscaled * pow10(-this.scale);
    } else {
      const divisor = pow10(this.scale);
      if (this.unscaled % divisor !== 0n) return undefined;
      v = this.unscaled / divisor;
    }
    return v >= INT64_MIN && v <= INT64_MAX ? v : undefined;
  }

  /** The nearest double (±Infinity beyond its range). */
  asApproximateFloat(): number {
    return this.scale > 0
      ? Number(this.unscaled) / 10 ** this.scale
      : Number(this.unscaled) * 10 ** -this.scale;
  }

  /** Equal values have equal keys, whatever their scale. */
  key(): string {
    let { unscaled, scale } = this;
    if (unscaled === 0n) return "0";
    while (unscaled % 10n === 0n) {
      unscaled /= 10n;
      scale--;
    }
    return `${unscaled}e${-scale}`;
  }
}

/** Parses a quantity; throws with Kubernetes' reason when the string is not one. */
export function parseQuantity(s: string): Quantity {
  const m = FORMAT.exec(s);
  if (m === null || (m[2] === "" && (m[3] ?? "") === "")) {
    throw new Error(
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
  }
  const [, sign, whole, fraction = "", suffix] = m;
  let unscaled = BigInt(whole + fraction || "0");
  let scale = fraction.length;
  let binary = false;
  if (Object.hasOwn(DECIMAL_SUFFIXES, suffix)) {
    scale -= DECIMAL_SUFFIXES[suffix];
  } else if (Object.hasOwn(BINARY_SUFFIXES, suffix)) {
    unscaled <<= BINARY_SUFFIXES[suffix];
    binary = true;
  } else if (/^[eE][+-]?\d+$/.test(suffix)) {
    const exponent = Number(suffix.slice(1));
    if (Math.abs(exponent) > MAX_EXPONENT) throw new Error("quantity exponent out of range");
    scale -= exponent;
  } else {
    throw new Error("unable to parse quantity's suffix");
  }
  if (scale > NANO_SCALE) {
    const divisor = pow10(scale - NANO_SCALE);
    unscaled = unscaled / divisor + (unscaled % divisor === 0n ? 0n : 1n);
    scale = NANO_SCALE;
  }
  const magnitude = new Quantity(unscaled, scale);
  const q = binary && magnitude.compare(Quantity.fromInt(INT64_MAX)) > 0
    ? Quantity.fromInt(INT64_MAX)
    : magnitude;
  return sign === "-" ? new Quantity(-q.unscaled, q.scale) : q;
}
