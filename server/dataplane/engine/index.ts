import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import pg from "pg";
import type { Logger } from "pino";
import type { Db } from "../../platform/db/index.ts";
import { listenWithReconnect } from "../../platform/db/listen.ts";
import type { Mailer } from "../../platform/mail.ts";
import { secretBox } from "../../platform/secrets.ts";
import { NewHeads } from "../chain/heads.ts";
import type { UpstreamMap } from "../chain/nodes.ts";
import type { DestinationDeps } from "../destinations/index.ts";
import type { FilterHelpers } from "../sandbox/types.ts";
import { DeliveryHistory } from "./deliveries.ts";
import { MetricsBuffer } from "./metrics.ts";
import { type RunnerDeps, StreamRunner } from "./runner.ts";
import type { EngineStore } from "./store.ts";
import type { SandboxSuspects } from "./suspects.ts";

export interface StreamEngineDeps {
  db: Db;
  /** The streams' queries (the streams domain's engineStore). */
  store: EngineStore;
  log: Logger;
  /** The data directory holds the key that opens destination secrets. */
  config: { dataDir: string };
  /** Where each network's blocks are read from (the chain node manager). */
  upstreams: UpstreamMap;
  /** Notification e-mail; without it failures are only logged on the stream. */
  mailer?: Mailer | null;
  /** What destinations call into: the functions runtime (FUNCTION destinations run the account's functions). */
  destinationDeps: DestinationDeps;
  /** The key-value store seam for filters, per account. */
  filterHelpers?: (accountId: string) => FilterHelpers | undefined;
  /** See RunnerDeps.sandboxSuspects. */
  sandboxSuspects?: Pick<SandboxSuspects, "of">;
  /** Unique per process; default host:pid:random. */
  ownerId?: string;
  /**
   * An owner id prefix of this engine's dead predecessors (ownerId starts with it too): their leases are
   * taken at once instead of after their TTL. Only for a supervisor that starts one engine at a time and
   * the next only once the last has exited (the service's engine child, see server/engine.ts).
   */
  reclaimPrefix?: string;
  /** How long a lease holds without renewal (a killed process's streams move after this). Default 15 s. */
  leaseTtlMs?: number;
  /** How often the engine looks for active streams without a running owner. Default 1 s. */
  pollMs?: number;
  /**
   * How often a runner at the tip asks the node for a new block when the node does not push new heads
   * (no WebSocket URL, or its subscription is down). Default 1 s.
   */
  tipPollMs?: number;
  /** Streams one process runs at once. Default 200. */
  maxStreams?: number;
  /** Metrics flush interval. Default 5 s. */
  metricsFlushMs?: number;
  /** Delivery history flush interval. Default 1 s (0: only on flushMetrics and stop). */
  deliveriesFlushMs?: number;
}

export interface StreamEngine {
  readonly ownerId: string;
  /** Ids of the streams this process runs now. */
  running(): string[];
  /** Looks for streams to take now instead of at the next poll (after an activation). */
  wake(): void;
  /** Flushes buffered metrics and delivery history now (tests, shutdown). */
  flushMetrics(): Promise<void>;
  /** Stops every runner (in-flight deliveries finish; unacknowledged batches are sent again by the next owner). */
  stop(): Promise<void>;
}

/** What the streams_changed trigger notifies, with the stream's id. */
export const STREAM_CHANGED_CHANNEL = "nodeplane_stream_changed";

/**
 * The stream and webhook delivery engine. Every stream runs in its own runner (an async task), so a
 * slow destination or a waiting retry holds up only its own stream; a lease row in PostgreSQL makes
 * sure only one process runs a given stream even when several run the engine.
 */
