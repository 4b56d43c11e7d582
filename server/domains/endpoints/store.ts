import { and, asc, count, desc, eq, getTableName, ilike, inArray, ne, or, type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Executor } from "../../platform/db/index.ts";
import { containing } from "../../platform/db/like.ts";
import { preparedQuery, preparedShapes } from "../../platform/db/prepared.ts";
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

/** Which parts a list query has: its SQL differs by these, never by the values. */
type FilterShape = `${"s" | ""}${"t" | ""}${"f" | ""}`;
type ListShape = `${EndpointOrder}:${FilterShape}${"a" | ""}`;

function filterShape(filter: EndpointFilter): FilterShape {
  return `${filter.search?.trim() ? "s" : ""}${filter.tagIds && filter.tagIds.length > 0 ? "t" : ""}${filter.status ? "f" : ""}` as FilterShape;
}

/** The filter's values, named as the conditions' placeholders. */
function filterValues(accountId: string, filter: EndpointFilter) {
  const search = filter.search?.trim();
  return {
    accountId,
    status: filter.status ?? null,
    pattern: search ? containing(search) : null,
    tagIds: filter.tagIds ?? [],
  };
}

function filterConditions(shape: string): SQL[] {
  const conditions: SQL[] = [eq(endpoints.accountId, sql.placeholder("accountId"))];
  conditions.push(
    shape.includes("f") ? eq(endpoints.status, sql.placeholder("status")) : ne(endpoints.status, "ARCHIVED"),
  );
  if (shape.includes("s")) {
    const pattern = sql.placeholder("pattern");
    const match = or(
      ilike(endpoints.label, pattern),
      ilike(endpoints.name, pattern),
      ilike(endpoints.network, pattern),
      ilike(endpoints.exId, pattern),
    );
    if (match) conditions.push(match);
  }
  if (shape.includes("t")) {
    conditions.push(
      inArray(
        endpoints.id,
        sql`(select ${endpointTags.endpointId} from ${endpointTags} where ${endpointTags.tagId} = any(${sql.placeholder("tagIds")}::uuid[]))`,
      ),
    );
  }
  return conditions;
}

/**
 * A column named with its table. Drizzle leaves columns bare in the select list of a one-table query,
 * where a subquery's `id` would then be its own table's, not the listed row's.
 */
const qualified = (column: AnyPgColumn) =>
  sql`${sql.identifier(getTableName(column.table))}.${sql.identifier(column.name)}`;

/** An endpoint's tags as a JSON array, sorted by label, in the row that lists it. */
const tagsOfRow = sql<EndpointTag[]>`coalesce((
  select json_agg(json_build_object('tagId', ${qualified(tags.id)}, 'label', ${qualified(tags.label)}) order by lower(${qualified(tags.label)}))
  from ${endpointTags} inner join ${tags} on ${qualified(tags.id)} = ${qualified(endpointTags.tagId)}
  where ${qualified(endpointTags.endpointId)} = ${qualified(endpoints.id)} and ${qualified(tags.accountId)} = ${sql.placeholder("accountId")}
), '[]'::json)`;

export interface EndpointTag {
  tagId: string;
  label: string;
}

/** A page of endpoints with their tags, and how many the filter matches in all (on every page). */
export interface EndpointPage {
  rows: { endpoint: EndpointRow; tags: EndpointTag[] }[];
  totalCount: number;
}

const listQuery = preparedShapes("endpoints_list", (db, name, shape: ListShape) => {
  const [order, parts] = shape.split(":") as [EndpointOrder, string];
  const key = sortKey(order);
  const descending = order.endsWith("DESC");
  const conditions = filterConditions(parts);
  if (parts.includes("a")) {
    const afterKey = order.startsWith("LABEL")
      ? sql`${sql.placeholder("afterKey")}`
      : sql`${sql.placeholder("afterKey")}::timestamptz`;
    const afterId = sql`${sql.placeholder("afterId")}::uuid`;
    conditions.push(
      descending
        ? sql`(${key}, ${endpoints.id}) < (${afterKey}, ${afterId})`
        : sql`(${key}, ${endpoints.id}) > (${afterKey}, ${afterId})`,
    );
  }
  // Uncorrelated: PostgreSQL counts once per query, not per row.
  const total = sql<number>`(select count(*) from ${endpoints} where ${and(...filterConditions(parts))})`.mapWith(
    Number,
  );
  return db
    .select({ endpoint: endpoints, total, tags: tagsOfRow })
    .from(endpoints)
    .where(and(...conditions))
    .orderBy(descending ? desc(key) : asc(key), descending ? desc(endpoints.id) : asc(endpoints.id))
    .limit(sql.placeholder("limit"))
    .prepare(name);
});

/**
 * Up to `first` endpoints after the cursor, with their tags and the filter's total, in one round trip
 * (a second counts when the page is empty, having no row to carry the total).
 */
