import { and, eq } from "drizzle-orm";
import type pg from "pg";
import type { DeliveryRecord } from "../../dataplane/engine/deliveries.ts";
import type { Acknowledgement, EngineStore, Heartbeat, LogLevel, StreamRow } from "../../dataplane/engine/store.ts";
import type { Db } from "../../platform/db/index.ts";
import { storableText } from "../../platform/text.ts";
import { DEFAULT_DELIVERY_HISTORY_DAYS } from "./deliveries.ts";
import { applyStreamEvent } from "./lifecycle.ts";
import { writeStreamLog } from "./logs.ts";
import { pruneDeliveries as pruneOldDeliveries } from "./store.ts";
import { streamBlockHashes, streamCheckpoints, streams } from "./tables.ts";

/**
 * The stream engine's queries (its EngineStore port). The engine works for every account, so these are
 * not scoped to one; each touches only the stream it was given (taken under a lease). Hot-path statements
 * are plain SQL on the pool: one round trip per acknowledged batch.
 */
export const engineStore: EngineStore = {
  activeStreamIds,
  takeLease,
  renewLease,
  releaseLease,
  loadStream,
  ensureCheckpoint,
  acknowledge,
  storedHash,
  writeLog,
  applyStreamEvent,
  recordDeliveries,
  pruneDeliveries: async (db) => {
    await pruneOldDeliveries(db, DEFAULT_DELIVERY_HISTORY_DAYS);
  },
};

/** How many delivered block hashes are kept per stream for finding a fork point. */
export const KEPT_HASHES = 256;

async function activeStreamIds(pool: pg.Pool, limit: number, reclaim: string | null): Promise<string[]> {
  const r = await pool.query<{ id: string }>(
    `select s.id from streams s left join stream_leases l on l.stream_id = s.id
     where s.status = 'ACTIVE' and (l.stream_id is null or l.expires_at < now() or starts_with(l.owner, $2))
     order by s.updated_at limit $1`,
    [limit, reclaim],
  );
  return r.rows.map((row) => row.id);
}

/** Takes (or keeps) the lease of a stream; true when this owner holds it now. */
async function takeLease(
  pool: pg.Pool,
  streamId: string,
  owner: string,
  ttlMs: number,
  reclaim: string | null,
): Promise<boolean> {
  const r = await pool.query(
    `insert into stream_leases as l (stream_id, owner, expires_at)
     select $1, $2, now() + make_interval(secs => $3::double precision / 1000) where exists (select 1 from streams where id = $1)
     on conflict (stream_id) do update set owner = excluded.owner, expires_at = excluded.expires_at
       where l.expires_at < now() or l.owner = excluded.owner or starts_with(l.owner, $4)
     returning owner`,
    [streamId, owner, ttlMs, reclaim],
  );
  return r.rowCount === 1;
}

/** Renews a held lease; null when the lease is no longer this owner's (the runner must stop). */
async function renewLease(pool: pg.Pool, streamId: string, owner: string, ttlMs: number): Promise<Heartbeat | null> {
  const r = await pool.query<Heartbeat>(
    `update stream_leases l set expires_at = now() + make_interval(secs => $3::double precision / 1000)
     from streams s where l.stream_id = $1 and l.owner = $2 and s.id = l.stream_id
     returning s.status, s.sequence`,
    [streamId, owner, ttlMs],
  );
  return r.rows[0] ?? null;
}

async function releaseLease(pool: pg.Pool, streamId: string, owner: string): Promise<void> {
  await pool.query("delete from stream_leases where stream_id = $1 and owner = $2", [streamId, owner]);
}

async function loadStream(db: Db, streamId: string): Promise<StreamRow | undefined> {
  const [row] = await db.select().from(streams).where(eq(streams.id, streamId));
  return row;
}

/** The checkpoint, created at the stream's start (the tip, for start range -1) when there is none. */
async function ensureCheckpoint(db: Db, row: StreamRow, tip: () => Promise<number>): Promise<number> {
  const [found] = await db.select().from(streamCheckpoints).where(eq(streamCheckpoints.streamId, row.id));
  if (found) return found.nextBlock;
  const start = row.startRange < 0 ? await tip() : row.startRange;
  await db.insert(streamCheckpoints).values({ streamId: row.id, nextBlock: start }).onConflictDoNothing();
  const [now] = await db.select().from(streamCheckpoints).where(eq(streamCheckpoints.streamId, row.id));
  return now.nextBlock;
}

/** Stored hashes are pruned to the last {@link KEPT_HASHES} when a batch crosses a multiple of this. */
const PRUNE_EVERY_BLOCKS = 64;

const ACK_CHECKPOINT = `lease as (
       select stream_id from stream_leases where stream_id = $1 and owner = $2
     ), cp as (
       update stream_checkpoints set next_block = $4 + 1, updated_at = now()
       where stream_id in (select stream_id from lease) and next_block >= $3 returning stream_id
     )`;
/** The same checkpoint move as one UPDATE, for a batch without hashes: no CTE, no rows back. */
const ACK_WITHOUT_HASHES = `update stream_checkpoints set next_block = $4 + 1, updated_at = now()
     where stream_id = $1 and next_block >= $3
       and exists (select 1 from stream_leases where stream_id = $1 and owner = $2)`;

