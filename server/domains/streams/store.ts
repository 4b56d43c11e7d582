import { and, desc, eq, gte, ilike, inArray, isNotNull, lt, lte, or, sql } from "drizzle-orm";
import { LatencySketch, type StoredSketch } from "../../dataplane/latency-sketch.ts";
import type { Executor } from "../../platform/db/index.ts";
import { containing } from "../../platform/db/like.ts";
import { isUuid } from "../../platform/ids.ts";
import type { CursorKey } from "../../platform/paging.ts";
import { bucketStart, floorMinute } from "../../platform/time-buckets.ts";
import { streamLogKeptSince } from "./logs.ts";
import {
  streamBlockHashes,
  streamCheckpoints,
  streamDeliveries,
  streamLogs,
  streamMetricMinutes,
  streams,
} from "./tables.ts";

export type StreamRow = typeof streams.$inferSelect;
export type NewStream = Omit<typeof streams.$inferInsert, "accountId" | "id">;
export type Product = "STREAM" | "WEBHOOK";

/** Streams page newest first: a position is a creation time and the id that breaks ties. */
export const streamCursorShape = ["timestamp", "uuid"] as const;
export const streamCursorOf = (row: StreamRow) => [row.createdAt, row.id] as const;
/** Logs page newest first by their serial id. */
export const logCursorShape = ["integer"] as const;
export const logCursorOf = (row: StreamLogRow) => [row.id] as const;
export type StreamLogRow = typeof streamLogs.$inferSelect;
/** Deliveries page newest first by their serial id. */
export const deliveryCursorShape = ["integer"] as const;
export const deliveryCursorOf = (row: StreamDeliveryRow) => [row.id] as const;
export type StreamDeliveryRow = typeof streamDeliveries.$inferSelect;

export async function insertStream(db: Executor, accountId: string, values: NewStream): Promise<StreamRow> {
  const [row] = await db
    .insert(streams)
    .values({ ...values, accountId })
    .returning();
  return row;
}

export async function getStream(
  db: Executor,
  accountId: string,
  id: string,
  product: Product,
): Promise<StreamRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db
    .select()
    .from(streams)
    .where(and(eq(streams.id, id), eq(streams.accountId, accountId), eq(streams.product, product)));
  return row;
}

export async function listStreams(
  db: Executor,
  accountId: string,
  product: Product,
  options: { limit: number; after: CursorKey<typeof streamCursorShape> | null; search?: string | null },
) {
  const where = [eq(streams.accountId, accountId), eq(streams.product, product)];
  if (options.search) {
    const term = containing(options.search);
    const any = or(
      ilike(streams.name, term),
      ilike(streams.network, term),
      ilike(streams.dataset, term),
      sql`${streams.id}::text = ${options.search}`,
    );
    if (any) where.push(any);
  }
  const base = and(...where);
  const after = options.after;
  const page = after
    ? and(base, or(lt(streams.createdAt, after[0]), and(eq(streams.createdAt, after[0]), lt(streams.id, after[1]))))
    : base;
  const rows = await db
    .select()
    .from(streams)
    .where(page)
    .orderBy(desc(streams.createdAt), desc(streams.id))
    .limit(options.limit);
  const [{ count }] = await db.select({ count: sql<number>`count(*)::int` }).from(streams).where(base);
  return { rows, totalCount: count };
}

/** How many streams of a product the account has (every status). */
export async function countStreams(db: Executor, accountId: string, product: Product): Promise<number> {
  const [{ count }] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(streams)
    .where(and(eq(streams.accountId, accountId), eq(streams.product, product)));
  return count;
}

export async function updateStream(
  db: Executor,
  accountId: string,
  id: string,
  patch: Partial<NewStream>,
): Promise<StreamRow | undefined> {
  const [row] = await db
    .update(streams)
    .set({ ...patch, sequence: sql`${streams.sequence} + 1`, updatedAt: sql`now()` })
    .where(and(eq(streams.id, id), eq(streams.accountId, accountId)))
    .returning();
  return row;
}

export async function deleteStream(db: Executor, accountId: string, id: string, product: Product): Promise<boolean> {
  if (!isUuid(id)) return false;
  const rows = await db
    .delete(streams)
    .where(and(eq(streams.id, id), eq(streams.accountId, accountId), eq(streams.product, product)))
    .returning({ id: streams.id });
  return rows.length === 1;
}

/** Forgets where the stream was: the next activation starts at its start range again. */
export async function resetProgress(db: Executor, accountId: string, id: string): Promise<void> {
  const owned = sql`(select id from streams where id = ${id} and account_id = ${accountId})`;
  await db.delete(streamCheckpoints).where(sql`${streamCheckpoints.streamId} in ${owned}`);
  await db.delete(streamBlockHashes).where(sql`${streamBlockHashes.streamId} in ${owned}`);
}

export async function setCheckpoint(db: Executor, accountId: string, id: string, nextBlock: number): Promise<void> {
  await db.execute(sql`insert into stream_checkpoints (stream_id, next_block)
    select id, ${nextBlock} from streams where id = ${id} and account_id = ${accountId}
    on conflict (stream_id) do update set next_block = excluded.next_block, updated_at = now()`);
}

