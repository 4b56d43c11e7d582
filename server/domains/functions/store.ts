import { and, desc, eq, gte, inArray, lt, lte, or, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { Executor } from "../../platform/db/index.ts";
import { containing } from "../../platform/db/like.ts";
import { isUuid } from "../../platform/ids.ts";
import type { CursorKey } from "../../platform/paging.ts";
import { bucketStart, floorMinute, TICK_SECONDS } from "../../platform/time-buckets.ts";
import { functionActivations, functions, functionUsageMinutes, functionVersions } from "./tables.ts";

export type FunctionRow = typeof functions.$inferSelect;
export type FunctionVersionRow = typeof functionVersions.$inferSelect;
export type ActivationRow = typeof functionActivations.$inferSelect;
export type NewActivation = Omit<typeof functionActivations.$inferInsert, "accountId" | "id">;

/** Functions, activations and versions page newest first by (createdAt, id). */
export const createdCursorShape = ["timestamp", "uuid"] as const;
export const createdCursorOf = (row: { createdAt: Date; id: string }) => [row.createdAt, row.id] as const;
/** Log lines page newest first by their run (createdAt, id) and their line number in it. */
export const logCursorShape = ["timestamp", "uuid", "integer"] as const;

export interface FunctionValues {
  name?: string;
  description?: string | null;
  code?: string;
  timeoutSec?: number;
  memoryMb?: number;
}

type NewFunctionValues = Required<Pick<FunctionValues, "name" | "code">> & FunctionValues;

const olderThan = (created: PgColumn, id: PgColumn, after: CursorKey<typeof createdCursorShape>) =>
  or(lt(created, after[0]), and(eq(created, after[0]), lt(id, after[1])));

/** Every function of the account, newest first (the stream destination's picker). */
export function listFunctions(db: Executor, accountId: string): Promise<FunctionRow[]> {
  return db.select().from(functions).where(eq(functions.accountId, accountId)).orderBy(desc(functions.createdAt));
}

export async function listFunctionsPage(
  db: Executor,
  accountId: string,
  options: { limit: number; after: CursorKey<typeof createdCursorShape> | null },
) {
  const base = eq(functions.accountId, accountId);
  const rows = await db
    .select()
    .from(functions)
    .where(options.after ? and(base, olderThan(functions.createdAt, functions.id, options.after)) : base)
    .orderBy(desc(functions.createdAt), desc(functions.id))
    .limit(options.limit);
  const [{ count }] = await db.select({ count: sql<number>`count(*)::int` }).from(functions).where(base);
  return { rows, totalCount: count };
}

export async function countFunctions(db: Executor, accountId: string): Promise<number> {
  const [{ count }] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(functions)
    .where(eq(functions.accountId, accountId));
  return count;
}

/** One account's function creations at a time, so two of them cannot both take the plan's last function. */
export async function lockAccountFunctions(db: Executor, accountId: string): Promise<void> {
  await db.execute(sql`select pg_advisory_xact_lock(hashtext('functions:' || ${accountId}))`);
}

export async function getFunction(db: Executor, accountId: string, id: string): Promise<FunctionRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db
    .select()
    .from(functions)
    .where(and(eq(functions.accountId, accountId), eq(functions.id, id)));
  return row;
}

/**
 * Holds the function against deletion until the transaction ends (a delete waits for it); false when it
 * is gone already.
 */
export async function holdFunction(db: Executor, accountId: string, id: string): Promise<boolean> {
  const rows = await db
    .select({ id: functions.id })
    .from(functions)
    .where(and(eq(functions.accountId, accountId), eq(functions.id, id)))
    .for("key share");
  return rows.length > 0;
}

/** The names of the account's functions among `ids`, by id (ids of no function of the account are left out). */
export async function functionNames(db: Executor, accountId: string, ids: string[]): Promise<Map<string, string>> {
  const wanted = ids.filter(isUuid);
  if (wanted.length === 0) return new Map();
  const rows = await db
    .select({ id: functions.id, name: functions.name })
    .from(functions)
    .where(and(eq(functions.accountId, accountId), inArray(functions.id, wanted)));
  return new Map(rows.map((row) => [row.id, row.name]));
}

