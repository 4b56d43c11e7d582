import type { Db, Executor } from "../../platform/db/index.ts";
import { badInput, conflict, foundOr, notFound } from "../../platform/errors.ts";
import { type DomainEvents, VIEWERS_PER_EVENT } from "../../platform/events.ts";
import { isUuid } from "../../platform/ids.ts";
import { connection, cursorArgument, pageSize } from "../../platform/paging.ts";
import { addMonths } from "../account/billing-period.ts";
import {
  type BillingInterval,
  type CataloguePlan,
  cataloguePlan,
  licencePriceCents,
  planLimits,
} from "../account/plan-catalogue.ts";
import {
  changeAccountBilling,
  changeSubscription,
  FREE_PLAN_ID,
  getAccountOrFail,
  lockDueSubscriptions,
  lockedSubscription,
  moveSubscriptionPeriods,
  subscriptionOf,
  trialEndsOf,
} from "../account/service.ts";
import { type CatalogueCoupon, findCoupon, intervalsCovered, usableCoupon } from "../catalogue/coupons.ts";
import { liveEndpoints, pauseBeyondLimit } from "../endpoints/service.ts";
import { creditsByDay, enforceMonthlyLimit, periodCredits, periodCreditsOfMany } from "../usage/service.ts";
import type { AddonCharges } from "./addon-charges.ts";
import { billForecast } from "./forecast.ts";
import { type PeriodBill, type PeriodBillInput, periodLines, prorate } from "./lines.ts";
import * as store from "./store.ts";

/** The billing version the catalogue's plans belong to (B6); accounts on an older one may migrate to it. */
export const CURRENT_BILLING_VERSION = 6;

/** What billing runs on: the database, the events other parts follow, the marketplace's prices, the tax rate. */
export interface BillingDeps {
  db: Db;
  events: DomainEvents;
  addons: AddonCharges;
  taxRateBps: number;
}

type Locked = NonNullable<Awaited<ReturnType<typeof lockedSubscription>>>;
type Subscription = Locked["subscription"];
export type BillingState = Omit<store.BillingStateRow, "accountId">;
export type InvoiceStatus = "draft" | "open" | "paid" | "uncollectible" | "void";

const INVOICE_MOVES: Record<InvoiceStatus, InvoiceStatus[]> = {
  draft: ["open", "paid", "void"],
  open: ["paid", "uncollectible", "void"],
  uncollectible: ["paid", "void"],
  paid: [],
  void: [],
};

/** The one rule for an invoice's status: where it may go from where it is (Stripe's invoice states). */
export function invoiceStatusAfter(from: InvoiceStatus, to: InvoiceStatus): InvoiceStatus {
  if (!INVOICE_MOVES[from].includes(to)) throw conflict(`An invoice that is ${from} cannot become ${to}.`);
  return to;
}

export const ACTIVE = "active";
export const PAST_DUE = "past_due";

/**
 * The one rule of an invoice paid in full, however it was paid (a card charge, a crypto transfer): the
 * invoice paid and, with no other open invoice left, the subscription active again. The caller holds the
 * subscription's lock, then the invoice's.
 */
export async function settlePaidInvoice(tx: Executor, accountId: string, invoice: { id: string; status: string }) {
  await store.setInvoicePaid(tx, accountId, invoice.id, invoiceStatusAfter(invoice.status as InvoiceStatus, "paid"));
  if ((await store.otherOpenInvoices(tx, accountId, invoice.id)).length === 0) {
    await changeSubscription(tx, accountId, { status: ACTIVE });
  }
}

const licenceMonths = (interval: string) => (interval === "YEARLY" ? 12 : 1);

function planOrBadInput(planId: string, pointer: string): CataloguePlan {
  const plan = cataloguePlan(planId);
  if (!plan) throw badInput([{ pointer, message: `No plan is called ${planId}.` }]);
  return plan;
}

const planOf = (planId: string) => foundOr(cataloguePlan(planId), "The plan");

