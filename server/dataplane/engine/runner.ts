import type pg from "pg";
import type { Db } from "../../platform/db/index.ts";
import type { Mailer } from "../../platform/mail.ts";
import type { SecretBox } from "../../platform/secrets.ts";
import type { HeadWatch, NewHeads } from "../chain/heads.ts";
import type { UpstreamMap } from "../chain/nodes.ts";
import {
  type BlockHeader,
  BlockNotAvailableError,
  type DatasetBatchJson,
  type EvmDataset,
  EvmDatasetReader,
  headersInItems,
} from "../datasets/reader.ts";
import { RpcClient } from "../datasets/rpc.ts";
import { createDestination, type Destination, type DestinationDeps, type MetadataMode } from "../destinations/index.ts";
import type { DeliveryAck } from "../destinations/types.ts";
import { createFilter, type Filter } from "../sandbox/filter.ts";
import type { FilterHelpers, FilterVersion } from "../sandbox/types.ts";
import {
  attemptRecord,
  blocksOf,
  type DeliveryFailure,
  deliveryFailureOf,
  FILTER_LOG_LINES_KEPT,
  filterFailureOf,
  filterMetadataOf,
  payloadAfterFilter,
  retryLogLine,
} from "./attempts.ts";
import { destinationAttributesOf, retryPolicy } from "./config.ts";
import type { DeliveryHistory, StreamDeliveryLog } from "./deliveries.ts";
import { type MetricSample, type MetricsBuffer, WEBHOOK_CREDITS_PER_DELIVERY } from "./metrics.ts";
import {
  type BatchPlan,
  type BlockRange,
  batchesPerSpan,
  batchSizeOf,
  continuesDelivered,
  lastDeliverable,
  needsNewerTip,
  planBatch,
  settingsOf,
} from "./planning.ts";
import {
  type AheadBatch,
  extendReadAhead,
  type Filtered,
  type Prepared,
  startFilterRunsAhead,
  takeAhead,
} from "./read-ahead.ts";
import { AckRecorder, MAX_UNRECORDED_BATCHES } from "./recorder.ts";
import { type AttemptResult, type RetryPolicy, StreamFailure, withRetries } from "./retry.ts";
import type { Acknowledgement, EngineStore, Heartbeat, LogLevel, StreamRow } from "./store.ts";
import type { SandboxSuspects } from "./suspects.ts";

export interface RunnerDeps {
  db: Db;
  store: EngineStore;
  owner: string;
  leaseTtlMs: number;
  /**
   * How often a runner at the chain tip asks for a new block when the node does not push new heads, and
   * renews its lease while waiting.
   */
  tipPollMs: number;
  /** New heads pushed by the nodes: a runner at the tip is woken by them (see waitAtTip). */
  heads: NewHeads;
  upstreams: UpstreamMap;
  box: SecretBox;
  mailer: Mailer | null;
  metrics: MetricsBuffer;
  /** Where each attempt is recorded (buffered; see deliveries.ts). */
  deliveries: DeliveryHistory;
  /** Connections for acknowledgements and lease renewals (see startStreamEngine). */
  ackPool: pg.Pool;
  destinationDeps: DestinationDeps;
  filterHelpers?: (accountId: string) => FilterHelpers | undefined;
  /**
   * Streams whose filter ended an engine, and their accounts' (see suspects.ts): their filters run in the
   * sandbox process, not on this thread; a culprit's counts as having crashed once already.
   */
  sandboxSuspects?: Pick<SandboxSuspects, "of">;
  log: { info(o: object, m?: string): void; warn(o: object, m?: string): void; error(o: object, m?: string): void };
}

interface Parts {
  reader: EvmDatasetReader;
  rpc: RpcClient;
  filter: Filter | null;
  destination: Destination;
  retry: RetryPolicy;
  /** Calls of the filter that made its sandbox be replaced, since the stream started running here. */
  sandboxCrashes: number;
}

/** Where the loop stands between two batches. */
interface LoopState {
  /** The stream's parts (set up again when the stream changes). */
  parts: Parts;
  /** The first block not yet delivered. */
  next: number;
  /** The chain tip last seen (-1: none yet). */
  tip: number;
  /** Blocks up to this one are re-delivered after a reorg, marked as reorged (-1: none). */
  reorgUntil: number;
  ahead: AheadBatch[];
  recorder: AckRecorder;
  /** The last block delivered by this runner (for the reorg check while its record is in flight). */
  lastDelivered: { number: number; hash: string } | null;
  /** Dataset bytes per block in the last batch: sizes the read-ahead spans (nothing known yet: one batch). */
  bytesPerBlock: number;
  /** Whether this run's first delivery is logged (one line per run: each batch is listed in Deliveries). */
  deliveryLogged: boolean;
}

