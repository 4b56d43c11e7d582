import { and, eq, sql } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import { conflict, notFound } from "../../platform/errors.ts";
import { storableText } from "../../platform/text.ts";
import { writeStreamLog } from "./logs.ts";
import { streams } from "./tables.ts";

export const STREAM_STATUSES = ["ACTIVE", "COMPLETED", "PAUSED", "TERMINATED"] as const;
export type StreamStatus = (typeof STREAM_STATUSES)[number];

/**
 * What can happen to a stream or webhook: the user activates or pauses it; the engine completes it at
 * its end range, or pauses/terminates it when a batch cannot be delivered.
 */
export type StreamEvent = "ACTIVATE" | "PAUSE" | "COMPLETE" | "FAIL_PAUSE" | "FAIL_TERMINATE";

/** The user's own changes; the engine writes its lines (failures, completion) with what caused them. */
const USER_EVENT_LINES: Partial<Record<StreamEvent, string>> = {
  ACTIVATE: "Activated: delivery starts from where it stopped.",
  PAUSE: "Paused: no delivery until it is activated again.",
};

/** Events by which the engine stops a stream that failed (it is shown as failing, not as paused by its user). */

const FAILURES: ReadonlySet<StreamEvent> = new Set(["FAIL_PAUSE", "FAIL_TERMINATE"]);

/**
 * What the console shows of a stream's status: one the engine stopped because it failed is FAILED (it
 * was paused: activating resumes it at its checkpoint) or TERMINATED (it cannot work as set up), never
 * PAUSED like one its user paused.
 */
export type StreamState = "ACTIVE" | "PAUSED" | "FAILED" | "TERMINATED" | "COMPLETED";

export function streamState(row: { status: string; failedAt: Date | null }): StreamState {
  if (row.status === "PAUSED" && row.failedAt) return "FAILED";
  return row.status as StreamState;
}

/** The one table of allowed transitions (state → event → next state). */
const TRANSITIONS: Record<StreamStatus, Partial<Record<StreamEvent, StreamStatus>>> = {
  ACTIVE: {
    ACTIVATE: "ACTIVE",
    PAUSE: "PAUSED",
    COMPLETE: "COMPLETED",
    FAIL_PAUSE: "PAUSED",
    FAIL_TERMINATE: "TERMINATED",
  },
  PAUSED: { ACTIVATE: "ACTIVE", PAUSE: "PAUSED" },
  TERMINATED: { ACTIVATE: "ACTIVE" },
  // A completed stream runs again only when its end range was moved past its checkpoint (checked by the caller).
  COMPLETED: { ACTIVATE: "ACTIVE" },
};

export function nextStatus(current: StreamStatus, event: StreamEvent): StreamStatus | null {
  return TRANSITIONS[current]?.[event] ?? null;
}

/**
 * What an event does to a stream (or webhook, by `product`): the status it moves to, and whether the
 * row is written (an event that leaves the status as it is changes nothing, except ACTIVATE, which
 * clears the reason of a failure); or why the table refuses it.
 */
export type Transition = { next: StreamStatus; write: boolean } | { refused: string };

export function transition(current: StreamStatus, product: string, event: StreamEvent): Transition {
  const next = nextStatus(current, event);
  if (!next)
    return {
      refused: `A ${current.toLowerCase()} ${product.toLowerCase()} cannot ${event.toLowerCase().replace("_", " and ")}.`,
    };
  return { next, write: next !== current || event === "ACTIVATE" };
}

/**
 * Whether a completed stream delivered its whole range (its next block is past its end block), so it
 * cannot be activated again before its end block is moved. Unknown progress does not block it.
 */
export function wholeRangeDelivered(endRange: number | null, nextBlock: number | null | undefined): boolean {
  return endRange !== null && nextBlock != null && nextBlock > endRange;
}

/** What a stream reads and where it starts (the fields an update may change). */
interface StreamTarget {
  startRange: number;
  network: string;
  dataset: string;
}

/**
 * Whether an update makes a stream start over at its start block (its checkpoint and stored hashes
 * forgotten): a new start block, network or dataset, since its progress was through other blocks.
 */
export function restartsDelivery(current: StreamTarget, patch: Partial<StreamTarget>): boolean {
  return (["startRange", "network", "dataset"] as const).some((k) => patch[k] !== undefined && patch[k] !== current[k]);
}

/**
 * Applies an event to one stream of an account, atomically (the row is locked while deciding).
 * Throws NOT_FOUND for another account's stream and CONFLICT for a transition the table refuses.
 */
export async function applyStreamEvent(
  db: Executor,
  accountId: string,
  streamId: string,
  event: StreamEvent,
  options: { reason?: string | null; product?: string } = {},
): Promise<typeof streams.$inferSelect> {
  const run = async (tx: Executor) => {
    const [row] = await tx
      .select()
      .from(streams)
      .where(and(eq(streams.id, streamId), eq(streams.accountId, accountId)))
      .for("update");
    if (!row || (options.product && row.product !== options.product))
      throw notFound(options.product === "WEBHOOK" ? "Webhook" : "Stream");
    const change = transition(row.status as StreamStatus, row.product, event);
    if ("refused" in change) throw conflict(change.refused);
    if (!change.write) return row;
    const [updated] = await tx
      .update(streams)
      .set({
        status: change.next,
        statusReason: options.reason ? storableText(options.reason) : null,
        failedAt: FAILURES.has(event) ? sql`now()` : null,
        updatedAt: sql`now()`,
      })
      .where(eq(streams.id, streamId))
      .returning();
    const line = USER_EVENT_LINES[event];
    if (line) await writeStreamLog(tx, accountId, streamId, "INFO", line);
    return updated;
  };
  // Inside a caller's transaction this is a savepoint.
  return db.transaction(run);
}
