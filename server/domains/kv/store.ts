import { and, asc, count, desc, eq, gt, gte, ilike, inArray, lt, or, sql } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import { containing } from "../../platform/db/like.ts";
import { isUuid } from "../../platform/ids.ts";
import type { CursorKey } from "../../platform/paging.ts";
import { bucketStart, floorMinute, TICK_SECONDS } from "../../platform/time-buckets.ts";
import { addressBookItem } from "./limits.ts";
import { kvCollections, kvListItems, kvSetItems, kvUploads, kvValues, kvWriteMinutes } from "./tables.ts";

export type CollectionKind = "LIST" | "SET";
export type CollectionRow = typeof kvCollections.$inferSelect;
export type ValueRow = typeof kvValues.$inferSelect;
export type UploadRow = typeof kvUploads.$inferSelect;

/** One array parameter (a JS array in a sql template would become one parameter per element). */
const textArray = (items: readonly string[]) => sql`${sql.param(items)}::text[]`;

export interface PageQuery<K> {
  search: string | null;
  after: K | null;
  limit: number;
}

// ---------------------------------------------------------------- keys

/** Lists, sets and values of the account together (what the plan's key limit counts). */
export async function countKeys(db: Executor, accountId: string): Promise<number> {
  const [row] = await db
    .execute<{ n: number }>(sql`
    select (select count(*) from kv_collections where account_id = ${accountId})::int
         + (select count(*) from kv_values where account_id = ${accountId})::int as n`)
    .then((r) => r.rows);
  return row.n;
}

// ---------------------------------------------------------------- lists and sets

export async function getCollection(
  db: Executor,
  accountId: string,
  key: string,
  lock = false,
): Promise<CollectionRow | undefined> {
  const query = db
    .select()
    .from(kvCollections)
    .where(and(eq(kvCollections.accountId, accountId), eq(kvCollections.key, key)));
  const [row] = await (lock ? query.for("update") : query);
  return row;
}

function collectionFilter(accountId: string, kind: CollectionKind | null, search: string | null) {
  return and(
    eq(kvCollections.accountId, accountId),
    kind ? eq(kvCollections.kind, kind) : undefined,
    search ? ilike(kvCollections.key, containing(search)) : undefined,
  );
}

export function listCollections(
  db: Executor,
  accountId: string,
  kind: CollectionKind | null,
  page: PageQuery<readonly [string]>,
): Promise<CollectionRow[]> {
  return db
    .select()
    .from(kvCollections)
    .where(
      and(
        collectionFilter(accountId, kind, page.search),
        page.after ? gt(kvCollections.key, page.after[0]) : undefined,
      ),
    )
    .orderBy(asc(kvCollections.key))
    .limit(page.limit + 1);
}

export async function countCollections(
  db: Executor,
  accountId: string,
  kind: CollectionKind | null,
  search: string | null,
): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(kvCollections)
    .where(collectionFilter(accountId, kind, search));
  return row.n;
}

/** A new, empty list or set; undefined when the account has the key already. */
export async function insertCollection(
  db: Executor,
  accountId: string,
  kind: CollectionKind,
  key: string,
): Promise<CollectionRow | undefined> {
  const [row] = await db.insert(kvCollections).values({ accountId, kind, key }).onConflictDoNothing().returning();
  return row;
}

export async function deleteCollection(
  db: Executor,
  accountId: string,
  kind: CollectionKind | null,
  key: string,
): Promise<CollectionRow | undefined> {
  const [row] = await db
    .delete(kvCollections)
    .where(
      and(
        eq(kvCollections.accountId, accountId),
        eq(kvCollections.key, key),
        kind ? eq(kvCollections.kind, kind) : undefined,
      ),
    )
    .returning();
  return row;
}

/** Marks a write of the collection: its new item count and a new version. */
async function touch(db: Executor, collection: CollectionRow, itemsDelta: number, nextPosition?: number) {
  const [row] = await db
    .update(kvCollections)
    .set({
      itemCount: sql`${kvCollections.itemCount} + ${itemsDelta}`,
      version: sql`nextval('kv_versions')`,
      updatedAt: new Date(),
      ...(nextPosition === undefined ? {} : { nextPosition }),
    })
    .where(and(eq(kvCollections.id, collection.id), eq(kvCollections.accountId, collection.accountId)))
    .returning();
  return row;
}

/**
 * Adds items (the collection's row locked by the caller): a list appends them all in order, a set
 * the ones it does not hold yet. Answers how many were added.
 */
