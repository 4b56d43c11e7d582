import DataLoader from "dataloader";
import { type Context, loaderOf } from "../../graphql/context.ts";
import { field, fieldWithInput, present } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { foundOr } from "../../platform/errors.ts";
import { publicBaseUrl } from "../../platform/http-headers.ts";
import { cataloguePlan } from "../account/plan-catalogue.ts";
import { listPlans, subscriptionOf } from "../account/service.ts";
import { planView, subscriptionView } from "../account/subscription-view.ts";
import { type CatalogueCoupon, findCoupon } from "../catalogue/coupons.ts";
import * as service from "./service.ts";
import type { InvoiceLineRow, InvoiceRow } from "./store.ts";

/** Where the console downloads an invoice's PDF (plugin.ts serves it to a signed-in member). */
const invoicePdfPath = (id: string) => `/billing/invoices/${id}/pdf`;

/** The PDF's address from the service's public address (decision 0802), so the console can link to it. */
const invoicePdfUrl = (ctx: Context, id: string) => `${publicBaseUrl(ctx.config, ctx.request)}${invoicePdfPath(id)}`;

export type InvoiceView = InvoiceRow & { lines?: InvoiceLineRow[] };

const couponView = (c: CatalogueCoupon) => ({
  id: c.id,
  valid: c.valid,
  name: c.name,
  amountOff: c.amountOffCents,
  percentOff: c.percentOff,
  duration: c.duration,
  durationInMonths: c.durationInMonths,
});

const lineView = (l: { kind: string; description: string; amountCents: number; quantity: number | null }) => ({
  type: l.kind,
  amount: l.amountCents,
  description: l.description,
  quantity: l.quantity,
  currency: "usd",
});

/** The subscription as the API shows it after a change: its row, read again. */
async function subscriptionNow(ctx: Context, accountId: string) {
  const { subscription, plan } = foundOr(await subscriptionOf(ctx.db, accountId), "The subscription");
  return subscriptionView(subscription, plan);
}

/** A plan the subscription moves to, as the API shows plans. */
async function planOrNull(ctx: Context, planId: string | null) {
  if (!planId) return null;
  return planView(
    foundOr(
      (await listPlans(ctx.db)).find((p) => p.id === planId),
      "The plan",
    ),
  );
}

