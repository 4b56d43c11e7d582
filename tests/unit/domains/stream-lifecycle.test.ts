import { describe, expect, it } from "vitest";
import {
  nextStatus,
  restartsDelivery,
  STREAM_STATUSES,
  type StreamEvent,
  type StreamStatus,
  transition,
  wholeRangeDelivered,
} from "../../../server/domains/streams/lifecycle.ts";

const EVENTS: StreamEvent[] = ["ACTIVATE", "PAUSE", "COMPLETE", "FAIL_PAUSE", "FAIL_TERMINATE"];

/** Every (status, event) pair and where it leads; null: refused. */
const TABLE: Record<StreamStatus, Record<StreamEvent, StreamStatus | null>> = {
  ACTIVE: {
    ACTIVATE: "ACTIVE",
    PAUSE: "PAUSED",
    COMPLETE: "COMPLETED",
    FAIL_PAUSE: "PAUSED",
    FAIL_TERMINATE: "TERMINATED",
  },
  PAUSED: { ACTIVATE: "ACTIVE", PAUSE: "PAUSED", COMPLETE: null, FAIL_PAUSE: null, FAIL_TERMINATE: null },
  TERMINATED: { ACTIVATE: "ACTIVE", PAUSE: null, COMPLETE: null, FAIL_PAUSE: null, FAIL_TERMINATE: null },
  COMPLETED: { ACTIVATE: "ACTIVE", PAUSE: null, COMPLETE: null, FAIL_PAUSE: null, FAIL_TERMINATE: null },
};

const pairs = STREAM_STATUSES.flatMap((status) =>
  EVENTS.map((event) => ({ status, event, next: TABLE[status][event] })),
);

describe("stream lifecycle", () => {
  it.each(pairs)("$status + $event → $next", ({ status, event, next }) => {
    expect(nextStatus(status, event)).toBe(next);
  });

  it.each([
    { status: "ACTIVE", event: "PAUSE", change: { next: "PAUSED", write: true } },
    { status: "PAUSED", event: "PAUSE", change: { next: "PAUSED", write: false } },
    { status: "ACTIVE", event: "ACTIVATE", change: { next: "ACTIVE", write: true } },
    { status: "TERMINATED", event: "ACTIVATE", change: { next: "ACTIVE", write: true } },
    { status: "ACTIVE", event: "COMPLETE", change: { next: "COMPLETED", write: true } },
    { status: "ACTIVE", event: "FAIL_TERMINATE", change: { next: "TERMINATED", write: true } },
    { status: "PAUSED", event: "FAIL_PAUSE", change: { refused: "A paused stream cannot fail and pause." } },
    { status: "COMPLETED", event: "PAUSE", change: { refused: "A completed stream cannot pause." } },
    { status: "TERMINATED", event: "COMPLETE", change: { refused: "A terminated stream cannot complete." } },
  ] as const)("transition: $status + $event", ({ status, event, change }) => {
    expect(transition(status, "STREAM", event)).toEqual(change);
  });

  it("names the product in a refusal", () => {
    expect(transition("TERMINATED", "WEBHOOK", "PAUSE")).toEqual({ refused: "A terminated webhook cannot pause." });
  });

  it.each([
    { name: "next block past the end block", endRange: 10, nextBlock: 11, delivered: true },
    { name: "the end block itself not yet delivered", endRange: 10, nextBlock: 10, delivered: false },
    { name: "end block moved past the checkpoint", endRange: 20, nextBlock: 11, delivered: false },
    { name: "no end block", endRange: null, nextBlock: 11, delivered: false },
    { name: "no checkpoint yet", endRange: 10, nextBlock: null, delivered: false },
    { name: "no progress row", endRange: 10, nextBlock: undefined, delivered: false },
  ])("a completed stream's whole range delivered: $name", ({ endRange, nextBlock, delivered }) => {
    expect(wholeRangeDelivered(endRange, nextBlock)).toBe(delivered);
  });

  const current = { startRange: 100, network: "ethereum-sepolia", dataset: "BLOCK" };
  it.each([
    { name: "nothing changed", patch: {}, restarts: false },
    { name: "the same values sent again", patch: { ...current }, restarts: false },
    { name: "a new start block", patch: { startRange: 50 }, restarts: true },
    { name: "a new network", patch: { network: "ethereum-mainnet" }, restarts: true },
    { name: "a new dataset", patch: { dataset: "LOGS" }, restarts: true },
    { name: "a start block of -1 (the tip) after a number", patch: { startRange: -1 }, restarts: true },
  ])("an update restarts delivery: $name → $restarts", ({ patch, restarts }) => {
    expect(restartsDelivery(current, patch)).toBe(restarts);
  });
});