/** Billing's state of the subscription; an account that never changed plan has the defaults. */
export function stateOrDefaults(row: store.BillingStateRow | undefined, sub: Subscription): BillingState {
  if (row) {
    const { accountId: _accountId, ...state } = row;
    return state;
  }
  return {
    periodPlanId: sub.planId,
    licensedStart: sub.currentPeriodStart,
    licensedEnd: sub.currentPeriodEnd,
    downgradePlanId: null,
    downgradeKeptEndpointIds: [],
    cancelationRequestedAt: null,
    cancelationSurvey: null,
    canceledAt: null,
    migrationPlanId: null,
    couponId: null,
    couponInvoicesLeft: null,
  };
}

/** The coupon that applies to the next invoice, if any is left to apply. */
function couponInForce(state: BillingState): CatalogueCoupon | null {
  if (!state.couponId) return null;
  if (state.couponInvoicesLeft !== null && state.couponInvoicesLeft <= 0) return null;
  return findCoupon(state.couponId) ?? null;
}

/** What a period's bill reads of other rows: the trial's end, the prorations, the credits, the add-ons' lines. */
interface BillReads {
  trialEnd: Date | null;
  adjustments: { description: string; amountCents: number }[];
  credits: number;
  addons: { description: string; amountCents: number }[];
  /** The account's credit, in cents. */
  balanceCents: number;
}

/** What a period's bill is made of, from the subscription, billing's state and what was read (periodLines computes it). */
function billInputOf(
  deps: BillingDeps,
  sub: Subscription,
  state: BillingState,
  period: { start: Date; end: Date },
  reads: BillReads,
): PeriodBillInput {
  const periodPlan = planOf(state.periodPlanId);
  const current = planOf(sub.planId);
  let base: PeriodBillInput["base"] = null;
  if (state.licensedStart >= period.start && state.licensedStart < period.end) {
    const amountCents = licencePriceCents(periodPlan, sub.interval as BillingInterval);
    const length = state.licensedEnd.getTime() - state.licensedStart.getTime();
    const inTrial = reads.trialEnd
      ? Math.min(reads.trialEnd.getTime(), state.licensedEnd.getTime()) - state.licensedStart.getTime()
      : 0;
    base = {
      planName: periodPlan.prettyName,
      amountCents,
      trialCents: inTrial > 0 ? prorate(amountCents, inTrial, length) : 0,
    };
  }
  return {
    base,
    adjustments: reads.adjustments.map((a) => ({
      kind: "PRORATION" as const,
      description: a.description,
      amountCents: a.amountCents,
    })),
    usage: {
      credits: reads.credits,
      allowance: sub.responsesPerMonth,
      centsPerMillion: current.overageCentsPerMillionCredits,
    },
    addons: reads.addons,
    coupon: couponInForce(state),
    taxRateBps: deps.taxRateBps,
    balanceCents: reads.balanceCents,
  };
}

/**
 * What one account's period bill is made of, read in one statement (store.billReadsOf) in `db` (the
 * caller's transaction when it closes the period), beside the subscription and billing's state it is
 * computed with. The period is the subscription's, up to `periodEnd` when one is given.
 */
async function billRead(deps: BillingDeps, db: Executor, accountId: string, periodEnd: Date | null = null) {
  const row = foundOr(await store.billReadsOf(db, accountId, deps.addons.billReads, periodEnd), "The subscription");
  const sub = row.subscription;
  const state = stateOrDefaults(row.state ?? undefined, sub);
  const period = { start: sub.currentPeriodStart, end: periodEnd ?? sub.currentPeriodEnd };
  const input = billInputOf(deps, sub, state, period, {
    trialEnd: row.trialEnd,
    adjustments: row.adjustments,
    credits: row.credits,
    addons: deps.addons.periodLinesOf(row.installs, period),
    balanceCents: row.balanceCents,
  });
  return { state, period, input };
}

async function lockedWithState(tx: Executor, accountId: string) {
  const locked = foundOr(await lockedSubscription(tx, accountId), "The subscription");
  return { locked, state: stateOrDefaults(await store.getState(tx, accountId), locked.subscription) };
}

