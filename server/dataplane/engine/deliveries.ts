/**
 * The delivery history: every attempt at a batch (delivered, skipped by the filter, failed), kept so
 * the console can show what was sent, when, and what the destination answered.
 *
 * Recording must not slow the engine: an attempt is added to an in-memory buffer (a small object, and a
 * copy of the payload's first {@link PREVIEW_CHARS} characters) and the buffer is written every
 * {@link FLUSH_MS} in one statement, through the engine store. A stream that runs through more than
 * {@link ROWS_PER_FLUSH} attempts between two writes (catching up on old blocks, thousands of batches a
 * second) has its first ROWS_PER_FLUSH written one by one and the rest folded, per outcome, into one row
 * that covers their blocks and counts their batches: the history stays readable and the writes bounded
 * (at most ROWS_PER_FLUSH + 4 rows a second per stream), while a stream at the chain tip (a batch every
 * few seconds) has a row for every attempt.
 */

export const DELIVERY_OUTCOMES = ["DELIVERED", "SKIPPED", "FAILED", "FILTER_FAILED"] as const;
/** DELIVERED: the destination acknowledged it; SKIPPED: the filter returned null, nothing was sent. */
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

/** Characters of the payload kept with an attempt. */
export const PREVIEW_CHARS = 1000;
/** Characters of the destination's answer (or the failure) kept with an attempt. */
export const ANSWER_CHARS = 1000;
export const FLUSH_MS = 1000;
export const ROWS_PER_FLUSH = 20;

/** One attempt, or (batches > 1) a run of attempts folded together, as the store writes it. */
export interface DeliveryRecord {
  accountId: string;
  streamId: string;
  /** When the attempt ended (the last one's, for a folded run). */
  at: Date;
  startBlock: number;
  endBlock: number;
  /** Attempts folded into this row (1 for an attempt recorded on its own). */
  batches: number;
  /** 1 for the first try of a batch, then 2, 3… for retries (the last one's, for a folded run). */
  attempt: number;
  outcome: DeliveryOutcome;
  /** The HTTP status the destination answered, when it is a URL and answered. */
  httpStatus: number | null;
  /** What the destination answered (e.g. "HTTP 200", an object key) or why the attempt failed. */
  answer: string;
  /** The attempt's duration: the destination's round trip, or the filter's run when nothing was sent (mean of a run). */
  latencyMs: number;
  /** Bytes of the payload after the filter (sum of a run). */
  bytes: number;
  /** The payload's first PREVIEW_CHARS characters (the last attempt's, for a folded run); null when nothing was sent. */
  preview: string | null;
  isReorg: boolean;
}

/** What the engine store does with the history (the streams domain implements it). */
export interface DeliveryHistoryStore {
  /** Writes rows (one statement). */
  recordDeliveries(rows: DeliveryRecord[]): Promise<void>;
  /** Removes rows older than each account's plan keeps them. */
  pruneDeliveries(): Promise<void>;
}

/** One attempt as the runner reports it. */
export interface DeliveryAttempt {
  startBlock: number;
  endBlock: number;
  attempt: number;
  outcome: DeliveryOutcome;
  httpStatus: number | null;
  answer: string;
  latencyMs: number;
  bytes: number;
  /** The payload sent (only its first PREVIEW_CHARS characters are kept). */
  payload: string | null;
  isReorg: boolean;
}

/**
 * A copy of the first `n` characters that does not keep `text` alive: V8 cuts a long string as a view
 * of its parent, which would hold each whole batch in memory until the next write.
 */
function ownCopy(text: string, n: number): string {
  if (text.length <= n) return text;
  return Buffer.from(text.slice(0, n), "utf16le").toString("utf16le");
}

const cut = (text: string, n: number) => (text.length > n ? `${text.slice(0, n - 1)}…` : ownCopy(text, n));

/** One stream's attempts since the last write. */
export class StreamDeliveryLog {
  rows: DeliveryRecord[] = [];
  /** Rows folding the attempts past ROWS_PER_FLUSH, per outcome. */
  private folded = new Map<DeliveryOutcome, DeliveryRecord>();
  /** The payload of each folded run's last attempt (only its preview is kept, copied when the row is written). */
  private lastPayload = new Map<DeliveryOutcome, string | null>();

