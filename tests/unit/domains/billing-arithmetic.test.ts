import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  discountCents,
  overageCents,
  periodLines,
  prorate,
  roundShare,
  taxCents,
} from "../../../server/domains/billing/lines.ts";
import { billInput, cents, coupon } from "../../support/bill-arbitraries.ts";

const monthMs = 30 * 86_400_000;

describe("billing arithmetic", () => {
  it("rounds a share half up, within half a cent of the exact value", () => {
    fc.assert(
      fc.property(cents, fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 1, max: 1_000_000 }), (a, p, w) => {
        const r = roundShare(a, p, w);
        expect(Number.isInteger(r)).toBe(true);
        // |r - a·p/w| ≤ 1/2, in integers: |2rw - 2ap| ≤ w
        expect(Math.abs(2 * r * w - 2 * a * p)).toBeLessThanOrEqual(w);
      }),
    );
    expect(roundShare(1, 1, 2)).toBe(1);
    expect(roundShare(5, 1, 4)).toBe(1);
    expect(roundShare(7, 1, 2)).toBe(4);
  });

  it("prorates: the credit for the old plan and the charge for the new one sum to the difference, within a cent", () => {
    fc.assert(
      fc.property(cents, cents, fc.integer({ min: 0, max: monthMs }), (oldPrice, newPrice, remaining) => {
        const credit = prorate(oldPrice, remaining, monthMs);
        const charge = prorate(newPrice, remaining, monthMs);
        expect(credit).toBeGreaterThanOrEqual(0);
        expect(credit).toBeLessThanOrEqual(oldPrice);
        const exact = ((newPrice - oldPrice) * remaining) / monthMs;
        expect(Math.abs(charge - credit - exact)).toBeLessThanOrEqual(1);
        if (newPrice >= oldPrice) expect(charge).toBeGreaterThanOrEqual(credit);
      }),
    );
    expect(prorate(4900, monthMs / 2, monthMs)).toBe(2450);
    expect(prorate(4900, 0, monthMs)).toBe(0);
    expect(prorate(4900, monthMs, monthMs)).toBe(4900);
  });

  it("bills overage only above the allowance, monotonic in the credits used, none where the plan has no overage", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5_000_000_000 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 1, max: 2_000_000_000 }),
        fc.integer({ min: 1, max: 1000 }),
        (credits, more, allowance, price) => {
          const at = overageCents({ credits, allowance, centsPerMillion: price });
          expect(overageCents({ credits: credits + more, allowance, centsPerMillion: price })).toBeGreaterThanOrEqual(
            at,
          );
          if (credits <= allowance) expect(at).toBe(0);
          expect(overageCents({ credits, allowance, centsPerMillion: null })).toBe(0);
        },
      ),
    );
    expect(overageCents({ credits: 81_000_000, allowance: 80_000_000, centsPerMillion: 62 })).toBe(62);
  });

  it("discounts never exceed the subtotal nor go below zero; a percentage is that share of it", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1_000_000, max: 10_000_000 }), coupon, (subtotal, c) => {
        const d = discountCents(subtotal, c);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(Math.max(subtotal, 0));
        if (c?.percentOff === 100 && subtotal > 0) expect(d).toBe(subtotal);
      }),
    );
  });

  it("taxes what is charged, never a credit", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1_000_000, max: 10_000_000 }),
        fc.integer({ min: 0, max: 3000 }),
        (taxable, bps) => {
          const t = taxCents(taxable, bps);
          expect(t).toBeGreaterThanOrEqual(0);
          if (taxable <= 0) expect(t).toBe(0);
          else expect(Math.abs(2 * t * 10_000 - 2 * taxable * bps)).toBeLessThanOrEqual(10_000);
        },
      ),
    );
    expect(taxCents(4900, 2000)).toBe(980);
  });

  it("a period's total is the sum of its lines, every line whole cents, and subtotal − discount + tax", () => {
    fc.assert(
      fc.property(billInput, (input) => {
        const bill = periodLines(input);
        expect(bill.totalCents).toBe(bill.lines.reduce((s, l) => s + l.amountCents, 0));
        for (const l of bill.lines) expect(Number.isSafeInteger(l.amountCents)).toBe(true);
        expect(bill.totalCents).toBe(bill.subtotalCents - bill.discountCents + bill.taxCents);
        expect(bill.lines.filter((l) => l.kind === "DISCOUNT").length).toBe(bill.discountCents > 0 ? 1 : 0);
      }),
    );
  });

  it("writes the lines a Build month with overage, a 20% coupon and 10% tax makes", () => {
    const bill = periodLines({
      base: { planName: "Build", amountCents: 4900, trialCents: 0 },
      adjustments: [],
      usage: { credits: 90_000_000, allowance: 80_000_000, centsPerMillion: 62 },
      addons: [],
      coupon: { id: "WELCOME20", name: "Welcome: 20% off", percentOff: 20, amountOffCents: null },
      taxRateBps: 1000,
    });
    expect(bill.lines.map((l) => [l.kind, l.amountCents])).toEqual([
      ["BASE", 4900],
      ["OVERAGE", 620],
      ["DISCOUNT", -1104],
      ["TAX", 442],
    ]);
    expect(bill.totalCents).toBe(4858);
  });
});
