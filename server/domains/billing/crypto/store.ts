import { and, eq, gt, inArray, sql } from "drizzle-orm";
import type { Executor } from "../../../platform/db/index.ts";
import { cryptoCharges, OPEN_CHARGE_STATUSES } from "./tables.ts";

export type CryptoChargeRow = typeof cryptoCharges.$inferSelect;

export async function nextAddressIndex(db: Executor): Promise<number> {
  const { rows } = await db.execute<{ n: string }>(sql`select nextval('crypto_charge_address_indexes') as n`);
  return Number(rows[0].n);
}

/** Writes a charge; undefined when the invoice has an open charge already (the partial unique index decides). */
export async function insertCharge(
  db: Executor,
  accountId: string,
  row: Omit<typeof cryptoCharges.$inferInsert, "accountId" | "id" | "createdAt" | "updatedAt">,
): Promise<CryptoChargeRow | undefined> {
  const [inserted] = await db
    .insert(cryptoCharges)
    .values({ accountId, ...row })
    .onConflictDoNothing()
    .returning();
  return inserted;
}

export async function openChargeOfInvoice(db: Executor, accountId: string, invoiceId: string) {
  const [row] = await db
    .select()
    .from(cryptoCharges)
    .where(
      and(
        eq(cryptoCharges.accountId, accountId),
        eq(cryptoCharges.invoiceId, invoiceId),
        inArray(cryptoCharges.status, [...OPEN_CHARGE_STATUSES]),
      ),
    );
  return row;
}

export async function chargeByCode(db: Executor, accountId: string, provider: string, code: string) {
  const [row] = await db
    .select()
    .from(cryptoCharges)
    .where(
      and(eq(cryptoCharges.accountId, accountId), eq(cryptoCharges.provider, provider), eq(cryptoCharges.code, code)),
    );
  return row;
}

/** The charges still watched on `network`, of every account (the watcher's work list), by id after `afterId`. */
export async function openChargesOn(db: Executor, network: string, afterId: string | null, limit: number) {
  const open = and(eq(cryptoCharges.network, network), inArray(cryptoCharges.status, [...OPEN_CHARGE_STATUSES]));
  return db
    .select()
    .from(cryptoCharges)
    .where(afterId ? and(open, gt(cryptoCharges.id, afterId)) : open)
    .orderBy(cryptoCharges.id)
    .limit(limit);
}

/**
 * Moves a charge from the status it was read in to what was observed; false when it is no longer in that
 * status and balance (another process moved it first: its move stands, this one is dropped).
 */
export async function moveCharge(
  db: Executor,
  accountId: string,
  from: Pick<CryptoChargeRow, "id" | "status" | "receivedWei">,
  to: Pick<CryptoChargeRow, "status" | "receivedWei" | "confirmedBlock" | "confirmedAt">,
): Promise<boolean> {
  const moved = await db
    .update(cryptoCharges)
    .set({ ...to, updatedAt: sql`now()` })
    .where(
      and(
        eq(cryptoCharges.accountId, accountId),
        eq(cryptoCharges.id, from.id),
        eq(cryptoCharges.status, from.status),
        eq(cryptoCharges.receivedWei, from.receivedWei),
      ),
    )
    .returning({ id: cryptoCharges.id });
  return moved.length === 1;
}