async function insertVersion(db: Executor, row: FunctionRow): Promise<void> {
  await db.insert(functionVersions).values({
    functionId: row.id,
    accountId: row.accountId,
    version: row.version,
    code: row.code,
    timeoutSec: row.timeoutSec,
    memoryMb: row.memoryMb,
  });
}

/** A new function and its version 1. Run it in a transaction: the two rows exist together or not at all. */
export async function insertFunction(db: Executor, accountId: string, values: NewFunctionValues): Promise<FunctionRow> {
  const [row] = await db
    .insert(functions)
    .values({ ...values, accountId })
    .returning();
  await insertVersion(db, row);
  return row;
}

/**
 * Changes a function; with `newVersion` its version moves on by one and the new version is kept (run it in
 * a transaction). The row is locked first, so two updates at once make two versions, one after the other.
 */
export async function updateFunction(
  db: Executor,
  accountId: string,
  id: string,
  values: FunctionValues,
  newVersion: boolean,
): Promise<FunctionRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db
    .update(functions)
    .set({ ...values, ...(newVersion && { version: sql`${functions.version} + 1` }), updatedAt: new Date() })
    .where(and(eq(functions.accountId, accountId), eq(functions.id, id)))
    .returning();
  if (row && newVersion) await insertVersion(db, row);
  return row;
}

/** Deletes the function's versions numbered `through` and below (the older ones). */
export async function pruneVersions(db: Executor, functionId: string, through: number): Promise<void> {
  if (through < 1) return;
  await db
    .delete(functionVersions)
    .where(and(eq(functionVersions.functionId, functionId), lte(functionVersions.version, through)));
}

export async function deleteFunction(db: Executor, accountId: string, id: string): Promise<void> {
  await db.delete(functions).where(and(eq(functions.accountId, accountId), eq(functions.id, id)));
}

export function listVersions(db: Executor, accountId: string, functionId: string): Promise<FunctionVersionRow[]> {
  return db
    .select()
    .from(functionVersions)
    .where(and(eq(functionVersions.accountId, accountId), eq(functionVersions.functionId, functionId)))
    .orderBy(desc(functionVersions.version));
}

/** What one run adds to its minute's usage row. */
export interface RunUsage {
  durationMs: number;
  size: number;
  success: boolean;
  mbMs: number;
}

/**
 * Adds a run to the usage row of its minute. `usageKey` is the function's id, or for code run before it is
 * saved (a console test) the account's own id, which no function has: such runs bill the account and
 * appear on no function's metrics.
 */
export async function addRunUsage(
  db: Executor,
  accountId: string,
  usageKey: string,
  at: Date,
  run: RunUsage,
): Promise<void> {
  const failed = run.success ? 0 : 1;
  await db
    .insert(functionUsageMinutes)
    .values({
      accountId,
      functionId: usageKey,
      minute: sql`date_trunc('minute', ${at}::timestamptz)`,
      executions: 1,
      errors: failed,
      durationMs: run.durationMs,
      responseBytes: run.size,
      mbMs: run.mbMs,
    })
    .onConflictDoUpdate({
      target: [functionUsageMinutes.functionId, functionUsageMinutes.minute],
      set: {
        executions: sql`${functionUsageMinutes.executions} + 1`,
        errors: sql`${functionUsageMinutes.errors} + ${failed}`,
        durationMs: sql`${functionUsageMinutes.durationMs} + ${run.durationMs}`,
        responseBytes: sql`${functionUsageMinutes.responseBytes} + ${run.size}`,
        mbMs: sql`${functionUsageMinutes.mbMs} + ${run.mbMs}`,
      },
    });
}

/** Records a run and adds it to its minute's usage row, together. */
export async function insertActivation(
  db: Executor,
  accountId: string,
  values: NewActivation,
  usage: { mbMs: number },
): Promise<ActivationRow> {
  const [row] = await db
    .insert(functionActivations)
    .values({ ...values, accountId })
    .returning();
  await addRunUsage(db, accountId, values.functionId, row.createdAt, {
    durationMs: values.durationMs,
    size: values.size,
    success: values.success,
    mbMs: usage.mbMs,
  });
  return row;
}

