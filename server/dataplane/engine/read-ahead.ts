import type { DatasetBatchJson } from "../datasets/reader.ts";
import type { PreparedDelivery } from "../destinations/types.ts";
import type { FilterMetadata, FilterOutcome } from "../sandbox/types.ts";
import { type BatchSettings, type BlockRange, planSpan } from "./planning.ts";

/** A batch's dataset JSON, its filter metadata, and the first run of the filter on it. */
export interface Filtered {
  dataJson: string;
  /** UTF-8 bytes of dataJson (counted once: a count costs microseconds per batch). */
  dataBytes: number;
  metadata: FilterMetadata;
  /** Null without a filter. */
  firstRun: Promise<FilterOutcome> | null;
}

/**
 * A batch made ready for delivery: Filtered, and the first attempt's delivery as the destination
 * prepares it (null when it does not, or nothing is to be sent).
 */
export interface Prepared extends Filtered {
  firstDelivery: Promise<PreparedDelivery | null>;
}

/**
 * A batch read ahead; its filter run started when it is among the next FILTER_RUNS_AHEAD batches, and
 * once the batch before it is being delivered, prepared (see the runner's loop).
 */
export interface AheadBatch {
  from: number;
  to: number;
  read: Promise<DatasetBatchJson>;
  filtered?: Promise<Filtered>;
  prepared?: Promise<Prepared>;
}

/**
 * Batches read ahead whose filter runs are started before their turn, in order. The sandbox runs a
 * filter's calls back to back as they come (see Filter.run), so in backfill small batches share round
 * trips to the sandbox process instead of paying one each. A run started for a batch that is then not
 * delivered in its turn (the stream is paused or changed, a reorg, a failed read) is wasted, as the
 * following batch's run already could be.
 */
export const FILTER_RUNS_AHEAD = 8;

/** The blocks `from`–`to` of a span read in one request (the span itself when it is just those). */
export function sliceBatch(whole: DatasetBatchJson, from: number, to: number): DatasetBatchJson {
  if (whole.fromBlock === from && whole.toBlock === to) return whole;
  // Built as the reader builds a batch, not spread from it: one hidden class for every batch the runner
  // sees (a batch read on its own, at a stream's start, made its code be compiled again; decision 1995).
  return {
    dataset: whole.dataset,
    fromBlock: from,
    toBlock: to,
    itemsJson: whole.itemsJson.slice(from - whole.fromBlock, to - whole.fromBlock + 1),
  };
}

/**
 * Takes the planned batch off the front of the read-ahead when it was read ahead as planned; otherwise
 * empties the read-ahead (it was planned for another batch) and answers null: the batch is read now.
 */
export function takeAhead(ahead: AheadBatch[], planned: BlockRange): AheadBatch | null {
  // No read past the end of an empty read-ahead (a stream's first batch): optimised code would be
  // thrown away for it.
  const head = ahead.length > 0 ? ahead[0] : null;
  if (head && head.from === planned.from && head.to === planned.to) return ahead.shift() ?? null;
  ahead.length = 0;
  return null;
}

/**
 * Reads the batches after the one ending at `after` while it is filtered and delivered: whenever no more
 * than one span's batches are left, the next span is planned (planSpan), read in one request with
 * `read`, and cut into batches. A span's failed read is met when its first batch's turn comes.
 */
export function extendReadAhead(
  ahead: AheadBatch[],
  s: BatchSettings,
  at: { after: number; last: number; reorgUntil: number; span: number },
  read: (from: number, to: number) => Promise<DatasetBatchJson>,
): void {
  while (ahead.length <= at.span) {
    const from = ahead.length > 0 ? ahead[ahead.length - 1].to + 1 : at.after + 1;
    const planned = planSpan(s, { from, last: at.last, reorgUntil: at.reorgUntil, count: at.span });
    if (planned.length === 0) break;
    const whole = read(from, planned[planned.length - 1].to);
    for (const b of planned) {
      const part = whole.then((w) => sliceBatch(w, b.from, b.to));
      part.catch(() => undefined);
      // Every field from the start, in one order: one hidden class for every batch read ahead.
      ahead.push({ from: b.from, to: b.to, read: part, filtered: undefined, prepared: undefined });
    }
  }
}

/**
 * Starts the filter runs of the batches read ahead after the first (up to FILTER_RUNS_AHEAD batches in
 * all), each once the one before it is started (`first`, the first batch's preparation): a filter sees
 * its batches in order. Stops at a batch already prepared or not following the one before it; a batch
 * whose run was started already keeps it.
 */
export function startFilterRunsAhead(
  ahead: AheadBatch[],
  first: Promise<unknown>,
  run: (batch: DatasetBatchJson) => Filtered,
): void {
  let previous = first;
  let previousTo = ahead[0].to;
  // Called every turn: a run already started is passed over without a promise more (in backfill that
  // was seven a batch).
  for (let i = 1; i < Math.min(ahead.length, FILTER_RUNS_AHEAD); i++) {
    const b = ahead[i];
    if (b.prepared || b.from !== previousTo + 1) break;
    previousTo = b.to;
    if (!b.filtered) {
      const after = previous;
      b.filtered = after
        .catch(() => undefined)
        .then(() => b.read)
        .then(run);
      b.filtered.catch(() => undefined);
    }
    previous = b.filtered;
  }
}
