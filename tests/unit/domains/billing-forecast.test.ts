import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { billForecast } from "../../../server/domains/billing/forecast.ts";
import { type PeriodBillInput, periodLines } from "../../../server/domains/billing/lines.ts";

const DAY = 86_400_000;
const period = { start: new Date("2026-11-05T10:00:00Z"), end: new Date("2026-12-05T10:00:00Z") };
const input = (credits: number): PeriodBillInput => ({
  base: { planName: "Build", amountCents: 4900, trialCents: 0 },
  adjustments: [],
  usage: { credits, allowance: 1_000_000, centsPerMillion: 62 },
  addons: [{ description: "Token API, Growth plan", amountCents: 2900 }],
  coupon: null,
  taxRateBps: 1000,
});

describe("the forecast of a period's bill", () => {
  it("projects the credits so far at their rate to the period's end, and bills that through periodLines", () => {
    // 10 days in, 400,000 credits: 40,000 a day, 1,200,000 over the 30-day period.
    const now = new Date(period.start.getTime() + 10 * DAY);
    const daily = Array.from({ length: 10 }, (_, i) => ({
      day: new Date(Date.UTC(2026, 10, 5 + i)),
      credits: 40_000,
    }));
    const forecast = billForecast(input(400_000), period, daily, now);
    expect(forecast.projectedCredits).toBe(1_200_000);
    expect(forecast.bill).toEqual(periodLines(input(1_200_000)));
    expect(forecast.bill.overageCents).toBe(12);
    const used = forecast.points.filter((p) => p.series === "USED");
    const projected = forecast.points.filter((p) => p.series === "PROJECTED");
    const allowance = forecast.points.filter((p) => p.series === "ALLOWANCE");
    // A point at each UTC midnight in the period: Nov 6 … Dec 5.
    expect(allowance.map((p) => p.at.toISOString().slice(0, 10))).toEqual(
      Array.from({ length: 30 }, (_, i) => new Date(Date.UTC(2026, 10, 6 + i)).toISOString().slice(0, 10)),
    );
    expect(allowance.every((p) => p.credits === 1_000_000)).toBe(true);
    expect(used.map((p) => p.credits)).toEqual([
      40_000, 80_000, 120_000, 160_000, 200_000, 240_000, 280_000, 320_000, 360_000, 400_000,
    ]);
    // The projection starts where the used line ends.
    expect(projected[0]).toEqual(used.at(-1) && { ...used.at(-1), series: "PROJECTED" });
    expect(projected.at(-1)?.credits).toBeLessThanOrEqual(forecast.projectedCredits);
  });

  it("never projects below what is used, and is what is used once the period is over", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: -DAY, max: 31 * DAY }),
        (credits, offset) => {
          const now = new Date(period.start.getTime() + offset);
          const forecast = billForecast(input(credits), period, [], now);
          expect(forecast.projectedCredits).toBeGreaterThanOrEqual(credits);
          if (now >= period.end) expect(forecast.projectedCredits).toBe(credits);
          expect(forecast.bill.totalCents).toBe(forecast.bill.lines.reduce((sum, l) => sum + l.amountCents, 0));
          const projected = forecast.points.filter((p) => p.series === "PROJECTED").map((p) => p.credits);
          for (let i = 1; i < projected.length; i++) expect(projected[i]).toBeGreaterThanOrEqual(projected[i - 1]);
        },
      ),
    );
  });
});
