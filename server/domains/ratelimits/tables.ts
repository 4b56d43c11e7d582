import { boolean, index, integer, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { createdAtColumn, idColumn, updatedAtColumn } from "../../platform/db/columns.ts";
import { accountIdColumn } from "../account/tables.ts";
import { endpoints } from "../endpoints/tables.ts";

/** A per-endpoint limit on a list of methods over an interval (SECOND, MINUTE or DAY), optionally per client IP. */
export const rateLimiters = pgTable(
  "rate_limiters",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    endpointId: uuid("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    interval: text("interval").notNull(),
    /** Method names; "*" matches every method. */
    methods: text("methods").array().notNull(),
    limitByIp: boolean("limit_by_ip").notNull().default(false),
    createdAt: createdAtColumn(3),
    updatedAt: updatedAtColumn(3),
  },
  (t) => [index("rate_limiters_account_endpoint").on(t.accountId, t.endpointId)],
);

/** One rate of a limiter; the lowest ENABLED rate applies, and a limiter with none enabled limits nothing. */
export const rateLimiterRates = pgTable(
  "rate_limiter_rates",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    rateLimiterId: uuid("rate_limiter_id")
      .notNull()
      .references(() => rateLimiters.id, { onDelete: "cascade" }),
    rate: integer("rate").notNull(),
    /** Who set it: USER (the console) is the only source so far. */
    source: text("source").notNull().default("USER"),
    status: text("status").notNull().default("ENABLED"),
    createdAt: createdAtColumn(3),
  },
  (t) => [index("rate_limiter_rates_limiter").on(t.rateLimiterId)],
);

/** A per-endpoint change of a bucket (RPS, RPM, RPD): LIMIT sets its limit, KEY counts it per client IP. */
export const rateLimitOverrides = pgTable(
  "rate_limit_overrides",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    endpointId: uuid("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    bucket: text("bucket").notNull(),
    rateLimit: integer("rate_limit"),
    reason: text("reason").notNull(),
    createdAt: createdAtColumn(3),
  },
  (t) => [uniqueIndex("rate_limit_overrides_endpoint_kind_bucket").on(t.endpointId, t.kind, t.bucket)],
);
