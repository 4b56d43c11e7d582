import { and, count, desc, eq, gt, inArray, lt, notInArray, or } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import { isUuid } from "../../platform/ids.ts";
import { inspectedRequests, inspectionUrls } from "./tables.ts";

export type InspectionUrlRow = typeof inspectionUrls.$inferSelect;
export type InspectedRequestRow = typeof inspectedRequests.$inferSelect;
export type NewInspectedRequest = Omit<typeof inspectedRequests.$inferInsert, "id" | "accountId" | "inspectionUrlId">;

export async function insertInspectionUrl(
  db: Executor,
  accountId: string,
  values: { name: string; token: string; answerStatus: number },
): Promise<InspectionUrlRow> {
  const [row] = await db
    .insert(inspectionUrls)
    .values({ accountId, ...values })
    .returning();
  return row;
}

/** The account's inspection URLs, newest first (an account has few: see INSPECTION_URLS_PER_ACCOUNT). */
export async function listInspectionUrls(db: Executor, accountId: string): Promise<InspectionUrlRow[]> {
  return db
    .select()
    .from(inspectionUrls)
    .where(eq(inspectionUrls.accountId, accountId))
    .orderBy(desc(inspectionUrls.createdAt), desc(inspectionUrls.id));
}

export async function countInspectionUrls(db: Executor, accountId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(inspectionUrls).where(eq(inspectionUrls.accountId, accountId));
  return row.n;
}

export async function getInspectionUrl(
  db: Executor,
  accountId: string,
  id: string,
): Promise<InspectionUrlRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db
    .select()
    .from(inspectionUrls)
    .where(and(eq(inspectionUrls.accountId, accountId), eq(inspectionUrls.id, id)));
  return row;
}

/** Deletes the account's inspection URL and its requests; false when the account has none with this id. */
export async function deleteInspectionUrl(db: Executor, accountId: string, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const deleted = await db
    .delete(inspectionUrls)
    .where(and(eq(inspectionUrls.accountId, accountId), eq(inspectionUrls.id, id)))
    .returning({ id: inspectionUrls.id });
  return deleted.length > 0;
}

/**
 * The inspection URL a request arrived at, by its token. The token is what names the account here: a
 * request to /inspect/<token> comes from whoever has the URL, signed in or not.
 */
export async function inspectionUrlByToken(db: Executor, token: string): Promise<InspectionUrlRow | undefined> {
  const [row] = await db.select().from(inspectionUrls).where(eq(inspectionUrls.token, token));
  return row;
}

/**
 * Keeps one received request and drops what falls outside the bounds: requests older than `since`
 * and all but the newest `keep` of this URL. One transaction, so the count never overshoots.
 */
export async function recordRequest(
  db: Executor,
  accountId: string,
  inspectionUrlId: string,
  values: NewInspectedRequest,
  bounds: { keep: number; since: Date },
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.insert(inspectedRequests).values({ ...values, accountId, inspectionUrlId });
    const newest = tx
      .select({ id: inspectedRequests.id })
      .from(inspectedRequests)
      .where(eq(inspectedRequests.inspectionUrlId, inspectionUrlId))
      .orderBy(desc(inspectedRequests.id))
      .limit(bounds.keep);
    await tx
      .delete(inspectedRequests)
      .where(
        and(
          eq(inspectedRequests.inspectionUrlId, inspectionUrlId),
          or(lt(inspectedRequests.receivedAt, bounds.since), notInArray(inspectedRequests.id, newest)),
        ),
      );
  });
}

/** The requests the account's inspection URL received since `since`, newest first, at most `limit`. */
export async function listRequests(
  db: Executor,
  accountId: string,
  inspectionUrlId: string,
  since: Date,
  limit: number,
): Promise<InspectedRequestRow[]> {
  return db
    .select()
    .from(inspectedRequests)
    .where(
      and(
        eq(inspectedRequests.accountId, accountId),
        eq(inspectedRequests.inspectionUrlId, inspectionUrlId),
        gt(inspectedRequests.receivedAt, since),
      ),
    )
    .orderBy(desc(inspectedRequests.id))
    .limit(limit);
}

/** One request the account's inspection URL received since `since`. */
export async function getRequest(
  db: Executor,
  accountId: string,
  inspectionUrlId: string,
  requestId: number,
  since: Date,
): Promise<InspectedRequestRow | undefined> {
  const [row] = await db
    .select()
    .from(inspectedRequests)
    .where(
      and(
        eq(inspectedRequests.accountId, accountId),
        eq(inspectedRequests.inspectionUrlId, inspectionUrlId),
        eq(inspectedRequests.id, requestId),
        gt(inspectedRequests.receivedAt, since),
      ),
    );
  return row;
}

/** Deletes every request the account's inspection URL received; how many there were. */
export async function clearRequests(db: Executor, accountId: string, inspectionUrlId: string): Promise<number> {
  const deleted = await db
    .delete(inspectedRequests)
    .where(and(eq(inspectedRequests.accountId, accountId), eq(inspectedRequests.inspectionUrlId, inspectionUrlId)))
    .returning({ id: inspectedRequests.id });
  return deleted.length;
}

/** Housekeeping across accounts: every request received before `cutoff` goes. How many were deleted. */
export async function pruneRequestsBefore(db: Executor, cutoff: Date): Promise<number> {
  const deleted = await db
    .delete(inspectedRequests)
    .where(lt(inspectedRequests.receivedAt, cutoff))
    .returning({ id: inspectedRequests.id });
  return deleted.length;
}

/** Request counts of the account's inspection URLs received since `since`, by URL id. */
export async function requestCounts(
  db: Executor,
  accountId: string,
  inspectionUrlIds: string[],
  since: Date,
): Promise<Map<string, number>> {
  if (inspectionUrlIds.length === 0) return new Map();
  const rows = await db
    .select({ id: inspectedRequests.inspectionUrlId, n: count() })
    .from(inspectedRequests)
    .where(
      and(
        eq(inspectedRequests.accountId, accountId),
        inArray(inspectedRequests.inspectionUrlId, inspectionUrlIds),
        gt(inspectedRequests.receivedAt, since),
      ),
    )
    .groupBy(inspectedRequests.inspectionUrlId);
  return new Map(rows.map((r) => [r.id, r.n]));
}
