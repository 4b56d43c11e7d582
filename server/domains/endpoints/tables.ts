import { sql } from "drizzle-orm";
import { boolean, index, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { createdAtColumn, idColumn } from "../../platform/db/columns.ts";
import { accountIdColumn } from "../account/tables.ts";

export const endpoints = pgTable(
  "endpoints",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    /** Public, unguessable key used in the endpoint's URLs (its subdomain at a real provider). */
    exId: text("ex_id").notNull().unique(),
    /** A readable generated name, e.g. "frosty-meadow-4821". */
    name: text("name").notNull(),
    label: text("label"),
    chain: text("chain").notNull(),
    network: text("network").notNull(),
    status: text("status").notNull().default("ACTIVE"),
    isDedicated: boolean("is_dedicated").notNull().default(false),
    // Millisecond precision, so a cursor made from a JavaScript Date finds the row again.
    createdAt: createdAtColumn(3),
    archivedAt: timestamp("archived_at", { withTimezone: true }),
  },
  (t) => [index("endpoints_account_created").on(t.accountId, t.createdAt)],
);

export const tags = pgTable(
  "tags",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    label: text("label").notNull(),
    createdAt: createdAtColumn(),
  },
  (t) => [uniqueIndex("tags_account_label").on(t.accountId, sql`lower(${t.label})`)],
);

export const endpointTags = pgTable(
  "endpoint_tags",
  {
    endpointId: uuid("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    tagId: uuid("tag_id")
      .notNull()
      .references(() => tags.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.endpointId, t.tagId] }), index("endpoint_tags_tag").on(t.tagId)],
);
