import { and, desc, eq, gte, lt, sql } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import { subscriptions } from "../account/tables.ts";
import { endpoints } from "../endpoints/tables.ts";
import { usageMinutes } from "./tables.ts";

export type UsageMinuteRow = typeof usageMinutes.$inferInsert;

/**
 * The meter's batch writer: one multi-row upsert adding to each (endpoint, minute, method) row. It spans
 * accounts by design (each row carries its account id), so unlike the readers it takes no account id.
 */
export async function addMinutes(db: Executor, rows: UsageMinuteRow[]) {
  if (rows.length === 0) return;
  await db
    .insert(usageMinutes)
    .values(rows)
    .onConflictDoUpdate({
      target: [usageMinutes.endpointId, usageMinutes.minute, usageMinutes.method],
      set: {
        requests: sql`${usageMinutes.requests} + excluded.requests`,
        credits: sql`${usageMinutes.credits} + excluded.credits`,
        archiveRequests: sql`${usageMinutes.archiveRequests} + excluded.archive_requests`,
        refused: sql`${usageMinutes.refused} + excluded.refused`,
      },
    });
}

/** Usage is kept per minute: a window includes the minute it starts in. */
const inWindow = (accountId: string, start: Date, end: Date) =>
  and(
    eq(usageMinutes.accountId, accountId),
    gte(usageMinutes.minute, new Date(start.getTime() - (start.getTime() % 60_000))),
    lt(usageMinutes.minute, end),
  );

export async function totals(db: Executor, accountId: string, start: Date, end: Date) {
  const [row] = await db
    .select({
      credits: sql<number>`coalesce(sum(${usageMinutes.credits}), 0)::float8`,
      requests: sql<number>`coalesce(sum(${usageMinutes.requests}), 0)::float8`,
      lastMinute: sql<Date | null>`max(${usageMinutes.minute})`,
    })
    .from(usageMinutes)
    .where(inWindow(accountId, start, end));
  return {
    credits: Number(row.credits),
    requests: Number(row.requests),
    lastMinute: row.lastMinute ? new Date(row.lastMinute) : null,
  };
}

/** Per endpoint and method in the window. */
export async function byEndpointAndMethod(db: Executor, accountId: string, start: Date, end: Date) {
  const rows = await db
    .select({
      endpointId: usageMinutes.endpointId,
      method: usageMinutes.method,
      requests: sql<number>`sum(${usageMinutes.requests})::float8`,
      credits: sql<number>`sum(${usageMinutes.credits})::float8`,
      archive: sql<number>`sum(${usageMinutes.archiveRequests})::float8`,
      refused: sql<number>`sum(${usageMinutes.refused})::float8`,
    })
    .from(usageMinutes)
    .where(inWindow(accountId, start, end))
    .groupBy(usageMinutes.endpointId, usageMinutes.method);
  return rows.map((r) => ({
    ...r,
    requests: Number(r.requests),
    credits: Number(r.credits),
    archive: Number(r.archive),
    refused: Number(r.refused),
  }));
}

/** Credits per tick (hour or day, in UTC) and method in the window. */
export async function ticks(db: Executor, accountId: string, start: Date, end: Date, tick: "hour" | "day") {
  const bucket = sql<Date>`date_trunc(${sql.raw(`'${tick}'`)}, ${usageMinutes.minute} at time zone 'UTC') at time zone 'UTC'`;
  const rows = await db
    .select({
      at: bucket,
      method: usageMinutes.method,
      credits: sql<number>`sum(${usageMinutes.credits})::float8`,
      requests: sql<number>`sum(${usageMinutes.requests})::float8`,
    })
    .from(usageMinutes)
    .where(inWindow(accountId, start, end))
    .groupBy(bucket, usageMinutes.method)
    .orderBy(bucket);
  return rows.map((r) => ({
    at: new Date(r.at),
    method: r.method,
    credits: Number(r.credits),
    requests: Number(r.requests),
  }));
}

export async function topEndpoints(db: Executor, accountId: string, start: Date, end: Date, limit: number) {
  const total = sql<number>`sum(${usageMinutes.credits})::float8`;
  const rows = await db
    .select({ endpoint: endpoints, totalUsage: total })
    .from(usageMinutes)
    .innerJoin(endpoints, and(eq(endpoints.id, usageMinutes.endpointId), eq(endpoints.accountId, accountId)))
    .where(inWindow(accountId, start, end))
    .groupBy(endpoints.id)
    .orderBy(desc(total))
    .limit(limit);
  return rows.map((r) => ({ ...r, totalUsage: Number(r.totalUsage) }));
}

export async function subscriptionOf(db: Executor, accountId: string) {
  const [row] = await db.select().from(subscriptions).where(eq(subscriptions.accountId, accountId));
  return row;
}
