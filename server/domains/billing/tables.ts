import { bigint, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { createdAtColumn, idColumn } from "../../platform/db/columns.ts";
import { accountIdColumn } from "../account/tables.ts";

/**
 * What billing keeps of a subscription beside its row (account/tables.ts `subscriptions`: plan, period,
 * limits): the licence paid for, the plan the period's base is billed at, the changes scheduled for the
 * period's end, the cancelation survey and the coupon. An account without a row has the defaults
 * (billing/service.ts `billingStateOf`).
 */
export const billingStates = pgTable("billing_states", {
  accountId: accountIdColumn().primaryKey(),
  /** The plan in force when the current period started: its licence price is the period's base. */
  periodPlanId: text("period_plan_id").notNull(),
  /** The licence paid for: a month, or a year for a yearly subscription. */
  licensedStart: timestamp("licensed_start", { withTimezone: true }).notNull(),
  licensedEnd: timestamp("licensed_end", { withTimezone: true }).notNull(),
  downgradePlanId: text("downgrade_plan_id"),
  /** Endpoints the user chose to keep serving after the downgrade; the others beyond the limit are paused. */
  downgradeKeptEndpointIds: jsonb("downgrade_kept_endpoint_ids").$type<string[]>().notNull().default([]),
  cancelationRequestedAt: timestamp("cancelation_requested_at", { withTimezone: true }),
  /** The cancel-plan survey's answer: its choices and the user's words. */
  cancelationSurvey: jsonb("cancelation_survey").$type<{ reasons: string[]; comment: string | null }>(),
  canceledAt: timestamp("canceled_at", { withTimezone: true }),
  /** A billing-version migration to this plan, performed at the period's end. */
  migrationPlanId: text("migration_plan_id"),
  couponId: text("coupon_id"),
  /** Invoices the coupon still applies to; null with a coupon: every one (FOREVER). */
  couponInvoicesLeft: integer("coupon_invoices_left"),
});

/**
 * Invoices: one per closed period of an account, never two (the unique index is what makes two service
 * processes, or a restart mid-close, write it once). Totals are the sums of its lines.
 */
export const invoices = pgTable(
  "invoices",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    /** NP-<account's first 8 hex>-<the account's invoice count>: readable, one per account. */
    number: text("number").notNull(),
    periodStart: timestamp("period_start", { withTimezone: true }).notNull(),
    periodEnd: timestamp("period_end", { withTimezone: true }).notNull(),
    /** draft, open, paid, uncollectible or void (service.ts `invoiceStatusAfter`). */
    status: text("status").notNull(),
    currency: text("currency").notNull().default("usd"),
    subtotalCents: bigint("subtotal_cents", { mode: "number" }).notNull(),
    discountCents: bigint("discount_cents", { mode: "number" }).notNull(),
    taxCents: bigint("tax_cents", { mode: "number" }).notNull(),
    totalCents: bigint("total_cents", { mode: "number" }).notNull(),
    amountRemainingCents: bigint("amount_remaining_cents", { mode: "number" }).notNull(),
    planName: text("plan_name").notNull(),
    createdAt: createdAtColumn(3),
  },
  (t) => [
    uniqueIndex("invoices_account_period").on(t.accountId, t.periodStart),
    uniqueIndex("invoices_account_number").on(t.accountId, t.number),
    index("invoices_account_created").on(t.accountId, t.createdAt),
  ],
);

export const invoiceLines = pgTable(
  "invoice_lines",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    invoiceId: uuid("invoice_id")
      .notNull()
      .references(() => invoices.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
    /** BASE, PRORATION, OVERAGE, ADDON, DISCOUNT, TAX or BALANCE (lines.ts). */
    kind: text("kind").notNull(),
    description: text("description").notNull(),
    quantity: bigint("quantity", { mode: "number" }),
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("invoice_lines_invoice_position").on(t.invoiceId, t.position)],
);

/**
 * Amounts recorded during a period for its invoice: an upgrade's prorations (credit for the unused time
 * of the old plan, charge for the new one). The period's close writes them into its invoice.
 */
export const billingAdjustments = pgTable(
  "billing_adjustments",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    periodStart: timestamp("period_start", { withTimezone: true }).notNull(),
    kind: text("kind").notNull(),
    description: text("description").notNull(),
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
    createdAt: createdAtColumn(3),
  },
  (t) => [index("billing_adjustments_account_period").on(t.accountId, t.periodStart)],
);

/**
 * The account's balance as a ledger: a credit when a crypto top-up confirms (once per charge), a debit
 * when an invoice takes it (once per invoice). The balance is the sum; the unique keys are what make a
 * watcher seen twice, or a period closed by two processes, write its entry once.
 */
export const balanceEntries = pgTable(
  "billing_balance_entries",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    /** Cents: positive, a credit (TOP_UP); negative, what an invoice took (INVOICE). */
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
    /** TOP_UP or INVOICE. */
    kind: text("kind").notNull(),
    description: text("description").notNull(),
    /** The crypto charge a top-up came from (crypto/tables.ts; not a foreign key: that table names this domain's). */
    cryptoChargeId: uuid("crypto_charge_id"),
    invoiceId: uuid("invoice_id").references(() => invoices.id, { onDelete: "cascade" }),
    createdAt: createdAtColumn(3),
  },
  (t) => [
    index("billing_balance_entries_account").on(t.accountId, t.createdAt),
    uniqueIndex("billing_balance_entries_charge").on(t.cryptoChargeId),
    uniqueIndex("billing_balance_entries_invoice").on(t.invoiceId),
  ],
);
