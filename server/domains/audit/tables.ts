import { sql } from "drizzle-orm";
import { index, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { idColumn } from "../../platform/db/columns.ts";
import { accountIdColumn } from "../account/tables.ts";
import { endpoints } from "../endpoints/tables.ts";

/**
 * The account's audit log, one for every domain: each change a user (or the service) made, in which
 * area, to what, by whom and in which role. Written only by audit/service.ts recordAudit.
 */
export const auditLog = pgTable(
  "audit_log",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    /** The domain the change belongs to (AUDIT_AREAS). */
    area: text("area").notNull(),
    /** The endpoint the change was made on, when it was made on one; its entries go with it. */
    endpointId: uuid("endpoint_id").references(() => endpoints.id, { onDelete: "cascade" }),
    /** What was done, in the area's words (CREATE, TURN_ON, ADD …). */
    action: text("action").notNull(),
    /** What it was done to, in the area's words (RATE_LIMITER, ips, tokens …). */
    subject: text("subject").notNull(),
    /** The changed row, when the area names one; it may since be deleted. */
    subjectId: uuid("subject_id"),
    /** The item changed (an IP, a key id, a token's first characters), never a secret. */
    detail: text("detail"),
    /** Why, when the area asks for a reason. */
    reason: text("reason"),
    changes: jsonb("changes").$type<Record<string, unknown>>().notNull().default({}),
    userId: uuid("user_id"),
    /** The user's e-mail at the time, kept so the log still reads after the user leaves. */
    userEmail: text("user_email"),
    userRole: text("user_role").notNull(),
    // The clock, not the transaction's start: one change can write two entries (an item added, then its
    // check turned on), and the log lists them in the order they were made.
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().default(sql`clock_timestamp()`),
  },
  (t) => [index("audit_log_endpoint").on(t.accountId, t.area, t.endpointId, t.createdAt)],
);
