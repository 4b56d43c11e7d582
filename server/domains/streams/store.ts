import { and, desc, eq, gte, ilike, inArray, lt, lte, or, sql } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import { isUuid } from "../../platform/ids.ts";
import { streamBlockHashes, streamCheckpoints, streamLogs, streamMetricMinutes, streams } from "./tables.ts";

export type StreamRow = typeof streams.$inferSelect;
export type NewStream = Omit<typeof streams.$inferInsert, "accountId" | "id">;
export type Product = "STREAM" | "WEBHOOK";

interface Cursor {
  t: string;
  id: string;
}
const encode = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString("base64url");
function decode(s: string | null | undefined): Cursor | null {
  if (!s) return null;
  try {
    const c = JSON.parse(Buffer.from(s, "base64url").toString()) as Cursor;
    return typeof c.t === "string" && isUuid(c.id) ? c : null;
  } catch {
    return null;
  }
}

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
  options: { limit: number; after?: string | null; search?: string | null },
) {
  const cursor = decode(options.after);
  const where = [eq(streams.accountId, accountId), eq(streams.product, product)];
  if (options.search) {
    const term = `%${options.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const any = or(
      ilike(streams.name, term),
      ilike(streams.network, term),
      ilike(streams.dataset, term),
      sql`${streams.id}::text = ${options.search}`,
    );
    if (any) where.push(any);
  }
  const base = and(...where);
  const page = cursor
    ? and(
        base,
        or(
          lt(streams.createdAt, new Date(cursor.t)),
          and(eq(streams.createdAt, new Date(cursor.t)), lt(streams.id, cursor.id)),
        ),
      )
    : base;
  const rows = await db
    .select()
    .from(streams)
    .where(page)
    .orderBy(desc(streams.createdAt), desc(streams.id))
    .limit(options.limit + 1);
  const [{ count }] = await db.select({ count: sql<number>`count(*)::int` }).from(streams).where(base);
  const hasNextPage = rows.length > options.limit;
  const pageRows = rows.slice(0, options.limit);
  const last = pageRows.at(-1);
  return {
    rows: pageRows,
    totalCount: count,
    pageInfo: { hasNextPage, endCursor: last ? encode({ t: last.createdAt.toISOString(), id: last.id }) : null },
  };
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
  options: { first: number; after?: string | null; levels?: string[] | null; searchText?: string | null },
) {
  const where = [eq(streamLogs.accountId, accountId), eq(streamLogs.streamId, streamId)];
  const after = options.after && /^\d+$/.test(options.after) ? Number(options.after) : null;
  if (after !== null) where.push(lt(streamLogs.id, after));
  if (options.levels?.length) where.push(inArray(streamLogs.level, options.levels));
  if (options.searchText)
    where.push(ilike(streamLogs.message, `%${options.searchText.replace(/[\\%_]/g, (c) => `\\${c}`)}%`));
  const rows = await db
    .select()
    .from(streamLogs)
    .where(and(...where))
    .orderBy(desc(streamLogs.id))
    .limit(options.first + 1);
  const page = rows.slice(0, options.first);
  return {
    logs: page,
    pageInfo: {
      hasNextPage: rows.length > options.first,
      endCursor: page.length ? String(page[page.length - 1].id) : null,
    },
  };
}

export async function metricMinutes(db: Executor, accountId: string, streamId: string, from: Date, to: Date) {
  return db
    .select()
    .from(streamMetricMinutes)
    .where(
      and(
        eq(streamMetricMinutes.accountId, accountId),
        eq(streamMetricMinutes.streamId, streamId),
        gte(streamMetricMinutes.minute, from),
        lte(streamMetricMinutes.minute, to),
      ),
    )
    .orderBy(streamMetricMinutes.minute);
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