  constructor(private readonly stream: { id: string; accountId: string }) {}

  add(attempt: DeliveryAttempt, at = new Date()): void {
    if (this.rows.length < ROWS_PER_FLUSH) {
      this.rows.push(this.recordOf(attempt, at));
      return;
    }
    const run = this.folded.get(attempt.outcome);
    if (!run) {
      const record = this.recordOf(attempt, at);
      this.folded.set(attempt.outcome, record);
      this.rows.push(record);
      return;
    }
    // The mean latency of the run: the sum is kept until the row is written (see take()).
    run.latencyMs += attempt.latencyMs;
    run.batches += 1;
    run.startBlock = Math.min(run.startBlock, attempt.startBlock);
    run.endBlock = Math.max(run.endBlock, attempt.endBlock);
    run.bytes += attempt.bytes;
    run.at = at;
    run.attempt = attempt.attempt;
    run.httpStatus = attempt.httpStatus;
    run.isReorg = run.isReorg || attempt.isReorg;
    // Only the last of a run keeps its answer and preview; they are cut when the row is written.
    run.answer = attempt.answer;
    this.lastPayload.set(attempt.outcome, attempt.payload);
  }

  /** The rows gathered since the last call, emptied. */
  take(): DeliveryRecord[] {
    const rows = this.rows;
    for (const [outcome, run] of this.folded) {
      run.latencyMs /= run.batches;
      run.answer = cut(run.answer, ANSWER_CHARS);
      const payload = this.lastPayload.get(outcome);
      if (payload !== undefined) run.preview = payload === null ? null : ownCopy(payload, PREVIEW_CHARS);
    }
    this.rows = [];
    this.folded = new Map();
    this.lastPayload = new Map();
    return rows;
  }

  private recordOf(attempt: DeliveryAttempt, at: Date): DeliveryRecord {
    return {
      accountId: this.stream.accountId,
      streamId: this.stream.id,
      at,
      startBlock: attempt.startBlock,
      endBlock: attempt.endBlock,
      batches: 1,
      attempt: attempt.attempt,
      outcome: attempt.outcome,
      httpStatus: attempt.httpStatus,
      answer: cut(attempt.answer, ANSWER_CHARS),
      latencyMs: attempt.latencyMs,
      bytes: attempt.bytes,
      preview: attempt.payload === null ? null : ownCopy(attempt.payload, PREVIEW_CHARS),
      isReorg: attempt.isReorg,
    };
  }
}

/** How often old rows are pruned. */
const PRUNE_EVERY_MS = 10 * 60_000;

/** The engine's delivery history buffer: streams' logs, written every FLUSH_MS and pruned every PRUNE_EVERY_MS. */
export class DeliveryHistory {
  private readonly logs = new Set<StreamDeliveryLog>();
  /** Rows of runners that ended since the last write. */
  private retired: DeliveryRecord[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private lastPrune = 0;

  constructor(
    private readonly store: DeliveryHistoryStore,
    private readonly onError: (e: unknown) => void,
    flushMs = FLUSH_MS,
  ) {
    if (flushMs > 0) {
      this.timer = setInterval(() => void this.flush(), flushMs);
      this.timer.unref();
    }
  }

  /** A log for one runner; `release` it when the runner ends (its rows are written at the next flush). */
  open(stream: { id: string; accountId: string }): StreamDeliveryLog {
    const log = new StreamDeliveryLog(stream);
    this.logs.add(log);
    return log;
  }

  release(log: StreamDeliveryLog): void {
    this.retired.push(...log.take());
    this.logs.delete(log);
  }

  /** Writes what has gathered (and prunes when it is time); calls are serialised. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushNow()).catch(this.onError);
    return this.flushing;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }

  private async flushNow(): Promise<void> {
    const rows = this.retired;
    this.retired = [];
    for (const log of this.logs) if (log.rows.length > 0) rows.push(...log.take());
    if (rows.length > 0) await this.store.recordDeliveries(rows);
    if (Date.now() - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = Date.now();
      await this.store.pruneDeliveries();
    }
  }
}
