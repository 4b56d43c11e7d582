import { bigserial, index, integer, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";

/** One request with failed calls (one row however many of a batch's calls failed): refused by the proxy, limited, failed upstream, or answered with a JSON-RPC error. */
export const errorLogs = pgTable(
  "error_logs",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    // No foreign keys, as for usage: written in batches from the proxy, pruned by age.
    accountId: uuid("account_id").notNull(),
    endpointId: uuid("endpoint_id").notNull(),
    requestId: text("request_id").notNull(),
    at: timestamp("at", { withTimezone: true, precision: 3 }).notNull(),
    method: text("method").notNull(),
    httpMethod: text("http_method").notNull(),
    status: integer("status").notNull(),
    errorCode: integer("error_code"),
    errorKind: text("error_kind").notNull(),
    message: text("message"),
    /** The request URL with any token in it masked. */
    url: text("url").notNull(),
    network: text("network").notNull(),
    transport: text("transport").notNull(),
    requestBody: text("request_body"),
    responseBody: text("response_body"),
    /** How many calls the request held; a batch's failures are one row, described by its first failure. */
    calls: integer("calls").notNull().default(1),
    /** How many of those calls failed. */
    failedCalls: integer("failed_calls").notNull().default(1),
    /** The client's address as the proxy saw it (the ipCustomHeader option's header when that is on). */
    clientIp: text("client_ip"),
    /** The request's Origin, or its Referer cut to scheme, host and port; null when it sent neither. */
    origin: text("origin"),
  },
  (t) => [
    index("error_logs_endpoint_at").on(t.accountId, t.endpointId, t.at, t.id),
    index("error_logs_request").on(t.endpointId, t.requestId),
    index("error_logs_at").on(t.at),
  ],
);
