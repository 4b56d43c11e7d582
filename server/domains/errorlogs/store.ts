import { and, desc, eq, gte, lt, lte, or, sql } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import type { CursorKey } from "../../platform/paging.ts";
import { errorLogs } from "./tables.ts";

export type ErrorLogRow = typeof errorLogs.$inferSelect;
export type NewErrorLog = typeof errorLogs.$inferInsert;

/** The meter's batch writer (rows of several accounts, each with its account id). */
export async function insertLogs(db: Executor, rows: NewErrorLog[]) {
  if (rows.length === 0) return;
  await db.insert(errorLogs).values(rows);
}

/** Error logs page newest first: a position is a time and the id that breaks ties. */
export const errorLogCursorShape = ["timestamp", "integer"] as const;
export const errorLogCursorOf = (row: { at: Date; id: number }) => [row.at, row.id] as const;

/** Newest first in [from, to]; `before` continues after the last row of the previous page. */
export async function listLogs(
  db: Executor,
  accountId: string,
  endpointId: string,
  window: { from: Date; to: Date },
  limit: number,
  before: CursorKey<typeof errorLogCursorShape> | null,
) {
  const conditions = [
    eq(errorLogs.accountId, accountId),
    eq(errorLogs.endpointId, endpointId),
    gte(errorLogs.at, window.from),
    lte(errorLogs.at, window.to),
  ];
  if (before) {
    const [at, id] = before;
    const older = or(lt(errorLogs.at, at), and(eq(errorLogs.at, at), lt(errorLogs.id, id)));
    if (older) conditions.push(older);
  }
  return db
    .select({
      id: errorLogs.id,
      accountId: errorLogs.accountId,
      endpointId: errorLogs.endpointId,
      requestId: errorLogs.requestId,
      at: errorLogs.at,
      method: errorLogs.method,
      httpMethod: errorLogs.httpMethod,
      status: errorLogs.status,
      errorCode: errorLogs.errorCode,
      errorKind: errorLogs.errorKind,
      message: errorLogs.message,
      url: errorLogs.url,
      network: errorLogs.network,
      transport: errorLogs.transport,
      calls: errorLogs.calls,
      failedCalls: errorLogs.failedCalls,
      clientIp: errorLogs.clientIp,
      origin: errorLogs.origin,
    })
    .from(errorLogs)
    .where(and(...conditions))
    .orderBy(desc(errorLogs.at), desc(errorLogs.id))
    .limit(limit);
}

export async function getLog(db: Executor, accountId: string, endpointId: string, requestId: string) {
  const [row] = await db
    .select()
    .from(errorLogs)
    .where(
      and(eq(errorLogs.accountId, accountId), eq(errorLogs.endpointId, endpointId), eq(errorLogs.requestId, requestId)),
    )
    .orderBy(desc(errorLogs.at))
    .limit(1);
  return row;
}

/** Pruning spans accounts: every log older than the cutoff goes. Returns how many rows were deleted. */
export async function pruneOlderThan(db: Executor, cutoff: Date) {
  const result = await db.execute(sql`delete from ${errorLogs} where ${errorLogs.at} < ${cutoff}`);
  return result.rowCount ?? 0;
}
