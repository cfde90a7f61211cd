/**
 * Exact decimal arithmetic for amounts, fast where amounts live. A value is held as an integer
 * number of units of 10^-scale (`units` a safe integer, `scale` 0..22) as long as every result
 * fits; the first result that does not (and every division that is not by a power of ten, and
 * every value that enters outside the range) is handed to decimal.js, which then carries the
 * value. Both paths compute the same exact results: an integer below 2^53 is exact in a double,
 * and decimal.js at 40 significant digits is exact on such operands. So nothing is ever binary
 * floating point: only the representation of the common case is cheaper (an amount of an invoice
 * is a few integer operations instead of a decimal.js object parsed from a string).
 *
 * A number enters as the decimal it is written as (its shortest JavaScript form, as decimal.js
 * takes it: 1.005 is 1.005, not the binary value below it). Rounding is half away from zero, the
 * rounding the EN 16931 and Peppol rules compute with.
 *
 * Why not a decimal library alone: decimal.js and big.js, used directly, cost 3-4× this CPU per
 * document in the validation benchmark (measured side by side, docs/benchmarks.md), because they
 * read every number operand through its decimal text.
 */
import { Decimal } from 'decimal.js';

/** decimal.js for what does not fit the integer form: 40 significant digits, half away from zero. */
export const Dec = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });

const MAX_SCALE = 22;
/** 10^0 .. 10^22, each exact in a double. */
const POW10: readonly number[] = Array.from({ length: MAX_SCALE + 1 }, (_, i) => 10 ** i);
/**
 * A number enters the integer form only when its units stay below 2^48: there the product
 * `n × 10^scale` is within 1/16 of the integer, so rounding it finds the units exactly, and the
 * decimal found is the only one of that scale that reads back as `n` (the one JavaScript writes).
 */
const ENTRY_LIMIT = 2 ** 48;
/** The most decimals a number is looked for in before decimal.js reads it. */
const ENTRY_MAX_SCALE = 15;

export type DecimalInput = number | string | ExactDecimal;

export class ExactDecimal {
  private constructor(
    /** The integer of units (fast form); unused when `big` is set. */
    private readonly units: number,
    private readonly scale: number,
    /** The value in decimal.js when it left the integer form. */
    private readonly big: Decimal | undefined,
  ) {}

  static of(v: DecimalInput): ExactDecimal {
    if (v instanceof ExactDecimal) return v;
    if (typeof v === 'number') return ExactDecimal.fromNumber(v);
    return ExactDecimal.fromBig(new Dec(v));
  }

  private static fast(units: number, scale: number): ExactDecimal {
    return new ExactDecimal(units, scale, undefined);
  }

  private static fromBig(big: Decimal): ExactDecimal {
    return new ExactDecimal(0, 0, big);
  }

  private static fromNumber(n: number): ExactDecimal {
    if (Number.isSafeInteger(n)) return ExactDecimal.fast(n, 0);
    if (n - n === 0) {
      for (let k = 1; k <= ENTRY_MAX_SCALE; k++) {
        const p = POW10[k]!;
        const x = n * p;
        if (!(x < ENTRY_LIMIT && x > -ENTRY_LIMIT)) break;
        const m = Math.round(x);
        if (m / p === n) return ExactDecimal.fast(m, k);
      }
    }
    return ExactDecimal.fromBig(new Dec(n));
  }

  /** The value in decimal.js (exact: units and scale written as a string). */
  private toBig(): Decimal {
    if (this.big) return this.big;
    if (this.units === 0) return new Dec(this.units); // keeps the sign of a negative zero
    return new Dec(this.scale === 0 ? String(this.units) : `${this.units}e-${this.scale}`);
  }

  /** Both operands' units at the larger scale, or undefined when one does not fit. */
  private static aligned(a: ExactDecimal, b: ExactDecimal): [number, number, number] | undefined {
    if (a.big || b.big) return undefined;
    if (a.scale === b.scale) return [a.units, b.units, a.scale];
    if (a.scale < b.scale) {
      const u = a.units * POW10[b.scale - a.scale]!;
      return Number.isSafeInteger(u) ? [u, b.units, b.scale] : undefined;
    }
    const u = b.units * POW10[a.scale - b.scale]!;
    return Number.isSafeInteger(u) ? [a.units, u, a.scale] : undefined;
  }

  plus(other: DecimalInput): ExactDecimal {
    const b = ExactDecimal.of(other);
    const al = ExactDecimal.aligned(this, b);
    if (al) {
      const u = al[0] + al[1];
      if (Number.isSafeInteger(u)) return ExactDecimal.fast(u, al[2]);
    }
    return ExactDecimal.fromBig(this.toBig().plus(b.toBig()));
  }

  minus(other: DecimalInput): ExactDecimal {
    return this.plus(ExactDecimal.of(other).negated());
  }