/** After a change commits: the viewer, the plan's RPS at the proxy and the monthly limit follow at once. */
async function changed(deps: BillingDeps, accountId: string, pausedEndpointIds: string[] = []) {
  await deps.events.emitAndWait("viewer.changed", { accountId, userId: null });
  for (const endpoint of await liveEndpoints(deps.db, accountId)) {
    await deps.events.emitAndWait("ratelimits.changed", { accountId, endpointId: endpoint.id });
  }
  for (const endpointId of pausedEndpointIds)
    await deps.events.emitAndWait("endpoint.changed", { accountId, endpointId });
  await enforceMonthlyLimit(deps.db, deps.events, accountId);
}

/**
 * Closes [sub's period start, `end`) into its invoice, in the caller's transaction: the lines periodLines
 * computes, the coupon's use counted. Undefined when the period is empty or already has its invoice.
 */
async function invoicePeriod(
  deps: BillingDeps,
  tx: Executor,
  accountId: string,
  sub: Subscription,
  planName: string,
  state: BillingState,
  end: Date,
) {
  const period = { start: sub.currentPeriodStart, end };
  if (period.end <= period.start) return { invoice: undefined, state };
  const bill = periodLines((await billRead(deps, tx, accountId, end)).input);
  const sequence = (await store.countInvoices(tx, accountId)) + 1;
  const invoice = await store.insertInvoice(
    tx,
    accountId,
    invoiceRow(accountId, sequence, period, bill, planName),
    bill.lines,
  );
  if (!invoice) throw conflict("This period has its invoice already.");
  await store.insertBalanceDebits(
    tx,
    [debitOf(invoice, bill)].filter((d) => d.cents > 0),
  );
  return { invoice, state: afterInvoice(state) };
}

/** A period's invoice row: its number (the account's `sequence`th), its totals, open unless nothing is due. */
function invoiceRow(
  accountId: string,
  sequence: number,
  period: { start: Date; end: Date },
  bill: ReturnType<typeof periodLines>,
  planName: string,
) {
  const status = invoiceStatusAfter("draft", bill.totalCents > 0 ? "open" : "paid");
  return {
    number: `NP-${accountId.slice(0, 8).toUpperCase()}-${String(sequence).padStart(4, "0")}`,
    periodStart: period.start,
    periodEnd: period.end,
    status,
    subtotalCents: bill.subtotalCents,
    discountCents: bill.discountCents,
    taxCents: bill.taxCents,
    totalCents: bill.totalCents,
    amountRemainingCents: status === "open" ? bill.totalCents : 0,
    planName,
  };
}

/** What an invoice took of its account's balance (the BALANCE line periodLines wrote). */
const debitOf = (invoice: store.InvoiceRow, bill: PeriodBill) => ({
  accountId: invoice.accountId,
  invoiceId: invoice.id,
  number: invoice.number,
  cents: bill.balanceAppliedCents,
});

/** Billing's state after an invoice: the coupon's use counted, and dropped once its invoices are done. */
function afterInvoice(state: BillingState): BillingState {
  const coupon = couponInForce(state);
  const left = coupon && state.couponInvoicesLeft !== null ? state.couponInvoicesLeft - 1 : state.couponInvoicesLeft;
  const couponDone = coupon !== null && left !== null && left <= 0;
  return { ...state, couponId: couponDone ? null : state.couponId, couponInvoicesLeft: couponDone ? null : left };
}

/** The licence after a period ending at `end` on the same plan and interval: renewed when it ended there. */
function licenceAfter(state: BillingState, end: Date, interval: string) {
  const renew = end >= state.licensedEnd;
  return {
    licensedStart: renew ? end : state.licensedStart,
    licensedEnd: renew ? addMonths(end, licenceMonths(interval)) : state.licensedEnd,
  };
}

/**
 * Closes the account's current period if it ended by `now`: its invoice, then what was scheduled for its
 * end (a migration, a cancelation to the Free plan, or a downgrade pausing the endpoints not kept), then
 * the next period. One transaction on the locked subscription row: a second process waits, then finds
 * the period moved on; the invoice's unique (account, period start) is the last guard. Returns whether it
 * closed one (after a clock jump several may be due: the caller asks again).
 */
