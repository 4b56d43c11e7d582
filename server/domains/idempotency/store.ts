import { and, eq, isNull, lt, sql } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import { idempotencyKeys } from "./tables.ts";

/** How long a key's answer is kept. */
export const IDEMPOTENCY_KEPT_MS = 24 * 60 * 60 * 1000;

export type IdempotencyRow = typeof idempotencyKeys.$inferSelect;

/**
 * Claims `key` for a request with `requestHash`: true when this request is the key's first within 24
 * hours (a row older than that is taken over in the same statement), else the row of the first.
 */
export async function claimKey(
  db: Executor,
  accountId: string,
  key: string,
  requestHash: string,
  now = new Date(),
): Promise<true | IdempotencyRow> {
  const inserted = await db
    .insert(idempotencyKeys)
    .values({ accountId, key, requestHash, createdAt: now })
    .onConflictDoUpdate({
      target: [idempotencyKeys.accountId, idempotencyKeys.key],
      set: { requestHash, status: null, body: null, createdAt: now },
      setWhere: lt(idempotencyKeys.createdAt, expiredBefore(now)),
    })
    .returning({ key: idempotencyKeys.key });
  if (inserted.length > 0) return true;
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key)));
  // Gone between the insert and the read (swept, or released by a failed first request): claim again.
  return row ?? claimKey(db, accountId, key, requestHash, now);
}

const expiredBefore = (now: Date) => new Date(now.getTime() - IDEMPOTENCY_KEPT_MS);

/** Rows one sweep statement deletes at most: a short statement, however many keys expired at once. */
export const SWEEP_BATCH = 1000;

/**
 * Deletes up to `batch` expired rows of any account (those of accounts that send no more requests
 * included) in one statement, oldest first by the created_at index; answers how many went.
 */
export async function sweepExpiredKeys(db: Executor, now = new Date(), batch = SWEEP_BATCH): Promise<number> {
  const deleted = await db.execute(sql`
    delete from ${idempotencyKeys}
    where (${idempotencyKeys.accountId}, ${idempotencyKeys.key}) in (
      select ${idempotencyKeys.accountId}, ${idempotencyKeys.key} from ${idempotencyKeys}
      where ${idempotencyKeys.createdAt} < ${expiredBefore(now)}
      order by ${idempotencyKeys.createdAt}
      limit ${batch}
    )`);
  return deleted.rowCount ?? 0;
}

/** Keeps the answer of the request that claimed `key`. */
export async function keepAnswer(db: Executor, accountId: string, key: string, status: number, body: string) {
  await db
    .update(idempotencyKeys)
    .set({ status, body })
    .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key)));
}

/** Frees a key whose request failed on our side, so a retry runs again. */
export async function releaseKey(db: Executor, accountId: string, key: string) {
  await db
    .delete(idempotencyKeys)
    .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key), isNull(idempotencyKeys.status)));
}