/**
 * Keeps a function's newest activations: at most `runs` of them, and of those only the newer ones keep
 * their heavy parts (whole result, user data, logs) once the newer ones hold `bytes` as stored
 * (pg_column_size reads a value's stored size without decompressing it; the run that reaches `bytes`
 * keeps its parts). Older runs stay in the history with their outcome, duration, size and result
 * preview, their whole result answered as not kept, as one over RESULT_KEPT_BYTES is.
 */
export async function pruneActivations(
  db: Executor,
  functionId: string,
  kept: { runs: number; bytes: number },
): Promise<void> {
  await db.execute(sql`
    with runs as (
      select id, row_number() over newest as n,
        sum(coalesce(pg_column_size(result_json), 0) + coalesce(pg_column_size(user_data), 0)
          + coalesce(pg_column_size(logs), 0)) over newest as bytes
      from function_activations where function_id = ${functionId}
      window newest as (order by created_at desc, id desc)
    ),
    gone as (
      delete from function_activations a using runs where a.id = runs.id and runs.n > ${kept.runs}
    )
    update function_activations a set result_json = null, user_data = null, logs = '[]'::jsonb
    from runs
    where a.id = runs.id and runs.n <= ${kept.runs} and runs.bytes > ${kept.bytes}
      and (a.result_json is not null or a.user_data is not null or jsonb_array_length(a.logs) > 0)`);
}

/** Runs whose logs one pruneRunLogs pass empties at most (the next pass takes the rest). */
const LOG_PRUNE_BATCH = 10_000;

/**
 * Empties the logs of runs older than their account's plan keeps them (`retention` per plan, `fallbackDays`
 * for an account without a plan named there), for every account: the housekeeping's sweep. Runs with logs
 * are found by their own index, so a pass with nothing to do reads nothing.
 */
export async function pruneRunLogs(
  db: Executor,
  retention: readonly { planId: string; days: number }[],
  fallbackDays: number,
  now: Date,
): Promise<number> {
  const plans = sql.join(
    retention.map((r) => sql`(${r.planId}::text, ${r.days}::int)`),
    sql`, `,
  );
  const shortest = Math.min(fallbackDays, ...retention.map((r) => r.days));
  const r = await db.execute(sql`update function_activations set logs = '[]'::jsonb
    where id in (select a.id from function_activations a
      where jsonb_array_length(a.logs) > 0
        and a.created_at < ${now}::timestamptz - make_interval(days => ${shortest}::int)
        and a.created_at < ${now}::timestamptz - make_interval(days => coalesce(
          (select r.days from subscriptions s join (values ${plans}) as r(plan_id, days) on r.plan_id = s.plan_id
            where s.account_id = a.account_id), ${fallbackDays}::int))
      limit ${LOG_PRUNE_BATCH})`);
  return r.rowCount ?? 0;
}

export function listActivations(
  db: Executor,
  accountId: string,
  functionId: string,
  options: { limit: number; after: CursorKey<typeof createdCursorShape> | null },
): Promise<ActivationRow[]> {
  const base = and(eq(functionActivations.accountId, accountId), eq(functionActivations.functionId, functionId));
  return db
    .select()
    .from(functionActivations)
    .where(
      options.after ? and(base, olderThan(functionActivations.createdAt, functionActivations.id, options.after)) : base,
    )
    .orderBy(desc(functionActivations.createdAt), desc(functionActivations.id))
    .limit(options.limit);
}

export async function getActivation(db: Executor, accountId: string, id: string): Promise<ActivationRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db
    .select()
    .from(functionActivations)
    .where(and(eq(functionActivations.accountId, accountId), eq(functionActivations.id, id)));
  return row;
}

export interface LogLineRow {
  activationId: string;
  createdAt: Date;
  line: number;
  level: string;
  message: string;
}

/**
 * A function's console lines, newest run first and each run's lines last first, read from the runs
 * that keep them (so they go when their run is pruned).
 */
