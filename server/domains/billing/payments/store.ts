import { and, asc, desc, eq, gt, inArray, lt, ne, notExists, or, sql } from "drizzle-orm";
import type { Executor } from "../../../platform/db/index.ts";
import { invoices } from "../tables.ts";
import { billingCustomers, paymentCharges, paymentMethods, taxIds } from "./tables.ts";

export type PaymentMethodRow = typeof paymentMethods.$inferSelect;
export type PaymentChargeRow = typeof paymentCharges.$inferSelect;
export type BillingCustomerRow = typeof billingCustomers.$inferSelect;
export type TaxIdRow = typeof taxIds.$inferSelect;

/** A charge's status while it waits for the payer's action (3-D Secure). */
export const REQUIRES_ACTION = "requires_action";

export async function getMethod(db: Executor, accountId: string): Promise<PaymentMethodRow | undefined> {
  const [row] = await db.select().from(paymentMethods).where(eq(paymentMethods.accountId, accountId));
  return row;
}

/** The account's one method, replaced by the next. */
export async function putMethod(
  db: Executor,
  accountId: string,
  row: Omit<PaymentMethodRow, "accountId" | "updatedAt">,
) {
  const set = { ...row, updatedAt: new Date() };
  await db
    .insert(paymentMethods)
    .values({ accountId, ...set })
    .onConflictDoUpdate({ target: paymentMethods.accountId, set });
}

export async function getCustomer(db: Executor, accountId: string): Promise<BillingCustomerRow | undefined> {
  const [row] = await db.select().from(billingCustomers).where(eq(billingCustomers.accountId, accountId));
  return row;
}

/** Writes the fields given of the account's billing customer, making its row on first use. */
export async function putCustomer(
  db: Executor,
  accountId: string,
  set: Partial<Omit<BillingCustomerRow, "accountId" | "updatedAt">>,
) {
  const values = { ...set, updatedAt: new Date() };
  await db
    .insert(billingCustomers)
    .values({ accountId, ...values })
    .onConflictDoUpdate({ target: billingCustomers.accountId, set: values });
}

export async function chargeByKey(db: Executor, accountId: string, idempotencyKey: string) {
  const [row] = await db
    .select()
    .from(paymentCharges)
    .where(and(eq(paymentCharges.accountId, accountId), eq(paymentCharges.idempotencyKey, idempotencyKey)));
  return row;
}

export async function chargeById(db: Executor, accountId: string, id: string) {
  const [row] = await db
    .select()
    .from(paymentCharges)
    .where(and(eq(paymentCharges.accountId, accountId), eq(paymentCharges.id, id)));
  return row;
}

export async function insertCharge(
  db: Executor,
  accountId: string,
  row: Omit<typeof paymentCharges.$inferInsert, "accountId" | "id" | "createdAt">,
): Promise<PaymentChargeRow> {
  const [charge] = await db
    .insert(paymentCharges)
    .values({ accountId, ...row })
    .returning();
  return charge;
}

/** The charge, locked until the transaction ends, so two confirmations of it run one after the other. */
export async function lockedCharge(tx: Executor, accountId: string, chargeId: string) {
  const [row] = await tx
    .select()
    .from(paymentCharges)
    .where(and(eq(paymentCharges.accountId, accountId), eq(paymentCharges.id, chargeId)))
    .for("update");
  return row;
}

/** A charge waiting for action, moved to what its confirmation answered. */
export async function settleCharge(
  tx: Executor,
  accountId: string,
  chargeId: string,
  set: Pick<PaymentChargeRow, "status" | "failureCode" | "failureMessage" | "nextActionUrl">,
): Promise<PaymentChargeRow> {
  const [row] = await tx
    .update(paymentCharges)
    .set(set)
    .where(and(eq(paymentCharges.accountId, accountId), eq(paymentCharges.id, chargeId)))
    .returning();
  return row;
}

/**
 * The newest charge of each of these invoices, where it waits for the payer's action: what the console
 * offers to authenticate. One query for a page of invoices.
 */
