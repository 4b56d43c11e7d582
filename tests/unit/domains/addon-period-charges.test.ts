import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { addMonths } from "../../../server/domains/account/billing-period.ts";
import { findAddon, findCoupon } from "../../../server/domains/addons/catalogue.ts";
import { installPrice } from "../../../server/domains/addons/price.ts";
import { installCharge, installLine, type PlanSpan, planSpans } from "../../../server/domains/billing/addon-charges.ts";
import { prorate } from "../../../server/domains/billing/lines.ts";

const tokenApi = findAddon("token-api");
if (!tokenApi) throw new Error("the catalogue has no token-api");
const growth = tokenApi.plans.find((p) => p.slug === "token-api-growth");
if (!growth) throw new Error("the catalogue has no token-api-growth");

const start = new Date("2026-11-05T10:00:00.000Z");
const period = { start, end: addMonths(start, 1) };
const length = period.end.getTime() - period.start.getTime();
const at = (ms: number) => new Date(start.getTime() + ms);
/** A moment from a week before the period to a week after it. */
const moment = fc.integer({ min: -7 * 86_400_000, max: length + 7 * 86_400_000 });
const noCoupon = { couponCode: null };

const monthly = (planSlug: string, from: Date, to: Date | null): PlanSpan => ({
  planSlug,
  interval: "MONTHLY",
  from,
  to,
});

describe("an add-on install's charge in a billing period", () => {
  it("a monthly install live all period costs its monthly price; one made after the period or ended before it, nothing", () => {
    const whole = [monthly("token-api-growth", at(-86_400_000), null)];
    expect(installCharge(tokenApi, { createdAt: at(-86_400_000), ...noCoupon }, whole, period)).toBe(growth.price);
    const after = [monthly("token-api-growth", period.end, null)];
    expect(installCharge(tokenApi, { createdAt: period.end, ...noCoupon }, after, period)).toBe(0);
    const before = [monthly("token-api-growth", at(-5), at(0))];
    expect(installCharge(tokenApi, { createdAt: at(-5), ...noCoupon }, before, period)).toBe(0);
  });

  it("an install live for part of the period is its price prorated by billing's rule over the time it was live", () => {
    fc.assert(
      fc.property(moment, moment, (a, b) => {
        const [from, to] = a <= b ? [at(a), at(b)] : [at(b), at(a)];
        const spans = [monthly("token-api-growth", from, to)];
        const inside = Math.max(
          0,
          Math.min(to.getTime(), period.end.getTime()) - Math.max(from.getTime(), start.getTime()),
        );
        const charge = installCharge(tokenApi, { createdAt: from, ...noCoupon }, spans, period);
        expect(charge).toBe(prorate(growth.price, inside, length));
        expect(charge).toBeGreaterThanOrEqual(0);
        expect(charge).toBeLessThanOrEqual(growth.price);
      }),
    );
  });

  it("a plan change splits the charge at its time: each plan's share, neither more than the dearer plan nor less than the cheaper", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: length }), fc.boolean(), (changeMs, upgrade) => {
        const [before, after] = upgrade
          ? ["token-api-free", "token-api-growth"]
          : ["token-api-growth", "token-api-free"];
        const createdAt = at(-86_400_000);
        const spans = planSpans({ createdAt, endedAt: null, planSlug: after, interval: "MONTHLY" }, [
          { changedAt: at(changeMs), fromPlanSlug: before, fromInterval: "MONTHLY" },
        ]);
        const charge = installCharge(tokenApi, { createdAt, ...noCoupon }, spans, period);
        const priceOf = (slug: string) => tokenApi.plans.find((p) => p.slug === slug)?.price ?? -1;
        expect(charge).toBe(
          prorate(priceOf(before), changeMs, length) + prorate(priceOf(after), length - changeMs, length),
        );
        expect(charge).toBeLessThanOrEqual(growth.price + 1);
        expect(charge).toBeGreaterThanOrEqual(0);
      }),
    );
  });

  it("splitting a plan's time at any moment changes the charge by at most a cent per split (rounding only)", () => {
    fc.assert(
      fc.property(moment, moment, moment, (a, b, split) => {
        const [from, to] = a <= b ? [at(a), at(b)] : [at(b), at(a)];
        const cut = new Date(Math.min(Math.max(split + start.getTime(), from.getTime()), to.getTime()));
        const whole = installCharge(
          tokenApi,
          { createdAt: from, ...noCoupon },
          [monthly("token-api-growth", from, to)],
          period,
        );
        const parts = installCharge(
          tokenApi,
          { createdAt: from, ...noCoupon },
          [monthly("token-api-growth", from, cut), monthly("token-api-growth", cut, to)],
          period,
        );
        expect(Math.abs(parts - whole)).toBeLessThanOrEqual(1);
      }),
    );
  });

  it("a coupon discounts the install's first intervals only, at installPrice's discounted price", () => {
    const coupon = findCoupon("BUILDERS20");
    if (!coupon) throw new Error("the catalogue has no BUILDERS20");
    const discounted = installPrice(tokenApi, growth, "MONTHLY", coupon, start).total;
    fc.assert(
      fc.property(fc.integer({ min: -6, max: 6 }), (monthsBefore) => {
        // An install made `monthsBefore` months before the period's start, still live after it.
        const createdAt = addMonths(start, -monthsBefore);
        const install = { createdAt, couponCode: coupon.id };
        const spans = [monthly("token-api-growth", createdAt, null)];
        const charge = installCharge(tokenApi, install, spans, period);
        if (monthsBefore < 0) expect(charge).toBe(0);
        else if (monthsBefore < 3) expect(charge).toBe(discounted);
        else expect(charge).toBe(growth.price);
      }),
    );
  });

  it("one line per install, naming the add-on, its plans in the period and its endpoint, prorated when partial", () => {
    const spans = planSpans(
      { createdAt: at(86_400_000), endedAt: null, planSlug: "token-api-growth", interval: "MONTHLY" },
      [{ changedAt: at(2 * 86_400_000), fromPlanSlug: "token-api-free", fromInterval: "MONTHLY" }],
    );
    const line = installLine(
      tokenApi,
      { createdAt: at(86_400_000), couponCode: null, endpointName: "main" },
      spans,
      period,
    );
    expect(line.description).toBe("Token API, Free then Growth plan on main (prorated)");
    expect(line.amountCents).toBe(prorate(growth.price, length - 2 * 86_400_000, length));
  });
});