export async function addItems(db: Executor, collection: CollectionRow, items: readonly string[]): Promise<number> {
  if (items.length === 0) return 0;
  const { id, accountId } = collection;
  let added: number;
  if (collection.kind === "LIST") {
    const start = collection.nextPosition;
    const result = await db.execute(sql`
      insert into kv_list_items (collection_id, account_id, position, item)
      select ${id}, ${accountId}, ${start} + n - 1, item from unnest(${textArray(items)}) with ordinality as t(item, n)`);
    added = result.rowCount ?? 0;
    await touch(db, collection, added, start + items.length);
  } else {
    const result = await db.execute(sql`
      insert into kv_set_items (collection_id, account_id, item)
      select distinct ${id}::uuid, ${accountId}::uuid, item from unnest(${textArray(items.map(addressBookItem))}) as t(item)
      on conflict do nothing`);
    added = result.rowCount ?? 0;
    await touch(db, collection, added);
  }
  return added;
}

/** Removes every occurrence of the items; answers how many were removed. */
export async function removeItems(db: Executor, collection: CollectionRow, items: readonly string[]): Promise<number> {
  if (items.length === 0) return 0;
  const list = collection.kind === "LIST";
  const table = list ? kvListItems : kvSetItems;
  const result = await db.execute(sql`
    delete from ${table} where ${table.collectionId} = ${collection.id} and ${table.accountId} = ${collection.accountId}
      and ${table.item} = any(${textArray(list ? items : items.map(addressBookItem))})`);
  const removed = result.rowCount ?? 0;
  await touch(db, collection, -removed);
  return removed;
}

export interface ItemRow {
  item: string;
  position: number;
}

function itemFilter(collection: CollectionRow, search: string | null) {
  const table = collection.kind === "LIST" ? kvListItems : kvSetItems;
  return and(
    eq(table.collectionId, collection.id),
    eq(table.accountId, collection.accountId),
    search ? ilike(table.item, containing(search)) : undefined,
  );
}

/** A page of items: a list's in order (cursor: position), a set's by item (cursor: the item). */
export async function listItems(
  db: Executor,
  collection: CollectionRow,
  page: PageQuery<readonly [string | number]>,
): Promise<ItemRow[]> {
  if (collection.kind === "LIST") {
    const after = page.after?.[0];
    return db
      .select({ item: kvListItems.item, position: kvListItems.position })
      .from(kvListItems)
      .where(
        and(
          itemFilter(collection, page.search),
          typeof after === "number" ? gt(kvListItems.position, after) : undefined,
        ),
      )
      .orderBy(asc(kvListItems.position))
      .limit(page.limit + 1);
  }
  const after = page.after?.[0];
  const rows = await db
    .select({ item: kvSetItems.item })
    .from(kvSetItems)
    .where(and(itemFilter(collection, page.search), typeof after === "string" ? gt(kvSetItems.item, after) : undefined))
    .orderBy(asc(kvSetItems.item))
    .limit(page.limit + 1);
  return rows.map((row, i) => ({ item: row.item, position: i }));
}

export async function countItems(db: Executor, collection: CollectionRow, search: string | null): Promise<number> {
  if (!search) return collection.itemCount;
  const table = collection.kind === "LIST" ? kvListItems : kvSetItems;
  const [row] = await db.select({ n: count() }).from(table).where(itemFilter(collection, search));
  return row.n;
}

/** Which of `items` the collection under `key` holds, whatever its kind (none when there is no such key). */
export async function containsItems(
  db: Executor,
  accountId: string,
  key: string,
  items: readonly string[],
): Promise<boolean[]> {
  if (items.length === 0) return [];
  const inBook = items.map(addressBookItem);
  const result = await db.execute<{ item: string; kind: string }>(sql`
    select i.item, c.kind from kv_collections c
      join lateral (
        select item from kv_list_items where collection_id = c.id and c.kind = 'LIST' and item = any(${textArray(items)})
        union
        select item from kv_set_items where collection_id = c.id and c.kind = 'SET' and item = any(${textArray(inBook)})
      ) i on true
    where c.account_id = ${accountId} and c.key = ${key}`);
  const held = new Set(result.rows.map((row) => row.item));
  const book = result.rows[0]?.kind === "SET";
  return items.map((item, i) => held.has(book ? inBook[i] : item));
}

/**
 * The version and items of the collection under `key` (a list's in order, a set's by item) read in one
 * statement, so they agree; items are not read when the version is `knownVersion`.
 */