export function billingResolvers(deps: service.BillingDeps): Resolvers {
  // One read of billing's view and one of the upcoming bill per request, whichever fields ask.
  const billingOf = (ctx: Context, accountId: string) =>
    loaderOf(
      ctx,
      () =>
        new DataLoader<string, Awaited<ReturnType<typeof service.subscriptionBilling>>>((ids) =>
          Promise.all(ids.map((id) => service.subscriptionBilling(deps, id))),
        ),
    ).load(accountId);
  const upcomingOf = (ctx: Context, accountId: string) =>
    loaderOf(
      ctx,
      () =>
        new DataLoader<string, Awaited<ReturnType<typeof service.upcomingBill>>>((ids) =>
          Promise.all(ids.map((id) => service.upcomingBill(deps, id))),
        ),
    ).load(accountId);
  const state = <T>(pick: (b: Awaited<ReturnType<typeof service.subscriptionBilling>>) => T) =>
    field("VIEWER", async ({ ctx, accountId }) => pick(await billingOf(ctx, accountId)));

  return {
    Query: {
      invoices: field("VIEWER", async ({ ctx, accountId, args }) => {
        const page = await service.invoicePage(ctx.db, accountId, args);
        return { edges: page.edges, pageInfo: page.pageInfo };
      }),
      invoice: field("VIEWER", async ({ ctx, accountId, args }) => {
        const { invoice, lines } = await service.invoiceWithLines(ctx.db, accountId, args.id);
        return { ...invoice, lines };
      }),
    },
    Invoice: {
      lines: field("VIEWER", async ({ ctx, accountId, parent }) =>
        (parent.lines ?? (await service.invoiceWithLines(ctx.db, accountId, parent.id)).lines).map(lineView),
      ),
      pdfUrl: (parent, _args, ctx) => invoicePdfUrl(ctx, parent.id),
    },
    BillingSubscription: {
      endDate: state(
        (b) => b.state.canceledAt ?? (b.state.cancelationRequestedAt ? b.subscription.currentPeriodEnd : null),
      ),
      licensedStartDate: state((b) => b.state.licensedStart),
      licensedEndDate: state((b) => b.state.licensedEnd),
      pendingMigration: state((b) => b.state.migrationPlanId !== null),
      pendingMigrationPlan: field("VIEWER", async ({ ctx, accountId }) =>
        planOrNull(ctx, (await billingOf(ctx, accountId)).state.migrationPlanId),
      ),
      isDowngradeScheduled: state((b) => b.state.downgradePlanId !== null),
      downgradePlan: field("VIEWER", async ({ ctx, accountId }) =>
        planOrNull(ctx, (await billingOf(ctx, accountId)).state.downgradePlanId),
      ),
      downgradeEndpointIds: state((b) => b.state.downgradeKeptEndpointIds),
      cancelationRequestedAt: state((b) => b.state.cancelationRequestedAt),
      canceledAt: state((b) => b.state.canceledAt),
      usageSuspended: state(() => false),
      coupon: state((b) => {
        const coupon = b.state.couponId ? findCoupon(b.state.couponId) : undefined;
        return coupon ? couponView(coupon) : null;
      }),
      credits: state((b) => b.subscription.responsesPerMonth),
      drawdown: state((b) => cataloguePlan(b.subscription.planId)?.overageCentsPerMillionCredits != null),
      hideApiCreditsLimit: state(() => false),
      unpaidTotal: state((b) => b.unpaid.reduce((sum, i) => sum + i.amountRemainingCents, 0)),
      invoiceHistoryUrl: state(() => "/billing"),
      subscribedSelectChains: state(() => []),
      usageInCurrentPeriod: state((b) => ({ total: b.credits, lastUpdatedAt: null })),
      invoices: state((b) =>
        b.unpaid.map((i) => ({
          id: i.id,
          number: i.number,
          amountRemaining: i.amountRemainingCents,
          status: i.status,
        })),
      ),
      recentCharges: field("VIEWER", async ({ ctx, accountId }) => {
        const page = await service.invoicePage(ctx.db, accountId, { first: 5 });
        return page.rows.map((i) => ({
          id: i.id,
          version: 1,
          status: i.status,
          memo: `${i.planName}, ${i.periodStart.toISOString().slice(0, 10)} to ${i.periodEnd.toISOString().slice(0, 10)}`,
          cardLast4: null,
          amount: i.totalCents,
          date: i.createdAt,
          stripeInvoicePdf: invoicePdfUrl(ctx, i.id),
        }));
      }),
      forecast: field("VIEWER", async ({ accountId }) => {
        const forecast = await service.periodForecast(deps, accountId);
        return {
          periodStart: forecast.period.start,
          periodEnd: forecast.period.end,
          stepSeconds: 86_400,
          creditsSoFar: forecast.creditsSoFar,
          projectedCredits: forecast.projectedCredits,
          allowance: forecast.allowance,
          projectedTotalCents: forecast.bill.totalCents,
          points: forecast.points,
        };
      }),
      upcomingInvoicePreview: field("VIEWER", async ({ ctx, accountId }) => {
        const { period, bill, coupon } = await upcomingOf(ctx, accountId);
        return {
          periodStart: period.start,
          periodEnd: period.end,
          nextPaymentAttempt: period.end,
          amountDueCents: bill.totalCents,
          amountRemainingCents: bill.totalCents,
          baseAmountDueCents: bill.baseCents,
          overageAmountDueCents: bill.overageCents,
          paidOveragesCents: 0,
          subtotalCents: bill.subtotalCents,
          totalDiscountAmountCents: bill.discountCents,
          taxCents: bill.taxCents,
          discounts:
            coupon && bill.discountCents > 0 ? [{ coupon: couponView(coupon), amount: bill.discountCents }] : [],
          items: bill.lines.map((l) => ({ label: l.description, kind: l.kind, amount: l.amountCents })),
          lines: bill.lines.map(lineView),
        };
      }),
    },
    Mutation: {
      createSubscription: fieldWithInput(
        "ADMIN",
        { schema: "subscription#/$defs/createInput", of: (args) => present(args.input) },
        async ({ ctx, accountId, input }) => {
          await service.createSubscription(deps, accountId, input);
          return { subscription: await subscriptionNow(ctx, accountId), endpointId: null, clientSecret: null };
        },
      ),
      upgradeSubscription: fieldWithInput(
        "ADMIN",
        { schema: "subscription#/$defs/upgradeInput", of: (args) => present(args.input) },
        async ({ ctx, accountId, input }) => {
          await service.upgradeSubscription(deps, accountId, input);
          return subscriptionNow(ctx, accountId);
        },
      ),
      downgradeSubscription: fieldWithInput(
        "ADMIN",
        { schema: "subscription#/$defs/downgradeInput", of: (args) => present(args) },
        async ({ ctx, accountId, input }) => {
          await service.downgradeSubscription(deps, accountId, input);
          return subscriptionNow(ctx, accountId);
        },
      ),
      cancelDowngradeSubscription: field("ADMIN", async ({ ctx, accountId }) => {
        await service.cancelDowngrade(deps, accountId);
        return subscriptionNow(ctx, accountId);
      }),
      requestCancelation: fieldWithInput(
        "ADMIN",
        { schema: "subscription#/$defs/cancelationInput", of: (args) => present(args.input) },
        async ({ ctx, accountId, input }) => {
          await service.requestCancelation(deps, accountId, input);
          return subscriptionNow(ctx, accountId);
        },
      ),
      revertCancelSubscription: field("ADMIN", async ({ ctx, accountId }) => {
        await service.revertCancelation(deps, accountId);
        return subscriptionNow(ctx, accountId);
      }),
      scheduleBillingMigration: fieldWithInput(
        "ADMIN",
        { schema: "subscription#/$defs/planInput", of: (args) => args },
        async ({ ctx, accountId, input }) => {
          await service.scheduleBillingMigration(deps, accountId, input.plan);
          return subscriptionNow(ctx, accountId);
        },
      ),
      migrateBillingVersion: fieldWithInput(
        "ADMIN",
        { schema: "subscription#/$defs/planInput", of: (args) => args },
        async ({ ctx, accountId, input }) => {
          await service.migrateBillingVersion(deps, accountId, input.plan);
          return subscriptionNow(ctx, accountId);
        },
      ),
    },
  };
}
