import { sql } from "drizzle-orm";
import type { Db, Executor } from "../../platform/db/index.ts";
import { AppError, badInput, conflict, foundOr } from "../../platform/errors.ts";
import { connection, cursorArgument, pageSize } from "../../platform/paging.ts";
import {
  addressBookItem,
  checkItemCount,
  checkItems,
  checkKey,
  checkKeyCount,
  checkValue,
  KEY_PATTERN,
  limitsOf,
  MAX_ITEMS_PER_CALL,
} from "./limits.ts";
import * as store from "./store.ts";

export type { CollectionKind, CollectionRow, ValueRow } from "./store.ts";

type CollectionKind = store.CollectionKind;

/** What the console calls each kind (sets are the spec's address books). */
const KIND_NAME: Record<CollectionKind, string> = { LIST: "list", SET: "address book" };

export interface PageArgs {
  after?: string | null;
  limit?: number | null;
  searchTerm?: string | null;
}

const searchOf = (term: string | null | undefined) => (term?.trim() ? term.trim() : null);

/** One account's key-creating writes at a time, so two of them cannot both take the last key of the plan. */
async function lockAccountKeys(tx: Executor, accountId: string) {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('kv:' || ${accountId}))`);
}

async function takeKey(tx: Executor, accountId: string, newKeys: number) {
  if (newKeys === 0) return;
  await lockAccountKeys(tx, accountId);
  checkKeyCount(await limitsOf(tx, accountId), (await store.countKeys(tx, accountId)) + newKeys);
}

// ---------------------------------------------------------------- lists and sets

export interface ItemsResult {
  success: boolean;
  key: string;
  addedCount: number;
}

/** A new list or set, with its first items; CONFLICT when the key names one already. */
export async function createCollection(
  db: Db,
  accountId: string,
  kind: CollectionKind,
  key: string,
  items: readonly string[] = [],
): Promise<ItemsResult> {
  checkKey(key, "/key");
  checkItems(items, "/items");
  return db.transaction(async (tx) => {
    await takeKey(tx, accountId, 1);
    const row = await store.insertCollection(tx, accountId, kind, key);
    if (!row) throw conflict(`The key "${key}" names a list or address book already.`);
    const addedCount = await addChecked(tx, accountId, row, items);
    return { success: true, key, addedCount };
  });
}

/**
 * Adds items to a locked collection within the plan's items per key (else nothing is written). What the
 * items alone would pass is refused before any is written (a list adds each one, a set at least each
 * distinct one): a 64 MiB upload far past the plan is refused at once, not after inserting and rolling
 * back millions of rows.
 */
async function addChecked(tx: Executor, accountId: string, row: store.CollectionRow, items: readonly string[]) {
  const limits = await limitsOf(tx, accountId);
  const fewestAfter =
    row.kind === "LIST"
      ? row.itemCount + items.length
      : Math.max(row.itemCount, new Set(items.map(addressBookItem)).size);
  checkItemCount(limits, row.key, fewestAfter);
  const added = await store.addItems(tx, row, items);
  checkItemCount(limits, row.key, row.itemCount + added);
  return added;
}

async function lockedCollection(tx: Executor, accountId: string, kind: CollectionKind | null, key: string) {
  const row = await store.getCollection(tx, accountId, key, true);
  return row && (kind === null || row.kind === kind) ? row : undefined;
}

const notFoundKind = (kind: CollectionKind) => `The ${KIND_NAME[kind]}`;

export async function addCollectionItems(
  db: Db,
  accountId: string,
  kind: CollectionKind,
  key: string,
  items: readonly string[],
): Promise<ItemsResult> {
  checkItems(items, "/items");
  return db.transaction(async (tx) => {
    const row = foundOr(await lockedCollection(tx, accountId, kind, key), notFoundKind(kind));
    return { success: true, key, addedCount: await addChecked(tx, accountId, row, items) };
  });
}

/**
 * Adds validated items to the collection `key` names, making a `kind` if there is none (completed
 * uploads and the filter helpers do this). A key of the other kind is CONFLICT, unless `anyKind` (the
 * helpers write to whatever a key names).
 */
export async function addItemsCreating(
  tx: Executor,
  accountId: string,
  kind: CollectionKind,
  key: string,
  items: readonly string[],
  anyKind = false,
): Promise<number> {
  let row = await lockedCollection(tx, accountId, null, key);
  if (row && !anyKind && row.kind !== kind)
    throw conflict(`The key "${key}" names ${row.kind === "LIST" ? "a list" : "an address book"}.`);
  if (!row) {
    await takeKey(tx, accountId, 1);
    row = await store.insertCollection(tx, accountId, kind, key);
    // Made meanwhile by another write: the key lock above orders key-creating writes, not others.
    row ??= foundOr(await lockedCollection(tx, accountId, null, key), notFoundKind(kind));
  }
  return addChecked(tx, accountId, row, items);
}

export interface RemoveResult {
  success: boolean;
  key: string;
  removedCount: number;
}

export async function removeCollectionItems(
  db: Db,
  accountId: string,
  kind: CollectionKind,
  key: string,
  items: readonly string[],
): Promise<RemoveResult> {
  checkItems(items, "/items");
  return db.transaction(async (tx) => {
    const row = foundOr(await lockedCollection(tx, accountId, kind, key), notFoundKind(kind));
    return { success: true, key, removedCount: await store.removeItems(tx, row, items) };
  });
}

export async function deleteCollection(db: Db, accountId: string, kind: CollectionKind, key: string) {
  foundOr(await store.deleteCollection(db, accountId, kind, key), notFoundKind(kind));
  return { success: true, key };
}

export async function collectionsPage(db: Db, accountId: string, kind: CollectionKind, args: PageArgs) {
  const size = pageSize(args.limit, { argument: "limit" });
  const search = searchOf(args.searchTerm);
  const after = cursorArgument(args.after, ["string"] as const);
  const [rows, totalCount] = await Promise.all([
    store.listCollections(db, accountId, kind, { search, after, limit: size }),
    store.countCollections(db, accountId, kind, search),
  ]);
  return { ...connection(rows, size, (row) => [row.key]), totalCount };
}

export async function getCollection(db: Db, accountId: string, kind: CollectionKind, key: string) {
  const row = await store.getCollection(db, accountId, key);
  return foundOr(row && row.kind === kind ? row : undefined, notFoundKind(kind));
}

/** A list or set with one page of its items (a list's in order, a set's by item). */
export async function collectionDetail(db: Db, accountId: string, kind: CollectionKind, key: string, args: PageArgs) {
  // The arguments are checked before the key is looked up (server/platform/paging.ts).
  const size = pageSize(args.limit, { argument: "limit" });
  const search = searchOf(args.searchTerm);
  const after = cursorArgument(args.after, [kind === "LIST" ? "integer" : "string"] as const);
  const collection = await getCollection(db, accountId, kind, key);
  const [rows, totalCount] = await Promise.all([
    store.listItems(db, collection, { search, after, limit: size }),
    store.countItems(db, collection, search),
  ]);
  const items = connection(rows, size, (row) => [kind === "LIST" ? row.position : row.item]);
  return { collection, items: { ...items, totalCount } };
}

// ---------------------------------------------------------------- values

export async function valuesPage(db: Db, accountId: string, args: { first?: number | null } & PageArgs) {
  const size = pageSize(args.first);
  const search = searchOf(args.searchTerm);
  const after = cursorArgument(args.after, ["string"] as const);
  const [rows, totalCount] = await Promise.all([
    store.listValues(db, accountId, { search, after, limit: size }),
    store.countValues(db, accountId, search),
  ]);
  return { ...connection(rows, size, (row) => [row.key]), totalCount };
}

export async function getValue(db: Db, accountId: string, key: string) {
  return foundOr(await store.getValue(db, accountId, key), "The value");
}

export interface ValueEntry {
  key: string;
  value: string;
}

/**
 * Sets values (making missing keys within the plan's keys, each value within its size): `mode` says
 * whether every key must be new (create), must exist (update) or may be either (add).
 */
export async function writeValues(
  tx: Executor,
  accountId: string,
  entries: readonly ValueEntry[],
  mode: "create" | "update" | "add",
  pointerOf: (index: number, field: "key" | "value") => string,
): Promise<number> {
  if (entries.length > MAX_ITEMS_PER_CALL)
    throw badInput([{ pointer: pointerOf(-1, "key"), message: `At most ${MAX_ITEMS_PER_CALL} values at a time.` }]);
  const limits = await limitsOf(tx, accountId);
  const latest = new Map<string, string>();
  entries.forEach((entry, i) => {
    checkKey(entry.key, pointerOf(i, "key"));
    checkValue(limits, entry.value, pointerOf(i, "value"));
    latest.set(entry.key, entry.value);
  });
  if (latest.size === 0) return 0;
  await lockAccountKeys(tx, accountId);
  const existing = await store.existingValueKeys(tx, accountId, [...latest.keys()]);
  if (mode === "create" && existing.size) throw conflict(`A value named "${[...existing][0]}" exists already.`);
  const missing = [...latest.keys()].filter((key) => !existing.has(key));
  if (mode === "update" && missing.length) throw new AppError("NOT_FOUND", "The value was not found.");
  if (missing.length) checkKeyCount(limits, (await store.countKeys(tx, accountId)) + missing.length);
  const rows = await store.upsertValues(
    tx,
    accountId,
    [...latest].map(([key, value]) => ({ key, value })),
  );
  return rows.length;
}

const entryPointer = (_index: number, field: "key" | "value") => `/${field}`;

export async function createValue(db: Db, accountId: string, entry: ValueEntry) {
  await db.transaction((tx) => writeValues(tx, accountId, [entry], "create", entryPointer));
  return getValue(db, accountId, entry.key);
}

export async function updateValue(db: Db, accountId: string, entry: ValueEntry) {
  await db.transaction((tx) => writeValues(tx, accountId, [entry], "update", entryPointer));
  return getValue(db, accountId, entry.key);
}

/** Sets several values at once, making missing keys. */
export async function addValues(db: Db, accountId: string, entries: readonly ValueEntry[]) {
  const addedCount = await db.transaction((tx) =>
    writeValues(tx, accountId, entries, "add", (i, field) => (i < 0 ? "/values" : `/values/${i}/${field}`)),
  );
  return { success: true, addedCount };
}

export async function removeValues(db: Executor, accountId: string, keys: readonly string[]) {
  if (keys.length > MAX_ITEMS_PER_CALL)
    throw badInput([{ pointer: "/keys", message: `At most ${MAX_ITEMS_PER_CALL} keys at a time.` }]);
  // A key no write could make names no value (and one holding NUL could not even be looked for).
  const possible = keys.filter((key) => KEY_PATTERN.test(key));
  return { success: true, removedCount: await store.deleteValues(db, accountId, possible) };
}

export async function deleteValue(db: Db, accountId: string, key: string) {
  const { removedCount } = await removeValues(db, accountId, [key]);
  if (removedCount === 0) throw new AppError("NOT_FOUND", "The value was not found.");
  return { success: true, key };
}
