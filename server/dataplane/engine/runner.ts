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
import {
  createDestination,
  type Destination,
  type DestinationDeps,
  DestinationError,
  type MetadataMode,
} from "../destinations/index.ts";
import type { DeliveryAck, PreparedDelivery } from "../destinations/types.ts";
import { createFilter, type Filter } from "../sandbox/filter.ts";
import type { FilterHelpers, FilterMetadata, FilterOutcome, FilterVersion } from "../sandbox/types.ts";
import { destinationAttributesOf, retryPolicy } from "./config.ts";
import type { DeliveryHistory, StreamDeliveryLog } from "./deliveries.ts";
import { type MetricSample, type MetricsBuffer, WEBHOOK_CREDITS_PER_DELIVERY } from "./metrics.ts";
import {
  type BatchSettings,
  batchesPerSpan,
  batchSizeOf,
  lastDeliverable,
  needsNewerTip,
  planBatch,
  planSpan,
} from "./planning.ts";
import { AckRecorder, MAX_UNRECORDED_BATCHES } from "./recorder.ts";
import { type AttemptFailure, type AttemptResult, type RetryPolicy, StreamFailure, withRetries } from "./retry.ts";
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

/**
 * A filter that made its sandbox be replaced this often pauses its stream at once, whatever retries are
 * left: each time, every other filter running beside it was failed too (they retry without counting it).
 */
const MAX_SANDBOX_CRASHES = 2;

/** A batch's dataset JSON, its filter metadata, and the first run of the filter on it. */
interface Filtered {
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
interface Prepared extends Filtered {
  firstDelivery: Promise<PreparedDelivery | null>;
}

/**
 * A batch read ahead; its filter run started when it is among the next FILTER_RUNS_AHEAD batches, and
 * once the batch before it is being delivered, prepared (see the loop).
 */
interface AheadBatch {
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
const FILTER_RUNS_AHEAD = 8;

class Stop extends Error {}

/** Why one attempt at delivering a batch failed: its filter run, or the delivery itself. */
interface DeliveryFailure extends AttemptFailure {
  stage: "filter" | "delivery";
}

const hex = (n: number) => `0x${n.toString(16)}`;

/**
 * Settles in the event loop's next check phase (setImmediate), after the microtasks now queued: work
 * deferred to it runs after a delivery those microtasks are about to send, not before it.
 */
const afterSends = () => new Promise<void>((resolve) => setImmediate(resolve));
const FILTER_LOG_LINES_KEPT = 10;
/**
 * While heads are pushed, a runner at the tip still asks the node for its tip this often: a push lost
 * without the connection dropping delays the stream by at most this much.
 */
export const PUSHED_TIP_CHECK_MS = 30_000;

function sliceBatch(whole: DatasetBatchJson, from: number, to: number): DatasetBatchJson {
  if (whole.fromBlock === from && whole.toBlock === to) return whole;
  return {
    ...whole,
    fromBlock: from,
    toBlock: to,
    itemsJson: whole.itemsJson.slice(from - whole.fromBlock, to - whole.fromBlock + 1),
  };
}

/**
 * Runs one stream under a lease: read a batch, check it continues the delivered chain (reorgs), run
 * the filter, deliver, and on acknowledgement record it and move the checkpoint in one statement.
 *
 * Which blocks each batch and read-ahead span covers is planned in planning.ts; how a failed batch is
 * retried, in retry.ts.
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
 * are written, see RECORD_INTERVAL_MS; otherwise those acknowledged in the last millisecond or two).
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
    try {
      parts = await this.setup();
      await this.loop(parts);
    } catch (e) {
      if (e instanceof StreamFailure) await this.fail(e);
      else throw e;
    } finally {
      await this.dispose(parts);
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

  private async loop(initial: Parts): Promise<void> {
    let parts = initial;
    const { db } = this.deps;
    let next = await this.deps.store.ensureCheckpoint(db, this.row, () => parts.reader.latestBlock());
    let reorgUntil = -1;
    let tip = -1;
    let ahead: AheadBatch[] = [];
    const recorder = new AckRecorder((record) => this.record(record));
    /** The last block delivered by this runner (for the reorg check while its record is in flight). */
    let lastDelivered: { number: number; hash: string } | null = null;
    /** Dataset bytes per block in the last batch: sizes the read-ahead spans (nothing known yet: one batch). */
    let bytesPerBlock = Number.POSITIVE_INFINITY;