export async function listLogLines(
  db: Executor,
  accountId: string,
  functionId: string,
  options: {
    limit: number;
    after: CursorKey<typeof logCursorShape> | null;
    levels?: readonly string[] | null;
    searchText?: string | null;
  },
): Promise<LogLineRow[]> {
  const conditions = [sql`a.account_id = ${accountId}`, sql`a.function_id = ${functionId}`];
  if (options.after) {
    const [at, id, line] = options.after;
    conditions.push(sql`(a.created_at, a.id, l.n) < (${at.toISOString()}::timestamptz, ${id}::uuid, ${line})`);
  }
  if (options.levels?.length) conditions.push(sql`l.entry->>'level' in ${options.levels}`);
  if (options.searchText) conditions.push(sql`l.entry->>'message' ilike ${containing(options.searchText)}`);
  const result = await db.execute<{
    activation_id: string;
    created_at: string;
    n: string;
    level: string;
    message: string;
  }>(sql`
    select a.id as activation_id, a.created_at, l.n, l.entry->>'level' as level, l.entry->>'message' as message
    from function_activations a cross join lateral jsonb_array_elements(a.logs) with ordinality as l(entry, n)
    where ${sql.join(conditions, sql` and `)}
    order by a.created_at desc, a.id desc, l.n desc
    limit ${options.limit}`);
  return result.rows.map((r) => ({
    activationId: r.activation_id,
    createdAt: new Date(r.created_at),
    line: Number(r.n),
    level: r.level,
    message: r.message,
  }));
}

/** A function's usage per point of `stepSeconds` (see platform/time-buckets.ts): sums of its minutes in the window. */
export interface UsageBucketRow {
  at: Date;
  executions: number;
  errors: number;
  durationMs: number;
  responseBytes: number;
  mbMs: number;
}

/**
 * A function's usage in the window (the minutes from `from`'s to before `to`) summed per point, oldest
 * first; only points with a minute recorded.
 */
export async function usageBuckets(
  db: Executor,
  accountId: string,
  functionId: string,
  window: { from: Date; to: Date; stepSeconds: number },
): Promise<UsageBucketRow[]> {
  const u = functionUsageMinutes;
  const at = bucketStart(u.minute, window.stepSeconds);
  const rows = await db
    .select({
      at,
      executions: sql<number>`sum(${u.executions})::float8`,
      errors: sql<number>`sum(${u.errors})::float8`,
      durationMs: sql<number>`sum(${u.durationMs})::float8`,
      responseBytes: sql<number>`sum(${u.responseBytes})::float8`,
      mbMs: sql<number>`sum(${u.mbMs})::float8`,
    })
    .from(u)
    .where(
      and(
        eq(u.accountId, accountId),
        eq(u.functionId, functionId),
        gte(u.minute, floorMinute(window.from)),
        lt(u.minute, window.to),
      ),
    )
    .groupBy(at)
    .orderBy(at);
  return rows.map((r) => ({
    at: new Date(r.at),
    executions: Number(r.executions),
    errors: Number(r.errors),
    durationMs: Number(r.durationMs),
    responseBytes: Number(r.responseBytes),
    mbMs: Number(r.mbMs),
  }));
}

/**
 * A window's bounds taken to their minute (usage rows are minutes), as key-value writes are counted: two
 * billing periods that meet at a second share no row and lose none.
 */
const minuteOf = (at: Date) => floorMinute(at).toISOString();

/** All the account's functions' usage in [from, to), summed per UTC `tick`. */
export async function accountUsage(db: Executor, accountId: string, from: Date, to: Date, tick: "hour" | "day") {
  const result = await db.execute<{ at: string; executions: string; errors: string; mb_ms: string }>(sql`
    select ${bucketStart(sql`minute`, TICK_SECONDS[tick])} as at,
      sum(executions) as executions, sum(errors) as errors, sum(mb_ms) as mb_ms
    from function_usage_minutes
    where account_id = ${accountId} and minute >= ${minuteOf(from)}::timestamptz and minute < ${minuteOf(to)}::timestamptz
    group by 1 order by 1`);
  return result.rows.map((r) => ({
    at: new Date(r.at),
    executions: Number(r.executions),
    errors: Number(r.errors),
    mbMs: Number(r.mb_ms),
  }));
}

/** The account's functions' billed MB-milliseconds in [from, to). */
export async function accountMbMs(db: Executor, accountId: string, from: Date, to: Date): Promise<number> {
  const result = await db.execute<{ mb_ms: string }>(sql`
    select coalesce(sum(mb_ms), 0) as mb_ms from function_usage_minutes
    where account_id = ${accountId} and minute >= ${minuteOf(from)}::timestamptz and minute < ${minuteOf(to)}::timestamptz`);
  return Number(result.rows[0]?.mb_ms ?? 0);
}
