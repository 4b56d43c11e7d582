import { and, desc, eq, inArray, sql } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import { users } from "../account/tables.ts";
import { auditLog } from "./tables.ts";

export type AuditEntryRow = typeof auditLog.$inferSelect;
export type NewAuditEntry = Omit<typeof auditLog.$inferInsert, "accountId" | "id" | "createdAt">;

export async function insertEntry(db: Executor, accountId: string, entry: NewAuditEntry): Promise<void> {
  await db.insert(auditLog).values({ ...entry, accountId });
}

/** The newest `limit` entries of an area on one endpoint, newest first. */
export async function endpointEntries(
  db: Executor,
  accountId: string,
  area: string,
  endpointId: string,
  limit: number,
): Promise<AuditEntryRow[]> {
  return db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.accountId, accountId), eq(auditLog.area, area), eq(auditLog.endpointId, endpointId)))
    .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
    .limit(limit);
}

/** The newest `limit` entries of an area on each of several endpoints, newest first. */
export async function entriesOfEndpoints(
  db: Executor,
  accountId: string,
  area: string,
  endpointIds: string[],
  limit: number,
): Promise<AuditEntryRow[]> {
  // Ranked per endpoint so a list of endpoints reads `limit` rows of each in one query.
  const ranked = db
    .select({
      id: auditLog.id,
      rank: sql<number>`row_number() over (partition by ${auditLog.endpointId} order by ${auditLog.createdAt} desc, ${auditLog.id} desc)`.as(
        "rank",
      ),
    })
    .from(auditLog)
    .where(and(eq(auditLog.accountId, accountId), eq(auditLog.area, area), inArray(auditLog.endpointId, endpointIds)))
    .as("ranked");
  return db
    .select({ entry: auditLog })
    .from(auditLog)
    .innerJoin(ranked, eq(ranked.id, auditLog.id))
    .where(sql`${ranked.rank} <= ${limit}`)
    .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
    .then((rows) => rows.map((r) => r.entry));
}

export async function userEmail(db: Executor, userId: string): Promise<string | null> {
  const [row] = await db.select({ email: users.email }).from(users).where(eq(users.id, userId));
  return row?.email ?? null;
}
