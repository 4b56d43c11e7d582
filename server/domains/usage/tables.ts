import { bigint, index, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";

/**
 * Calls per account, endpoint, method and minute, upserted in batches by the meter. No foreign keys:
 * this is history written on the hot path, and a batch must not fail because an endpoint went away.
 */
export const usageMinutes = pgTable(
  "usage_minutes",
  {
    accountId: uuid("account_id").notNull(),
    endpointId: uuid("endpoint_id").notNull(),
    method: text("method").notNull(),
    minute: timestamp("minute", { withTimezone: true }).notNull(),
    /** Calls forwarded to the chain (billed). */
    requests: bigint("requests", { mode: "number" }).notNull().default(0),
    credits: bigint("credits", { mode: "number" }).notNull().default(0),
    archiveRequests: bigint("archive_requests", { mode: "number" }).notNull().default(0),
    /** Calls the proxy refused itself (status, security, rate limits): counted, not billed. */
    refused: bigint("refused", { mode: "number" }).notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.endpointId, t.minute, t.method] }),
    index("usage_minutes_account_minute").on(t.accountId, t.minute),
  ],
);
