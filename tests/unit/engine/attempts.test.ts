import { describe, expect, it } from "vitest";
import type { DatasetBatchJson } from "../../../server/dataplane/datasets/reader.ts";
import { DestinationError } from "../../../server/dataplane/destinations/types.ts";
import {
  attemptRecord,
  blocksOf,
  deliveryFailureOf,
  filterFailureOf,
  filterMetadataOf,
  MAX_SANDBOX_CRASHES,
  payloadAfterFilter,
  retryLogLine,
} from "../../../server/dataplane/engine/attempts.ts";
import type { StreamRow } from "../../../server/dataplane/engine/store.ts";
import type { FilterFailure, FilterSuccess } from "../../../server/dataplane/sandbox/types.ts";

const batch: DatasetBatchJson = { dataset: "BLOCK", fromBlock: 100, toBlock: 109, itemsJson: [] };

const failedRun = (over: Partial<FilterFailure> = {}): FilterFailure => ({
  ok: false,
  error: { kind: "RUNTIME", message: "x is not defined" },
  durationMs: 3,
  memoryBytes: 0,
  logs: [],
  ...over,
});

const success = (over: Partial<FilterSuccess> = {}): FilterSuccess => ({
  ok: true,
  skipped: false,
  resultJson: '{"n":1}',
  sizeBytes: 7,
  durationMs: 2,
  memoryBytes: 0,
  logs: [],
  ...over,
});

describe("blocksOf", () => {
  it("names a batch by its first and last block", () => {
    expect(blocksOf(batch)).toBe("100–109");
  });
});

describe("filterMetadataOf", () => {
  it("tells the filter the stream's range and the batch's", () => {
    const row = {
      id: "s1",
      dataset: "BLOCK",
      network: "ethereum-mainnet",
      startRange: 90,
      endRange: null,
      keepDistanceFromTip: 2,
    } as StreamRow;
    expect(filterMetadataOf(row, batch, true)).toEqual({
      dataset: "BLOCK",
      network: "ethereum-mainnet",
      batch_start_range: 100,
      batch_end_range: 109,
      start_range: 90,
      end_range: null,
      keep_distance_from_tip: 2,
      stream_id: "s1",
      is_reorg: true,
    });
  });
});

describe("payloadAfterFilter", () => {
  it.each([
    { name: "no filter: the dataset itself", outcome: null, payload: "[1,2]" },
    { name: "the filter's result", outcome: success(), payload: '{"n":1}' },
    {
      name: "nothing when the filter skipped the batch",
      outcome: success({ skipped: true, resultJson: null }),
      payload: null,
    },
    { name: "nothing when the filter failed", outcome: failedRun(), payload: null },
  ])("$name", ({ outcome, payload }) => {
    expect(payloadAfterFilter(outcome, "[1,2]")).toBe(payload);
  });
});

describe("filterFailureOf", () => {
  it("a runtime error is retried and pauses the stream when the retries are spent", () => {
    expect(filterFailureOf(failedRun({ error: { kind: "RUNTIME", message: "boom", line: 3 } }), "100–109", 0)).toEqual({
      failure: {
        stage: "filter",
        message: "filter failed on blocks 100–109: Runtime error: boom (line 3)",
        terminal: false,
        final: false,
        uncounted: false,
      },
      crashes: 0,
    });
  });

  it("a syntax error terminates the stream at once", () => {
    const { failure } = filterFailureOf(
      failedRun({ error: { kind: "SYNTAX", message: "Unexpected token" } }),
      "1–1",
      0,
    );
    expect(failure).toMatchObject({ terminal: true, final: true });
  });

  it("a failure with a sandbox another call crashed does not spend a retry", () => {
    const { failure, crashes } = filterFailureOf(failedRun({ sandboxLost: "bystander" }), "1–1", 1);
    expect(failure).toMatchObject({ uncounted: true, final: false });
    expect(crashes).toBe(1);
  });

  it(`the culprit of ${MAX_SANDBOX_CRASHES} sandbox restarts pauses its stream at once`, () => {
    const once = filterFailureOf(failedRun({ sandboxLost: "culprit" }), "1–1", 0);
    expect(once.crashes).toBe(1);
    expect(once.failure).toMatchObject({ final: false, terminal: false, uncounted: false });
    const twice = filterFailureOf(failedRun({ sandboxLost: "culprit" }), "1–1", once.crashes);
    expect(twice.crashes).toBe(MAX_SANDBOX_CRASHES);
    expect(twice.failure).toMatchObject({ final: true, terminal: false });
    expect(twice.failure.message).toBe(
      `filter failed on blocks 1–1: Runtime error: x is not defined; it made the sandbox restart ${MAX_SANDBOX_CRASHES} times, so the stream is paused`,
    );
  });
});

describe("deliveryFailureOf", () => {
  it.each([
    {
      name: "an unexpected error is retried",
      e: new Error("socket hang up"),
      failure: { terminal: false, uncounted: false },
      httpStatus: null,
    },
    {
      name: "a retryable answer keeps its status",
      e: new DestinationError("HTTP 503", { retryable: true, status: 503 }),
      failure: { terminal: false, uncounted: false },
      httpStatus: 503,
    },
    {
      name: "a refusal for good terminates once the retries are spent",
      e: new DestinationError("HTTP 410", { retryable: false, status: 410 }),
      failure: { terminal: true, uncounted: false },
      httpStatus: 410,
    },
    {
      name: "a failure not of the stream's doing does not spend a retry",
      e: new DestinationError("sandbox replaced", { retryable: true, uncounted: true }),
      failure: { terminal: false, uncounted: true },
      httpStatus: null,
    },
  ])("$name", ({ e, failure, httpStatus }) => {
    const of = deliveryFailureOf(e, "100–109");
    expect(of.failure).toEqual({
      stage: "delivery",
      message: `delivery of blocks 100–109 failed: ${e.message}`,
      final: false,
      ...failure,
    });
    expect(of.httpStatus).toBe(httpStatus);
  });
});

describe("retryLogLine", () => {
  const policy = { maxRetry: 3, retryIntervalMs: 2500 };
  it.each([
    {
      name: "a failed delivery waits the policy's interval",
      stage: "delivery" as const,
      uncounted: false,
      line: { level: "WARNING", message: "HTTP 500; retrying in 2.5 s (attempt 2 of 4)." },
    },
    {
      name: "a failed filter run is an error of the stream's own",
      stage: "filter" as const,
      uncounted: false,
      line: { level: "ERROR", message: "HTTP 500; retrying (attempt 2 of 4)." },
    },
    {
      name: "an uncounted failure says it is not the stream's doing",
      stage: "filter" as const,
      uncounted: true,
      line: {
        level: "WARNING",
        message: "HTTP 500; not this stream's doing: retrying without counting it as an attempt.",
      },
    },
  ])("$name", ({ stage, uncounted, line }) => {
    const failure = { stage, message: "HTTP 500", terminal: false, final: false };
    expect(retryLogLine(failure, 2, uncounted, policy)).toEqual(line);
  });
});

describe("attemptRecord", () => {
  it("names the batch, the attempt and whether it was reorged", () => {
    expect(
      attemptRecord(batch, 2, false, {
        outcome: "SKIPPED",
        httpStatus: null,
        answer: "nothing",
        latencyMs: 1,
        bytes: 0,
        payload: null,
      }),
    ).toEqual({
      startBlock: 100,
      endBlock: 109,
      attempt: 2,
      outcome: "SKIPPED",
      httpStatus: null,
      answer: "nothing",
      latencyMs: 1,
      bytes: 0,
      payload: null,
      isReorg: false,
    });
  });
});
