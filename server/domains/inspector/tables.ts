import { bigserial, boolean, index, integer, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { createdAtColumn, idColumn } from "../../platform/db/columns.ts";
import { accountIdColumn } from "../account/tables.ts";

/**
 * Inspection URLs: places this service receives requests at (`/inspect/<token>`), so a stream or
 * webhook can be pointed somewhere before its owner runs a receiver. The token is the URL's only
 * secret-like part: anyone who has the URL may send to it, as with webhook.site.
 */
export const inspectionUrls = pgTable(
  "inspection_urls",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    name: text("name").notNull(),
    /** The path segment after /inspect/: random, unique, never reused. */
    token: text("token").notNull().unique(),
    /** The HTTP status it answers with (a non-2xx one shows the delivery path's retries). */
    answerStatus: integer("answer_status").notNull().default(200),
    createdAt: createdAtColumn(3),
  },
  (t) => [index("inspection_urls_account_created").on(t.accountId, t.createdAt)],
);

/** One request an inspection URL received; kept within the bounds of docs/decisions/1100-request-inspector-bounds.md. */
export const inspectedRequests = pgTable(
  "inspected_requests",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    accountId: uuid("account_id").notNull(),
    inspectionUrlId: uuid("inspection_url_id")
      .notNull()
      .references(() => inspectionUrls.id, { onDelete: "cascade" }),
    receivedAt: timestamp("received_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    method: text("method").notNull(),
    /** The headers as received, in order: [name, value] pairs. */
    headers: jsonb("headers").$type<[string, string][]>().notNull(),
    /** The body as text after content-encoding was undone, cut at the kept size. */
    body: text("body").notNull(),
    bodyTruncated: boolean("body_truncated").notNull(),
    /** Bytes received on the wire (before decompression). */
    size: integer("size").notNull(),
    /** VERIFIED, MISMATCH, UNSIGNED or NO_SECRET (signed, but nothing pointed here has a signing secret). */
    signature: text("signature").notNull(),
  },
  (t) => [index("inspected_requests_url_received").on(t.inspectionUrlId, t.receivedAt)],
);
