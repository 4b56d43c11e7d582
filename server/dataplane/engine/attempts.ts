import type { DatasetBatchJson } from "../datasets/reader.ts";
import { DestinationError } from "../destinations/index.ts";
import { filterErrorKindLabel } from "../sandbox/filter.ts";
import type { FilterFailure, FilterMetadata, FilterOutcome } from "../sandbox/types.ts";
import type { DeliveryAttempt } from "./deliveries.ts";
import type { AttemptFailure, RetryPolicy } from "./retry.ts";
import type { LogLevel, StreamRow } from "./store.ts";

/** Why one attempt at delivering a batch failed: its filter run, or the delivery itself. */
export interface DeliveryFailure extends AttemptFailure {
  stage: "filter" | "delivery";
}

/**
 * A filter that made its sandbox be replaced this often pauses its stream at once, whatever retries are
 * left: each time, every other filter running beside it was failed too (they retry without counting it).
 */
export const MAX_SANDBOX_CRASHES = 2;

/** Filter console lines kept on the stream's log per attempt. */
export const FILTER_LOG_LINES_KEPT = 10;

/** How a batch is named in its log lines and failures. */
export const blocksOf = (batch: DatasetBatchJson) => `${batch.fromBlock}–${batch.toBlock}`;

/** What the engine tells the filter about a batch. */
export function filterMetadataOf(row: StreamRow, batch: DatasetBatchJson, isReorg: boolean): FilterMetadata {
  return {
    dataset: row.dataset,
    network: row.network,
    batch_start_range: batch.fromBlock,
    batch_end_range: batch.toBlock,
    start_range: row.startRange,
    end_range: row.endRange,
    keep_distance_from_tip: row.keepDistanceFromTip,
    stream_id: row.id,
    is_reorg: isReorg,
  };
}

/** What is delivered after the filter's run (null: nothing, the filter skipped the batch or failed). */
export function payloadAfterFilter(outcome: FilterOutcome | null, dataJson: string): string | null {
  if (outcome === null) return dataJson;
  return outcome.ok && !outcome.skipped ? outcome.resultJson : null;
}

/**
 * A failed filter run as the attempt's failure: a syntax error terminates the stream; a run that made its
 * sandbox be replaced (the culprit) counts one more crash, and the MAX_SANDBOX_CRASHES-th pauses the
 * stream at once; one failed with a sandbox another run crashed (a bystander) does not spend a retry.
 */
export function filterFailureOf(
  outcome: FilterFailure,
  blocks: string,
  crashesBefore: number,
): { failure: DeliveryFailure; crashes: number } {
  const syntax = outcome.error.kind === "SYNTAX";
  const crashes = crashesBefore + (outcome.sandboxLost === "culprit" ? 1 : 0);
  const crashedOut = outcome.sandboxLost === "culprit" && crashes >= MAX_SANDBOX_CRASHES;
  const line = outcome.error.line ? ` (line ${outcome.error.line})` : "";
  const paused = crashedOut ? `; it made the sandbox restart ${crashes} times, so the stream is paused` : "";
  return {
    failure: {
      stage: "filter",
      message: `filter failed on blocks ${blocks}: ${filterErrorKindLabel(outcome.error.kind)}: ${outcome.error.message}${line}${paused}`,
      terminal: syntax,
      final: syntax || crashedOut,
      uncounted: outcome.sandboxLost === "bystander",
    },
    crashes,
  };
}

/**
 * A failed delivery as the attempt's failure: a destination that refuses the batch for good terminates
 * the stream once the retries are spent; one whose failure is not the stream's doing does not spend a
 * retry. `httpStatus` is the destination's answer, when it gave one.
 */
export function deliveryFailureOf(e: unknown, blocks: string): { failure: DeliveryFailure; httpStatus: number | null } {
  const retryable = !(e instanceof DestinationError) || e.retryable;
  return {
    failure: {
      stage: "delivery",
      message: `delivery of blocks ${blocks} failed: ${(e as Error).message}`,
      terminal: !retryable,
      final: false,
      uncounted: e instanceof DestinationError && e.uncounted,
    },
    httpStatus: e instanceof DestinationError ? (e.status ?? null) : null,
  };
}

/** The stream's log line before a batch is tried again (`attempt`: the attempts counted so far). */
export function retryLogLine(
  failure: DeliveryFailure,
  attempt: number,
  uncounted: boolean,
  policy: RetryPolicy,
): { level: LogLevel; message: string } {
  if (uncounted)
    return {
      level: "WARNING",
      message: `${failure.message}; not this stream's doing: retrying without counting it as an attempt.`,
    };
  const of = `attempt ${attempt} of ${policy.maxRetry + 1}`;
  if (failure.stage === "filter") return { level: "ERROR", message: `${failure.message}; retrying (${of}).` };
  return { level: "WARNING", message: `${failure.message}; retrying in ${policy.retryIntervalMs / 1000} s (${of}).` };
}

/** One attempt's row in the delivery history. */
export function attemptRecord(
  batch: DatasetBatchJson,
  attempt: number,
  isReorg: boolean,
  result: Omit<DeliveryAttempt, "startBlock" | "endBlock" | "attempt" | "isReorg">,
): DeliveryAttempt {
  return { startBlock: batch.fromBlock, endBlock: batch.toBlock, attempt, ...result, isReorg };
}