export async function collectionSnapshot(
  db: Executor,
  accountId: string,
  key: string,
  knownVersion: number | null,
): Promise<{ version: number; items: string[] | null } | undefined> {
  const result = await db.execute<{ version: string; items: string[] | null }>(sql`
    select c.version::text as version,
      case when c.version is not distinct from ${knownVersion}::bigint then null
           when c.kind = 'LIST' then array(select item from kv_list_items where collection_id = c.id order by position)
           else array(select item from kv_set_items where collection_id = c.id order by item) end as items
    from kv_collections c where c.account_id = ${accountId} and c.key = ${key}`);
  const [row] = result.rows;
  return row ? { version: Number(row.version), items: row.items } : undefined;
}

// ---------------------------------------------------------------- values

function valueFilter(accountId: string, search: string | null) {
  return and(eq(kvValues.accountId, accountId), search ? ilike(kvValues.key, containing(search)) : undefined);
}

export function listValues(db: Executor, accountId: string, page: PageQuery<readonly [string]>): Promise<ValueRow[]> {
  return db
    .select()
    .from(kvValues)
    .where(and(valueFilter(accountId, page.search), page.after ? gt(kvValues.key, page.after[0]) : undefined))
    .orderBy(asc(kvValues.key))
    .limit(page.limit + 1);
}

export async function countValues(db: Executor, accountId: string, search: string | null): Promise<number> {
  const [row] = await db.select({ n: count() }).from(kvValues).where(valueFilter(accountId, search));
  return row.n;
}

export async function getValue(db: Executor, accountId: string, key: string): Promise<ValueRow | undefined> {
  const [row] = await db
    .select()
    .from(kvValues)
    .where(and(eq(kvValues.accountId, accountId), eq(kvValues.key, key)));
  return row;
}

export function listValueKeys(db: Executor, accountId: string): Promise<{ key: string }[]> {
  return db
    .select({ key: kvValues.key })
    .from(kvValues)
    .where(eq(kvValues.accountId, accountId))
    .orderBy(asc(kvValues.key));
}

export function listCollectionKeys(db: Executor, accountId: string): Promise<{ key: string }[]> {
  return db
    .select({ key: kvCollections.key })
    .from(kvCollections)
    .where(eq(kvCollections.accountId, accountId))
    .orderBy(asc(kvCollections.key));
}

/** Which of `keys` the account has values for. */
export async function existingValueKeys(
  db: Executor,
  accountId: string,
  keys: readonly string[],
): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db
    .select({ key: kvValues.key })
    .from(kvValues)
    .where(and(eq(kvValues.accountId, accountId), inArray(kvValues.key, [...keys])));
  return new Set(rows.map((row) => row.key));
}

/** Sets values, making the missing keys; answers the rows written. */
export function upsertValues(db: Executor, accountId: string, entries: readonly { key: string; value: string }[]) {
  return db
    .insert(kvValues)
    .values(entries.map((entry) => ({ accountId, key: entry.key, value: entry.value })))
    .onConflictDoUpdate({
      target: [kvValues.accountId, kvValues.key],
      set: { value: sql`excluded.value`, updatedAt: new Date() },
    })
    .returning();
}

export async function deleteValues(db: Executor, accountId: string, keys: readonly string[]): Promise<number> {
  if (keys.length === 0) return 0;
  const rows = await db
    .delete(kvValues)
    .where(and(eq(kvValues.accountId, accountId), inArray(kvValues.key, [...keys])))
    .returning({ key: kvValues.key });
  return rows.length;
}

// ---------------------------------------------------------------- uploads

export async function insertUpload(
  db: Executor,
  accountId: string,
  values: Omit<typeof kvUploads.$inferInsert, "accountId">,
) {
  const [row] = await db
    .insert(kvUploads)
    .values({ ...values, accountId })
    .returning();
  return row;
}

export async function getUpload(db: Executor, accountId: string, id: string): Promise<UploadRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db
    .select()
    .from(kvUploads)
    .where(and(eq(kvUploads.accountId, accountId), eq(kvUploads.id, id)));
  return row;
}

/** The upload a signed part URL names (the signature, not a session, says whose it is). */
export async function getUploadById(db: Executor, id: string): Promise<UploadRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db.select().from(kvUploads).where(eq(kvUploads.id, id));
  return row;
}

export async function deleteUpload(db: Executor, accountId: string, id: string): Promise<UploadRow | undefined> {
  const [row] = await db
    .delete(kvUploads)
    .where(and(eq(kvUploads.accountId, accountId), eq(kvUploads.id, id)))
    .returning();
  return row;
}

export function expiredUploads(db: Executor, accountId: string, now: Date): Promise<UploadRow[]> {
  return db
    .select()
    .from(kvUploads)
    .where(and(eq(kvUploads.accountId, accountId), lt(kvUploads.expiresAt, now)));
}