export async function progressOf(db: Executor, accountId: string, ids: string[]) {
  if (ids.length === 0) return new Map<string, { nextBlock: number | null; lastDeliveredBlock: number | null }>();
  const rows = await db
    .select({ id: streams.id, nextBlock: streamCheckpoints.nextBlock })
    .from(streams)
    .leftJoin(streamCheckpoints, eq(streamCheckpoints.streamId, streams.id))
    .where(and(eq(streams.accountId, accountId), inArray(streams.id, ids)));
  return new Map(
    rows.map((r) => [
      r.id,
      { nextBlock: r.nextBlock, lastDeliveredBlock: r.nextBlock === null ? null : r.nextBlock - 1 },
    ]),
  );
}

export async function logs(
  db: Executor,
  accountId: string,
  streamId: string,
  options: {
    limit: number;
    after: CursorKey<typeof logCursorShape> | null;
    levels?: string[] | null;
    searchText?: string | null;
  },
): Promise<StreamLogRow[]> {
  const where = [
    eq(streamLogs.accountId, accountId),
    eq(streamLogs.streamId, streamId),
    gte(streamLogs.createdAt, streamLogKeptSince()),
  ];
  if (options.after) where.push(lt(streamLogs.id, options.after[0]));
  if (options.levels?.length) where.push(inArray(streamLogs.level, options.levels));
  if (options.searchText) where.push(ilike(streamLogs.message, containing(options.searchText)));
  return db
    .select()
    .from(streamLogs)
    .where(and(...where))
    .orderBy(desc(streamLogs.id))
    .limit(options.limit);
}

/**
 * A stream's (or webhook's) metric minutes summed per point (see platform/time-buckets.ts): the minute
 * row's counters, `at` the point's start; sketches (dataplane/latency-sketch.ts) merged.
 */
export type MetricBucketRow = { at: Date; filterSketch: LatencySketch; latencySketch: LatencySketch } & Omit<
  typeof streamMetricMinutes.$inferSelect,
  "accountId" | "streamId" | "product" | "minute" | "filterSketch" | "latencySketch"
>;

/**
 * A stream's metrics in the window (the minutes from `from`'s to before `to`) summed per point of
 * `stepSeconds`, oldest first; only points with a minute recorded. Counters are summed in PostgreSQL;
 * each point's sketches come back as the list of its minutes' non-empty ones, merged here.
 */
export async function metricBuckets(
  db: Executor,
  accountId: string,
  streamId: string,
  window: { from: Date; to: Date; stepSeconds: number },
): Promise<MetricBucketRow[]> {
  const m = streamMetricMinutes;
  const sketches = (column: typeof m.filterSketch | typeof m.latencySketch) =>
    sql.raw(`coalesce(jsonb_agg(${column.name}) filter (where ${column.name} <> '{}'::jsonb), '[]'::jsonb)`);
  const result = await db.execute<{
    at: Date | string;
    blocks: number;
    bytes_total: number;
    bytes_billable: number;
    requests: number;
    delivered: number;
    credits: number;
    errors: number;
    retries: number;
    filter_runs: number;
    filter_sub_threshold: number;
    filter_ms_total: number;
    filter_sketches: StoredSketch[];
    latency_sketches: StoredSketch[];
  }>(sql`
    select ${bucketStart(m.minute, window.stepSeconds)} as at, sum(blocks)::float8 as blocks,
      sum(bytes_total)::float8 as bytes_total, sum(bytes_billable)::float8 as bytes_billable,
      sum(requests)::float8 as requests, sum(delivered)::float8 as delivered, sum(credits)::float8 as credits,
      sum(errors)::float8 as errors, sum(retries)::float8 as retries, sum(filter_runs)::float8 as filter_runs,
      sum(filter_sub_threshold)::float8 as filter_sub_threshold, sum(filter_ms_total)::float8 as filter_ms_total,
      ${sketches(m.filterSketch)} as filter_sketches, ${sketches(m.latencySketch)} as latency_sketches
    from ${m}
    where ${m.accountId} = ${accountId} and ${m.streamId} = ${streamId}
      and ${m.minute} >= ${floorMinute(window.from)} and ${m.minute} < ${window.to}
    group by 1 order by 1`);
  return result.rows.map((r) => ({
    at: new Date(r.at),
    blocks: Number(r.blocks),
    bytesTotal: Number(r.bytes_total),
    bytesBillable: Number(r.bytes_billable),
    requests: Number(r.requests),
    delivered: Number(r.delivered),
    credits: Number(r.credits),
    errors: Number(r.errors),
    retries: Number(r.retries),
    filterRuns: Number(r.filter_runs),
    filterSubThreshold: Number(r.filter_sub_threshold),
    filterMsTotal: Number(r.filter_ms_total),
    filterSketch: LatencySketch.of(...r.filter_sketches),
    latencySketch: LatencySketch.of(...r.latency_sketches),
  }));
}

