import { and, asc, eq, inArray } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import { subscriptions } from "../account/tables.ts";
import { rateLimiterRates, rateLimiters, rateLimitOverrides } from "./tables.ts";

export type RateLimiterRow = typeof rateLimiters.$inferSelect;
export type RateRow = typeof rateLimiterRates.$inferSelect;
export type OverrideRow = typeof rateLimitOverrides.$inferSelect;

export async function listLimiters(db: Executor, accountId: string, endpointId: string) {
  return db
    .select()
    .from(rateLimiters)
    .where(and(eq(rateLimiters.accountId, accountId), eq(rateLimiters.endpointId, endpointId)))
    .orderBy(asc(rateLimiters.createdAt), asc(rateLimiters.id));
}

export async function getLimiter(db: Executor, accountId: string, endpointId: string, id: string) {
  const [row] = await db
    .select()
    .from(rateLimiters)
    .where(
      and(eq(rateLimiters.accountId, accountId), eq(rateLimiters.endpointId, endpointId), eq(rateLimiters.id, id)),
    );
  return row;
}

export async function ratesOf(db: Executor, accountId: string, limiterIds: string[]) {
  if (limiterIds.length === 0) return [];
  return db
    .select()
    .from(rateLimiterRates)
    .where(and(eq(rateLimiterRates.accountId, accountId), inArray(rateLimiterRates.rateLimiterId, limiterIds)))
    .orderBy(asc(rateLimiterRates.createdAt), asc(rateLimiterRates.id));
}

/** A rate with its limiter, only when both belong to this account and endpoint. */
export async function getRate(db: Executor, accountId: string, endpointId: string, rateId: string) {
  const [row] = await db
    .select({ rate: rateLimiterRates, limiter: rateLimiters })
    .from(rateLimiterRates)
    .innerJoin(rateLimiters, eq(rateLimiters.id, rateLimiterRates.rateLimiterId))
    .where(
      and(
        eq(rateLimiterRates.accountId, accountId),
        eq(rateLimiters.accountId, accountId),
        eq(rateLimiters.endpointId, endpointId),
        eq(rateLimiterRates.id, rateId),
      ),
    );
  return row;
}

export async function insertLimiter(
  db: Executor,
  accountId: string,
  row: { endpointId: string; interval: string; methods: string[]; limitByIp: boolean },
) {
  const [created] = await db
    .insert(rateLimiters)
    .values({ ...row, accountId })
    .returning();
  return created;
}

export async function updateLimiter(
  db: Executor,
  accountId: string,
  id: string,
  set: Partial<Pick<RateLimiterRow, "interval" | "methods" | "limitByIp">>,
) {
  const [row] = await db
    .update(rateLimiters)
    .set({ ...set, updatedAt: new Date() })
    .where(and(eq(rateLimiters.accountId, accountId), eq(rateLimiters.id, id)))
    .returning();
  return row;
}

export async function deleteLimiter(db: Executor, accountId: string, id: string) {
  const deleted = await db
    .delete(rateLimiters)
    .where(and(eq(rateLimiters.accountId, accountId), eq(rateLimiters.id, id)))
    .returning({ id: rateLimiters.id });
  return deleted.length > 0;
}

export async function insertRate(
  db: Executor,
  accountId: string,
  row: { rateLimiterId: string; rate: number; source: string },
) {
  const [created] = await db
    .insert(rateLimiterRates)
    .values({ ...row, accountId })
    .returning();
  return created;
}

export async function updateRate(
  db: Executor,
  accountId: string,
  id: string,
  set: Partial<Pick<RateRow, "rate" | "status">>,
) {
  const [row] = await db
    .update(rateLimiterRates)
    .set(set)
    .where(and(eq(rateLimiterRates.accountId, accountId), eq(rateLimiterRates.id, id)))
    .returning();
  return row;
}

export async function listOverrides(db: Executor, accountId: string, endpointId: string) {
  return db
    .select()
    .from(rateLimitOverrides)
    .where(and(eq(rateLimitOverrides.accountId, accountId), eq(rateLimitOverrides.endpointId, endpointId)))
    .orderBy(asc(rateLimitOverrides.bucket));
}

/** Inserts or replaces the endpoint's override of this kind for this bucket. */
export async function upsertOverride(
  db: Executor,
  accountId: string,
  row: { endpointId: string; kind: string; bucket: string; rateLimit: number | null; reason: string },
) {
  const [saved] = await db
    .insert(rateLimitOverrides)
    .values({ ...row, accountId })
    .onConflictDoUpdate({
      target: [rateLimitOverrides.endpointId, rateLimitOverrides.kind, rateLimitOverrides.bucket],
      set: { rateLimit: row.rateLimit, reason: row.reason, createdAt: new Date() },
    })
    .returning();
  return saved;
}

export async function deleteOverride(db: Executor, accountId: string, endpointId: string, kind: string, id: string) {
  const [deleted] = await db
    .delete(rateLimitOverrides)
    .where(
      and(
        eq(rateLimitOverrides.accountId, accountId),
        eq(rateLimitOverrides.endpointId, endpointId),
        eq(rateLimitOverrides.kind, kind),
        eq(rateLimitOverrides.id, id),
      ),
    )
    .returning();
  return deleted;
}

export async function planRps(db: Executor, accountId: string) {
  const [row] = await db
    .select({ rps: subscriptions.requestsPerSecond })
    .from(subscriptions)
    .where(eq(subscriptions.accountId, accountId));
  return row?.rps ?? null;
}

// The rate-limit stage loads what it enforces through these three: every account, or one endpoint's rows.

export async function allAccountRps(db: Executor) {
  return db.select({ accountId: subscriptions.accountId, rps: subscriptions.requestsPerSecond }).from(subscriptions);
}

export async function enforcedLimiters(db: Executor, scope: { accountId: string; endpointId: string } | null) {
  const where = scope
    ? and(eq(rateLimiters.accountId, scope.accountId), eq(rateLimiters.endpointId, scope.endpointId))
    : undefined;
  return db
    .select({
      id: rateLimiters.id,
      accountId: rateLimiters.accountId,
      endpointId: rateLimiters.endpointId,
      interval: rateLimiters.interval,
      methods: rateLimiters.methods,
      limitByIp: rateLimiters.limitByIp,
      rate: rateLimiterRates.rate,
      status: rateLimiterRates.status,
    })
    .from(rateLimiters)
    .innerJoin(rateLimiterRates, eq(rateLimiterRates.rateLimiterId, rateLimiters.id))
    .where(where);
}

export async function enforcedOverrides(db: Executor, scope: { accountId: string; endpointId: string } | null) {
  const where = scope
    ? and(eq(rateLimitOverrides.accountId, scope.accountId), eq(rateLimitOverrides.endpointId, scope.endpointId))
    : undefined;
  return db.select().from(rateLimitOverrides).where(where);
}