export function startStreamEngine(deps: StreamEngineDeps): StreamEngine {
  const ownerId = deps.ownerId ?? `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const leaseTtlMs = deps.leaseTtlMs ?? 15_000;
  const reclaim = deps.reclaimPrefix ?? null;
  if (reclaim !== null && !ownerId.startsWith(reclaim))
    throw new Error("the engine's owner id must start with reclaimPrefix");
  const pollMs = deps.pollMs ?? 1000;
  const maxStreams = deps.maxStreams ?? 200;
  const tipPollMs = deps.tipPollMs ?? 1000;
  const log = deps.log.child({ component: "stream-engine", owner: ownerId });
  const metrics = new MetricsBuffer(
    deps.db.$client,
    (e) => log.warn({ err: e }, "stream metrics flush failed"),
    deps.metricsFlushMs ?? 5000,
  );
  const deliveries = new DeliveryHistory(
    {
      recordDeliveries: (rows) => deps.store.recordDeliveries(deps.db.$client, rows),
      pruneDeliveries: () => deps.store.pruneDeliveries(deps.db),
    },
    (e) => log.warn({ err: e }, "delivery history write failed"),
    deps.deliveriesFlushMs,
  );
  const runners = new Map<string, StreamRunner>();
  // One newHeads subscription per network, shared by the runners of its streams.
  const heads = new NewHeads({ upstreams: deps.upstreams, log, pollMs: tipPollMs });
  const box = secretBox(deps.config);
  // Acknowledgements and lease renewals go through connections that do not wait for the WAL flush: a
  // database crash can lose the last few checkpoint moves, which only re-sends those batches (still at
  // least once, no gap), or a renewal, which only ends a lease sooner; a killed engine process loses
  // nothing. It makes each batch cost a round trip, not an fsync.
  const ackPool = new pg.Pool({ ...deps.db.$client.options, max: 4, options: "-c synchronous_commit=off" });
  ackPool.on("error", () => {});
  // One object for every runner: made per runner, its hidden class was made again with each stream
  // and the engine's optimised code that had seen the previous one was thrown away (decision 1995).
  const runnerDeps: RunnerDeps = {
    db: deps.db,
    store: deps.store,
    owner: ownerId,
    leaseTtlMs,
    tipPollMs,
    heads,
    upstreams: deps.upstreams,
    box,
    mailer: deps.mailer ?? null,
    metrics,
    deliveries,
    ackPool,
    destinationDeps: deps.destinationDeps,
    filterHelpers: deps.filterHelpers,
    sandboxSuspects: deps.sandboxSuspects,
    log,
  };
  let stopping = false;
  let ticking: Promise<void> | null = null;

  const tick = async () => {
    if (stopping || runners.size >= maxStreams) return;
    const ids = await deps.store.activeStreamIds(deps.db.$client, maxStreams, reclaim);
    for (const id of ids) {
      if (stopping || runners.size >= maxStreams) break;
      if (runners.has(id)) continue;
      if (!(await deps.store.takeLease(deps.db.$client, id, ownerId, leaseTtlMs, reclaim))) continue;
      const runner = new StreamRunner(runnerDeps, id);
      runners.set(id, runner);
      void runner.done.finally(() => runners.delete(id));
    }
  };
  const wake = () => {
    if (ticking) return;
    ticking = tick()
      .catch((e) => log.warn({ err: e }, "stream engine poll failed"))
      .finally(() => {
        ticking = null;
      });
  };
  const timer = setInterval(wake, pollMs);
  wake();
  // A stream paused, changed or deleted through any process reaches its runner at once (migration
  // 0006's trigger notifies); after a lost connection every runner checks, as notices may be missed.
  const changes = listenWithReconnect(deps.db.$client, STREAM_CHANGED_CHANNEL, {
    name: "stream changes",
    log: (message, error) => log.warn({ err: error }, message),
    onNotification: (streamId) => runners.get(streamId)?.refresh(),
    onReconnect: () => {
      for (const runner of runners.values()) runner.refresh();
    },
  });
  return {
    ownerId,
    running: () => [...runners.keys()],
    wake,
    flushMetrics: async () => {
      await Promise.all([metrics.flush(), deliveries.flush()]);
    },
    async stop() {
      stopping = true;
      clearInterval(timer);
      await (await changes).close();
      await ticking;
      for (const r of runners.values()) r.stop();
      await Promise.all([...runners.values()].map((r) => r.done));
      heads.close();
      await metrics.stop();
      await deliveries.stop();
      await ackPool.end();
    },
  };
}