export async function closeEndedPeriod(deps: BillingDeps, accountId: string, now = new Date()): Promise<boolean> {
  const done = await deps.db.transaction(async (tx) => {
    const { locked, state } = await lockedWithState(tx, accountId);
    const sub = locked.subscription;
    if (sub.currentPeriodEnd > now) return null;
    const end = sub.currentPeriodEnd;
    const closed = await invoicePeriod(deps, tx, accountId, sub, locked.plan.prettyName, state, end);
    const canceling = state.cancelationRequestedAt !== null;
    const nextPlanId = state.migrationPlanId ?? (canceling ? FREE_PLAN_ID : state.downgradePlanId) ?? sub.planId;
    const nextPlan = planOf(nextPlanId);
    const interval = canceling ? "MONTHLY" : sub.interval;
    const renew = end >= state.licensedEnd || nextPlanId !== sub.planId || interval !== sub.interval;
    const licensedStart = renew ? end : state.licensedStart;
    const licensedEnd = renew ? addMonths(end, licenceMonths(interval)) : state.licensedEnd;
    const paused =
      nextPlanId === sub.planId
        ? []
        : await pauseBeyondLimit(
            tx,
            accountId,
            nextPlan.defaultEndpointLimit,
            canceling ? [] : state.downgradeKeptEndpointIds,
          );
    await changeSubscription(tx, accountId, {
      planId: nextPlanId,
      interval,
      ...(nextPlanId !== sub.planId && planLimits(nextPlan)),
      currentPeriodStart: end,
      currentPeriodEnd: addMonths(end, 1),
    });
    if (state.migrationPlanId) await changeAccountBilling(tx, accountId, { billingVersion: CURRENT_BILLING_VERSION });
    await store.putState(tx, accountId, {
      ...closed.state,
      periodPlanId: nextPlanId,
      licensedStart,
      licensedEnd,
      downgradePlanId: null,
      downgradeKeptEndpointIds: [],
      cancelationRequestedAt: null,
      canceledAt: canceling ? end : state.canceledAt,
      migrationPlanId: null,
    });
    return { paused, planChanged: nextPlanId !== sub.planId };
  });
  if (!done) return false;
  if (done.planChanged) await changed(deps, accountId, done.paused);
  else await deps.events.emitAndWait("viewer.changed", { accountId, userId: null });
  return true;
}

/** Closes the account's periods that ended by `now`, oldest first (more than one after a clock jump). */
async function closeEndedPeriods(deps: BillingDeps, accountId: string, now: Date) {
  let closed = 0;
  while (await closeEndedPeriod(deps, accountId, now)) closed++;
  return closed;
}

/**
 * Closes, in one transaction, the periods of up to `limit` accounts that ended by `now` and renew as they
 * are (nothing scheduled for the period's end): the subscription rows locked (rows another process holds
 * are skipped), each bill computed by periodLines from rows read for the whole batch, invoices, periods
 * and states written in a few statements. The rest of the due accounts it locked (a downgrade, a
 * cancelation or a migration waiting) are returned for closeEndedPeriod, one by one.
 */
