// The account's credit in the one computation of a period's lines: taken last, after the discount and the
// tax, never more than the bill comes to; the total stays the sum of the lines.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { balanceAppliedCents, periodLines } from "../../../server/domains/billing/lines.ts";
import { billInput, cents } from "../../support/bill-arbitraries.ts";

const billInputWithBalance = fc
  .tuple(billInput, fc.oneof(fc.constant(0), cents, fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })))
  .map(([input, balanceCents]) => ({ ...input, balanceCents }));

describe("the account's credit on a period's bill", () => {
  it("keeps the total the sum of the lines, takes the credit last and never more than the bill comes to", () => {
    fc.assert(
      fc.property(billInputWithBalance, (input) => {
        const bill = periodLines(input);
        const without = periodLines({ ...input, balanceCents: 0 });
        expect(bill.totalCents).toBe(bill.lines.reduce((sum, l) => sum + l.amountCents, 0));
        for (const l of bill.lines) expect(Number.isSafeInteger(l.amountCents)).toBe(true);
        // The credit changes neither the discount nor the tax: it is a payment, taken after them.
        expect(bill.discountCents).toBe(without.discountCents);
        expect(bill.taxCents).toBe(without.taxCents);
        const applied = Math.min(input.balanceCents ?? 0, Math.max(0, without.totalCents));
        expect(bill.balanceAppliedCents).toBe(applied);
        expect(bill.totalCents).toBe(without.totalCents - applied);
        expect(bill.totalCents).toBe(bill.subtotalCents - bill.discountCents + bill.taxCents - applied);
        if (without.totalCents >= 0) expect(bill.totalCents).toBeGreaterThanOrEqual(0);
        const credits = bill.lines.filter((l) => l.kind === "BALANCE");
        expect(credits.length).toBe(applied > 0 ? 1 : 0);
        if (applied > 0) expect(bill.lines.at(-1)).toMatchObject({ kind: "BALANCE", amountCents: -applied });
        expect(bill.lines.slice(0, without.lines.length)).toEqual(without.lines);
      }),
    );
  });

  it("writes the lines of a Build month with a 20% coupon, 10% tax and $10 of credit", () => {
    const bill = periodLines({
      base: { planName: "Build", amountCents: 4900, trialCents: 0 },
      adjustments: [],
      usage: { credits: 0, allowance: 80_000_000, centsPerMillion: 62 },
      addons: [],
      coupon: { id: "WELCOME20", name: "Welcome: 20% off", percentOff: 20, amountOffCents: null },
      taxRateBps: 1000,
      balanceCents: 1000,
    });
    expect(bill.lines.map((l) => [l.kind, l.amountCents])).toEqual([
      ["BASE", 4900],
      ["DISCOUNT", -980],
      ["TAX", 392],
      ["BALANCE", -1000],
    ]);
    expect(bill.totalCents).toBe(3312);
  });

  it("refuses a balance that is not whole, safe, non-negative cents", () => {
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53]) expect(() => balanceAppliedCents(100, bad)).toThrow(RangeError);
    expect(balanceAppliedCents(-50, 1000)).toBe(0);
    expect(balanceAppliedCents(700, 1000)).toBe(700);
  });
});
