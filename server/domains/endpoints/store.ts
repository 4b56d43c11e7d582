import { and, asc, count, desc, eq, ilike, inArray, ne, or, type SQL, sql } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import type { CursorKey } from "../../platform/paging.ts";
import { endpoints, endpointTags, tags } from "./tables.ts";

export type EndpointRow = typeof endpoints.$inferSelect;
export type EndpointOrder = "CREATED_AT_DESC" | "CREATED_AT_ASC" | "LABEL_ASC" | "LABEL_DESC";

export interface EndpointFilter {
  search?: string | null;
  tagIds?: string[] | null;
  status?: string | null;
}

/** A position in a sorted list: the sort key's value and the id that breaks ties. */
export const cursorShape = ["string", "uuid"] as const;
export type Cursor = CursorKey<typeof cursorShape>;

const sortKey = (order: EndpointOrder) =>
  order.startsWith("LABEL")
    ? sql<string>`lower(coalesce(${endpoints.label}, ${endpoints.name}))`
    : sql<string>`${endpoints.createdAt}`;

export function cursorOf(row: EndpointRow, order: EndpointOrder): Cursor {
  const key = order.startsWith("LABEL") ? (row.label ?? row.name).toLowerCase() : row.createdAt.toISOString();
  return [key, row.id];
}

