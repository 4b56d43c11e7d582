import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uuid,
} from "drizzle-orm/pg-core";
import type { FilterErrorKind } from "../../dataplane/sandbox/types.ts";
import { createdAtColumn, idColumn, updatedAtColumn } from "../../platform/db/columns.ts";
import { accountIdColumn } from "../account/tables.ts";

/** A function's timeout when none is given (seconds). */
export const DEFAULT_FUNCTION_TIMEOUT_SEC = 10;
/** A function's memory when none is given (MB): the smallest size offered, as at the cloud providers. */
export const DEFAULT_FUNCTION_MEMORY_MB = 128;

/**
 * Functions (the spec's "Function (action)"): an account's code, run in the sandbox as `main(params)`,
 * called by streams with a FUNCTION destination, over HTTP and from the console. `timeout_sec` is the
 * spec's limits.timeout; `memory_mb` the sandbox's heap limit and what a run is billed for.
 */
export const functions = pgTable(
  "functions",
  {
    id: idColumn(),
    accountId: accountIdColumn(),
    name: text("name").notNull(),
    description: text("description"),
    /** The spec's function language; only NODEJS (JavaScript) runs here. */
    kind: text("kind").notNull().default("NODEJS"),
    code: text("code").notNull(),
    timeoutSec: integer("timeout_sec").notNull().default(DEFAULT_FUNCTION_TIMEOUT_SEC),
    memoryMb: integer("memory_mb").notNull().default(DEFAULT_FUNCTION_MEMORY_MB),
    /** The current version: 1 when created, one more on each update of its code or limits. */
    version: integer("version").notNull().default(1),
    createdAt: createdAtColumn(3),
    updatedAt: updatedAtColumn(3),
  },
  (t) => [index("functions_account_idx").on(t.accountId, t.createdAt)],
);

/** Every version of a function's code and limits, the current one included: what each run ran. */
export const functionVersions = pgTable(
  "function_versions",
  {
    id: idColumn(),
    functionId: uuid("function_id")
      .notNull()
      .references(() => functions.id, { onDelete: "cascade" }),
    accountId: accountIdColumn(),
    version: integer("version").notNull(),
    code: text("code").notNull(),
    timeoutSec: integer("timeout_sec").notNull(),
    memoryMb: integer("memory_mb").notNull(),
    createdAt: createdAtColumn(3),
  },
  (t) => [unique("function_versions_version_key").on(t.functionId, t.version)],
);

/** One run of a function (the spec's activation and history item). */
export const functionActivations = pgTable(
  "function_activations",
  {
    id: idColumn(),
    functionId: uuid("function_id")
      .notNull()
      .references(() => functions.id, { onDelete: "cascade" }),
    accountId: accountIdColumn(),
    createdAt: createdAtColumn(3),
    /** RPC (its HTTP address), STREAM (a stream delivered a batch), TEST (a destination test) or CALL (callFunction). */
    activationSource: text("activation_source").notNull(),
    /** The function's version that ran. */
    version: integer("version").notNull().default(1),
    streamId: uuid("stream_id"),
    network: text("network"),
    dataset: text("dataset"),
    blockNumber: bigint("block_number", { mode: "number" }),
    durationMs: doublePrecision("duration_ms").notNull(),
    /** MB the run was given (and billed for). */
    memoryMb: integer("memory_mb").notNull().default(DEFAULT_FUNCTION_MEMORY_MB),
    /** The isolate's used heap after the run (bytes), as the sandbox reports it. */
    memoryUsedBytes: bigint("memory_used_bytes", { mode: "number" }).notNull().default(0),
    /** GB-seconds billed for the run (see billedGbSeconds). */
    billableGbSeconds: doublePrecision("billable_gb_seconds").notNull().default(0),
    success: boolean("success").notNull(),
    /** Bytes of the JSON result (0 when it failed or returned nothing). */
    size: integer("size").notNull(),
    /** The caller's params.user_data. */
    userData: jsonb("user_data"),
    /** The start of the result's JSON. */
    resultPreview: text("result_preview"),
    /** The whole result's JSON, when it is small enough to keep (see RESULT_KEPT_BYTES). */
    resultJson: text("result_json"),
    error: text("error"),
    /** The failed run's kind of failure (FilterErrorKind); error holds its message without it. */
    errorKind: text("error_kind").$type<FilterErrorKind>(),
    logs: jsonb("logs").$type<{ level: string; message: string }[]>().notNull(),
  },
  (t) => [
    index("function_activations_function_idx").on(t.functionId, t.createdAt),
    // The runs whose logs the retention sweep may still empty (see pruneRunLogs).
    index("function_activations_logged_idx").on(t.createdAt).where(sql`jsonb_array_length(${t.logs}) > 0`),
  ],
);

/**
 * What functions used, per function and minute: the usage rows functions bill from (GB-seconds) and the
 * metrics charts read. Kept when the function is deleted (no foreign key): it is billing history.
 */
export const functionUsageMinutes = pgTable(
  "function_usage_minutes",
  {
    accountId: uuid("account_id").notNull(),
    functionId: uuid("function_id").notNull(),
    minute: timestamp("minute", { withTimezone: true }).notNull(),
    executions: bigint("executions", { mode: "number" }).notNull().default(0),
    errors: bigint("errors", { mode: "number" }).notNull().default(0),
    durationMs: doublePrecision("duration_ms").notNull().default(0),
    responseBytes: bigint("response_bytes", { mode: "number" }).notNull().default(0),
    /** Billed MB × billed milliseconds, an exact integer: GB-seconds are this / 1024 / 1000. */
    mbMs: bigint("mb_ms", { mode: "number" }).notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.functionId, t.minute] }),
    index("function_usage_minutes_account_minute").on(t.accountId, t.minute),
  ],
);