async function closeDueBatch(deps: BillingDeps, now: Date, limit: number) {
  const result = await deps.db.transaction(async (tx) => {
    const due = await lockDueSubscriptions(tx, now, limit);
    const states = await store.statesOf(
      tx,
      due.map((d) => d.subscription.accountId),
    );
    const renewing: { sub: Subscription; planName: string; state: BillingState }[] = [];
    const scheduled: string[] = [];
    for (const { subscription: sub, plan } of due) {
      const state = stateOrDefaults(states.get(sub.accountId), sub);
      if (state.cancelationRequestedAt || state.migrationPlanId || state.downgradePlanId) scheduled.push(sub.accountId);
      else renewing.push({ sub, planName: plan.prettyName, state });
    }
    const periods = renewing.map(({ sub }) => ({
      accountId: sub.accountId,
      start: sub.currentPeriodStart,
      end: sub.currentPeriodEnd,
    }));
    const ids = periods.map((p) => p.accountId);
    const [trialEnds, adjustments, credits, addons, counts, balances] = [
      await trialEndsOf(tx, ids),
      await store.adjustmentsOfMany(
        tx,
        periods.map((p) => ({ accountId: p.accountId, periodStart: p.start })),
      ),
      await periodCreditsOfMany(tx, periods),
      await deps.addons.linesOfPeriods(tx, periods),
      await store.invoiceCounts(tx, ids),
      await store.balancesOf(tx, ids),
    ];
    const drafts = renewing.map(({ sub, planName, state }, i) => {
      const accountId = sub.accountId;
      const bill = periodLines(
        billInputOf(deps, sub, state, periods[i], {
          trialEnd: trialEnds.get(accountId) ?? null,
          adjustments: adjustments.get(accountId) ?? [],
          credits: credits.get(accountId) ?? 0,
          addons: addons.get(accountId) ?? [],
          balanceCents: balances.get(accountId) ?? 0,
        }),
      );
      const sequence = (counts.get(accountId) ?? 0) + 1;
      return { accountId, row: invoiceRow(accountId, sequence, periods[i], bill, planName), lines: bill.lines, bill };
    });
    const invoicesWritten = await store.insertInvoices(tx, drafts);
    const written = new Set(invoicesWritten.map((i) => i.accountId));
    if (written.size !== drafts.length) throw conflict("A period in this batch has its invoice already.");
    const bills = new Map(drafts.map((d) => [d.accountId, d.bill]));
    await store.insertBalanceDebits(
      tx,
      invoicesWritten.map((i) => debitOf(i, bills.get(i.accountId) as PeriodBill)).filter((d) => d.cents > 0),
    );
    await moveSubscriptionPeriods(
      tx,
      periods.map((p) => ({ accountId: p.accountId, start: p.end, end: addMonths(p.end, 1) })),
    );
    await store.putStates(
      tx,
      renewing.map(({ sub, state }) => ({
        ...afterInvoice(state),
        ...licenceAfter(state, sub.currentPeriodEnd, sub.interval),
        accountId: sub.accountId,
        periodPlanId: sub.planId,
      })),
    );
    return { locked: due.length, closed: ids, scheduled };
  });
  // The viewers of the accounts closed read their new period: a few messages for the batch, after the commit.
  for (let i = 0; i < result.closed.length; i += VIEWERS_PER_EVENT)
    await deps.events.emitAndWait("viewers.changed", { accountIds: result.closed.slice(i, i + VIEWERS_PER_EVENT) });
  return result;
}

/**
 * The billing clock's tick: every period that ended by `now`, closed once. Runs in every process that
 * serves the API; the subscription rows' locks and the invoice's unique index keep two from closing a
 * period twice, and what is due is read from the database, so a restart loses none. Periods that renew
 * as they are close in batches (closeDueBatch); one with a change scheduled for its end, alone.
 */
export async function closeEndedPeriodsOfAll(deps: BillingDeps, now = new Date(), batch = 500): Promise<number> {
  let closed = 0;
  for (;;) {
    const { locked, closed: batchClosed, scheduled } = await closeDueBatch(deps, now, batch);
    closed += batchClosed.length;
    for (const accountId of scheduled) closed += await closeEndedPeriods(deps, accountId, now);
    if (locked === 0) return closed;
  }
}

/**
 * The plan the account is on and billing's state of it; a change (`closing`) first closes any period
 * that ended, so it never prorates against a licence that is over. A read leaves that to the clock.
 */
async function current(deps: BillingDeps, accountId: string, now: Date, closing: boolean) {
  if (closing) await closeEndedPeriods(deps, accountId, now);
  const [found, row] = await Promise.all([subscriptionOf(deps.db, accountId), store.getState(deps.db, accountId)]);
  const sub = foundOr(found, "The subscription");
  return { ...sub, state: stateOrDefaults(row, sub.subscription) };
}

const couponState = (coupon: CatalogueCoupon | null) =>
  coupon ? { couponId: coupon.id, couponInvoicesLeft: intervalsCovered(coupon, 1) } : {};

/**
 * A paid subscription for an account on the Free plan, from now: the Free period so far closes into its
 * invoice, a first subscription to a plan with a trial starts the trial, and the new licence and period
 * begin now.
 */
