import type pg from "pg";
import type { Db } from "../../platform/db/index.ts";
import type { DeliveryRecord } from "./deliveries.ts";

/**
 * The engine store: the port through which the stream engine reads streams and records its progress
 * (the streams domain fills it: server/domains/streams/engine-store.ts). The engine owns the
 * connections: queries on the hot path run on the pool it passes (its acknowledgement pool), the rest
 * on its database handle.
 */
export interface EngineStore {
  /** Active streams whose lease is free or expired, oldest change first. */
  activeStreamIds(pool: pg.Pool, limit: number, reclaim: string | null): Promise<string[]>;
  /**
   * Takes (or keeps) the lease of a stream; true when this owner holds it now. `reclaim`: an owner id
   * prefix whose leases are taken at once, unexpired (a dead predecessor's, see StreamEngineDeps).
   */
  takeLease(pool: pg.Pool, streamId: string, owner: string, ttlMs: number, reclaim: string | null): Promise<boolean>;
  /** Renews a held lease; null when the lease is no longer this owner's (the runner must stop). */
  renewLease(pool: pg.Pool, streamId: string, owner: string, ttlMs: number): Promise<Heartbeat | null>;
  releaseLease(pool: pg.Pool, streamId: string, owner: string): Promise<void>;
  loadStream(db: Db, streamId: string): Promise<StreamRow | undefined>;
  /** The checkpoint, created at the stream's start (the tip, for start range -1) when there is none. */
  ensureCheckpoint(db: Db, row: StreamRow, tip: () => Promise<number>): Promise<number>;
  /**
   * Moves the checkpoint past an acknowledged batch (and stores its hashes) only while `owner` holds the
   * lease and the checkpoint is not past the batch's first block; false when not recorded (the runner must stop).
   */
  acknowledge(pool: pg.Pool, ack: Acknowledgement): Promise<boolean>;
  /** The stored hash of a delivered block, for finding a fork point. */
  storedHash(db: Db, streamId: string, blockNumber: number): Promise<string | undefined>;
  writeLog(db: Db, row: StreamRow, level: LogLevel, message: string): Promise<void>;
  /** Adds attempts to the streams' delivery history (one statement; see deliveries.ts). */
  recordDeliveries(pool: pg.Pool, rows: DeliveryRecord[]): Promise<void>;
  /** Removes delivery history older than each account's plan keeps it. */
  pruneDeliveries(db: Db): Promise<void>;
  /** Moves the stream's status by the streams domain's lifecycle; throws when the stream no longer allows it. */
  applyStreamEvent(
    db: Db,
    accountId: string,
    streamId: string,
    event: EngineStreamEvent,
    options: { reason: string },
  ): Promise<unknown>;
}

/** What the engine does to a stream: completes it at its end range, or pauses or terminates it on failure. */
export type EngineStreamEvent = "COMPLETE" | "FAIL_PAUSE" | "FAIL_TERMINATE";

/** A stream or webhook as the engine runs it. */
export interface StreamRow {
  id: string;
  accountId: string;
  product: string;
  name: string;
  status: string;
  network: string;
  dataset: string;
  datasetBatchSize: number;
  elasticBatchEnabled: boolean;
  includeStreamMetadata: string;
  destination: string;
  destinationAttributes: Record<string, unknown>;
  destinationSecrets: string | null;
  /** The first block; -1 means the chain tip at the first activation. */
  startRange: number;
  /** The last block (inclusive); null: runs on forever. */
  endRange: number | null;
  filterFunction: string | null;
  filterVersion: string;
  fixBlockReorgs: boolean;
  keepDistanceFromTip: number;
  notificationEmail: string | null;
  /** Bumped on every change of configuration. */
  sequence: number;
}

export interface Heartbeat {
  status: string;
  sequence: number;
}

export interface Acknowledgement {
  streamId: string;
  owner: string;
  startBlock: number;
  endBlock: number;
  /** Hashes of the batch's blocks (when the stream fixes reorgs). */
  hashes: { number: number; hash: string }[];
}

export type LogLevel = "INFO" | "WARNING" | "ERROR";
