import { bigint, index, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import type { StoredSketch } from "../../dataplane/latency-sketch.ts";

/**
 * Calls per account, endpoint, method and minute, upserted in batches by the meter; which counter a call
 * adds to is the counting rule's (dataplane/metering/counting-rule.ts). No foreign keys:
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
    /** Calls the proxy refused itself (status, security, rate limits), or the node answered with an HTTP error: counted, not billed. */
    refused: bigint("refused", { mode: "number" }).notNull().default(0),
    /** Calls that were not JSON-RPC (the proxy's or the node's parse and invalid-request errors): counted, not billed. */
    malformed: bigint("malformed", { mode: "number" }).notNull().default(0),
    /** Calls the node answered "method not found" (-32601): counted, not billed. */
    unknownMethod: bigint("unknown_method", { mode: "number" }).notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.endpointId, t.minute, t.method] }),
    index("usage_minutes_account_minute").on(t.accountId, t.minute),
  ],
);

/**
 * What the proxy answered per endpoint and minute, for the endpoint's metrics: requests (an HTTP request
 * or a WebSocket message, however many calls it held) by HTTP status, how long they took as a sketch
 * (dataplane/latency-sketch.ts), and refused calls by the proxy's refusal kind. Maps and sketches add up
 * on upsert, so any window is a sum of rows. No foreign keys, as for usage_minutes.
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
    /** Requests timed from arrival to answer, as a sketch's bins (subscription notifications are not timed). */
    latencySketch: jsonb("latency_sketch").$type<StoredSketch>().notNull().default({}),
  },
  (t) => [
    primaryKey({ columns: [t.endpointId, t.minute] }),
    // Reads go by endpoint and minute (the key); pruning goes by minute across endpoints.
    index("endpoint_metric_minutes_minute").on(t.minute),
  ],
);
