import { index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { createdAtColumn } from "../../platform/db/columns.ts";
import { accountIdColumn } from "../account/tables.ts";

/**
 * The answers of REST creates sent with an Idempotency-Key, per account, kept 24 hours: a retry with the
 * same key and body gets the stored answer, with another body a refusal. A row without a status is a
 * create still running.
 */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    accountId: accountIdColumn(),
    key: text("key").notNull(),
    /** SHA-256 of the method, path and body the key was first sent with, hex. */
    requestHash: text("request_hash").notNull(),
    status: integer("status"),
    /** The answer's JSON text as sent. */
    body: text("body"),
    createdAt: createdAtColumn(3),
  },
  // By age: the housekeeping sweep finds expired rows of every account without reading the others.
  (t) => [primaryKey({ columns: [t.accountId, t.key] }), index("idempotency_keys_created_at_idx").on(t.createdAt)],
);