function filterConditions(accountId: string, filter: EndpointFilter): SQL[] {
  const conditions: SQL[] = [eq(endpoints.accountId, accountId)];
  conditions.push(filter.status ? eq(endpoints.status, filter.status) : ne(endpoints.status, "ARCHIVED"));
  const search = filter.search?.trim();
  if (search) {
    const pattern = `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const match = or(
      ilike(endpoints.label, pattern),
      ilike(endpoints.name, pattern),
      ilike(endpoints.network, pattern),
      ilike(endpoints.exId, pattern),
    );
    if (match) conditions.push(match);
  }
  if (filter.tagIds && filter.tagIds.length > 0) {
    conditions.push(
      inArray(
        endpoints.id,
        sql`(select ${endpointTags.endpointId} from ${endpointTags} where ${inArray(endpointTags.tagId, filter.tagIds)})`,
      ),
    );
  }
  return conditions;
}

export async function listEndpoints(
  db: Executor,
  accountId: string,
  filter: EndpointFilter,
  order: EndpointOrder,
  first: number,
  after: Cursor | null,
): Promise<EndpointRow[]> {
  const key = sortKey(order);
  const descending = order.endsWith("DESC");
  const conditions = filterConditions(accountId, filter);
  if (after) {
    const [afterValue, afterId] = after;
    const afterKey = order.startsWith("LABEL") ? sql`${afterValue}` : sql`${afterValue}::timestamptz`;
    conditions.push(
      descending
        ? sql`(${key}, ${endpoints.id}) < (${afterKey}, ${afterId}::uuid)`
        : sql`(${key}, ${endpoints.id}) > (${afterKey}, ${afterId}::uuid)`,
    );
  }
  return db
    .select()
    .from(endpoints)
    .where(and(...conditions))
    .orderBy(descending ? desc(key) : asc(key), descending ? desc(endpoints.id) : asc(endpoints.id))
    .limit(first);
}

export async function countEndpoints(db: Executor, accountId: string, filter: EndpointFilter): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(endpoints)
    .where(and(...filterConditions(accountId, filter)));
  return row.n;
}

/** Endpoints that count against the plan's endpoint limit: every one not archived. */
export async function countLiveEndpoints(db: Executor, accountId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(endpoints)
    .where(and(eq(endpoints.accountId, accountId), ne(endpoints.status, "ARCHIVED")));
  return row.n;
}

/** With `lock`, the row stays locked until the transaction ends, so two transitions cannot interleave. */
export async function getEndpoint(
  db: Executor,
  accountId: string,
  id: string,
  lock = false,
): Promise<EndpointRow | undefined> {
  const query = db
    .select()
    .from(endpoints)
    .where(and(eq(endpoints.accountId, accountId), eq(endpoints.id, id)));
  const [row] = lock ? await query.for("update") : await query;
  return row;
}

export function getEndpoints(db: Executor, accountId: string, ids: string[]): Promise<EndpointRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .select()
    .from(endpoints)
    .where(and(eq(endpoints.accountId, accountId), inArray(endpoints.id, ids)));
}

export async function getEndpointByExId(
  db: Executor,
  accountId: string,
  exId: string,
): Promise<EndpointRow | undefined> {
  const [row] = await db
    .select()
    .from(endpoints)
    .where(and(eq(endpoints.accountId, accountId), eq(endpoints.exId, exId)));
  return row;
}

export async function insertEndpoint(
  db: Executor,
  accountId: string,
  row: Omit<typeof endpoints.$inferInsert, "accountId">,
) {
  const [created] = await db
    .insert(endpoints)
    .values({ ...row, accountId })
    .returning();
  return created;
}

export async function updateEndpoint(
  db: Executor,
  accountId: string,
  id: string,
  set: Partial<Pick<EndpointRow, "label" | "status" | "archivedAt">>,
) {
  const [row] = await db
    .update(endpoints)
    .set(set)
    .where(and(eq(endpoints.accountId, accountId), eq(endpoints.id, id)))
    .returning();
  return row;
}

export async function tagsOfEndpoints(db: Executor, accountId: string, endpointIds: string[]) {
  if (endpointIds.length === 0) return [];
  return db
    .select({ endpointId: endpointTags.endpointId, tagId: tags.id, label: tags.label })
    .from(endpointTags)
    .innerJoin(tags, eq(tags.id, endpointTags.tagId))
    .where(and(eq(tags.accountId, accountId), inArray(endpointTags.endpointId, endpointIds)))
    .orderBy(asc(sql`lower(${tags.label})`));
}

export async function listTags(db: Executor, accountId: string) {
  return db
    .select({ id: tags.id, label: tags.label })
    .from(tags)
    .where(eq(tags.accountId, accountId))
    .orderBy(asc(sql`lower(${tags.label})`));
}

/** The account's tag with this label (case-insensitive), created if absent. */
export async function ensureTag(db: Executor, accountId: string, label: string) {
  const [existing] = await db
    .select()
    .from(tags)
    .where(and(eq(tags.accountId, accountId), sql`lower(${tags.label}) = lower(${label})`));
  if (existing) return existing;
  const [created] = await db.insert(tags).values({ accountId, label }).onConflictDoNothing().returning();
  if (created) return created;
  const [raced] = await db
    .select()
    .from(tags)
    .where(and(eq(tags.accountId, accountId), sql`lower(${tags.label}) = lower(${label})`));
  return raced;
}

export async function getTag(db: Executor, accountId: string, tagId: string) {
  const [row] = await db
    .select()
    .from(tags)
    .where(and(eq(tags.accountId, accountId), eq(tags.id, tagId)));
  return row;
}

export async function linkTag(db: Executor, endpointId: string, tagId: string) {
  await db.insert(endpointTags).values({ endpointId, tagId }).onConflictDoNothing();
}

export async function unlinkTag(db: Executor, endpointId: string, tagId: string) {
  await db.delete(endpointTags).where(and(eq(endpointTags.endpointId, endpointId), eq(endpointTags.tagId, tagId)));
}

export async function deleteTag(db: Executor, accountId: string, tagId: string) {
  const deleted = await db
    .delete(tags)
    .where(and(eq(tags.accountId, accountId), eq(tags.id, tagId)))
    .returning({ id: tags.id });
  return deleted.length > 0;
}

/** Moves the account's endpoints in status `from` to `to`; returns the ids moved. */
export async function moveStatus(db: Executor, accountId: string, from: string, to: string) {
  return db
    .update(endpoints)
    .set({ status: to })
    .where(and(eq(endpoints.accountId, accountId), eq(endpoints.status, from)))
    .returning({ id: endpoints.id });
}

/** Accounts with an endpoint in this status. */
export async function accountsWithStatus(db: Executor, status: string) {
  const rows = await db
    .selectDistinct({ accountId: endpoints.accountId })
    .from(endpoints)
    .where(eq(endpoints.status, status));
  return rows.map((r) => r.accountId);
}
