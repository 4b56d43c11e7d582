import { and, eq, isNull, lt } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import { idempotencyKeys } from "./tables.ts";

/** How long a key's answer is kept. */
export const IDEMPOTENCY_KEPT_MS = 24 * 60 * 60 * 1000;

export type IdempotencyRow = typeof idempotencyKeys.$inferSelect;

/**
 * Claims `key` for a request with `requestHash`: true when this request is the key's first (within 24
 * hours), else the row of the first. The account's expired keys are dropped first.
 */
export async function claimKey(
  db: Executor,
  accountId: string,
  key: string,
  requestHash: string,
  now = new Date(),
): Promise<true | IdempotencyRow> {
  await db
    .delete(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.accountId, accountId),
        lt(idempotencyKeys.createdAt, new Date(now.getTime() - IDEMPOTENCY_KEPT_MS)),
      ),
    );
  const inserted = await db
    .insert(idempotencyKeys)
    .values({ accountId, key, requestHash, createdAt: now })
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key });
  if (inserted.length > 0) return true;
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key)));
  // Gone between the insert and the read (expired and dropped by a concurrent claim): claim again.
  return row ?? claimKey(db, accountId, key, requestHash, now);
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