export async function createSubscription(
  deps: BillingDeps,
  accountId: string,
  input: { plan: string; interval?: BillingInterval; couponCode?: string },
  now = new Date(),
) {
  const plan = planOrBadInput(input.plan, "/plan");
  if (plan.priceCents === 0)
    throw badInput([{ pointer: "/plan", message: "Choose a paid plan: every account has the Free plan." }]);
  const coupon = input.couponCode
    ? usableCoupon(input.couponCode, { product: "SUBSCRIPTION" }, now, "/couponCode")
    : null;
  const interval = input.interval ?? "MONTHLY";
  await closeEndedPeriods(deps, accountId, now);
  await deps.db.transaction(async (tx) => {
    const { locked, state } = await lockedWithState(tx, accountId);
    if (locked.plan.priceCents > 0) {
      throw conflict(`You subscribe to ${locked.plan.prettyName} already: upgrade or downgrade it instead.`);
    }
    const closed = await invoicePeriod(deps, tx, accountId, locked.subscription, locked.plan.prettyName, state, now);
    const account = await getAccountOrFail(tx, accountId);
    if (plan.trialDays > 0 && account.freeTrialEndsAt === null) {
      await changeAccountBilling(tx, accountId, {
        freeTrialEndsAt: new Date(now.getTime() + plan.trialDays * 86_400_000),
      });
    }
    await changeSubscription(tx, accountId, {
      planId: plan.id,
      status: "active",
      interval,
      startDate: now,
      currentPeriodStart: now,
      currentPeriodEnd: addMonths(now, 1),
      ...planLimits(plan),
    });
    await store.putState(tx, accountId, {
      ...closed.state,
      periodPlanId: plan.id,
      licensedStart: now,
      licensedEnd: addMonths(now, licenceMonths(interval)),
      downgradePlanId: null,
      downgradeKeptEndpointIds: [],
      cancelationRequestedAt: null,
      cancelationSurvey: null,
      canceledAt: null,
      ...couponState(coupon),
    });
  });
  await changed(deps, accountId);
}

/**
 * Moves the subscription to `plan` now, prorated over what is left of the licence: a credit for the old
 * plan's unused time and a charge for the new plan's, recorded for the period's invoice (Stripe's
 * prorations). Endpoints beyond a lower limit are paused, the oldest kept. In the caller's transaction.
 */
async function changePlanNow(
  tx: Executor,
  accountId: string,
  locked: Locked,
  state: BillingState,
  plan: CataloguePlan,
  now: Date,
) {
  const sub = locked.subscription;
  const interval = sub.interval as BillingInterval;
  const length = state.licensedEnd.getTime() - state.licensedStart.getTime();
  const remaining = state.licensedEnd.getTime() - now.getTime();
  const old = planOf(sub.planId);
  const until = state.licensedEnd.toISOString().slice(0, 10);
  await store.insertAdjustments(tx, accountId, [
    {
      periodStart: sub.currentPeriodStart,
      kind: "PRORATION",
      description: `Unused time on ${old.prettyName} until ${until}`,
      amountCents: -prorate(licencePriceCents(old, interval), remaining, length),
    },
    {
      periodStart: sub.currentPeriodStart,
      kind: "PRORATION",
      description: `Remaining time on ${plan.prettyName} until ${until}`,
      amountCents: prorate(licencePriceCents(plan, interval), remaining, length),
    },
  ]);
  await changeSubscription(tx, accountId, { planId: plan.id, ...planLimits(plan) });
  return pauseBeyondLimit(tx, accountId, plan.defaultEndpointLimit, []);
}

/** A higher plan, in force at once and prorated; from the Free plan it is a new subscription. */
export async function upgradeSubscription(
  deps: BillingDeps,
  accountId: string,
  input: { plan: string; couponCode?: string },
  now = new Date(),
) {
  const plan = planOrBadInput(input.plan, "/plan");
  const coupon = input.couponCode
    ? usableCoupon(input.couponCode, { product: "SUBSCRIPTION" }, now, "/couponCode")
    : null;
  const { plan: onPlan } = await current(deps, accountId, now, true);
  if (onPlan.priceCents === 0) return createSubscription(deps, accountId, input, now);
  if (plan.priceCents <= onPlan.priceCents) {
    throw badInput([
      {
        pointer: "/plan",
        message: `${plan.prettyName} is not above your ${onPlan.prettyName} plan: downgrade instead.`,
      },
    ]);
  }
  await deps.db.transaction(async (tx) => {
    const { locked, state } = await lockedWithState(tx, accountId);
    if (state.cancelationRequestedAt)
      throw conflict("Your subscription ends at the period's end: revert the cancelation first.");
    await changePlanNow(tx, accountId, locked, state, plan, now);
    await store.putState(tx, accountId, {
      ...state,
      downgradePlanId: null,
      downgradeKeptEndpointIds: [],
      ...couponState(coupon),
    });
  });
  await changed(deps, accountId);
}