    try {
      while (true) {
        this.check();
        if (this.reloadWanted) {
          this.reloadWanted = false;
          await recorder.settled();
          const fresh = await this.deps.store.loadStream(db, this.streamId);
          if (fresh?.status !== "ACTIVE") return;
          this.row = fresh;
          await this.dispose(parts);
          parts = await this.setup();
          ahead = [];
        }
        const row = this.row;
        const settings: BatchSettings = {
          batchSize: row.datasetBatchSize,
          elastic: row.elasticBatchEnabled,
          keepDistanceFromTip: row.keepDistanceFromTip,
          endRange: row.endRange,
        };
        if (needsNewerTip(settings, next, tip)) {
          const pushed = this.askNodeForTip ? null : this.headWatch.head();
          if (pushed !== null) tip = pushed;
          else {
            try {
              tip = await parts.reader.latestBlock();
            } catch (e) {
              await this.readFailed(e);
              continue;
            }
          }
        }
        const plan = planBatch(settings, { next, tip, reorgUntil });
        if (plan.kind === "complete") {
          await recorder.settled();
          await this.deps.store.applyStreamEvent(db, row.accountId, row.id, "COMPLETE", {
            reason: `delivered every block up to ${row.endRange}`,
          });
          await this.logLine(
            "INFO",
            `Stream completed: every block up to its end range ${row.endRange} was delivered.`,
          );
          return;
        }
        if (plan.kind === "wait") {
          this.askNodeForTip = !(await this.waitAtTip(tip));
          continue;
        }
        const { to, isReorg } = plan;

        const startedAt = performance.now();
        let batch: DatasetBatchJson;
        let prepared: Promise<Prepared> | undefined;
        const head = ahead[0];
        try {
          if (head && head.from === next && head.to === to) {
            ahead.shift();
            batch = await head.read;
            prepared = head.prepared;
          } else {
            ahead = [];
            batch = await parts.reader.fetchBatchJson(row.dataset as EvmDataset, next, to);
          }
        } catch (e) {
          ahead = [];
          // Spans were sized by an estimate the failed read may have outgrown: read one batch next.
          bytesPerBlock = Number.POSITIVE_INFINITY;
          await this.readFailed(e);
          continue;
        }

        let hashes: BlockHeader[] = [];
        if (row.fixBlockReorgs) {
          try {
            hashes = await this.headersOf(parts, batch);
          } catch (e) {
            ahead = [];
            await this.readFailed(e);
            continue;
          }
          const first = hashes[0];
          const continues =
            lastDelivered !== null && lastDelivered.number === next - 1 && lastDelivered.hash === first.parentHash;
          if (!continues) {
            // The stored hashes are read only once every delivered batch is recorded.
            await recorder.settled();
            const fork = await this.forkPoint(parts, next, first);
            if (fork !== null) {
              reorgUntil = Math.max(reorgUntil, next - 1);
              await this.logLine(
                "WARNING",
                `Chain reorganisation: block ${next} does not continue the delivered chain; blocks ${fork + 1}–${next - 1} are delivered again, marked as reorged.`,
              );
              next = fork + 1;
              ahead = [];
              lastDelivered = null;
              continue;
            }
          }
        }

        // Read the following batches while this one is filtered and delivered: whenever no more than
        // one span's batches are left, the next span is read in one request and cut into batches.
        const span = batchesPerSpan(batchSizeOf(settings), bytesPerBlock);
        const last = lastDeliverable(settings, tip);
        while (ahead.length <= span) {
          const spanFrom = ahead.length > 0 ? ahead[ahead.length - 1].to + 1 : to + 1;
          const planned = planSpan(settings, { from: spanFrom, last, reorgUntil, count: span });
          if (planned.length === 0) break;
          const read = parts.reader.fetchBatchJson(row.dataset as EvmDataset, spanFrom, planned[planned.length - 1].to);
          for (const b of planned) {
            const part = read.then((whole) => sliceBatch(whole, b.from, b.to));
            part.catch(() => undefined);
            ahead.push({ ...b, read: part });
          }
        }

        const delivering = this.deliver(parts, batch, isReorg, startedAt, prepared);
        // The next batch is prepared while this one's POST is in flight: from the event loop's check
        // phase, after this turn's microtasks have sent the POST. Its filter run is queued after this
        // batch's (a filter runs one call at a time, in order), and is done when its turn comes.
        const following = ahead[0];
        if (following && !following.prepared && following.from === to + 1) {
          following.prepared = afterSends()
            .then(() => Promise.all([following.read, following.filtered]))
            .then(([b, filtered]) => this.prepare(parts, b, following.from <= reorgUntil, filtered));
          // A failed read is met again when the batch's turn comes.
          following.prepared.catch(() => undefined);
          if (parts.filter) {
            // Each run is started once the one before it is: a filter sees its batches in order.
            let previous: Promise<unknown> = following.prepared;
            let previousTo = following.to;
            for (const b of ahead.slice(1, FILTER_RUNS_AHEAD)) {
              if (b.prepared || b.from !== previousTo + 1) break;
              previousTo = b.to;
              const after = previous;
              b.filtered ??= after
                .catch(() => undefined)
                .then(() => b.read)
                .then((batch) => this.filterRun(parts, batch, b.from <= reorgUntil));
              b.filtered.catch(() => undefined);
              previous = b.filtered;
            }
          }
        }
        bytesPerBlock = (await delivering) / (to - next + 1);
        recorder.add({
          streamId: row.id,
          owner: this.deps.owner,
          startBlock: next,
          endBlock: to,
          hashes: hashes.map((h) => ({ number: h.number, hash: h.hash })),
        });
        await recorder.below(MAX_UNRECORDED_BATCHES);
        lastDelivered = hashes.length > 0 ? hashes[hashes.length - 1] : null;
        next = to + 1;
      }
    } finally {
      // Stopping or failing: the batch already delivered is still recorded (errors are the caller's
      // business only when the loop itself succeeded).
      await recorder.settled().catch(() => undefined);
    }
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
    const row = this.row;
    const dataJson = `[${batch.itemsJson.join(",")}]`;
    const metadata: FilterMetadata = {
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
          const payloadJson = outcome === null ? dataJson : outcome.ok && !outcome.skipped ? outcome.resultJson : null;
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
    const { maxRetry, retryIntervalMs } = parts.retry;
    const state = { counted: false };
    return withRetries(
      parts.retry,
      (attempt) => this.attempt(parts, batch, isReorg, startedAt, ready, attempt, state),
      {
        retrying: (failure: DeliveryFailure, attempt, uncounted) =>
          uncounted
            ? this.logLine(
                "WARNING",
                `${failure.message}; not this stream's doing: retrying without counting it as an attempt.`,
              )
            : failure.stage === "filter"
              ? this.logLine("ERROR", `${failure.message}; retrying (attempt ${attempt} of ${maxRetry + 1}).`)
              : this.logLine(
                  "WARNING",
                  `${failure.message}; retrying in ${retryIntervalMs / 1000} s (attempt ${attempt} of ${maxRetry + 1}).`,
                ),
        wait: (ms) => this.sleep(ms),
      },
    );
  }

