import { marketplaceCharges } from "../../server/domains/billing/addon-charges.ts";
import type { BillingDeps } from "../../server/domains/billing/service.ts";
import { closeEndedPeriodsOfAll } from "../../server/domains/billing/service.ts";
import type { Db } from "../../server/platform/db/index.ts";
import type { DomainEvents } from "../../server/platform/events.ts";
import type { TestUser } from "./api.ts";

/** What the tests close periods with, as the service does: its events, the marketplace's add-on charges, no tax. */
export const untaxedBilling = (db: Db, events: DomainEvents): BillingDeps => ({
  db,
  events,
  addons: marketplaceCharges,
  taxRateBps: 0,
});

/**
 * Subscribes the user to Scale and moves the period and licence a month back, then closes the period:
 * the account has one open invoice with an amount due. Answers its id.
 */
export async function openInvoiceOf(db: Db, billing: BillingDeps, user: TestUser): Promise<string> {
  await user.client.gqlOk('mutation { createSubscription(input: { plan: "b6_scale" }) { subscription { id } } }');
  const shift = "interval '1 month'";
  await db.$client.query(
    `update subscriptions set current_period_start = current_period_start - ${shift}, current_period_end = current_period_end - ${shift} where account_id = $1`,
    [user.viewer.id],
  );
  await db.$client.query(
    `update billing_states set licensed_start = licensed_start - ${shift}, licensed_end = licensed_end - ${shift} where account_id = $1`,
    [user.viewer.id],
  );
  await closeEndedPeriodsOfAll(billing);
  const { rows } = await db.$client.query(
    "select id from invoices where account_id = $1 and status = 'open' and amount_remaining_cents > 0",
    [user.viewer.id],
  );
  if (rows.length !== 1) throw new Error(`expected one open invoice, found ${rows.length}`);
  return rows[0].id as string;
}
