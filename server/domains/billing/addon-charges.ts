// What a period's add-on installs cost, as invoice lines. The marketplace keeps the installs, their plan
// changes and the price of an interval (installPrice, the one price); billing prorates it over the time
// an install spent on each plan in the period with prorate (the one proration rule, the one upgrades use).
import type { Executor } from "../../platform/db/index.ts";
import { addMonths } from "../account/billing-period.ts";
import {
  type CatalogueAddon,
  type CatalogueCoupon,
  findAddon,
  findCoupon,
  type Interval,
  planOf,
} from "../addons/catalogue.ts";
import { installPrice } from "../addons/price.ts";
import {
  type InstallInPeriod,
  installsInPeriodJson,
  installsInPeriodOf,
  installsInPeriods,
} from "../addons/service.ts";
import { prorate } from "./lines.ts";
import { type BillReadsStatement, billReadsStatement } from "./store.ts";

/**
 * What billing reads of the add-on marketplace: the lines a period's add-on installs cost (ADDON lines of
 * the period's invoice). Read in the caller's executor, so a closing period reads the installs in its
 * own transaction. A port, so the computation that uses it (service.ts) is given it at composition.
 */
export interface AddonCharges {
  /**
   * The statement that reads a bill (billing/store.ts `billReadsOf`) with what the period's lines are priced
   * from as one of its values, so a bill is read in one round trip; made once, with the port.
   */
  billReads: BillReadsStatement;
  /** The lines of the installs billReads read. */
  periodLinesOf(
    installs: unknown[],
    period: { start: Date; end: Date },
  ): { description: string; amountCents: number }[];
  /** The same for many accounts, each in its own period, in a few statements: by account, those with lines. */
  linesOfPeriods(
    db: Executor,
    periods: readonly { accountId: string; start: Date; end: Date }[],
  ): Promise<Map<string, { description: string; amountCents: number }[]>>;
}

/** A stretch of an install's life on one plan: [from, to), to null while it lasts. */
export interface PlanSpan {
  planSlug: string;
  interval: Interval;
  from: Date;
  to: Date | null;
}

export interface Period {
  start: Date;
  end: Date;
}

/** The plans an install was on, oldest first, from its row and its recorded changes (oldest first). */
export function planSpans(
  install: { createdAt: Date; endedAt: Date | null; planSlug: string; interval: string },
  changes: readonly { changedAt: Date; fromPlanSlug: string; fromInterval: string }[],
): PlanSpan[] {
  const spans: PlanSpan[] = [];
  let from = install.createdAt;
  for (const change of changes) {
    spans.push({
      planSlug: change.fromPlanSlug,
      interval: change.fromInterval as Interval,
      from,
      to: change.changedAt,
    });
    from = change.changedAt;
  }
  spans.push({ planSlug: install.planSlug, interval: install.interval as Interval, from, to: install.endedAt });
  return spans;
}

/**
 * How long an interval's price is spread over, measured from the period's start: a monthly price over the
 * billing period (an install live all period pays exactly its monthly price), a yearly one over a year.
 */
const intervalLengthMs = (interval: Interval, period: Period) =>
  interval === "YEARLY"
    ? addMonths(period.start, 12).getTime() - period.start.getTime()
    : period.end.getTime() - period.start.getTime();

const overlapMs = (from: Date, to: Date | null, period: Period) =>
  Math.max(
    0,
    Math.min(to?.getTime() ?? Number.POSITIVE_INFINITY, period.end.getTime()) -
      Math.max(from.getTime(), period.start.getTime()),
  );

/**
 * What an install costs in `period`: each plan's interval price (installPrice, with the install's coupon
 * while its discounted intervals from the install last) prorated by the time spent on it in the period.
 */
export function installCharge(
  addon: CatalogueAddon,
  install: { createdAt: Date; couponCode: string | null },
  spans: readonly PlanSpan[],
  period: Period,
  coupon: CatalogueCoupon | null = install.couponCode ? (findCoupon(install.couponCode) ?? null) : null,
): number {
  const first = spans[0];
  const discounted =
    first && coupon
      ? installPrice(addon, planOf(addon, first.planSlug), first.interval, coupon, install.createdAt)
      : null;
  // The discount lasts its intervals from the install (FOREVER: for its whole life).
  const discountEnd =
    !discounted || discounted.couponCode === null
      ? install.createdAt
      : discounted.discountedIntervals === null
        ? null
        : addMonths(install.createdAt, discounted.discountedIntervals * (first?.interval === "YEARLY" ? 12 : 1));
  let cents = 0;
  for (const span of spans) {
    const plan = planOf(addon, span.planSlug);
    const length = intervalLengthMs(span.interval, period);
    const pieces: { from: Date; to: Date | null; coupon: CatalogueCoupon | null }[] =
      discountEnd === null
        ? [{ from: span.from, to: span.to, coupon }]
        : discountEnd <= span.from
          ? [{ from: span.from, to: span.to, coupon: null }]
          : span.to !== null && span.to <= discountEnd
            ? [{ from: span.from, to: span.to, coupon }]
            : [
                { from: span.from, to: discountEnd, coupon },
                { from: discountEnd, to: span.to, coupon: null },
              ];
    for (const piece of pieces) {
      const ms = overlapMs(piece.from, piece.to, period);
      if (ms === 0) continue;
      const price = installPrice(addon, plan, span.interval, piece.coupon, install.createdAt).total;
      cents += prorate(price, ms, length);
    }
  }
  return cents;
}

/** One line per install live in the period: the add-on, its plans in the period, where it is installed. */
export function installLine(
  addon: CatalogueAddon,
  install: { createdAt: Date; couponCode: string | null; endpointName: string | null },
  spans: readonly PlanSpan[],
  period: Period,
) {
  const inPeriod = spans.filter((s) => overlapMs(s.from, s.to, period) > 0);
  const plans = [...new Set(inPeriod.map((s) => planOf(addon, s.planSlug).name))].join(" then ");
  const whole = spans.some((s) => s.from <= period.start && (s.to === null || s.to >= period.end));
  return {
    description: `${addon.name}, ${plans} plan${install.endpointName ? ` on ${install.endpointName}` : ""}${whole ? "" : " (prorated)"}`,
    amountCents: installCharge(addon, install, spans, period),
  };
}

/** The charges app.ts gives billing: the account's installs live in the period, priced and prorated. */
export const marketplaceCharges: AddonCharges = {
  billReads: billReadsStatement(installsInPeriodJson, "bill_reads_of_account"),
  periodLinesOf: (installs, period) => linesOf(installsInPeriodOf(installs), period),
  async linesOfPeriods(db, periods) {
    const installs = await installsInPeriods(db, periods);
    return new Map(
      periods.flatMap((p) => {
        const own = installs.get(p.accountId);
        return own ? [[p.accountId, linesOf(own, p)] as const] : [];
      }),
    );
  },
};

function linesOf(installs: readonly InstallInPeriod[], period: Period) {
  return installs.flatMap(({ install, changes }) => {
    const addon = findAddon(install.addonSlug);
    return addon ? [installLine(addon, install, planSpans(install, changes), period)] : [];
  });
}
