import { bigint, index, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";

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

/**
 * What the proxy answered per endpoint and minute, for the endpoint's metrics: requests (an HTTP request
 * or a WebSocket message, however many calls it held) by HTTP status, how long they took as counts over
 * the fixed buckets of dataplane/histogram.ts, and refused calls by the proxy's refusal kind. Maps and
 * histograms add up on upsert, so any window is a sum of rows. No foreign keys, as for usage_minutes.
 */
export const endpointMetricMinutes = pgTable(
  "endpoint_metric_minutes",
  {
    accountId: uuid("account_id").notNull(),
    endpointId: uuid("endpoint_id").notNull(),
    minute: timestamp("minute", { withTimezone: true }).notNull(),
    requests: bigint("requests", { mode: "number" }).notNull().default(0),
    /** Requests by HTTP status answered ({"200": 12, "429": 1}); WebSocket messages count as 200 unless refused whole. */
    statuses: jsonb("statuses").$type<Record<string, number>>().notNull().default({}),
    /** Calls the proxy refused, by refusal kind ({"RATE_LIMITED": 3}). */
    refusals: jsonb("refusals").$type<Record<string, number>>().notNull().default({}),
    /** Requests timed from arrival to answer, counted per bucket (subscription notifications are not timed). */
    latencyHistogram: bigint("latency_histogram", { mode: "number" }).array().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.endpointId, t.minute] }),
    // Reads go by endpoint and minute (the key); pruning goes by minute across endpoints.
    index("endpoint_metric_minutes_minute").on(t.minute),
  ],
);
