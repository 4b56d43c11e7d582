import { and, desc, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import { sumStoredSketchesSql } from "../../dataplane/latency-sketch.ts";
import type { Executor } from "../../platform/db/index.ts";
import { bucketStart, TICK_SECONDS } from "../../platform/time-buckets.ts";
import { subscriptions } from "../account/tables.ts";
import { endpoints } from "../endpoints/tables.ts";
import { endpointMetricMinutes, usageMinutes } from "./tables.ts";

export type UsageMinuteRow = typeof usageMinutes.$inferInsert;
export type EndpointMinuteRow = typeof endpointMetricMinutes.$inferInsert;

/**
 * The meter's batch writer: one multi-row upsert adding to each (endpoint, minute, method) row. It spans
 * accounts by design (each row carries its account id), so unlike the readers it takes no account id.
 */
export async function addMinutes(db: Executor, rows: UsageMinuteRow[]) {
  if (rows.length === 0) return;
  await db
    .insert(usageMinutes)
    .values(rows)
    .onConflictDoUpdate({
      target: [usageMinutes.endpointId, usageMinutes.minute, usageMinutes.method],
      set: {
        requests: sql`${usageMinutes.requests} + excluded.requests`,
        credits: sql`${usageMinutes.credits} + excluded.credits`,
        archiveRequests: sql`${usageMinutes.archiveRequests} + excluded.archive_requests`,
        refused: sql`${usageMinutes.refused} + excluded.refused`,
        malformed: sql`${usageMinutes.malformed} + excluded.malformed`,
        unknownMethod: sql`${usageMinutes.unknownMethod} + excluded.unknown_method`,
      },
    });
}

/** Two count maps ({"200": 3}) added key by key. */
const addCounts = (stored: unknown, added: string) =>
  sql.raw(
    `(select coalesce(jsonb_object_agg(k, n), '{}'::jsonb) from (select k, sum(v::bigint) n from (select * from jsonb_each_text(${stored}) union all select * from jsonb_each_text(excluded.${added})) e(k, v) group by k) s)`,
  );

/**
 * The meter's batch writer for endpoint metrics: one multi-row upsert adding requests, each map's counts
 * and the latency sketch's bins to each (endpoint, minute) row. Spans accounts, as addMinutes does.
 */
export async function addEndpointMinutes(db: Executor, rows: EndpointMinuteRow[]) {
  if (rows.length === 0) return;
  const table = '"endpoint_metric_minutes"';
  await db
    .insert(endpointMetricMinutes)
    .values(rows)
    .onConflictDoUpdate({
      target: [endpointMetricMinutes.endpointId, endpointMetricMinutes.minute],
      set: {
        requests: sql`${endpointMetricMinutes.requests} + excluded.requests`,
        statuses: addCounts(`${table}.statuses`, "statuses"),
        refusals: addCounts(`${table}.refusals`, "refusals"),
        latencySketch: sql.raw(sumStoredSketchesSql(`${table}.latency_sketch`, "excluded.latency_sketch")),
      },
    });
}

/** Usage is kept per minute: a window includes the minute it starts in; `endpointId` narrows it to one endpoint. */
/** A window's start as the minutes are kept: the minute holding it counts whole. */
const windowStart = (start: Date) => new Date(start.getTime() - (start.getTime() % 60_000));

const inWindow = (accountId: string, start: Date, end: Date, endpointId?: string) =>
  and(
    eq(usageMinutes.accountId, accountId),
    gte(usageMinutes.minute, windowStart(start)),
    lt(usageMinutes.minute, end),
    endpointId === undefined ? undefined : eq(usageMinutes.endpointId, endpointId),
  );

/**
 * The credits of the account in [start, end) as one SQL value, for a statement that reads more beside it:
 * the window of `inWindow`, its start truncated to the minute in SQL as windowStart does.
 */
export const creditsInWindowSql = (accountId: SQL | AnyPgColumn, start: SQL | AnyPgColumn, end: SQL | AnyPgColumn) =>
  sql<number>`(select coalesce(sum(${usageMinutes.credits}), 0)::float8 from ${usageMinutes}
    where ${usageMinutes.accountId} = ${accountId} and ${usageMinutes.minute} >= date_trunc('minute', ${start})
      and ${usageMinutes.minute} < ${end})`;

/** Credits of each account in its own window [start, end), in one statement (0 for an account with none). */
export async function creditsOfWindows(
  db: Executor,
  windows: readonly { accountId: string; start: Date; end: Date }[],
) {
  if (windows.length === 0) return new Map<string, number>();
  const { rows } = await db.execute<{ account_id: string; credits: number }>(sql`
    select w.account_id, coalesce(sum(u.credits), 0)::float8 as credits
    from unnest(${sql.param(windows.map((w) => w.accountId))}::uuid[], ${sql.param(windows.map((w) => windowStart(w.start).toISOString()))}::timestamptz[],
      ${sql.param(windows.map((w) => w.end.toISOString()))}::timestamptz[]) as w(account_id, start_at, end_at)
    left join usage_minutes u on u.account_id = w.account_id and u.minute >= w.start_at and u.minute < w.end_at
    group by w.account_id`);
  return new Map(rows.map((r) => [r.account_id, Number(r.credits)]));
}

export async function totals(db: Executor, accountId: string, start: Date, end: Date, endpointId?: string) {
  const [row] = await db
    .select({
      credits: sql<number>`coalesce(sum(${usageMinutes.credits}), 0)::float8`,
      requests: sql<number>`coalesce(sum(${usageMinutes.requests}), 0)::float8`,
      lastMinute: sql<Date | null>`max(${usageMinutes.minute})`,
    })
    .from(usageMinutes)
    .where(inWindow(accountId, start, end, endpointId));
  return {
    credits: Number(row.credits),
    requests: Number(row.requests),
    lastMinute: row.lastMinute ? new Date(row.lastMinute) : null,
  };
}

/** Per endpoint and method in the window. */
export async function byEndpointAndMethod(
  db: Executor,
  accountId: string,
  start: Date,
  end: Date,
  endpointId?: string,
) {
  const rows = await db
    .select({
      endpointId: usageMinutes.endpointId,
      method: usageMinutes.method,
      requests: sql<number>`sum(${usageMinutes.requests})::float8`,
      credits: sql<number>`sum(${usageMinutes.credits})::float8`,
      archive: sql<number>`sum(${usageMinutes.archiveRequests})::float8`,
      refused: sql<number>`sum(${usageMinutes.refused})::float8`,
      malformed: sql<number>`sum(${usageMinutes.malformed})::float8`,
      unknownMethod: sql<number>`sum(${usageMinutes.unknownMethod})::float8`,
    })
    .from(usageMinutes)
    .where(inWindow(accountId, start, end, endpointId))
    .groupBy(usageMinutes.endpointId, usageMinutes.method);
  return rows.map((r) => ({
    ...r,
    requests: Number(r.requests),
    credits: Number(r.credits),
    archive: Number(r.archive),
    refused: Number(r.refused),
    malformed: Number(r.malformed),
    unknownMethod: Number(r.unknownMethod),
  }));
}

/** Credits per tick (hour or day, in UTC) and method in the window. */
export async function ticks(
  db: Executor,
  accountId: string,
  start: Date,
  end: Date,
  tick: "hour" | "day",
  endpointId?: string,
) {
  const bucket = bucketStart(usageMinutes.minute, TICK_SECONDS[tick]);
  const rows = await db
    .select({
      at: bucket,
      method: usageMinutes.method,
      credits: sql<number>`sum(${usageMinutes.credits})::float8`,
      requests: sql<number>`sum(${usageMinutes.requests})::float8`,
    })
    .from(usageMinutes)
    .where(inWindow(accountId, start, end, endpointId))
    .groupBy(bucket, usageMinutes.method)
    .orderBy(bucket);
  return rows.map((r) => ({
    at: new Date(r.at),
    method: r.method,
    credits: Number(r.credits),
    requests: Number(r.requests),
  }));
}

export async function topEndpoints(db: Executor, accountId: string, start: Date, end: Date, limit: number) {
  const total = sql<number>`sum(${usageMinutes.credits})::float8`;
  const rows = await db
    .select({ endpoint: endpoints, totalUsage: total })
    .from(usageMinutes)
    .innerJoin(endpoints, and(eq(endpoints.id, usageMinutes.endpointId), eq(endpoints.accountId, accountId)))
    .where(inWindow(accountId, start, end))
    .groupBy(endpoints.id)
    .orderBy(desc(total))
    .limit(limit);
  return rows.map((r) => ({ ...r, totalUsage: Number(r.totalUsage) }));
}

export async function subscriptionOf(db: Executor, accountId: string) {
  const [row] = await db.select().from(subscriptions).where(eq(subscriptions.accountId, accountId));
  return row;
}

/**
 * One endpoint's calls, refused calls and credits per point and method in [start, end): calls are those
 * forwarded to the node (billed, and those it answered "method not found"); refused, those the proxy
 * answered itself (malformed ones included). See dataplane/metering/counting-rule.ts.
 */
export async function endpointMethodPoints(
  db: Executor,
  accountId: string,
  endpointId: string,
  window: { start: Date; end: Date; stepSeconds: number },
) {
  const bucket = bucketStart(usageMinutes.minute, window.stepSeconds);
  const rows = await db
    .select({
      at: bucket,
      method: usageMinutes.method,
      calls: sql<number>`sum(${usageMinutes.requests} + ${usageMinutes.unknownMethod})::float8`,
      refused: sql<number>`sum(${usageMinutes.refused} + ${usageMinutes.malformed})::float8`,
      credits: sql<number>`sum(${usageMinutes.credits})::float8`,
    })
    .from(usageMinutes)
    .where(
      and(
        eq(usageMinutes.accountId, accountId),
        eq(usageMinutes.endpointId, endpointId),
        gte(usageMinutes.minute, window.start),
        lt(usageMinutes.minute, window.end),
      ),
    )
    .groupBy(bucket, usageMinutes.method);
  return rows.map((r) => ({
    at: new Date(r.at),
    method: r.method,
    calls: Number(r.calls),
    refused: Number(r.refused),
    credits: Number(r.credits),
  }));
}

/**
 * One endpoint's request metrics per point in [start, end), flat: requests (key ""), requests per HTTP
 * status, refused calls per reason, and latency counts per sketch bin (key = the bin).
 */
export async function endpointRequestPoints(
  db: Executor,
  accountId: string,
  endpointId: string,
  window: { start: Date; end: Date; stepSeconds: number },
) {
  const m = endpointMetricMinutes;
  const result = await db.execute<{ at: Date | string; family: string; key: string; n: number }>(sql`
    with m as (
      select ${bucketStart(m.minute, window.stepSeconds)} as at, ${m.requests} as requests, ${m.statuses} as statuses,
        ${m.refusals} as refusals, ${m.latencySketch} as sketch
      from ${m}
      where ${m.accountId} = ${accountId} and ${m.endpointId} = ${endpointId}
        and ${m.minute} >= ${window.start} and ${m.minute} < ${window.end}
    )
    select at, 'requests' as family, '' as key, sum(requests)::float8 as n from m group by at
    union all
    select at, 'status', s.key, sum(s.value::bigint)::float8 from m, jsonb_each_text(m.statuses) s group by at, s.key
    union all
    select at, 'refusal', r.key, sum(r.value::bigint)::float8 from m, jsonb_each_text(m.refusals) r group by at, r.key
    union all
    select at, 'latency', b.key, sum(b.value::float8) from m, jsonb_each_text(m.sketch) b group by at, b.key`);
  return result.rows.map((r) => ({
    at: new Date(r.at),
    family: r.family as "requests" | "status" | "refusal" | "latency",
    key: r.key,
    n: Number(r.n),
  }));
}

/** Pruning spans accounts: every endpoint metric minute before the cutoff goes. Returns how many. */
export async function pruneEndpointMinutesBefore(db: Executor, cutoff: Date) {
  const result = await db.execute(
    sql`delete from ${endpointMetricMinutes} where ${endpointMetricMinutes.minute} < ${cutoff}`,
  );
  return result.rowCount ?? 0;
}

/**
 * Requests per method on each of `ranges`' endpoints since its moment, in one query: the row's `range`
 * is its index in `ranges` (add-on installs of one answer, each counting from its own period's start).
 */
export async function requestsByMethodSince(
  db: Executor,
  accountId: string,
  ranges: readonly { endpointId: string; since: Date }[],
): Promise<{ range: number; method: string; requests: number }[]> {
  if (ranges.length === 0) return [];
  const keys = sql.join(
    ranges.map((r, i) => sql`(${i}::int, ${r.endpointId}::uuid, ${r.since.toISOString()}::timestamptz)`),
    sql`, `,
  );
  const result = await db.execute(sql`
    select k.range, u.method, sum(u.requests)::float8 as requests
    from (values ${keys}) as k(range, endpoint_id, since)
    join ${usageMinutes} u on u.account_id = ${accountId} and u.endpoint_id = k.endpoint_id and u.minute >= k.since
    group by k.range, u.method`);
  return result.rows as { range: number; method: string; requests: number }[];
}