export async function listEndpoints(
  db: Executor,
  accountId: string,
  filter: EndpointFilter,
  order: EndpointOrder,
  first: number,
  after: Cursor | null,
): Promise<EndpointPage> {
  const shape: ListShape = `${order}:${filterShape(filter)}${after ? "a" : ""}`;
  const rows = await listQuery(db, shape).execute({
    ...filterValues(accountId, filter),
    afterKey: after?.[0] ?? null,
    afterId: after?.[1] ?? null,
    limit: first,
  });
  return {
    rows: rows.map(({ endpoint, tags }) => ({ endpoint, tags })),
    totalCount: rows[0]?.total ?? (await countEndpoints(db, accountId, filter)),
  };
}

/** An endpoint as the list cache keeps it: what a page shows, and its keys as PostgreSQL computes them. */
export interface ListedEndpointRow {
  endpoint: EndpointRow;
  tags: EndpointTag[];
  /** `lower(coalesce(label, name))`: the LABEL orders' key. */
  labelKey: string;
  /** The fields a search matches, lowered by PostgreSQL (ILIKE compares the lowered text and pattern). */
  lowerLabel: string | null;
  lowerName: string;
  lowerNetwork: string;
  lowerExId: string;
}

const accountListQuery = preparedQuery("endpoints_of_account", (db, name) => {
  const key = sortKey("LABEL_ASC");
  return db
    .select({
      endpoint: endpoints,
      tags: tagsOfRow,
      labelKey: key,
      lowerLabel: sql<string | null>`lower(${endpoints.label})`,
      lowerName: sql<string>`lower(${endpoints.name})`,
      lowerNetwork: sql<string>`lower(${endpoints.network})`,
      lowerExId: sql<string>`lower(${endpoints.exId})`,
    })
    .from(endpoints)
    .where(eq(endpoints.accountId, sql.placeholder("accountId")))
    .orderBy(asc(key), asc(endpoints.id))
    .limit(sql.placeholder("limit"))
    .prepare(name);
});

/**
 * Up to `limit` of the account's endpoints of every status with their tags, in LABEL_ASC order as
 * PostgreSQL sorts under its collation, in one round trip.
 */
export function endpointsOfAccount(db: Executor, accountId: string, limit: number): Promise<ListedEndpointRow[]> {
  return accountListQuery(db).execute({ accountId, limit });
}

const countQuery = preparedShapes("endpoints_count", (db, name, shape: FilterShape) =>
  db
    .select({ n: count() })
    .from(endpoints)
    .where(and(...filterConditions(shape)))
    .prepare(name),
);

export async function countEndpoints(db: Executor, accountId: string, filter: EndpointFilter): Promise<number> {
  const [row] = await countQuery(db, filterShape(filter)).execute(filterValues(accountId, filter));
  return row.n;
}

/** Endpoints that count against the plan's endpoint limit: every one not archived. */
/** The account's endpoints that are not archived, oldest first, with their status. */
export async function liveEndpoints(db: Executor, accountId: string) {
  return db
    .select({ id: endpoints.id, status: endpoints.status })
    .from(endpoints)
    .where(and(eq(endpoints.accountId, accountId), ne(endpoints.status, "ARCHIVED")))
    .orderBy(asc(endpoints.createdAt), asc(endpoints.id));
}

/** The account's endpoints in `status`, as a banner names them, oldest first. */
export async function endpointsInStatus(db: Executor, accountId: string, status: string) {
  return db
    .select({ id: endpoints.id, name: endpoints.name, label: endpoints.label, network: endpoints.network })
    .from(endpoints)
    .where(and(eq(endpoints.accountId, accountId), eq(endpoints.status, status)))
    .orderBy(asc(endpoints.createdAt), asc(endpoints.id));
}

/** Pauses these endpoints of the account that serve (ACTIVE or LIMIT_REACHED); returns those it paused. */
export async function pauseServing(db: Executor, accountId: string, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .update(endpoints)
    .set({ status: "PAUSED" })
    .where(
      and(
        eq(endpoints.accountId, accountId),
        inArray(endpoints.id, ids),
        inArray(endpoints.status, ["ACTIVE", "LIMIT_REACHED"]),
      ),
    )
    .returning({ id: endpoints.id });
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

const tagsQuery = preparedQuery("endpoint_tags_of", (db, name) =>
  db
    .select({ endpointId: endpointTags.endpointId, tagId: tags.id, label: tags.label })
    .from(endpointTags)
    .innerJoin(tags, eq(tags.id, endpointTags.tagId))
    .where(
      and(
        eq(tags.accountId, sql.placeholder("accountId")),
        sql`${endpointTags.endpointId} = any(${sql.placeholder("endpointIds")}::uuid[])`,
      ),
    )
    .orderBy(asc(sql`lower(${tags.label})`))
    .prepare(name),
);

export async function tagsOfEndpoints(db: Executor, accountId: string, endpointIds: string[]) {
  if (endpointIds.length === 0) return [];
  return tagsQuery(db).execute({ accountId, endpointIds });
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