export async function chargesAwaitingAction(db: Executor, accountId: string, invoiceIds: readonly string[]) {
  if (invoiceIds.length === 0) return [];
  const newest = await db
    .selectDistinctOn([paymentCharges.invoiceId])
    .from(paymentCharges)
    .where(and(eq(paymentCharges.accountId, accountId), inArray(paymentCharges.invoiceId, [...invoiceIds])))
    .orderBy(paymentCharges.invoiceId, desc(paymentCharges.createdAt), desc(paymentCharges.id));
  return newest.filter((c) => c.status === REQUIRES_ACTION);
}

/** The key of the clock's one automatic charge of an invoice: a second tick, or process, finds it used. */
const AUTOMATIC = "auto:";
export const automaticChargeKey = (invoiceId: string) => `${AUTOMATIC}${invoiceId}`;

/**
 * Open invoices of any account with a payment method and no automatic charge yet, oldest first: what the
 * clock charges. Across accounts, as the billing clock reads ended periods.
 */
export async function invoicesToCollect(db: Executor, limit: number) {
  return db
    .select({ accountId: invoices.accountId, invoiceId: invoices.id })
    .from(invoices)
    .innerJoin(paymentMethods, eq(paymentMethods.accountId, invoices.accountId))
    .where(
      and(
        eq(invoices.status, "open"),
        gt(invoices.amountRemainingCents, 0),
        notExists(
          db
            .select({ one: sql`1` })
            .from(paymentCharges)
            .where(
              and(
                eq(paymentCharges.accountId, invoices.accountId),
                eq(paymentCharges.idempotencyKey, sql`${AUTOMATIC}::text || ${invoices.id}::text`),
              ),
            ),
        ),
      ),
    )
    .orderBy(asc(invoices.createdAt))
    .limit(limit);
}

/** The account's charges, newest first, after the cursor (createdAt, id). */
export async function listCharges(
  db: Executor,
  accountId: string,
  after: readonly [Date, string] | null,
  limit: number,
) {
  const where = after
    ? and(
        eq(paymentCharges.accountId, accountId),
        or(
          lt(paymentCharges.createdAt, after[0]),
          and(eq(paymentCharges.createdAt, after[0]), lt(paymentCharges.id, after[1])),
        ),
      )
    : eq(paymentCharges.accountId, accountId);
  return db
    .select()
    .from(paymentCharges)
    .where(where)
    .orderBy(desc(paymentCharges.createdAt), desc(paymentCharges.id))
    .limit(limit);
}

/** The account's tax ids, oldest first (the order they are printed on invoices). */
export async function listTaxIds(db: Executor, accountId: string) {
  return db.select().from(taxIds).where(eq(taxIds.accountId, accountId)).orderBy(asc(taxIds.createdAt), asc(taxIds.id));
}

export async function getTaxId(db: Executor, accountId: string, id: string) {
  const [row] = await db
    .select()
    .from(taxIds)
    .where(and(eq(taxIds.accountId, accountId), eq(taxIds.id, id)));
  return row;
}

/** Undefined when the account has this type and value already (the unique index decides). */
export async function insertTaxId(
  db: Executor,
  accountId: string,
  row: { type: string; value: string; country: string },
) {
  const [made] = await db
    .insert(taxIds)
    .values({ accountId, ...row })
    .onConflictDoNothing({ target: [taxIds.accountId, taxIds.type, taxIds.value] })
    .returning();
  return made;
}

/** Undefined when another of the account's tax ids has this type and value. */
export async function updateTaxIdRow(
  db: Executor,
  accountId: string,
  id: string,
  row: { type: string; value: string; country: string },
) {
  const clash = await db
    .select({ id: taxIds.id })
    .from(taxIds)
    .where(
      and(eq(taxIds.accountId, accountId), eq(taxIds.type, row.type), eq(taxIds.value, row.value), ne(taxIds.id, id)),
    );
  if (clash.length > 0) return undefined;
  const [updated] = await db
    .update(taxIds)
    .set(row)
    .where(and(eq(taxIds.accountId, accountId), eq(taxIds.id, id)))
    .returning();
  return updated;
}

export async function deleteTaxIdRow(db: Executor, accountId: string, id: string) {
  const [deleted] = await db
    .delete(taxIds)
    .where(and(eq(taxIds.accountId, accountId), eq(taxIds.id, id)))
    .returning();
  return deleted;
}
