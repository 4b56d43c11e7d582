import { index, integer, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { createdAtColumn, idColumn } from "../../platform/db/columns.ts";
import { accountIdColumn, users } from "../account/tables.ts";

/**
 * Access tokens (API keys) of an account. The key itself is never stored: only its keyed hash (to find
 * it) and its publishable prefix (to tell keys apart); see docs/decisions/1700-access-token-hashing.md.
 */
export const accessTokens = pgTable(
  "access_tokens",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    name: text("name").notNull(),
    /** ADMIN or VIEWER. */
    role: text("role").notNull(),
    /** The ApplicationType values it is accepted for. */
    applications: text("applications").array().notNull(),
    /** `np_` and the key's public part: shown in lists, never enough to use the key. */
    prefix: text("prefix").notNull().unique(),
    /** HMAC-SHA-256 of the whole key with the service's access-token key, hex. */
    keyHash: text("key_hash").notNull().unique(),
    /** Who created it; the principal a call with it acts as. */
    createdBy: uuid("created_by")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** Requests one client IP may make with it per second and per minute (null: no limit). */
    ipRps: integer("ip_rps"),
    ipRpm: integer("ip_rpm"),
    createdAt: createdAtColumn(3),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true, precision: 3 }),
    revokedAt: timestamp("revoked_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [index("access_tokens_account_created").on(t.accountId, t.createdAt)],
);