/** A batch being delivered: what its attempts share. */
interface InFlight {
  parts: Parts;
  batch: DatasetBatchJson;
  isReorg: boolean;
  /** When its reading started (its latency is measured from here). */
  startedAt: number;
  ready: Prepared;
  /** Whether the batch's blocks and bytes were counted in the metrics by an earlier attempt. */
  counted: boolean;
}

/** What an attempt's filter run leaves to deliver (null: nothing, the filter skipped the batch), or its failure. */
type FilterStep = { payloadJson: string | null; payloadBytes: number } | { failure: DeliveryFailure };

class Stop extends Error {}

const hex = (n: number) => `0x${n.toString(16)}`;

/**
 * Settles in the event loop's next check phase (setImmediate), after the microtasks now queued: work
 * deferred to it runs after a delivery those microtasks are about to send, not before it.
 */
const afterSends = () => new Promise<void>((resolve) => setImmediate(resolve));
/**
 * While heads are pushed, a runner at the tip still asks the node for its tip this often: a push lost
 * without the connection dropping delays the stream by at most this much.
 */
export const PUSHED_TIP_CHECK_MS = 30_000;

/**
 * Runs one stream under a lease: read a batch, check it continues the delivered chain (reorgs), run
 * the filter, deliver, and on acknowledgement record it and move the checkpoint in one statement.
 *
 * Which blocks each batch and read-ahead span covers is planned in planning.ts; which batches are read
 * ahead and filtered before their turn, in read-ahead.ts; what an attempt's outcome means (failures, log
 * lines, history rows), in attempts.ts; how a failed batch is retried, in retry.ts. The loop is one
 * `turn` per batch, each step a method: reload, planTurn, readBatch, checkChain, readAhead, deliver,
 * prepareFollowing, recordDelivered.
 *
 * Pipeline: the following batches are read (in spans, see READ_SPAN_BYTES) while one is
 * filtered and delivered; the next batch is prepared (its JSON made, the filter run on it, and the
 * destination's request built, see Destination.prepare) while this one's POST is in flight; and a
 * delivered batch's record (the checkpoint write) is sent once the next batch's delivery has gone out,
 * overlapping it. So between the answer to one delivery and the sending of the next there is only the
 * engine's own bookkeeping. The runner learns that its stream was paused or changed from the engine
 * (a notification, see refresh()) and from its heartbeat, not from the records.
 * Deliveries are strictly one after another, in block order. Records are written one after another
 * (see AckRecorder: the next starts only when the previous one committed, and batches acknowledged
 * meanwhile are recorded together), so the checkpoint only ever moves to the end of a delivered batch,
 * in order: it never passes a batch that was not acknowledged, and the recording statement itself
 * refuses to move it past a gap. Before delivering a batch the loop waits until fewer than
 * {@link MAX_UNRECORDED_BATCHES} acknowledged batches are unrecorded.
 *
 * So if the process dies, at most MAX_UNRECORDED_BATCHES batches were delivered without being
 * recorded and are sent again by the next owner: those acknowledged but not yet recorded and the one
 * being delivered (only the one being delivered when the stream delivers less often than its records
 * are written, see RECORD_INTERVAL_MS; otherwise those acknowledged in the last few milliseconds).
 * A record that cannot be written because the lease moved stops the runner; the new owner re-sends
 * from the checkpoint. Reorg checks compare against the last delivered block held in memory, and wait
 * for every record before reading stored hashes, so they never see a stale chain.
 */
export class StreamRunner {
  readonly done: Promise<void>;
  private stopped = false;
  private readonly abort = new AbortController();
  private heartbeat: NodeJS.Timeout | null = null;
  private row!: StreamRow;
  private reloadWanted = false;
  private lastReadWarning = 0;
  private history!: StreamDeliveryLog;
  private headWatch!: HeadWatch;
  /** Ends the current wait at the tip early (a reload is wanted). */
  private endWait: (() => void) | null = null;
  /** Whether the next tip is asked of the node rather than taken from the last pushed head. */
  private askNodeForTip = true;

  constructor(
    private readonly deps: RunnerDeps,
    readonly streamId: string,
  ) {
    this.done = this.run()
      .catch((e) => {
        if (!(e instanceof Stop)) deps.log.error({ err: e, streamId }, "stream runner failed");
      })
      .finally(async () => {
        if (this.heartbeat) clearInterval(this.heartbeat);
        await deps.store.releaseLease(deps.db.$client, streamId, deps.owner).catch(() => undefined);
      });
  }

