/**
 * The amounts' decimal arithmetic gives decimal.js's results exactly, whichever form carries a
 * value: every operation on generated operands (cents, many-decimal values, neighbours of a
 * rounding boundary, large and tiny values, doubles of any kind, values past 2^53) is compared
 * with decimal.js at the same configuration, as text, number and comparison.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { Dec, ExactDecimal } from '../../domain/artifacts/exact-decimal.js';

const cents = fc.integer({ min: -1e14, max: 1e14 }).map((c) => c / 100);
const decimals = fc.tuple(fc.integer({ min: -1e12, max: 1e12 }), fc.integer({ min: 0, max: 12 })).map(([m, d]) => m / 10 ** d);
const halves = fc.tuple(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 1, max: 6 })).map(([m, d]) => (m + 0.5) / 10 ** d);
const operand = fc.oneof(
  cents,
  decimals,
  halves,
  fc.double({ noNaN: false }),
  fc.maxSafeInteger(),
  fc.constantFrom(0, -0, 0.005, 1.005, 2.675, -2.675, 1e-7, 1.5e-7, 1e-12, 2 ** 53, 2 ** 48, -(2 ** 48), 1e21, 2 ** 70, 0.1, 0.2, 0.3, 100, 1000, 0.01),
);
const places = fc.integer({ min: 0, max: 8 });

function same(ours: ExactDecimal, theirs: InstanceType<typeof Dec>, what: string): void {
  expect(ours.toString(), `${what}: text`).to.equal(theirs.toString());
  expect(Object.is(ours.toNumber(), theirs.toNumber()), `${what}: number ${ours.toNumber()} vs ${theirs.toNumber()}`).to.equal(true);
  if (theirs.isFinite()) expect(ours.decimalPlaces(), `${what}: decimal places`).to.equal(theirs.decimalPlaces());
}

describe('ExactDecimal: the same results as decimal.js', () => {
  it('reads numbers and strings as decimal.js does', () => {
    fc.assert(
      fc.property(operand, (a) => {
        same(ExactDecimal.of(a), new Dec(a), `of(${a})`);
        same(ExactDecimal.of(String(a)), new Dec(String(a)), `of("${a}")`);
      }),
      { numRuns: 5000 },
    );
  });

  it('plus, minus, times, abs and comparisons', () => {
    fc.assert(
      fc.property(operand, operand, (a, b) => {
        const x = ExactDecimal.of(a);
        const y = new Dec(a);
        same(x.plus(b), y.plus(b), `${a} + ${b}`);
        same(x.minus(b), y.minus(b), `${a} - ${b}`);
        same(x.times(b), y.times(b), `${a} × ${b}`);
        same(x.abs(), y.abs(), `|${a}|`);
        if (!Number.isNaN(a) && !Number.isNaN(b)) {
          expect(x.cmp(b), `cmp ${a} ${b}`).to.equal(y.cmp(b));
          expect(x.lte(b)).to.equal(y.lte(b));
          expect(x.gt(b)).to.equal(y.gt(b));
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('division, by powers of ten and by anything', () => {
    const divisor = fc.oneof(operand.filter((b) => b !== 0), fc.constantFrom(100, 10, 1, 1000, 0.01, 1e22, 1e-20));
    fc.assert(
      fc.property(operand, divisor, (a, b) => {
        same(ExactDecimal.of(a).div(b), new Dec(a).div(b), `${a} / ${b}`);
      }),
      { numRuns: 5000 },
    );
  });

  it('rounding half away from zero, as decimal places and as fixed text', () => {
    fc.assert(
      fc.property(operand, operand, places, (a, b, dp) => {
        const x = ExactDecimal.of(a).times(b);
        const y = new Dec(a).times(b);
        same(x.toDecimalPlaces(dp), y.toDecimalPlaces(dp, Dec.ROUND_HALF_UP), `(${a} × ${b}) to ${dp} places`);
        expect(x.toFixed(dp), `(${a} × ${b}).toFixed(${dp})`).to.equal(y.toFixed(dp, Dec.ROUND_HALF_UP));
        expect(ExactDecimal.of(a).toFixed(dp), `${a}.toFixed(${dp})`).to.equal(new Dec(a).toFixed(dp, Dec.ROUND_HALF_UP));
      }),
      { numRuns: 5000 },
    );
  });

  it('chains of sums and products stay exact (the tax of a category)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(cents, fc.constantFrom(0, 5, 15, 19, 21, 7.7)), { minLength: 1, maxLength: 200 }), (lines) => {
        let x = ExactDecimal.of(0);
        let y = new Dec(0);
        for (const [net, rate] of lines) {
          x = x.plus(ExactDecimal.of(net).times(rate).div(100));
          y = y.plus(new Dec(net).times(rate).div(100));
        }
        same(x, y, 'sum of net × rate / 100');
        same(x.toDecimalPlaces(2), y.toDecimalPlaces(2, Dec.ROUND_HALF_UP), 'rounded');
      }),
      { numRuns: 1000 },
    );
  });
});
