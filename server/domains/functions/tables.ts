import { bigint, boolean, doublePrecision, index, integer, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAtColumn, idColumn, updatedAtColumn } from "../../platform/db/columns.ts";
import { accountIdColumn } from "../account/tables.ts";

/** A function's timeout when none is given (seconds). */
export const DEFAULT_FUNCTION_TIMEOUT_SEC = 10;

/**
 * Functions (the spec's "Function (action)"): an account's code, run in the filter sandbox as
 * `main(params)`, called by streams with a FUNCTION destination and by tests. `timeout_sec` is the spec's
 * limits.timeout.
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
    createdAt: createdAtColumn(3),
    updatedAt: updatedAtColumn(3),
  },
  (t) => [index("functions_account_idx").on(t.accountId, t.createdAt)],
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
    /** STREAM (a stream delivered a batch to it) or CALL (callFunction). */
    activationSource: text("activation_source").notNull(),
    streamId: uuid("stream_id"),
    network: text("network"),
    dataset: text("dataset"),
    blockNumber: bigint("block_number", { mode: "number" }),
    durationMs: doublePrecision("duration_ms").notNull(),
    success: boolean("success").notNull(),
    /** Bytes of the JSON result (0 when it failed or returned nothing). */
    size: integer("size").notNull(),
    /** The start of the result's JSON, or the error. */
    resultPreview: text("result_preview"),
    error: text("error"),
    logs: jsonb("logs").$type<{ level: string; message: string }[]>().notNull(),
  },
  (t) => [index("function_activations_function_idx").on(t.functionId, t.createdAt)],
);
