import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import type { StoredSketch } from "../../dataplane/latency-sketch.ts";
import { createdAtColumn, idColumn, updatedAtColumn } from "../../platform/db/columns.ts";
import { accountIdColumn } from "../account/tables.ts";

/**
 * Streams and webhooks: one table, since a webhook is a stream with a WEBHOOK destination, the
 * BLOCK_WITH_RECEIPTS dataset and batches of one block (`product` tells them apart, and how they bill).
 * Destination secrets are kept encrypted in `destination_secrets` (see platform/secrets.ts), never in
 * `destination_attributes`.
 */
export const streams = pgTable(
  "streams",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    /** STREAM or WEBHOOK. */
    product: text("product").notNull().default("STREAM"),
    name: text("name").notNull(),
    status: text("status").notNull().default("PAUSED"),
    /** Why the engine last paused, terminated or completed the stream. */
    statusReason: text("status_reason"),
    /** When the engine stopped it because it failed (paused or terminated); null when it was not a failure. */
    failedAt: timestamp("failed_at", { withTimezone: true, precision: 3 }),
    network: text("network").notNull(),
    dataset: text("dataset").notNull(),
    datasetBatchSize: integer("dataset_batch_size").notNull().default(1),
    elasticBatchEnabled: boolean("elastic_batch_enabled").notNull().default(true),
    includeStreamMetadata: text("include_stream_metadata").notNull().default("NONE"),
    destination: text("destination").notNull(),
    destinationAttributes: jsonb("destination_attributes").$type<Record<string, unknown>>().notNull(),
    destinationSecrets: text("destination_secrets"),
    /** The first block; -1 means the chain tip at the first activation. */
    startRange: bigint("start_range", { mode: "number" }).notNull(),
    /** The last block (inclusive); the stream completes after it. Null: runs on forever. */
    endRange: bigint("end_range", { mode: "number" }),
    filterFunction: text("filter_function"),
    filterVersion: text("filter_version").notNull().default("V5"),
    fixBlockReorgs: boolean("fix_block_reorgs").notNull().default(false),
    keepDistanceFromTip: integer("keep_distance_from_tip").notNull().default(0),
    notificationEmail: text("notification_email"),
    /** Bumped on every change of configuration; a running engine reloads the stream when it moves. */
    sequence: integer("sequence").notNull().default(0),
    region: text("region").notNull().default("USA_EAST"),
    createdAt: createdAtColumn(3),
    updatedAt: updatedAtColumn(3),
  },
  (t) => [
    index("streams_account_product_created").on(t.accountId, t.product, t.createdAt),
    index("streams_active").on(t.status).where(sql`${t.status} = 'ACTIVE'`),
  ],
);

/** The next block to deliver. Moves only in the transaction that records an acknowledgement. */
export const streamCheckpoints = pgTable("stream_checkpoints", {
  streamId: uuid("stream_id")
    .primaryKey()
    .references(() => streams.id, { onDelete: "cascade" }),
  nextBlock: bigint("next_block", { mode: "number" }).notNull(),
  updatedAt: updatedAtColumn(3),
});

/** Hashes of the most recently delivered blocks, to find the fork point of a reorg. */
export const streamBlockHashes = pgTable(
  "stream_block_hashes",
  {
    streamId: uuid("stream_id")
      .notNull()
      .references(() => streams.id, { onDelete: "cascade" }),
    blockNumber: bigint("block_number", { mode: "number" }).notNull(),
    hash: text("hash").notNull(),
  },
  (t) => [primaryKey({ columns: [t.streamId, t.blockNumber] })],
);

/** Which engine process runs a stream, until when. Taken with a conditional upsert, renewed while running. */
export const streamLeases = pgTable("stream_leases", {
  streamId: uuid("stream_id")
    .primaryKey()
    .references(() => streams.id, { onDelete: "cascade" }),
  owner: text("owner").notNull(),
  expiresAt: timestamp("expires_at", { withTimezone: true, precision: 3 }).notNull(),
});

export const streamLogs = pgTable(
  "stream_logs",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    accountId: uuid("account_id").notNull(),
    streamId: uuid("stream_id")
      .notNull()
      .references(() => streams.id, { onDelete: "cascade" }),
    level: text("level").notNull(),
    message: text("message").notNull(),
    createdAt: createdAtColumn(3),
  },
  (t) => [index("stream_logs_stream").on(t.streamId, t.id)],
);

/**
 * Per stream and minute, added to by the engine's metrics buffer. Durations are sketches' bins
 * (dataplane/latency-sketch.ts), added bin by bin. No foreign key to streams: usage history
 * outlives a deleted stream (billing reads it by account).
 */
export const streamMetricMinutes = pgTable(
  "stream_metric_minutes",
  {
    accountId: uuid("account_id").notNull(),
    streamId: uuid("stream_id").notNull(),
    product: text("product").notNull(),
    minute: timestamp("minute", { withTimezone: true }).notNull(),
    blocks: bigint("blocks", { mode: "number" }).notNull().default(0),
    bytesTotal: bigint("bytes_total", { mode: "number" }).notNull().default(0),
    bytesBillable: bigint("bytes_billable", { mode: "number" }).notNull().default(0),
    requests: bigint("requests", { mode: "number" }).notNull().default(0),
    delivered: bigint("delivered", { mode: "number" }).notNull().default(0),
    credits: bigint("credits", { mode: "number" }).notNull().default(0),
    errors: bigint("errors", { mode: "number" }).notNull().default(0),
    retries: bigint("retries", { mode: "number" }).notNull().default(0),
    filterRuns: bigint("filter_runs", { mode: "number" }).notNull().default(0),
    filterSubThreshold: bigint("filter_sub_threshold", { mode: "number" }).notNull().default(0),
    filterMsTotal: doublePrecision("filter_ms_total").notNull().default(0),
    filterSketch: jsonb("filter_sketch").$type<StoredSketch>().notNull().default({}),
    latencySketch: jsonb("latency_sketch").$type<StoredSketch>().notNull().default({}),
  },
  (t) => [
    primaryKey({ columns: [t.streamId, t.minute] }),
    index("stream_metric_minutes_account").on(t.accountId, t.minute),
  ],
);

/**
 * Every delivery attempt of a stream or webhook (see dataplane/engine/deliveries.ts: attempts past a
 * bound per second are folded into one row counting its `batches`). Kept for as many days as the
 * account's plan says (deliveries.ts in this domain), pruned by the engine.
 */
export const streamDeliveries = pgTable(
  "stream_deliveries",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    accountId: uuid("account_id").notNull(),
    streamId: uuid("stream_id")
      .notNull()
      .references(() => streams.id, { onDelete: "cascade" }),
    createdAt: createdAtColumn(3),
    startBlock: bigint("start_block", { mode: "number" }).notNull(),
    endBlock: bigint("end_block", { mode: "number" }).notNull(),
    batches: integer("batches").notNull().default(1),
    attempt: integer("attempt").notNull(),
    /** DELIVERED, SKIPPED, FAILED or FILTER_FAILED. */
    outcome: text("outcome").notNull(),
    httpStatus: integer("http_status"),
    answer: text("answer").notNull(),
    latencyMs: doublePrecision("latency_ms").notNull(),
    bytes: bigint("bytes", { mode: "number" }).notNull(),
    preview: text("preview"),
    isReorg: boolean("is_reorg").notNull().default(false),
  },
  (t) => [index("stream_deliveries_stream").on(t.streamId, t.id), index("stream_deliveries_created").on(t.createdAt)],
);
