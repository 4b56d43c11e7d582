import type { Acknowledgement } from "./store.ts";

/**
 * A stream's checkpoint is written at most once per RECORD_INTERVAL_MS: batches acknowledged meanwhile
 * are recorded together in the next statement (each statement moves the checkpoint to the end of the
 * last of them). A stream that delivers less often records every batch at once; one that delivers
 * thousands of batches a second writes its checkpoint a thousand times a second instead, and spends
 * its time delivering: writing every batch held the engine to about 0.8x the raw read rate on empty
 * blocks at batch 10 (tests/bench/streams.ts), and 0.9x at batch 1; writing at most once a millisecond,
 * 1.0x and 1.4x. Each statement is a round trip and an UPDATE with its WAL in PostgreSQL, on the cores
 * the node, the engine and the destination share: at once a millisecond the engine in its own process
 * wrote 0.21-0.45 statements per batch on empty blocks; at most once every 2 ms halves that, and keeps
 * the acknowledged batches waiting (4-8 at 2-4 batches a millisecond) well under MAX_UNRECORDED_BATCHES.
 */
export const RECORD_INTERVAL_MS = 2;
/**
 * Acknowledged batches not yet recorded at which the loop waits for the records before it delivers
 * another: a bound on what a killed process leaves unrecorded, whatever the database's pace. At 5
 * batches a millisecond (empty blocks, batch 10) a bound of 8 was reached before the interval ran and
 * held the engine to 0.81-0.94x; 16 and 32 measured 1.0x.
 */
export const MAX_UNRECORDED_BATCHES = 16;

/**
 * Writes acknowledgements one statement at a time, in block order, at most one per
 * {@link RECORD_INTERVAL_MS}: batches acknowledged while a statement is in flight or the interval runs
 * wait and are recorded together, as one contiguous run of blocks. A failed statement stops all
 * recording; the failure is thrown by the next add, below or settled.
 */
export class AckRecorder {
  private inFlight: Promise<void> | null = null;
  private pending: Acknowledgement | null = null;
  private pendingBatches = 0;
  private inFlightBatches = 0;
  private failure: { error: unknown } | null = null;
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly write: (ack: Acknowledgement) => Promise<void>) {}

  /** A batch was acknowledged: records it now, or with the next statement. */
  add(ack: Acknowledgement): void {
    this.throwFailure();
    this.pendingBatches++;
    const p = this.pending;
    if (p) {
      p.endBlock = ack.endBlock;
      p.hashes.push(...ack.hashes);
    } else this.pending = { ...ack, hashes: [...ack.hashes] };
    this.schedule();
  }

  /** Until fewer than `limit` acknowledged batches are unrecorded (what is pending is written now). */
  async below(limit: number): Promise<void> {
    while (this.pendingBatches + this.inFlightBatches >= limit && !this.failure) {
      if (!this.inFlight) this.writeNow();
      await this.inFlight;
    }
    this.throwFailure();
  }

  /** Until every acknowledged batch is recorded (what is pending is written now). */
  settled(): Promise<void> {
    return this.below(1);
  }

  private schedule(): void {
    if (this.inFlight || this.timer || !this.pending) return;
    const wait = this.lastWriteAt + RECORD_INTERVAL_MS - performance.now();
    if (wait <= 0) this.writeNow();
    else this.timer = setTimeout(() => this.writeNow(), wait);
  }

  private writeNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const ack = this.pending;
    if (!ack) return;
    this.inFlightBatches = this.pendingBatches;
    this.pending = null;
    this.pendingBatches = 0;
    this.lastWriteAt = performance.now();
    this.inFlight = this.write(ack).then(
      () => {
        this.inFlightBatches = 0;
        this.inFlight = null;
        this.schedule();
      },
      (error: unknown) => {
        this.failure ??= { error };
        this.inFlight = null;
      },
    );
  }

  private throwFailure(): void {
    if (this.failure) throw this.failure.error;
  }
}