/**
 * Moves the checkpoint past an acknowledged batch and stores its block hashes, in one statement (one
 * transaction), only while `owner` holds the lease as the statement sees it, and only when the
 * checkpoint is not before the batch's first block (a batch after a gap is never recorded; a reorg
 * re-delivery starts before it). The lease row is not locked: a takeover that commits while the
 * statement runs lets this one batch's record land after it, and since a record only ever moves the
 * checkpoint to the end of a delivered batch that starts at or before it, the worst it does is make the
 * new owner send that batch again, which at-least-once delivery allows. Locking it for share wrote the
 * lease row (and its WAL) on every batch: 2-5% of the engine's rate on empty blocks. The lease is
 * renewed by the runner's heartbeat, not here: each acknowledgement writes as little as it can, and a
 * batch without hashes (the stream does not fix reorgs) runs a single UPDATE without the hash parts,
 * which cost a fifth of the engine's rate on empty blocks even with nothing to store (the CTE form of
 * the same move cost PostgreSQL a third more per batch than the UPDATE). Nor does it read the stream's
 * status back: returning a row cost the engine a sixth of its rate; a change of the stream reaches its
 * runner through the streams_changed notification and the heartbeat instead.
 * Returns whether the batch was recorded; false when not (lease lost, or a checkpoint moved under the
 * runner): the runner must stop. Named (prepared) statements: each pooled connection parses and plans
 * them once.
 */
async function acknowledge(pool: pg.Pool, ack: Acknowledgement): Promise<boolean> {
  const checkpointArgs = [ack.streamId, ack.owner, ack.startBlock, ack.endBlock];
  const r = await pool.query(
    ack.hashes.length === 0
      ? { name: "stream-acknowledge", text: ACK_WITHOUT_HASHES, values: checkpointArgs }
      : {
          name: "stream-acknowledge-with-hashes",
          text: `with ${ACK_CHECKPOINT}, h as (
             insert into stream_block_hashes (stream_id, block_number, hash)
             select cp.stream_id, n, hh from cp, unnest($5::bigint[], $6::text[]) as x(n, hh)
             on conflict (stream_id, block_number) do update set hash = excluded.hash returning 1
           ), pruned as (
             delete from stream_block_hashes
             where stream_id in (select stream_id from cp) and block_number < $4 - ${KEPT_HASHES}
               and $4::bigint / ${PRUNE_EVERY_BLOCKS} <> ($3::bigint - 1) / ${PRUNE_EVERY_BLOCKS}
             returning 1
           ) select 1 from cp`,
          values: [...checkpointArgs, ack.hashes.map((h) => h.number), ack.hashes.map((h) => h.hash)],
        },
  );
  return r.rowCount === 1;
}

/** Blocks above the fork point are delivered again: their stored hashes no longer hold. */
async function storedHash(db: Db, streamId: string, blockNumber: number): Promise<string | undefined> {
  const [row] = await db
    .select({ hash: streamBlockHashes.hash })
    .from(streamBlockHashes)
    .where(and(eq(streamBlockHashes.streamId, streamId), eq(streamBlockHashes.blockNumber, blockNumber)));
  return row?.hash;
}

function writeLog(db: Db, row: StreamRow, level: LogLevel, message: string): Promise<void> {
  return writeStreamLog(db, row.accountId, row.id, level, message);
}

/**
 * Writes delivery attempts in one statement: each column as one array parameter (a statement of
 * thousands of rows keeps 14 parameters). A stream deleted meanwhile loses its rows with it; the
 * rest get their ids in the order they were recorded (the history pages by id).
 */
async function recordDeliveries(pool: pg.Pool, rows: DeliveryRecord[]): Promise<void> {
  await pool.query({
    name: "stream-record-deliveries",
    text: `insert into stream_deliveries (account_id, stream_id, created_at, start_block, end_block, batches, attempt,
         outcome, http_status, answer, latency_ms, bytes, preview, is_reorg)
       select x.account_id, x.stream_id, x.created_at, x.start_block, x.end_block, x.batches, x.attempt, x.outcome,
         x.http_status, x.answer, x.latency_ms, x.bytes, x.preview, x.is_reorg
       from unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::bigint[], $5::bigint[], $6::int[], $7::int[],
         $8::text[], $9::int[], $10::text[], $11::float8[], $12::bigint[], $13::text[], $14::bool[])
         with ordinality as x(account_id, stream_id, created_at, start_block, end_block, batches, attempt, outcome,
           http_status, answer, latency_ms, bytes, preview, is_reorg, position)
       where exists (select 1 from streams where id = x.stream_id)
       order by x.position`,
    values: [
      rows.map((r) => r.accountId),
      rows.map((r) => r.streamId),
      rows.map((r) => r.at),
      rows.map((r) => r.startBlock),
      rows.map((r) => r.endBlock),
      rows.map((r) => r.batches),
      rows.map((r) => r.attempt),
      rows.map((r) => r.outcome),
      rows.map((r) => r.httpStatus),
      rows.map((r) => storableText(r.answer)),
      rows.map((r) => r.latencyMs),
      rows.map((r) => r.bytes),
      rows.map((r) => r.preview),
      rows.map((r) => r.isReorg),
    ],
  });
}
