import { and, asc, count, desc, eq, getTableColumns, gt, inArray, lt, ne, or, type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Executor } from "../../platform/db/index.ts";
import { preparedQuery } from "../../platform/db/prepared.ts";
import { accounts, subscriptions } from "../account/tables.ts";
import { periodCreditsSql } from "../usage/service.ts";
import type { InvoiceLineDraft } from "./lines.ts";
import { balanceEntries, billingAdjustments, billingStates, invoiceLines, invoices } from "./tables.ts";

export type BillingStateRow = typeof billingStates.$inferSelect;
export type InvoiceRow = typeof invoices.$inferSelect;
export type InvoiceLineRow = typeof invoiceLines.$inferSelect;

export async function getState(db: Executor, accountId: string): Promise<BillingStateRow | undefined> {
  const [row] = await db.select().from(billingStates).where(eq(billingStates.accountId, accountId));
  return row;
}

/** An SQL value a bill reads of another domain's rows in the account's period [start, end). */
type PeriodSql<T> = (accountId: SQL | AnyPgColumn, start: SQL | AnyPgColumn, end: SQL) => SQL<T>;

/** A period's adjustments in order: made together, a change's credit comes before its charge, as Stripe lists prorations. */
const adjustmentOrder: readonly SQL[] = [
  asc(billingAdjustments.createdAt),
  asc(billingAdjustments.amountCents),
  asc(billingAdjustments.id),
];

/**
 * The statement that reads one account's period bill (decision 1840): its subscription and billing's state,
 * the trial's end, the period's prorations (in adjustmentOrder), credits used (usage's window), add-on
 * installs (`installs`, the marketplace's port) and the balance, as one row. One statement is one round
 * trip and one snapshot; prepared, it is built once per handle and planned once per connection. The period
 * is the subscription's, up to `periodEnd` when one is given (a period closed early).
 */
export function billReadsStatement(installs: PeriodSql<unknown[]>, name: string) {
  return preparedQuery(name, (db, name) => {
    const start = subscriptions.currentPeriodStart;
    const end = sql`coalesce(${sql.placeholder("periodEnd")}::timestamptz, ${subscriptions.currentPeriodEnd})`;
    const accountId = subscriptions.accountId;
    return db
      .select({
        subscription: subscriptions,
        state: billingStates,
        trialEnd: accounts.freeTrialEndsAt,
        adjustments: sql<{ description: string; amountCents: number }[]>`(select coalesce(json_agg(json_build_object(
            'description', ${billingAdjustments.description}, 'amountCents', ${billingAdjustments.amountCents})
            order by ${sql.join([...adjustmentOrder], sql`, `)}), '[]')
          from ${billingAdjustments}
          where ${billingAdjustments.accountId} = ${accountId} and ${billingAdjustments.periodStart} = ${start})`,
        credits: periodCreditsSql(accountId, start, end),
        installs: installs(accountId, start, end),
        balanceCents: sql<number>`(select coalesce(sum(${balanceEntries.amountCents}), 0)::float8 from ${balanceEntries}
          where ${balanceEntries.accountId} = ${accountId})`,
      })
      .from(subscriptions)
      .innerJoin(accounts, eq(accounts.id, subscriptions.accountId))
      .leftJoin(billingStates, eq(billingStates.accountId, subscriptions.accountId))
      .where(eq(subscriptions.accountId, sql.placeholder("accountId")))
      .prepare(name);
  });
}

/** A bill's statement made with one port's installs SQL (the port holds it: addon-charges.ts). */
export type BillReadsStatement = ReturnType<typeof billReadsStatement>;

/** The bill's row for the account (undefined: no subscription); its period ends at `periodEnd` if given. */
export async function billReadsOf(
  db: Executor,
  accountId: string,
  statement: BillReadsStatement,
  periodEnd: Date | null = null,
) {
  const [row] = await statement(db).execute({ accountId, periodEnd: periodEnd?.toISOString() ?? null });
  return row;
}