/**
 * A lower plan from the period's end. When the account has more endpoints than the plan allows it must
 * name the ones to keep (at most the limit); the others are paused then.
 */
export async function downgradeSubscription(
  deps: BillingDeps,
  accountId: string,
  input: { plan: string; endpointIds?: string[] | null },
  now = new Date(),
) {
  const plan = planOrBadInput(input.plan, "/plan");
  const keep = input.endpointIds ?? [];
  const owned = new Set((await liveEndpoints(deps.db, accountId)).map((e) => e.id));
  // Another account's endpoint, like one that does not exist, is not found (decision 0014).
  if (keep.some((id) => !owned.has(id))) throw notFound("The endpoint");
  const { plan: onPlan } = await current(deps, accountId, now, true);
  if (plan.priceCents >= onPlan.priceCents) {
    throw badInput([
      { pointer: "/plan", message: `${plan.prettyName} is not below your ${onPlan.prettyName} plan: upgrade instead.` },
    ]);
  }
  await deps.db.transaction(async (tx) => {
    const { state } = await lockedWithState(tx, accountId);
    if (state.cancelationRequestedAt) {
      throw conflict("Your subscription ends at the period's end: revert the cancelation first.");
    }
    const live = await liveEndpoints(tx, accountId);
    const liveIds = new Set(live.map((e) => e.id));
    const limit = plan.defaultEndpointLimit;
    keep.forEach((id, i) => {
      if (!liveIds.has(id)) throw notFound("The endpoint");
      if (keep.indexOf(id) !== i) {
        throw badInput([{ pointer: `/endpointIds/${i}`, message: "This endpoint is named twice." }]);
      }
    });
    if (keep.length > limit) {
      throw badInput([
        {
          pointer: "/endpointIds",
          message: `Keep at most ${limit}: the ${plan.prettyName} plan allows ${limit} endpoints.`,
        },
      ]);
    }
    if (live.length > limit && keep.length === 0) {
      throw badInput([
        {
          pointer: "/endpointIds",
          message: `You have ${live.length} endpoints and the ${plan.prettyName} plan allows ${limit}: choose the ones to keep.`,
        },
      ]);
    }
    await store.putState(tx, accountId, { ...state, downgradePlanId: plan.id, downgradeKeptEndpointIds: keep });
  });
  await deps.events.emitAndWait("viewer.changed", { accountId, userId: null });
}

/** Billing state changes that touch nothing but the state: each checks it holds, then writes it. */
async function changeState(
  deps: BillingDeps,
  accountId: string,
  now: Date,
  change: (state: BillingState, locked: Locked) => Partial<BillingState>,
) {
  await closeEndedPeriods(deps, accountId, now);
  await deps.db.transaction(async (tx) => {
    const { locked, state } = await lockedWithState(tx, accountId);
    await store.putState(tx, accountId, { ...state, ...change(state, locked) });
  });
  await deps.events.emitAndWait("viewer.changed", { accountId, userId: null });
}

export const cancelDowngrade = (deps: BillingDeps, accountId: string, now = new Date()) =>
  changeState(deps, accountId, now, (state) => {
    if (!state.downgradePlanId) throw conflict("No downgrade is scheduled.");
    return { downgradePlanId: null, downgradeKeptEndpointIds: [] };
  });