  stop(): void {
    this.stopped = true;
    this.abort.abort();
  }

  /** The stream changed (paused, updated, deleted): checks its status and settings now, as a heartbeat does. */
  refresh(): void {
    if (this.row) this.beat();
  }

  /** Renews the lease and learns the stream's status and sequence (see onHeartbeat). */
  private beat(): void {
    this.deps.store
      .renewLease(this.deps.ackPool, this.streamId, this.deps.owner, this.deps.leaseTtlMs)
      .then((hb) => this.onHeartbeat(hb))
      .catch(() => undefined);
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.reject(new Stop());
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(t);
        reject(new Stop());
      };
      const t = setTimeout(() => {
        this.abort.signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      this.abort.signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  private check(): void {
    if (this.stopped) throw new Stop();
  }

  private onHeartbeat(hb: Heartbeat | null): void {
    if (hb?.status !== "ACTIVE") {
      if (!hb) this.deps.log.warn({ streamId: this.streamId }, "stream lease lost; stopping its runner");
      this.stop();
    } else if (hb.sequence !== this.row.sequence) {
      this.reloadWanted = true;
      this.endWait?.();
    }
  }

  private async logLine(level: LogLevel, message: string): Promise<void> {
    await this.deps.store.writeLog(this.deps.db, this.row, level, message).catch(() => undefined);
  }

  private async run(): Promise<void> {
    const { db, leaseTtlMs } = this.deps;
    const row = await this.deps.store.loadStream(db, this.streamId);
    if (row?.status !== "ACTIVE") return;
    this.row = row;
    this.history = this.deps.deliveries.open(row);
    this.headWatch = this.deps.heads.watch(row.network);
    this.heartbeat = setInterval(() => this.beat(), Math.max(50, Math.min(leaseTtlMs / 3, this.deps.tipPollMs)));
    let parts: Parts | null = null;
    let state: LoopState | null = null;
    try {
      parts = await this.setup();
      state = await this.startLoop(parts);
      await this.loop(state);
    } catch (e) {
      if (e instanceof StreamFailure) await this.fail(e);
      else throw e;
    } finally {
      // The parts in use at the end: those set up again on the stream's last change, if any.
      await this.dispose(state?.parts ?? parts);
      this.deps.deliveries.release(this.history);
      this.headWatch.close();
    }
  }

  /**
   * Waits at the chain tip for a block above `tip`: until the node pushes one (true), or until the time
   * to ask the node passes (false): tipPollMs without pushed heads, PUSHED_TIP_CHECK_MS with them. A
   * subscription that drops ends the wait (false), so the runner polls from then on.
   */
  private waitAtTip(tip: number): Promise<boolean> {
    if (this.stopped) return Promise.reject(new Stop());
    const watch = this.headWatch;
    const pushedAbove = () => {
      const head = watch.head();
      return head !== null && head > tip;
    };
    if (pushedAbove()) return Promise.resolve(true);
    return new Promise((resolve, reject) => {
      const finish = (pushed: boolean | Stop) => {
        clearTimeout(timer);
        stopListening();
        this.abort.signal.removeEventListener("abort", onAbort);
        this.endWait = null;
        if (pushed instanceof Stop) reject(pushed);
        else resolve(pushed);
      };
      const onAbort = () => finish(new Stop());
      const timer = setTimeout(
        () => finish(false),
        watch.subscribed() ? Math.max(this.deps.tipPollMs, PUSHED_TIP_CHECK_MS) : this.deps.tipPollMs,
      );
      const stopListening = watch.listen(() => {
        if (pushedAbove()) finish(true);
        else if (!watch.subscribed()) finish(false);
      });
      this.endWait = () => finish(false);
      this.abort.signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  private async setup(): Promise<Parts> {
    const row = this.row;
    const upstream = this.deps.upstreams.get(row.network);
    if (!upstream) throw new StreamFailure(`network ${row.network} has no chain node configured`, "FAIL_PAUSE");
    const attrs = destinationAttributesOf(this.deps.box, row);
    let destination: Destination;
    try {
      destination = createDestination(
        attrs,
        {
          streamId: row.id,
          accountId: row.accountId,
          network: row.network,
          dataset: row.dataset,
          metadata: row.includeStreamMetadata as MetadataMode,
        },
        this.deps.destinationDeps,
      );
    } catch (e) {
      throw new StreamFailure(`destination cannot be used: ${(e as Error).message}`, "FAIL_TERMINATE");
    }
    let filter: Filter | null = null;
    const suspected = this.deps.sandboxSuspects?.of(row) ?? null;
    if (row.filterFunction) {
      if (suspected)
        await this.logLine(
          "WARNING",
          suspected.culprit
            ? `This stream's filter ended the engine's process (it ${suspected.reason}); it now runs in the sandbox process, and the stream pauses if it crashes that too.`
            : `This stream's filter runs in the sandbox process for now: ${suspected.reason}.`,
        );
      filter = await createFilter({
        source: row.filterFunction,
        version: row.filterVersion as FilterVersion,
        helpers: this.deps.filterHelpers?.(row.accountId),
        measureHeap: false,
        label: `stream ${row.id}`,
        owner: row.accountId,
        offThread: suspected !== null,
      });
      const syntax = await filter.check();
      if (syntax) {
        filter.dispose();
        await destination.close();
        throw new StreamFailure(`filter function does not compile: ${syntax.message}`, "FAIL_TERMINATE");
      }
    }
    return {
      reader: new EvmDatasetReader(upstream.httpUrl),
      rpc: new RpcClient(upstream.httpUrl),
      filter,
      destination,
      retry: retryPolicy(row.destinationAttributes),
      sandboxCrashes: suspected?.culprit && filter ? 1 : 0,
    };
  }

  private async dispose(parts: Parts | null): Promise<void> {
    if (!parts) return;
    parts.filter?.dispose();
    await Promise.allSettled([parts.reader.close(), parts.rpc.close(), parts.destination.close()]);
  }

  /** The loop's state at its start: the stream's checkpoint (set at the chain tip on its first run). */
  private async startLoop(parts: Parts): Promise<LoopState> {
    const next = await this.deps.store.ensureCheckpoint(this.deps.db, this.row, () => parts.reader.latestBlock());
    return {
      parts,
      next,
      tip: -1,
      reorgUntil: -1,
      ahead: [],
      recorder: new AckRecorder((record) => this.record(record)),
      lastDelivered: null,
      bytesPerBlock: Number.POSITIVE_INFINITY,
      deliveryLogged: false,
    };
  }

  private async loop(state: LoopState): Promise<void> {
    try {
      while (await this.turn(state));
    } finally {
      // Stopping or failing: the batch already delivered is still recorded (errors are the caller's
      // business only when the loop itself succeeded).
      await state.recorder.settled().catch(() => undefined);
    }
  }

  /**
   * One turn of the loop, one batch delivered at most; false when the runner is done (its stream
   * completed, or is no longer active). A turn that could not read what it needed paused first.
   */
  private async turn(state: LoopState): Promise<boolean> {
    this.check();
    if (this.reloadWanted && !(await this.reload(state))) return false;
    const plan = await this.planTurn(state);
    if (plan === null) return true;
    if (plan.kind === "complete") {
      await this.complete(state);
      return false;
    }
    if (plan.kind === "wait") {
      this.askNodeForTip = !(await this.waitAtTip(state.tip));
      return true;
    }
    const startedAt = performance.now();
    const taken = await this.readBatch(state, plan);
    if (taken === null) return true;
    const hashes = await this.checkChain(state, taken.batch);
    if (hashes === null) return true;
    this.readAhead(state, plan.to);
    const delivering = this.deliver(state.parts, taken.batch, plan.isReorg, startedAt, taken.prepared);
    this.prepareFollowing(state, plan.to);
    await this.recordDelivered(state, plan, await delivering, hashes);
    return true;
  }

  /** Loads the changed stream and sets its parts up again; false when it is no longer active. */
  private async reload(state: LoopState): Promise<boolean> {
    this.reloadWanted = false;
    await state.recorder.settled();
    const fresh = await this.deps.store.loadStream(this.deps.db, this.streamId);
    if (fresh?.status !== "ACTIVE") return false;
    this.row = fresh;
    await this.dispose(state.parts);
    state.parts = await this.setup();
    state.ahead = [];
    return true;
  }

  /**
   * What to do next (planBatch), after learning the chain tip when a newer one is needed: the last pushed
   * head, or the node's own tip. Null when the node could not be read (the turn paused).
   */
  private async planTurn(state: LoopState): Promise<BatchPlan | null> {
    const settings = settingsOf(this.row);
    if (needsNewerTip(settings, state.next, state.tip)) {
      const pushed = this.askNodeForTip ? null : this.headWatch.head();
      if (pushed !== null) state.tip = pushed;
      else {
        try {
          state.tip = await state.parts.reader.latestBlock();
        } catch (e) {
          await this.readFailed(e);
          return null;
        }
      }
    }
    return planBatch(settings, { next: state.next, tip: state.tip, reorgUntil: state.reorgUntil });
  }

  /** The stream delivered its whole range: once every batch is recorded, it is completed. */
  private async complete(state: LoopState): Promise<void> {
    const row = this.row;
    await state.recorder.settled();
    await this.deps.store.applyStreamEvent(this.deps.db, row.accountId, row.id, "COMPLETE", {
      reason: `delivered every block up to ${row.endRange}`,
    });
    await this.logLine("INFO", `Stream completed: every block up to its end range ${row.endRange} was delivered.`);
  }

  /**
   * The planned batch, read ahead (with its preparation, when started) or read now; null when its read
   * failed (the read-ahead is dropped and the turn paused).
   */
  private async readBatch(
    state: LoopState,
    planned: BlockRange,
  ): Promise<{ batch: DatasetBatchJson; prepared: Promise<Prepared> | undefined } | null> {
    try {
      const head = takeAhead(state.ahead, planned);
      const batch = head
        ? await head.read
        : await state.parts.reader.fetchBatchJson(this.row.dataset as EvmDataset, state.next, planned.to);
      // One object for both ways: a second shape, met at each stream's start, discarded turn's code.
      return { batch, prepared: head?.prepared };
    } catch (e) {
      state.ahead = [];
      // Spans were sized by an estimate the failed read may have outgrown: read one batch next.
      state.bytesPerBlock = Number.POSITIVE_INFINITY;
      await this.readFailed(e);
      return null;
    }
  }

  /**
   * The batch's block headers when the stream fixes reorgs (none when it does not), once its first block
   * is known to continue the delivered chain. Null when the headers could not be read (the turn paused),
   * or when the chain was reorganised: the runner then moves back past the fork point, and the blocks
   * after it are delivered again, marked as reorged.
   */
  private async checkChain(state: LoopState, batch: DatasetBatchJson): Promise<BlockHeader[] | null> {
    if (!this.row.fixBlockReorgs) return [];
    let hashes: BlockHeader[];
    try {
      hashes = await this.headersOf(state.parts, batch);
    } catch (e) {
      state.ahead = [];
      await this.readFailed(e);
      return null;
    }
    const first = hashes[0];
    if (continuesDelivered(state.lastDelivered, state.next, first.parentHash)) return hashes;
    // The stored hashes are read only once every delivered batch is recorded.
    await state.recorder.settled();
    const fork = await this.forkPoint(state.parts, state.next, first);
    if (fork === null) return hashes;
    const next = state.next;
    state.reorgUntil = Math.max(state.reorgUntil, next - 1);
    await this.logLine(
      "WARNING",
      `Chain reorganisation: block ${next} does not continue the delivered chain; blocks ${fork + 1}–${next - 1} are delivered again, marked as reorged.`,
    );
    state.next = fork + 1;
    state.ahead = [];
    state.lastDelivered = null;
    return null;
  }

  /** Reads the batches after the one ending at `after` while it is filtered and delivered (see extendReadAhead). */
  private readAhead(state: LoopState, after: number): void {
    const settings = settingsOf(this.row);
    extendReadAhead(
      state.ahead,
      settings,
      {
        after,
        last: lastDeliverable(settings, state.tip),
        reorgUntil: state.reorgUntil,
        span: batchesPerSpan(batchSizeOf(settings), state.bytesPerBlock),
      },
      (from, to) => state.parts.reader.fetchBatchJson(this.row.dataset as EvmDataset, from, to),
    );
  }

  /**
   * Prepares the batch after the one ending at `after` while that one's POST is in flight: from the event
   * loop's check phase, after this turn's microtasks have sent the POST. Its filter run is queued after
   * this batch's (a filter runs one call at a time, in order), and is done when its turn comes; the runs
   * of the batches after it are started too (see startFilterRunsAhead).
   */
  private prepareFollowing(state: LoopState, after: number): void {
    // No read past the end of an empty read-ahead (a stream's last batch): see takeAhead.
    const following = state.ahead.length > 0 ? state.ahead[0] : null;
    if (!following || following.prepared || following.from !== after + 1) return;
    following.prepared = afterSends()
      .then(() => Promise.all([following.read, following.filtered]))
      .then(([b, filtered]) => this.prepare(state.parts, b, following.from <= state.reorgUntil, filtered));
    // A failed read is met again when the batch's turn comes.
    following.prepared.catch(() => undefined);
    if (state.parts.filter)
      startFilterRunsAhead(state.ahead, following.prepared, (batch) =>
        this.filterRun(state.parts, batch, batch.fromBlock <= state.reorgUntil),
      );
  }

  /**
   * Hands the delivered batch to the recorder and moves on past it, once fewer than
   * MAX_UNRECORDED_BATCHES acknowledged batches are unrecorded.
   */
  private async recordDelivered(
    state: LoopState,
    delivered: BlockRange,
    dataBytes: number,
    hashes: BlockHeader[],
  ): Promise<void> {
    state.bytesPerBlock = dataBytes / (delivered.to - state.next + 1);
    // Before the acknowledgement: whoever sees the checkpoint move also sees this line.
    if (!state.deliveryLogged) {
      state.deliveryLogged = true;
      const what = this.row.product === "WEBHOOK" ? "Webhook" : "Stream";
      await this.logLine(
        "INFO",
        `${what} delivering: blocks ${state.next}–${delivered.to} delivered; every delivery is listed in Deliveries.`,
      );
    }
    state.recorder.add({
      streamId: this.row.id,
      owner: this.deps.owner,
      startBlock: state.next,
      endBlock: delivered.to,
      hashes: hashes.map((h) => ({ number: h.number, hash: h.hash })),
    });
    await state.recorder.below(MAX_UNRECORDED_BATCHES);
    state.lastDelivered = hashes.length > 0 ? hashes[hashes.length - 1] : null;
    state.next = delivered.to + 1;
  }

  /**
   * Writes one acknowledgement (of one or more batches, see AckRecorder); throws Stop when it was not
   * recorded (lease lost). The statement is sent from the event loop's next check phase: by then the
   * loop's microtasks have sent the next batch when it was ready, so the database round trip is not on
   * the way from one delivery to the next.
   */
  private async record(ack: Acknowledgement): Promise<void> {
    await afterSends();
    if (!(await this.deps.store.acknowledge(this.deps.ackPool, ack))) {
      this.deps.log.warn(
        { streamId: ack.streamId },
        "stream acknowledgement was not recorded (lease lost, or the checkpoint is not where the batch starts)",
      );
      this.stop();
      throw new Stop();
    }
  }

  private async readFailed(e: unknown): Promise<void> {
    if (e instanceof Stop) throw e;
    const waiting = e instanceof BlockNotAvailableError;
    // A pushed head the node does not serve yet (or any more, after a reorg): its own tip is asked next.
    this.askNodeForTip = true;
    if (!waiting) {
      this.deps.metrics.add(this.row, { errors: 1 });
      if (Date.now() - this.lastReadWarning > 30_000) {
        this.lastReadWarning = Date.now();
        await this.logLine(
          "WARNING",
          `Reading from the ${this.row.network} node failed: ${(e as Error).message}; retrying.`,
        );
      }
    }
    await this.sleep(waiting ? this.deps.tipPollMs : Math.max(this.deps.tipPollMs, 1000));
  }

  /** The batch's block headers: from its items when they carry their blocks, else from the node. */
  private async headersOf(parts: Parts, batch: DatasetBatchJson): Promise<BlockHeader[]> {
    return headersInItems(batch) ?? this.fetchHeaders(parts, batch.fromBlock, batch.toBlock);
  }

  private async fetchHeaders(parts: Parts, from: number, to: number): Promise<BlockHeader[]> {
    const calls = [];
    for (let n = from; n <= to; n++) calls.push({ method: "eth_getBlockByNumber", params: [hex(n), false] });
    const blocks = (await parts.rpc.batch(calls)) as ({ hash: string; parentHash: string } | null)[];
    return blocks.map((b, i) => {
      if (!b) throw new BlockNotAvailableError(from + i);
      return { number: from + i, hash: b.hash, parentHash: b.parentHash };
    });
  }

  /**
   * Null when the batch's first block continues the delivered chain (or nothing before it is known);
   * otherwise the highest delivered block whose hash the node still agrees with (the fork point).
   */
  private async forkPoint(parts: Parts, first: number, header: BlockHeader): Promise<number | null> {
    const { db } = this.deps;
    const prev = await this.deps.store.storedHash(db, this.row.id, first - 1);
    if (prev === undefined || prev === header.parentHash) return null;
    let n = first - 1;
    while (n >= 0) {
      const stored = await this.deps.store.storedHash(db, this.row.id, n);
      if (stored === undefined) break;
      const [onNode] = await this.fetchHeaders(parts, n, n);
      if (onNode.hash === stored) break;
      n--;
    }
    return n;
  }

  /** Makes a batch's JSON and starts the filter's first run on it. */
  private filterRun(parts: Parts, batch: DatasetBatchJson, isReorg: boolean): Filtered {
    const dataJson = `[${batch.itemsJson.join(",")}]`;
    const metadata = filterMetadataOf(this.row, batch, isReorg);
    const dataBytes = Buffer.byteLength(dataJson);
    const firstRun = parts.filter ? parts.filter.run({ data: dataJson, dataBytes, metadata }) : null;
    return { dataJson, dataBytes, metadata, firstRun };
  }

  /** Makes a batch ready for delivery (see Prepared), with its filter run when it was started already. */
  private prepare(parts: Parts, batch: DatasetBatchJson, isReorg: boolean, filtered?: Filtered): Prepared {
    const { dataJson, dataBytes, metadata, firstRun } = filtered ?? this.filterRun(parts, batch, isReorg);
    const prepareDelivery = parts.destination.prepare?.bind(parts.destination);
    const firstDelivery = prepareDelivery
      ? (firstRun ?? Promise.resolve(null)).then((outcome) => {
          const payloadJson = payloadAfterFilter(outcome, dataJson);
          return payloadJson === null
            ? null
            : prepareDelivery({ startBlock: batch.fromBlock, endBlock: batch.toBlock, payloadJson, isReorg });
        })
      : Promise.resolve(null);
    // A destination that cannot prepare is asked to deliver as usual, which reports the failure.
    return { dataJson, dataBytes, metadata, firstRun, firstDelivery: firstDelivery.catch(() => null) };
  }

  /**
   * Filters and delivers one batch (prepared ahead when `prepared` is given), retrying per the
   * destination's policy (see retry.ts); throws StreamFailure when it gives up. Returns the size of the
   * batch's dataset JSON. Each attempt adds its metrics in one sample; the one that succeeds adds the
   * batch's latency, from `startedAt` (when its reading started) to its acknowledgement (or its skip).
   */
  private async deliver(
    parts: Parts,
    batch: DatasetBatchJson,
    isReorg: boolean,
    startedAt: number,
    prepared?: Promise<Prepared>,
  ): Promise<number> {
    const ready = prepared ? await prepared : this.prepare(parts, batch, isReorg);
    const inFlight: InFlight = { parts, batch, isReorg, startedAt, ready, counted: false };
    return withRetries(parts.retry, (attempt) => this.attempt(inFlight, attempt), {
      retrying: (failure: DeliveryFailure, attempt, uncounted) => {
        const line = retryLogLine(failure, attempt, uncounted, parts.retry);
        return this.logLine(line.level, line.message);
      },
      wait: (ms) => this.sleep(ms),
    });
  }

  /**
   * One attempt at a batch: runs the filter (the prepared first run on attempt 1) and delivers what it
   * returns, or records the skip; adds the attempt's metrics in one sample.
   */
  private async attempt(b: InFlight, attempt: number): Promise<AttemptResult<number, DeliveryFailure>> {
    this.check();
    const sample: MetricSample = attempt === 1 ? {} : { retries: 1 };
    const filtered = await this.runFilter(b, attempt, sample);
    if ("failure" in filtered) return this.failed(sample, filtered.failure);
    if (!b.counted) {
      b.counted = true;
      sample.blocks = b.batch.toBlock - b.batch.fromBlock + 1;
      sample.bytesTotal = b.ready.dataBytes;
    }
    if (filtered.payloadJson === null) return this.skipped(b, attempt, sample);
    return this.send(b, attempt, sample, filtered.payloadJson, filtered.payloadBytes);
  }

  /**
   * The attempt's filter run, when the stream has a filter: its console lines go to the stream's log, a
   * failure to the delivery history.
   */
  private async runFilter(b: InFlight, attempt: number, sample: MetricSample): Promise<FilterStep> {
    const { dataJson, dataBytes, metadata } = b.ready;
    const run =
      attempt === 1 ? b.ready.firstRun : (b.parts.filter?.run({ data: dataJson, dataBytes, metadata }) ?? null);
    if (!run) return { payloadJson: dataJson, payloadBytes: dataBytes };
    const outcome = await run;
    sample.filterMs = outcome.durationMs;
    const blocks = blocksOf(b.batch);
    for (const line of outcome.logs.slice(0, FILTER_LOG_LINES_KEPT))
      await this.logLine(line.level, `filter (blocks ${blocks}): ${line.message}`);
    if (outcome.ok)
      return { payloadJson: outcome.skipped ? null : outcome.resultJson, payloadBytes: outcome.sizeBytes };
    const { failure, crashes } = filterFailureOf(outcome, blocks, b.parts.sandboxCrashes);
    b.parts.sandboxCrashes = crashes;
    this.history.add(
      attemptRecord(b.batch, attempt, b.isReorg, {
        outcome: "FILTER_FAILED",
        httpStatus: null,
        answer: failure.message,
        latencyMs: outcome.durationMs,
        bytes: 0,
        payload: null,
      }),
    );
    return { failure };
  }

  private failed(sample: MetricSample, failure: DeliveryFailure): AttemptResult<number, DeliveryFailure> {
    sample.errors = 1;
    this.deps.metrics.add(this.row, sample);
    return { ok: false, failure };
  }

  /** The filter returned null: the batch is done with nothing sent. */
  private skipped(b: InFlight, attempt: number, sample: MetricSample): AttemptResult<number, DeliveryFailure> {
    sample.latencyMs = performance.now() - b.startedAt;
    this.deps.metrics.add(this.row, sample);
    this.history.add(
      attemptRecord(b.batch, attempt, b.isReorg, {
        outcome: "SKIPPED",
        httpStatus: null,
        answer: "The filter returned null: nothing was sent.",
        latencyMs: sample.filterMs ?? 0,
        bytes: 0,
        payload: null,
      }),
    );
    return { ok: true, value: b.ready.dataBytes };
  }

  /** Sends the payload (the delivery prepared ahead on attempt 1) and records the destination's answer. */
  private async send(
    b: InFlight,
    attempt: number,
    sample: MetricSample,
    payloadJson: string,
    payloadBytes: number,
  ): Promise<AttemptResult<number, DeliveryFailure>> {
    const { batch, isReorg } = b;
    sample.requests = 1;
    let sentAt = performance.now();
    let ack: DeliveryAck;
    try {
      // Inside the try: a first delivery prepared during the previous batch may have failed already, and
      // that failure is this batch's, to be recorded and retried (outside, it left the runner idle).
      const early = attempt === 1 ? await b.ready.firstDelivery : null;
      sentAt = performance.now();
      ack = await (early
        ? early.send()
        : b.parts.destination.deliver({ startBlock: batch.fromBlock, endBlock: batch.toBlock, payloadJson, isReorg }));
    } catch (e) {
      const latencyMs = performance.now() - sentAt;
      const { failure, httpStatus } = deliveryFailureOf(e, blocksOf(batch));
      const answer = (e as Error).message;
      this.history.add(
        attemptRecord(batch, attempt, isReorg, {
          outcome: "FAILED",
          httpStatus,
          answer,
          latencyMs,
          bytes: payloadBytes,
          payload: payloadJson,
        }),
      );
      return this.failed(sample, failure);
    }
    this.history.add(
      attemptRecord(batch, attempt, isReorg, {
        outcome: "DELIVERED",
        httpStatus: ack.status ?? null,
        answer: ack.detail,
        latencyMs: performance.now() - sentAt,
        bytes: payloadBytes,
        payload: payloadJson,
      }),
    );
    sample.delivered = 1;
    sample.latencyMs = performance.now() - b.startedAt;
    sample.bytesBillable = payloadBytes;
    sample.credits = this.row.product === "WEBHOOK" ? WEBHOOK_CREDITS_PER_DELIVERY : 0;
    this.deps.metrics.add(this.row, sample);
    return { ok: true, value: b.ready.dataBytes };
  }

  private async fail(failure: StreamFailure): Promise<void> {
    const row = this.row;
    const verb = failure.event === "FAIL_TERMINATE" ? "terminated" : "paused";
    await this.logLine("ERROR", `${row.product === "WEBHOOK" ? "Webhook" : "Stream"} ${verb}: ${failure.message}`);
    try {
      await this.deps.store.applyStreamEvent(this.deps.db, row.accountId, row.id, failure.event, {
        reason: failure.message,
      });
    } catch (e) {
      // The user paused or deleted it meanwhile: nothing more to do.
      this.deps.log.info({ streamId: row.id, err: e }, "stream state changed before the engine could record a failure");
      return;
    }
    if (row.notificationEmail && this.deps.mailer) {
      const what = row.product === "WEBHOOK" ? "webhook" : "stream";
      await this.deps.mailer
        .send({
          accountId: row.accountId,
          to: row.notificationEmail,
          subject: `Your ${what} "${row.name}" was ${verb}`,
          text: `Your ${what} "${row.name}" (${row.id}) on ${row.network} was ${verb}.\n\nReason: ${failure.message}\n\nFix the cause and activate it again; it resumes at the first block that was not delivered.`,
        })
        .catch((e) => this.deps.log.warn({ err: e, streamId: row.id }, "could not record the notification e-mail"));
    }
  }
}
