import { and, eq } from "drizzle-orm";
import type pg from "pg";
import { streamBlockHashes, streamCheckpoints, streamLogs, streams } from "../../domains/streams/tables.ts";
import type { Db } from "../../platform/db/index.ts";

/**
 * The engine's queries. The engine works for every account, so these are not scoped to one; each
 * touches only the stream it was given (taken under a lease). Hot-path statements are plain SQL on
 * the pool: one round trip per acknowledged batch.
 */
export type StreamRow = typeof streams.$inferSelect;

/** How many delivered block hashes are kept per stream for finding a fork point. */
export const KEPT_HASHES = 256;

export async function activeStreamIds(pool: pg.Pool, limit: number): Promise<string[]> {
  const r = await pool.query<{ id: string }>(
    `select s.id from streams s left join stream_leases l on l.stream_id = s.id
     where s.status = 'ACTIVE' and (l.stream_id is null or l.expires_at < now())
     order by s.updated_at limit $1`,
    [limit],
  );
  return r.rows.map((row) => row.id);
}

/** Takes (or keeps) the lease of a stream; true when this owner holds it now. */
export async function takeLease(pool: pg.Pool, streamId: string, owner: string, ttlMs: number): Promise<boolean> {
  const r = await pool.query(
    `insert into stream_leases as l (stream_id, owner, expires_at)
     select $1, $2, now() + make_interval(secs => $3::double precision / 1000) where exists (select 1 from streams where id = $1)
     on conflict (stream_id) do update set owner = excluded.owner, expires_at = excluded.expires_at
       where l.expires_at < now() or l.owner = excluded.owner
     returning owner`,
    [streamId, owner, ttlMs],
  );
  return r.rowCount === 1;
}

export interface Heartbeat {
  status: string;
  sequence: number;
}

/** Renews a held lease; null when the lease is no longer this owner's (the runner must stop). */
export async function renewLease(
  pool: pg.Pool,
  streamId: string,
  owner: string,
  ttlMs: number,
): Promise<Heartbeat | null> {
  const r = await pool.query<Heartbeat>(
    `update stream_leases l set expires_at = now() + make_interval(secs => $3::double precision / 1000)
     from streams s where l.stream_id = $1 and l.owner = $2 and s.id = l.stream_id
     returning s.status, s.sequence`,
    [streamId, owner, ttlMs],
  );
  return r.rows[0] ?? null;
}

export async function releaseLease(pool: pg.Pool, streamId: string, owner: string): Promise<void> {
  await pool.query("delete from stream_leases where stream_id = $1 and owner = $2", [streamId, owner]);
}

export async function loadStream(db: Db, streamId: string): Promise<StreamRow | undefined> {
  const [row] = await db.select().from(streams).where(eq(streams.id, streamId));
  return row;
}

/** The checkpoint, created at the stream's start (the tip, for start range -1) when there is none. */
export async function ensureCheckpoint(db: Db, row: StreamRow, tip: () => Promise<number>): Promise<number> {
  const [found] = await db.select().from(streamCheckpoints).where(eq(streamCheckpoints.streamId, row.id));
  if (found) return found.nextBlock;
  const start = row.startRange < 0 ? await tip() : row.startRange;
  await db.insert(streamCheckpoints).values({ streamId: row.id, nextBlock: start }).onConflictDoNothing();
  const [now] = await db.select().from(streamCheckpoints).where(eq(streamCheckpoints.streamId, row.id));
  return now.nextBlock;
}

export interface Acknowledgement {
  streamId: string;
  owner: string;
  ttlMs: number;
  startBlock: number;
  endBlock: number;
  isReorg: boolean;
  sent: boolean;
  bytes: number;
  attempts: number;
  /** Hashes of the batch's blocks (when the stream fixes reorgs). */
  hashes: { number: number; hash: string }[];
}

/**
 * Records an acknowledged batch and moves the checkpoint past it, in one statement (one transaction),
 * only while `owner` holds the lease (renewing it) and only when the checkpoint is not before the
 * batch's first block (a batch after a gap is never recorded; a reorg re-delivery starts before it).
 * Returns the stream's status and sequence, or null when nothing was recorded (lease lost, or a
 * checkpoint moved under the runner): the runner must stop. A named (prepared) statement: each pooled
 * connection parses and plans it once.
 */
export async function acknowledge(pool: pg.Pool, ack: Acknowledgement): Promise<Heartbeat | null> {
  const r = await pool.query<Heartbeat & { recorded: number }>({
    name: "stream-acknowledge",
    text: `with lease as (
       update stream_leases set expires_at = now() + make_interval(secs => $3::double precision / 1000)
       where stream_id = $1 and owner = $2 returning stream_id
     ), cp as (
       update stream_checkpoints set next_block = $5 + 1, updated_at = now()
       where stream_id in (select stream_id from lease) and next_block >= $4 returning stream_id
     ), d as (
       insert into stream_deliveries (stream_id, start_block, end_block, is_reorg, sent, bytes, attempts)
       select stream_id, $4, $5, $6, $7, $8, $9 from cp returning id
     ), h as (
       insert into stream_block_hashes (stream_id, block_number, hash)
       select cp.stream_id, n, hh from cp, unnest($10::bigint[], $11::text[]) as x(n, hh)
       on conflict (stream_id, block_number) do update set hash = excluded.hash returning 1
     ), pruned as (
       delete from stream_block_hashes where stream_id in (select stream_id from cp) and block_number < $5 - ${KEPT_HASHES}
       returning 1
     )
     select s.status, s.sequence, (select count(*)::int from d) as recorded from streams s where s.id = $1`,
    values: [
      ack.streamId,
      ack.owner,
      ack.ttlMs,
      ack.startBlock,
      ack.endBlock,
      ack.isReorg,
      ack.sent,
      ack.bytes,
      ack.attempts,
      ack.hashes.map((h) => h.number),
      ack.hashes.map((h) => h.hash),
    ],
  });
  const row = r.rows[0];
  if (row?.recorded !== 1) return null;
  return { status: row.status, sequence: row.sequence };
}

/** Blocks above the fork point are delivered again: their stored hashes no longer hold. */
export async function storedHash(db: Db, streamId: string, blockNumber: number): Promise<string | undefined> {
  const [row] = await db
    .select({ hash: streamBlockHashes.hash })
    .from(streamBlockHashes)
    .where(and(eq(streamBlockHashes.streamId, streamId), eq(streamBlockHashes.blockNumber, blockNumber)));
  return row?.hash;
}

export type LogLevel = "INFO" | "WARNING" | "ERROR";

export async function writeLog(db: Db, row: StreamRow, level: LogLevel, message: string): Promise<void> {
  await db
    .insert(streamLogs)
    .values({ accountId: row.accountId, streamId: row.id, level, message: message.slice(0, 4000) });
}