  times(other: DecimalInput): ExactDecimal {
    const b = ExactDecimal.of(other);
    if (!this.big && !b.big) {
      const u = this.units * b.units;
      const s = this.scale + b.scale;
      if (Number.isSafeInteger(u) && s <= MAX_SCALE) return ExactDecimal.fast(u, s);
    }
    return ExactDecimal.fromBig(this.toBig().times(b.toBig()));
  }

  /** The quotient: exact by a power of ten, else decimal.js's (40 significant digits). */
  div(other: DecimalInput): ExactDecimal {
    const b = ExactDecimal.of(other);
    if (!this.big && !b.big && b.units > 0) {
      const j = POW10.indexOf(b.units);
      if (j >= 0) {
        const s = this.scale + j - b.scale;
        if (s >= 0 && s <= MAX_SCALE) return ExactDecimal.fast(this.units, s);
        if (s < 0) {
          const u = this.units * POW10[-s]!;
          if (Number.isSafeInteger(u)) return ExactDecimal.fast(u, 0);
        }
      }
    }
    return ExactDecimal.fromBig(this.toBig().div(b.toBig()));
  }

  negated(): ExactDecimal {
    return this.big ? ExactDecimal.fromBig(this.big.negated()) : ExactDecimal.fast(-this.units, this.scale);
  }

  abs(): ExactDecimal {
    if (this.big) return ExactDecimal.fromBig(this.big.abs());
    return this.units < 0 || Object.is(this.units, -0) ? ExactDecimal.fast(-this.units, this.scale) : this;
  }

  /** -1, 0 or 1 as this is below, equal to or above `other`. */
  cmp(other: DecimalInput): number {
    const b = ExactDecimal.of(other);
    const al = ExactDecimal.aligned(this, b);
    if (al) return al[0] < al[1] ? -1 : al[0] > al[1] ? 1 : 0;
    return this.toBig().cmp(b.toBig());
  }

  lt(other: DecimalInput): boolean {
    return this.cmp(other) < 0;
  }
  lte(other: DecimalInput): boolean {
    return this.cmp(other) <= 0;
  }
  gt(other: DecimalInput): boolean {
    return this.cmp(other) > 0;
  }
  gte(other: DecimalInput): boolean {
    return this.cmp(other) >= 0;
  }
  eq(other: DecimalInput): boolean {
    return this.cmp(other) === 0;
  }

  /** Rounded to `places` decimals, half away from zero. */
  toDecimalPlaces(places: number): ExactDecimal {
    if (this.big) return ExactDecimal.fromBig(this.big.toDecimalPlaces(places, Decimal.ROUND_HALF_UP));
    if (this.scale <= places) return this;
    const d = POW10[this.scale - places]!;
    const negative = this.units < 0;
    const a = negative ? -this.units : this.units;
    let q = Math.floor(a / d);
    let r = a - q * d;
    if (r < 0) {
      q -= 1;
      r += d;
    } else if (r >= d) {
      q += 1;
      r -= d;
    }
    if (2 * r >= d) q += 1;
    return ExactDecimal.fast(negative ? -q : q, places);
  }

  /** How many decimals the value has (trailing zeros not counted). */
  decimalPlaces(): number {
    if (this.big) return this.big.decimalPlaces();
    let u = this.units;
    let s = this.scale;
    while (s > 0 && u % 10 === 0) {
      u /= 10;
      s -= 1;
    }
    return s;
  }

  /** The nearest double (the value itself when it is one). */
  toNumber(): number {
    return this.big ? this.big.toNumber() : this.units / POW10[this.scale]!;
  }

  /** As decimal.js writes it: no trailing zeros, exponent notation below 1e-7. */
  toString(): string {
    if (this.big || this.scale > 6) return this.toBig().toString();
    return this.digits(this.decimalPlaces(), this.units < 0);
  }

  /** With exactly `places` decimals, rounded half away from zero ("-" kept when a negative value rounds to 0). */
  toFixed(places: number): string {
    if (!this.big) {
      const negative = this.units < 0;
      const r = this.toDecimalPlaces(places);
      if (r.scale === places) return r.digits(places, negative);
      const u = places <= MAX_SCALE ? r.units * POW10[places - r.scale]! : NaN;
      if (Number.isSafeInteger(u)) return ExactDecimal.fast(u, places).digits(places, negative);
    }
    return this.toBig().toFixed(places, Decimal.ROUND_HALF_UP);
  }

  /** The units written with `places` decimals (places ≤ scale: the dropped digits are zeros). */
  private digits(places: number, negative: boolean): string {
    const u = Math.abs(this.units) / POW10[this.scale - places]!;
    let text = String(u);
    if (places > 0) {
      if (text.length <= places) text = '0'.repeat(places - text.length + 1) + text;
      text = `${text.slice(0, text.length - places)}.${text.slice(text.length - places)}`;
    }
    return negative ? `-${text}` : text;
  }
}
