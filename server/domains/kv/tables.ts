import { sql } from "drizzle-orm";
import {
  bigint,
  index,
  integer,
  pgSequence,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAtColumn, idColumn, updatedAtColumn } from "../../platform/db/columns.ts";
import { accountIdColumn } from "../account/tables.ts";

/**
 * Versions of lists and sets, from one sequence: a list deleted and made again under the same key
 * never gets a version a filter has already seen, so a cached snapshot is never taken for current.
 */
export const kvVersions = pgSequence("kv_versions");
const nextVersion = sql`nextval('kv_versions')`;

/**
 * Lists (ordered items, duplicates kept) and sets (the spec's address books: unique items). One key
 * names one list or one set of an account: the filter helpers ask for a key's items without a kind.
 */
export const kvCollections = pgTable(
  "kv_collections",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    /** LIST or SET. */
    kind: text("kind").notNull(),
    key: text("key").notNull(),
    itemCount: integer("item_count").notNull().default(0),
    /** Changes on every write of this key (a new value of kv_versions). */
    version: bigint("version", { mode: "number" }).notNull().default(nextVersion),
    /** Where a list's next item goes (lists append). */
    nextPosition: bigint("next_position", { mode: "number" }).notNull().default(0),
    createdAt: createdAtColumn(3),
    updatedAt: updatedAtColumn(3),
  },
  (t) => [uniqueIndex("kv_collections_account_key_idx").on(t.accountId, t.key)],
);

/** A list's items in order. */
export const kvListItems = pgTable(
  "kv_list_items",
  {
    collectionId: uuid("collection_id")
      .notNull()
      .references(() => kvCollections.id, { onDelete: "cascade" }),
    accountId: accountIdColumn(),
    position: bigint("position", { mode: "number" }).notNull(),
    item: text("item").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.collectionId, t.position] }),
    index("kv_list_items_item_idx").on(t.collectionId, t.item),
  ],
);

/** A set's items, unique; paged in item order. */
export const kvSetItems = pgTable(
  "kv_set_items",
  {
    collectionId: uuid("collection_id")
      .notNull()
      .references(() => kvCollections.id, { onDelete: "cascade" }),
    accountId: accountIdColumn(),
    item: text("item").notNull(),
  },
  (t) => [primaryKey({ columns: [t.collectionId, t.item] })],
);

/** Values: key → string. */
export const kvValues = pgTable(
  "kv_values",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    key: text("key").notNull(),
    value: text("value").notNull(),
    createdAt: createdAtColumn(3),
    updatedAt: updatedAtColumn(3),
  },
  (t) => [uniqueIndex("kv_values_account_key_idx").on(t.accountId, t.key)],
);

/**
 * A multipart upload in progress (the spec's initiate → part URLs → complete or abort). Its parts are
 * files under the data directory, or objects under `objectPrefix` in the S3 bucket when one is set.
 */
export const kvUploads = pgTable(
  "kv_uploads",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    /** LIST or SET: what complete adds the items to. */
    kind: text("kind").notNull(),
    key: text("key").notNull(),
    /** "local" (parts kept by this service) or the S3 bucket's name. */
    bucket: text("bucket").notNull(),
    /** Where the parts are in the S3 bucket (one object each); null for local uploads. */
    objectPrefix: text("object_prefix"),
    createdAt: createdAtColumn(3),
    expiresAt: timestamp("expires_at", { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    index("kv_uploads_account_idx").on(t.accountId, t.createdAt),
    // The housekeeping's sweep finds expired uploads of every account by it.
    index("kv_uploads_expires_idx").on(t.expiresAt),
  ],
);

/**
 * Writes made by filters and functions through the helpers (reads are free), per account and minute:
 * the calls that wrote and the write operations they are billed (see limits.ts). Minutes, as the other
 * usage rows, so any billing period (which starts at the subscription's time of day) is a sum of rows.
 */
export const kvWriteMinutes = pgTable(
  "kv_write_minutes",
  {
    accountId: accountIdColumn(),
    minute: timestamp("minute", { withTimezone: true }).notNull(),
    calls: bigint("calls", { mode: "number" }).notNull().default(0),
    operations: bigint("operations", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.minute] })],
);
