import { sql } from "drizzle-orm";
import { bigserial, index, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { createdAtColumn, idColumn } from "../../platform/db/columns.ts";
import { accountIdColumn } from "../account/tables.ts";
import { endpoints } from "../endpoints/tables.ts";

/**
 * An add-on installed on an endpoint (endpoint_id set) or for the account (ENDPOINT_ID null). Ended
 * installs stay as history (ended_at set); at most one install of an add-on is live per endpoint, and
 * per account for account add-ons. Add-on and plan are catalogue slugs (schemas/catalogue/addons.json).
 */
export const addonInstalls = pgTable(
  "addon_installs",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    endpointId: uuid("endpoint_id").references(() => endpoints.id, { onDelete: "cascade" }),
    addonSlug: text("addon_slug").notNull(),
    planSlug: text("plan_slug").notNull(),
    /** MONTHLY or YEARLY. */
    interval: text("interval").notNull(),
    couponCode: text("coupon_code"),
    /** The payment provider's id of the payment source chosen at install (a reference, not a secret). */
    paymentSourceId: text("payment_source_id"),
    /** The add-on's methods turned off on this endpoint (toggleRpcMethod), the proxy refuses them. */
    disabledMethods: text("disabled_methods").array().notNull().default(sql`'{}'::text[]`),
    /** The methods the install was asked to start with turned off. */
    disabledMethodsOnCreation: text("disabled_methods_on_creation").array().notNull().default(sql`'{}'::text[]`),
    currentPeriodStart: timestamp("current_period_start", { withTimezone: true, precision: 3 }).notNull(),
    currentPeriodEnd: timestamp("current_period_end", { withTimezone: true, precision: 3 }).notNull(),
    /** A cheaper plan that replaces the current one at the period's end (pending downgrade). */
    pendingPlanSlug: text("pending_plan_slug"),
    /** When a removal asked for at the period's end takes effect (pending deactivation). */
    deactivatesAt: timestamp("deactivates_at", { withTimezone: true, precision: 3 }),
    cancelationReason: text("cancelation_reason"),
    createdAt: createdAtColumn(3),
    endedAt: timestamp("ended_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [
    index("addon_installs_account").on(t.accountId, t.createdAt),
    uniqueIndex("addon_installs_live_on_endpoint")
      .on(t.endpointId, t.addonSlug)
      .where(sql`${t.endedAt} is null and ${t.endpointId} is not null`),
    uniqueIndex("addon_installs_live_on_account")
      .on(t.accountId, t.addonSlug)
      .where(sql`${t.endedAt} is null and ${t.endpointId} is null`),
  ],
);

/** What the marketplace records about an account's use of it: bundles looked at, install events sent. */
export const addonEvents = pgTable(
  "addon_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    accountId: accountIdColumn(),
    /** BUNDLE_VIEWED, BUNDLE_CHECKOUT, INSTALL_PROVISIONED. */
    kind: text("kind").notNull(),
    /** The bundle's slug or the install's id. */
    subject: text("subject").notNull(),
    endpointId: uuid("endpoint_id"),
    createdAt: createdAtColumn(3),
  },
  (t) => [index("addon_events_account").on(t.accountId, t.createdAt)],
);

/**
 * A live install's plan changes, so a period's charge can be prorated across them: the plan and interval
 * from `changed_at` on (an upgrade at once, a pending downgrade at the install's period end). Before an
 * install's first change it was on the first change's `from` plan (or, with none, on its current plan).
 */
export const addonPlanChanges = pgTable(
  "addon_plan_changes",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    installId: uuid("install_id")
      .notNull()
      .references(() => addonInstalls.id, { onDelete: "cascade" }),
    changedAt: timestamp("changed_at", { withTimezone: true, precision: 3 }).notNull(),
    fromPlanSlug: text("from_plan_slug").notNull(),
    fromInterval: text("from_interval").notNull(),
    toPlanSlug: text("to_plan_slug").notNull(),
    toInterval: text("to_interval").notNull(),
  },
  (t) => [index("addon_plan_changes_install").on(t.installId, t.changedAt)],
);