/** The first minute a stream (or webhook) has metrics for, or null: where "All time" starts. */
export async function firstMetricMinute(db: Executor, accountId: string, streamId: string): Promise<Date | null> {
  const [row] = await db
    .select({ minute: sql<Date | string | null>`min(${streamMetricMinutes.minute})` })
    .from(streamMetricMinutes)
    .where(and(eq(streamMetricMinutes.accountId, accountId), eq(streamMetricMinutes.streamId, streamId)));
  return row?.minute ? new Date(row.minute) : null;
}

/**
 * What streams and webhooks used in a period, for the usage and billing domains: streams bill in
 * bytes (payload bytes delivered), webhooks in credits.
 */
export async function streamsUsage(db: Executor, accountId: string, from: Date, to: Date) {
  const [row] = await db
    .select({
      streamBytes: sql<number>`coalesce(sum(${streamMetricMinutes.bytesBillable}) filter (where ${streamMetricMinutes.product} = 'STREAM'), 0)::float8`,
      webhookCredits: sql<number>`coalesce(sum(${streamMetricMinutes.credits}) filter (where ${streamMetricMinutes.product} = 'WEBHOOK'), 0)::float8`,
    })
    .from(streamMetricMinutes)
    .where(
      and(
        eq(streamMetricMinutes.accountId, accountId),
        gte(streamMetricMinutes.minute, from),
        lt(streamMetricMinutes.minute, to),
      ),
    );
  return row;
}

/** Names of the account's streams (not webhooks) that deliver to a function. */
export async function streamsDeliveringTo(db: Executor, accountId: string, functionId: string): Promise<string[]> {
  const rows = await db
    .select({ name: streams.name })
    .from(streams)
    .where(
      and(
        eq(streams.accountId, accountId),
        eq(streams.destination, "FUNCTION"),
        sql`${streams.destinationAttributes}->>'functionID' = ${functionId}`,
      ),
    );
  return rows.map((r) => r.name);
}

/**
 * A stream's delivery history, newest first. A `search` that is a whole number matches a block inside a
 * row's range or an HTTP status; other text, the destination's answer or the payload preview.
 */
export async function deliveries(
  db: Executor,
  accountId: string,
  streamId: string,
  options: {
    limit: number;
    after: CursorKey<typeof deliveryCursorShape> | null;
    outcomes?: string[] | null;
    search?: string | null;
  },
): Promise<StreamDeliveryRow[]> {
  const where = [eq(streamDeliveries.accountId, accountId), eq(streamDeliveries.streamId, streamId)];
  if (options.after) where.push(lt(streamDeliveries.id, options.after[0]));
  if (options.outcomes?.length) where.push(inArray(streamDeliveries.outcome, options.outcomes));
  const search = options.search?.trim();
  if (search) {
    const matches = /^\d{1,15}$/.test(search)
      ? or(
          and(lte(streamDeliveries.startBlock, Number(search)), gte(streamDeliveries.endBlock, Number(search))),
          eq(streamDeliveries.httpStatus, Number(search)),
        )
      : or(ilike(streamDeliveries.answer, containing(search)), ilike(streamDeliveries.preview, containing(search)));
    if (matches) where.push(matches);
  }
  return db
    .select()
    .from(streamDeliveries)
    .where(and(...where))
    .orderBy(desc(streamDeliveries.id))
    .limit(options.limit);
}

/** How many days the account's plan keeps delivery history (the plan's default when it has none). */
export async function deliveryHistoryDays(db: Executor, accountId: string): Promise<number | undefined> {
  const rows = await db.execute<{ days: number }>(sql`select p.delivery_history_days as days
    from subscriptions s join plans p on p.id = s.plan_id where s.account_id = ${accountId}`);
  return rows.rows[0]?.days;
}

/**
 * Removes delivery history older than each account's plan keeps it (accounts without a subscription
 * keep `fallbackDays`). Returns the rows removed.
 */
export async function pruneDeliveries(db: Executor, fallbackDays: number, now = new Date()): Promise<number> {
  // The first condition finds the candidates by the created_at index (older than the shortest
  // retention of any plan); the second keeps what the row's own account's plan still keeps.
  const r = await db.execute(sql`delete from stream_deliveries d
    where d.created_at < ${now}::timestamptz - make_interval(days => least(${fallbackDays}::int,
        (select coalesce(min(delivery_history_days), ${fallbackDays}::int) from plans)))
      and d.created_at < ${now}::timestamptz - make_interval(days => coalesce(
        (select p.delivery_history_days from subscriptions s join plans p on p.id = s.plan_id
          where s.account_id = d.account_id), ${fallbackDays}::int))`);
  return r.rowCount ?? 0;
}

/** The account's streams (or webhooks) the engine stopped because they failed, most recent failure first. */
export async function failingStreams(db: Executor, accountId: string, product: Product, limit: number) {
  return db
    .select()
    .from(streams)
    .where(
      and(
        eq(streams.accountId, accountId),
        eq(streams.product, product),
        inArray(streams.status, ["PAUSED", "TERMINATED"]),
        isNotNull(streams.failedAt),
      ),
    )
    .orderBy(desc(streams.failedAt))
    .limit(limit);
}