/** The cancel-plan survey's answer, kept; at the period's end the account moves to the Free plan. */
export const requestCancelation = (
  deps: BillingDeps,
  accountId: string,
  survey: { reasons: string[]; comment?: string | null },
  now = new Date(),
) =>
  changeState(deps, accountId, now, (state, locked) => {
    if (locked.plan.priceCents === 0) throw conflict("The Free plan has nothing to cancel.");
    if (state.cancelationRequestedAt) throw conflict("The cancelation is requested already.");
    return {
      cancelationRequestedAt: now,
      cancelationSurvey: { reasons: survey.reasons, comment: survey.comment?.trim() || null },
      downgradePlanId: null,
      downgradeKeptEndpointIds: [],
    };
  });

export const revertCancelation = (deps: BillingDeps, accountId: string, now = new Date()) =>
  changeState(deps, accountId, now, (state) => {
    if (!state.cancelationRequestedAt) throw conflict("No cancelation is requested.");
    return { cancelationRequestedAt: null, cancelationSurvey: null };
  });

async function assertMigrates(db: Executor, accountId: string) {
  const account = await getAccountOrFail(db, accountId);
  if (account.billingVersion >= CURRENT_BILLING_VERSION) {
    throw conflict(`This account is on billing version ${account.billingVersion} already.`);
  }
}

/** A move to a current (B6) plan, at the period's end. */
export async function scheduleBillingMigration(deps: BillingDeps, accountId: string, planId: string, now = new Date()) {
  const plan = planOrBadInput(planId, "/plan");
  await assertMigrates(deps.db, accountId);
  await changeState(deps, accountId, now, () => ({ migrationPlanId: plan.id }));
}

/** The same move, now: the plan changes at once, prorated either way, and the account's billing version with it. */
export async function migrateBillingVersion(deps: BillingDeps, accountId: string, planId: string, now = new Date()) {
  const plan = planOrBadInput(planId, "/plan");
  await closeEndedPeriods(deps, accountId, now);
  const paused = await deps.db.transaction(async (tx) => {
    await assertMigrates(tx, accountId);
    const { locked, state } = await lockedWithState(tx, accountId);
    const paused = locked.plan.id === plan.id ? [] : await changePlanNow(tx, accountId, locked, state, plan, now);
    await changeAccountBilling(tx, accountId, { billingVersion: CURRENT_BILLING_VERSION });
    await store.putState(tx, accountId, { ...state, migrationPlanId: null });
    return paused;
  });
  await changed(deps, accountId, paused);
}

/** The bill of the period in progress, so far: what the next invoice says if nothing else is used. */
export async function upcomingBill(deps: BillingDeps, accountId: string) {
  const { period, input, state } = await billRead(deps, deps.db, accountId);
  return { period, bill: periodLines(input), coupon: couponInForce(state) };
}

/** The forecast of the period in progress: its usage so far and projected, and the bill that comes to. */
export async function periodForecast(deps: BillingDeps, accountId: string, now = new Date()) {
  const { period, input } = await billRead(deps, deps.db, accountId);
  const daily = await creditsByDay(deps.db, accountId, period.start, period.end);
  return billForecast(input, period, daily, now);
}

/** Billing's view of the account's subscription: the plan, the state, the unpaid invoices. */
export async function subscriptionBilling(deps: BillingDeps, accountId: string, now = new Date()) {
  const sub = await current(deps, accountId, now, false);
  const unpaid = await store.unpaidInvoices(deps.db, accountId);
  const credits = await periodCredits(
    deps.db,
    accountId,
    sub.subscription.currentPeriodStart,
    sub.subscription.currentPeriodEnd,
  );
  return { ...sub, unpaid, credits };
}

export async function invoicePage(db: Db, accountId: string, args: { first?: number | null; after?: string | null }) {
  const size = pageSize(args.first);
  const after = cursorArgument(args.after, ["timestamp", "uuid"] as const);
  const rows = await store.listInvoices(db, accountId, after, size + 1);
  return connection(rows, size, (r) => [r.createdAt, r.id]);
}

/** The account's credit, in cents: confirmed top-ups less what invoices took. */
export const accountBalance = (db: Db, accountId: string) => store.balanceOf(db, accountId);

export async function invoiceWithLines(db: Executor, accountId: string, id: string) {
  const invoice = foundOr(isUuid(id) ? await store.getInvoice(db, accountId, id) : undefined, "The invoice");
  return { invoice, lines: await store.linesOf(db, accountId, id) };
}