export async function putState(db: Executor, accountId: string, row: Omit<BillingStateRow, "accountId">) {
  await db
    .insert(billingStates)
    .values({ accountId, ...row })
    .onConflictDoUpdate({ target: billingStates.accountId, set: row });
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

/** The invoice, locked until the transaction ends, so two payments of it run one after the other. */
export async function lockedInvoice(tx: Executor, accountId: string, invoiceId: string) {
  const [row] = await tx
    .select()
    .from(invoices)
    .where(and(eq(invoices.accountId, accountId), eq(invoices.id, invoiceId)))
    .for("update");
  return row;
}

export async function setInvoicePaid(tx: Executor, accountId: string, invoiceId: string, status: string) {
  await tx
    .update(invoices)
    .set({ status, amountRemainingCents: 0 })
    .where(and(eq(invoices.accountId, accountId), eq(invoices.id, invoiceId)));
}

/** Open invoices with an amount to pay, other than `exceptId`. */
export async function otherOpenInvoices(tx: Executor, accountId: string, exceptId: string) {
  return tx
    .select({ id: invoices.id })
    .from(invoices)
    .where(
      and(
        eq(invoices.accountId, accountId),
        eq(invoices.status, "open"),
        gt(invoices.amountRemainingCents, 0),
        ne(invoices.id, exceptId),
      ),
    );
}

/** Invoices with an amount still to pay, oldest first. */
export async function unpaidInvoices(db: Executor, accountId: string) {
  return db
    .select()
    .from(invoices)
    .where(and(eq(invoices.accountId, accountId), gt(invoices.amountRemainingCents, 0), eq(invoices.status, "open")))
    .orderBy(asc(invoices.createdAt));
}

// The billing clock's batch: the same rows, read and written for many accounts in one statement each.

export async function statesOf(db: Executor, accountIds: readonly string[]) {
  if (accountIds.length === 0) return new Map<string, BillingStateRow>();
  const rows = await db
    .select()
    .from(billingStates)
    .where(inArray(billingStates.accountId, [...accountIds]));
  return new Map(rows.map((r) => [r.accountId, r]));
}

/** Each account's adjustments recorded for the period starting at its `periodStart`, in adjustmentOrder. */
export async function adjustmentsOfMany(db: Executor, periods: readonly { accountId: string; periodStart: Date }[]) {
  const byAccount = new Map<string, (typeof billingAdjustments.$inferSelect)[]>();
  if (periods.length === 0) return byAccount;
  const starts = new Map(periods.map((p) => [p.accountId, p.periodStart.getTime()]));
  const rows = await db
    .select()
    .from(billingAdjustments)
    .where(inArray(billingAdjustments.accountId, [...starts.keys()]))
    .orderBy(...adjustmentOrder);
  for (const row of rows) {
    if (row.periodStart.getTime() !== starts.get(row.accountId)) continue;
    byAccount.set(row.accountId, [...(byAccount.get(row.accountId) ?? []), row]);
  }
  return byAccount;
}

export async function invoiceCounts(db: Executor, accountIds: readonly string[]) {
  if (accountIds.length === 0) return new Map<string, number>();
  const rows = await db
    .select({ accountId: invoices.accountId, n: count() })
    .from(invoices)
    .where(inArray(invoices.accountId, [...accountIds]))
    .groupBy(invoices.accountId);
  return new Map(rows.map((r) => [r.accountId, r.n]));
}

/**
 * Writes invoices (one per account) and their lines in two statements; an account that has its period's
 * invoice already (the unique index) gets none, and is not in the answer.
 */
export async function insertInvoices(
  db: Executor,
  drafts: readonly {
    accountId: string;
    row: Omit<typeof invoices.$inferInsert, "accountId" | "id" | "createdAt">;
    lines: InvoiceLineDraft[];
  }[],
): Promise<InvoiceRow[]> {
  if (drafts.length === 0) return [];
  const written = await db
    .insert(invoices)
    .values(drafts.map((d) => ({ accountId: d.accountId, ...d.row })))
    .onConflictDoNothing({ target: [invoices.accountId, invoices.periodStart] })
    .returning();
  const linesOf = new Map(drafts.map((d) => [d.accountId, d.lines]));
  const lines = written.flatMap((invoice) =>
    (linesOf.get(invoice.accountId) ?? []).map((l, position) => ({
      accountId: invoice.accountId,
      invoiceId: invoice.id,
      position,
      kind: l.kind,
      description: l.description,
      quantity: l.quantity,
      amountCents: l.amountCents,
    })),
  );
  if (lines.length > 0) await db.insert(invoiceLines).values(lines);
  return written;
}

const { accountId: _stateKey, ...stateColumns } = getTableColumns(billingStates);
/** Every state column but the key, set from the row being inserted (an upsert's `excluded`). */
const fromExcluded = Object.fromEntries(
  Object.values(stateColumns).map((column) => [column.name, sql.raw(`excluded.${column.name}`)]),
);

export async function putStates(db: Executor, rows: readonly BillingStateRow[]) {
  if (rows.length === 0) return;
  await db
    .insert(billingStates)
    .values([...rows])
    .onConflictDoUpdate({
      target: billingStates.accountId,
      set: Object.fromEntries(Object.entries(stateColumns).map(([key, column]) => [key, fromExcluded[column.name]])),
    });
}

/** The account's balance: its credits less what invoices took, in cents. */
export async function balanceOf(db: Executor, accountId: string): Promise<number> {
  const [row] = await db
    .select({ cents: sql<string>`coalesce(sum(${balanceEntries.amountCents}), 0)` })
    .from(balanceEntries)
    .where(eq(balanceEntries.accountId, accountId));
  return Number(row.cents);
}

/** The balances of these accounts (absent: none), in one query. */
export async function balancesOf(db: Executor, accountIds: readonly string[]): Promise<Map<string, number>> {
  if (accountIds.length === 0) return new Map();
  const rows = await db
    .select({ accountId: balanceEntries.accountId, cents: sql<string>`sum(${balanceEntries.amountCents})` })
    .from(balanceEntries)
    .where(inArray(balanceEntries.accountId, [...accountIds]))
    .groupBy(balanceEntries.accountId);
  return new Map(rows.map((r) => [r.accountId, Number(r.cents)]));
}

/** What invoices took of their accounts' balances, one entry per invoice (a second write of one is dropped). */
export async function insertBalanceDebits(
  db: Executor,
  debits: readonly { accountId: string; invoiceId: string; number: string; cents: number }[],
) {
  if (debits.length === 0) return;
  await db
    .insert(balanceEntries)
    .values(
      debits.map((d) => ({
        accountId: d.accountId,
        amountCents: -d.cents,
        kind: "INVOICE",
        description: `Applied to invoice ${d.number}`,
        invoiceId: d.invoiceId,
      })),
    )
    .onConflictDoNothing({ target: balanceEntries.invoiceId });
}

/** A confirmed top-up's credit, once per crypto charge; false when it was written already. */
export async function insertTopUpCredit(
  db: Executor,
  accountId: string,
  credit: { cryptoChargeId: string; cents: number; description: string },
): Promise<boolean> {
  const written = await db
    .insert(balanceEntries)
    .values({
      accountId,
      amountCents: credit.cents,
      kind: "TOP_UP",
      description: credit.description,
      cryptoChargeId: credit.cryptoChargeId,
    })
    .onConflictDoNothing({ target: balanceEntries.cryptoChargeId })
    .returning({ id: balanceEntries.id });
  return written.length === 1;
}