  /**
   * One attempt at a batch: runs the filter (the prepared first run on attempt 1) and delivers what it
   * returns, adding the attempt's metrics. `state.counted` says the batch's blocks and bytes were
   * already counted by an earlier attempt.
   */
  private async attempt(
    parts: Parts,
    batch: DatasetBatchJson,
    isReorg: boolean,
    startedAt: number,
    ready: Prepared,
    attempt: number,
    state: { counted: boolean },
  ): Promise<AttemptResult<number, DeliveryFailure>> {
    this.check();
    const row = this.row;
    const { dataJson, dataBytes, metadata } = ready;
    const blocks = `${batch.fromBlock}–${batch.toBlock}`;
    const sample: MetricSample = attempt === 1 ? {} : { retries: 1 };
    const failed = (failure: DeliveryFailure): AttemptResult<number, DeliveryFailure> => {
      sample.errors = 1;
      this.deps.metrics.add(row, sample);
      return { ok: false, failure };
    };
    let payloadJson: string | null = dataJson;
    let payloadBytes = dataBytes;
    const run = attempt === 1 ? ready.firstRun : (parts.filter?.run({ data: dataJson, dataBytes, metadata }) ?? null);
    if (run) {
      const outcome = await run;
      sample.filterMs = outcome.durationMs;
      for (const line of outcome.logs.slice(0, FILTER_LOG_LINES_KEPT))
        await this.logLine(line.level, `filter (blocks ${blocks}): ${line.message}`);
      if (!outcome.ok) {
        const syntax = outcome.error.kind === "SYNTAX";
        if (outcome.sandboxLost === "culprit") parts.sandboxCrashes++;
        const crashedOut = outcome.sandboxLost === "culprit" && parts.sandboxCrashes >= MAX_SANDBOX_CRASHES;
        const message = `filter failed on blocks ${blocks}: ${outcome.error.kind} ${outcome.error.message}${outcome.error.line ? ` (line ${outcome.error.line})` : ""}${crashedOut ? `; it made the sandbox restart ${parts.sandboxCrashes} times, so the stream is paused` : ""}`;
        this.history.add({
          startBlock: batch.fromBlock,
          endBlock: batch.toBlock,
          attempt,
          outcome: "FILTER_FAILED",
          httpStatus: null,
          answer: message,
          latencyMs: outcome.durationMs,
          bytes: 0,
          payload: null,
          isReorg,
        });
        return failed({
          stage: "filter",
          message,
          terminal: syntax,
          final: syntax || crashedOut,
          uncounted: outcome.sandboxLost === "bystander",
        });
      }
      payloadJson = outcome.skipped ? null : outcome.resultJson;
      payloadBytes = outcome.sizeBytes;
    }
    if (!state.counted) {
      state.counted = true;
      sample.blocks = batch.toBlock - batch.fromBlock + 1;
      sample.bytesTotal = dataBytes;
    }
    if (payloadJson === null) {
      sample.latencyMs = performance.now() - startedAt;
      this.deps.metrics.add(row, sample);
      this.history.add({
        startBlock: batch.fromBlock,
        endBlock: batch.toBlock,
        attempt,
        outcome: "SKIPPED",
        httpStatus: null,
        answer: "The filter returned null: nothing was sent.",
        latencyMs: sample.filterMs ?? 0,
        bytes: 0,
        payload: null,
        isReorg,
      });
      return { ok: true, value: dataBytes };
    }
    sample.requests = 1;
    let sentAt = performance.now();
    let ack: DeliveryAck;
    try {
      // Inside the try: a first delivery prepared during the previous batch may have failed already, and
      // that failure is this batch's, to be recorded and retried (outside, it left the runner idle).
      const early = attempt === 1 ? await ready.firstDelivery : null;
      sentAt = performance.now();
      ack = await (early
        ? early.send()
        : parts.destination.deliver({ startBlock: batch.fromBlock, endBlock: batch.toBlock, payloadJson, isReorg }));
    } catch (e) {
      // A destination that refuses the batch for good terminates the stream once the retries are spent.
      const retryable = !(e instanceof DestinationError) || e.retryable;
      this.history.add({
        startBlock: batch.fromBlock,
        endBlock: batch.toBlock,
        attempt,
        outcome: "FAILED",
        httpStatus: e instanceof DestinationError ? (e.status ?? null) : null,
        answer: (e as Error).message,
        latencyMs: performance.now() - sentAt,
        bytes: payloadBytes,
        payload: payloadJson,
        isReorg,
      });
      return failed({
        stage: "delivery",
        message: `delivery of blocks ${blocks} failed: ${(e as Error).message}`,
        terminal: !retryable,
        final: false,
        uncounted: e instanceof DestinationError && e.uncounted,
      });
    }
    this.history.add({
      startBlock: batch.fromBlock,
      endBlock: batch.toBlock,
      attempt,
      outcome: "DELIVERED",
      httpStatus: ack.status ?? null,
      answer: ack.detail,
      latencyMs: performance.now() - sentAt,
      bytes: payloadBytes,
      payload: payloadJson,
      isReorg,
    });
    sample.delivered = 1;
    sample.latencyMs = performance.now() - startedAt;
    sample.bytesBillable = payloadBytes;
    sample.credits = row.product === "WEBHOOK" ? WEBHOOK_CREDITS_PER_DELIVERY : 0;
    this.deps.metrics.add(row, sample);
    return { ok: true, value: dataBytes };
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