/**
 * Expired uploads of every account, `limit` of them, for the housekeeping's sweep (which ends each
 * through its account's deleteUpload). By the expiry index: nothing expired, nothing read.
 */
export function expiredUploadsOfAllAccounts(db: Executor, now: Date, limit: number): Promise<UploadRow[]> {
  return db.select().from(kvUploads).where(lt(kvUploads.expiresAt, now)).orderBy(kvUploads.expiresAt).limit(limit);
}

const openAt = (accountId: string, now: Date) => and(eq(kvUploads.accountId, accountId), gte(kvUploads.expiresAt, now));

export async function countOpenUploads(db: Executor, accountId: string, now: Date): Promise<number> {
  const [{ count }] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(kvUploads)
    .where(openAt(accountId, now));
  return count;
}

/** One account's initiates at a time, so two of them cannot both take the plan's last open upload. */
export async function lockAccountUploads(db: Executor, accountId: string): Promise<void> {
  await db.execute(sql`select pg_advisory_xact_lock(hashtext('kv-uploads:' || ${accountId}))`);
}

export const uploadCursorShape = ["timestamp", "uuid"] as const;
export const uploadCursorOf = (row: UploadRow) => [row.createdAt, row.id] as const;

/** The account's open uploads, newest first, `limit` from `after`, and how many there are. */
export async function listOpenUploads(
  db: Executor,
  accountId: string,
  now: Date,
  options: { limit: number; after: CursorKey<typeof uploadCursorShape> | null },
) {
  const base = openAt(accountId, now);
  const rows = await db
    .select()
    .from(kvUploads)
    .where(
      options.after
        ? and(
            base,
            or(
              lt(kvUploads.createdAt, options.after[0]),
              and(eq(kvUploads.createdAt, options.after[0]), lt(kvUploads.id, options.after[1])),
            ),
          )
        : base,
    )
    .orderBy(desc(kvUploads.createdAt), desc(kvUploads.id))
    .limit(options.limit);
  return { rows, totalCount: await countOpenUploads(db, accountId, now) };
}

// ---------------------------------------------------------------- metering

/** Counts one write by a filter or function helper and the operations it is billed, in its minute. */
export async function meterHelperWrite(db: Executor, accountId: string, operations: number, at: Date) {
  await db
    .insert(kvWriteMinutes)
    .values({ accountId, minute: floorMinute(at), calls: 1, operations })
    .onConflictDoUpdate({
      target: [kvWriteMinutes.accountId, kvWriteMinutes.minute],
      set: {
        calls: sql`${kvWriteMinutes.calls} + 1`,
        operations: sql`${kvWriteMinutes.operations} + ${operations}`,
      },
    });
}

/**
 * The minute rows of [start, end): a window's bounds are taken to their minute, so windows that meet (one
 * billing period and the next, which start at the subscription's second) share no row and lose none, and a
 * write in a period's first minute counts in it.
 */
const inWriteWindow = (accountId: string, start: Date, end: Date) =>
  and(
    eq(kvWriteMinutes.accountId, accountId),
    gte(kvWriteMinutes.minute, floorMinute(start)),
    lt(kvWriteMinutes.minute, floorMinute(end)),
  );

/** The account's helper writes in [start, end). */
export async function helperWrites(db: Executor, accountId: string, start: Date, end: Date) {
  const [row] = await db
    .select({
      calls: sql<number>`coalesce(sum(${kvWriteMinutes.calls}), 0)::float8`,
      operations: sql<number>`coalesce(sum(${kvWriteMinutes.operations}), 0)::float8`,
    })
    .from(kvWriteMinutes)
    .where(inWriteWindow(accountId, start, end));
  return { calls: Number(row.calls), operations: Number(row.operations) };
}

/** The account's helper writes in [start, end) per UTC hour or day with writes. */
export async function helperWriteTicks(db: Executor, accountId: string, start: Date, end: Date, tick: "hour" | "day") {
  const bucket = bucketStart(kvWriteMinutes.minute, TICK_SECONDS[tick]);
  const rows = await db
    .select({
      at: bucket,
      calls: sql<number>`sum(${kvWriteMinutes.calls})::float8`,
      operations: sql<number>`sum(${kvWriteMinutes.operations})::float8`,
    })
    .from(kvWriteMinutes)
    .where(inWriteWindow(accountId, start, end))
    .groupBy(bucket)
    .orderBy(bucket);
  return rows.map((r) => ({ at: new Date(r.at), calls: Number(r.calls), operations: Number(r.operations) }));
}
