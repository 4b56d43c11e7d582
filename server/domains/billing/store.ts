import { and, asc, count, desc, eq, gt, lt, or } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import type { InvoiceLineDraft } from "./lines.ts";
import { billingAdjustments, billingStates, invoiceLines, invoices } from "./tables.ts";

export type BillingStateRow = typeof billingStates.$inferSelect;
export type InvoiceRow = typeof invoices.$inferSelect;
export type InvoiceLineRow = typeof invoiceLines.$inferSelect;

export async function getState(db: Executor, accountId: string): Promise<BillingStateRow | undefined> {
  const [row] = await db.select().from(billingStates).where(eq(billingStates.accountId, accountId));
  return row;
}

export async function putState(db: Executor, accountId: string, row: Omit<BillingStateRow, "accountId">) {
  await db
    .insert(billingStates)
    .values({ accountId, ...row })
    .onConflictDoUpdate({ target: billingStates.accountId, set: row });
}

export async function adjustmentsOf(db: Executor, accountId: string, periodStart: Date) {
  return (
    db
      .select()
      .from(billingAdjustments)
      .where(and(eq(billingAdjustments.accountId, accountId), eq(billingAdjustments.periodStart, periodStart)))
      // Made together, a change's credit comes before its charge, as Stripe lists prorations.
      .orderBy(asc(billingAdjustments.createdAt), asc(billingAdjustments.amountCents), asc(billingAdjustments.id))
  );
}

export async function insertAdjustments(
  db: Executor,
  accountId: string,
  rows: { periodStart: Date; kind: string; description: string; amountCents: number }[],
) {
  if (rows.length > 0) await db.insert(billingAdjustments).values(rows.map((r) => ({ accountId, ...r })));
}

export async function countInvoices(db: Executor, accountId: string) {
  const [row] = await db.select({ n: count() }).from(invoices).where(eq(invoices.accountId, accountId));
  return row.n;
}

/**
 * Writes a period's invoice and its lines; undefined when the account has one for that period already
 * (the unique index decides, whichever process got there first).
 */
export async function insertInvoice(
  db: Executor,
  accountId: string,
  row: Omit<typeof invoices.$inferInsert, "accountId" | "id" | "createdAt">,
  lines: InvoiceLineDraft[],
): Promise<InvoiceRow | undefined> {
  const [invoice] = await db
    .insert(invoices)
    .values({ accountId, ...row })
    .onConflictDoNothing({ target: [invoices.accountId, invoices.periodStart] })
    .returning();
  if (!invoice) return undefined;
  if (lines.length > 0) {
    await db.insert(invoiceLines).values(
      lines.map((l, position) => ({
        accountId,
        invoiceId: invoice.id,
        position,
        kind: l.kind,
        description: l.description,
        quantity: l.quantity,
        amountCents: l.amountCents,
      })),
    );
  }
  return invoice;
}

/** The account's invoices, newest first, after the cursor (createdAt, id). */
export async function listInvoices(
  db: Executor,
  accountId: string,
  after: readonly [Date, string] | null,
  limit: number,
) {
  const where = after
    ? and(
        eq(invoices.accountId, accountId),
        or(lt(invoices.createdAt, after[0]), and(eq(invoices.createdAt, after[0]), lt(invoices.id, after[1]))),
      )
    : eq(invoices.accountId, accountId);
  return db.select().from(invoices).where(where).orderBy(desc(invoices.createdAt), desc(invoices.id)).limit(limit);
}

export async function getInvoice(db: Executor, accountId: string, id: string) {
  const [row] = await db
    .select()
    .from(invoices)
    .where(and(eq(invoices.accountId, accountId), eq(invoices.id, id)));
  return row;
}

export async function linesOf(db: Executor, accountId: string, invoiceId: string) {
  return db
    .select()
    .from(invoiceLines)
    .where(and(eq(invoiceLines.accountId, accountId), eq(invoiceLines.invoiceId, invoiceId)))
    .orderBy(asc(invoiceLines.position));
}

/** Invoices with an amount still to pay, oldest first. */
export async function unpaidInvoices(db: Executor, accountId: string) {
  return db
    .select()
    .from(invoices)
    .where(and(eq(invoices.accountId, accountId), gt(invoices.amountRemainingCents, 0), eq(invoices.status, "open")))
    .orderBy(asc(invoices.createdAt));
}
