/** fast-check arbitraries of a period's bill, for the billing arithmetic's property tests. */
import fc from "fast-check";
import type { CouponTerms, PeriodBillInput } from "../../server/domains/billing/lines.ts";

export const cents = fc.integer({ min: 0, max: 10_000_000 });

export const coupon: fc.Arbitrary<CouponTerms | null> = fc.oneof(
  fc.constant(null),
  fc.integer({ min: 1, max: 100 }).map((p) => ({ id: "P", name: `${p}% off`, percentOff: p, amountOffCents: null })),
  fc.integer({ min: 1, max: 1_000_000 }).map((a) => ({ id: "A", name: "off", percentOff: null, amountOffCents: a })),
);

/** What a period's lines are computed from, without an account balance. */
export const billInput: fc.Arbitrary<PeriodBillInput> = fc.record({
  base: fc.oneof(
    fc.constant(null),
    cents.chain((amount) =>
      fc.integer({ min: 0, max: amount }).map((trialCents) => ({ planName: "Build", amountCents: amount, trialCents })),
    ),
  ),
  adjustments: fc.array(
    fc.integer({ min: -1_000_000, max: 1_000_000 }).map((amountCents) => ({
      kind: "PRORATION" as const,
      description: "proration",
      amountCents,
    })),
    { maxLength: 4 },
  ),
  usage: fc.record({
    credits: fc.integer({ min: 0, max: 5_000_000_000 }),
    allowance: fc.integer({ min: 1, max: 2_000_000_000 }),
    centsPerMillion: fc.oneof(fc.constant(null), fc.integer({ min: 1, max: 1000 })),
  }),
  addons: fc.array(fc.record({ description: fc.constant("add-on"), amountCents: cents }), { maxLength: 3 }),
  coupon,
  taxRateBps: fc.integer({ min: 0, max: 3000 }),
});
